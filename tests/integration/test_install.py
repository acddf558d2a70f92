"""make install into a temporary root: the installed tree is complete and
works where it lands (issue 19 item 5). The installed memtop, run from
DESTDIR, finds the installed sampler (EXE_DIR/../lib/memtop) and watches
`-- CMD` in usdt mode, and finds the installed themes."""

import json
import os
import subprocess
import tempfile

from memtop_test import ROOT, check, fail, workload_path


def test_install_tree_runs_command_in_usdt_mode():
    with tempfile.TemporaryDirectory() as root:
        r = subprocess.run(["make", "--no-print-directory", "-s", "-C", ROOT, "install",
                            "DESTDIR=" + root, "PREFIX=/opt/memtop-test"],
                           capture_output=True, text=True, timeout=300)
        check(r.returncode == 0, "make install failed: %s" % r.stderr[-800:])
        prefix = os.path.join(root, "opt/memtop-test")
        for rel in ("bin/memtop", "lib/memtop/libmemtop-sampler.so",
                    "lib/memtop/libmemtop-jvmti.so",  # docs/java.md (make deps: a JDK)
                    "share/memtop/themes/default.theme", "share/doc/memtop/README.md",
                    "share/doc/memtop/architecture.md", "share/man/man1/memtop.1",
                    "share/bash-completion/completions/memtop",
                    "share/zsh/site-functions/_memtop"):
            check(os.path.isfile(os.path.join(prefix, rel)), "make install left out %s" % rel)
        check(os.access(os.path.join(prefix, "bin/memtop"), os.X_OK), "bin/memtop not executable")
        out = os.path.join(root, "truth")
        p = subprocess.run([os.path.join(prefix, "bin/memtop"), "-b", "--json", "-d", "0.5",
                            "--", workload_path("mt_sites"), "--start=1", "--hold=0.5",
                            "--out=" + out, "--iterations=500", "--duration=1"],
                           capture_output=True, text=True, timeout=60, cwd=root,
                           # where the command's memtop-cmd-PID.log goes
                           env=dict(os.environ, XDG_STATE_HOME=os.path.join(root, "state")))
        check(p.returncode == 0, "installed memtop -- CMD exited %d: %s" %
              (p.returncode, p.stderr[-800:]))
        recs = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
        check(recs, "installed memtop printed no JSON record; stderr: %s" % p.stderr[-500:])
        mode = recs[-1]["overhead"]["mode"]
        if mode != "usdt":
            fail("installed memtop watched -- CMD in mode %s, expected usdt (the installed "
                 "sampler was not found); stderr: %s" % (mode, p.stderr[-500:]))
