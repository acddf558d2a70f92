"""make deps and bookworm-backports (tools/apt-backports), against fake
apt configurations (APT_ETC), never the machine's:

  - a deb822 debian.sources with another mirror and a keyring of its own:
    the file written reuses both, and the one line printed names them;
  - a one-line sources.list with [signed-by=...] options: the same;
  - an inline Signed-By key is copied as it is; an Enabled: no stanza, a
    deb-src line, a commented line and a file apt ignores
    (*.list.disabled) give nothing;
  - backports already configured (one-line or deb822, in any file apt
    reads): nothing is written or printed;
  - no bookworm suite at all: an error, nothing written;
  - remove (make deps-clean) removes that one file and nothing else;
  - make deps with every package installed leaves the sources as they
    were and prints nothing."""

import os
import shutil
import subprocess
import tempfile

from memtop_test import ROOT, check

SCRIPT = os.path.join(ROOT, "tools", "apt-backports")
OURS = os.path.join("sources.list.d", "memtop-bookworm-backports.sources")

DEB822 = """Types: deb
# http://snapshot.debian.org/archive/debian/20250520T000000Z
URIs: http://mirror.example.net/debian http://second.example.net/debian
Suites: bookworm bookworm-updates
Components: main contrib
Signed-By: /etc/apt/keyrings/example.gpg

Types: deb
URIs: http://mirror.example.net/debian-security
Suites: bookworm-security
Components: main
Signed-By: /etc/apt/keyrings/example.gpg
"""


class FakeApt:
    """A temporary APT_ETC with the given files (relative path: text)."""

    def __init__(self, files):
        self.dir = tempfile.mkdtemp(prefix="memtop-apt-")
        os.mkdir(os.path.join(self.dir, "sources.list.d"))
        for name, text in files.items():
            with open(os.path.join(self.dir, name), "w") as f:
                f.write(text)

    def run(self, *args):
        return subprocess.run([SCRIPT] + list(args), capture_output=True, text=True, timeout=20,
                              env=dict(os.environ, APT_ETC=self.dir))

    def tree(self):
        out = {}
        for d, _, files in os.walk(self.dir):
            for n in files:
                p = os.path.join(d, n)
                with open(p) as f:
                    out[os.path.relpath(p, self.dir)] = f.read()
        return out

    def ours(self):
        with open(os.path.join(self.dir, OURS)) as f:
            return f.read()

    def close(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def fields(text):
    """The deb822 fields of one stanza, comments left out; a continuation
    line is kept with its field."""
    out, key = {}, None
    for line in text.split("\n"):
        if line.startswith("#") or not line.strip():
            continue
        if line[0] in " \t":
            out[key] += "\n" + line
            continue
        key, _, value = line.partition(":")
        out[key] = value.strip()
    return out


def added(apt, mirror, from_file):
    r = apt.run("add")
    check(r.returncode == 0, "add failed (%d): %s" % (r.returncode, r.stderr))
    path = os.path.join(apt.dir, OURS)
    check(r.stdout == "  APT      added bookworm-backports from %s in %s\n" % (mirror, path),
          "add printed %r" % r.stdout)
    f = fields(apt.ours())
    check(f["Types"] == "deb" and f["URIs"] == mirror and f["Suites"] == "bookworm-backports"
          and f["Components"] == "main", "written: %r" % apt.ours())
    check(from_file in apt.ours(), "the file does not say where its mirror came from: %r" %
          apt.ours())
    return f


def test_deb822_mirror_and_keyring_reused():
    apt = FakeApt({"sources.list.d/debian.sources": DEB822,
                   # apt ignores these names: so does the script
                   "sources.list.d/backports.list.disabled":
                   "deb http://other.example/debian bookworm-backports main\n",
                   "sources.list.d/old.sources.save": "Types: deb\nURIs: http://x/\n"
                   "Suites: bookworm-backports\nComponents: main\n"})
    try:
        before = apt.tree()
        f = added(apt, "http://mirror.example.net/debian",
                  os.path.join(apt.dir, "sources.list.d/debian.sources"))
        check(f["Signed-By"] == "/etc/apt/keyrings/example.gpg", "Signed-By %r" % f)
        after = apt.tree()
        check({k: v for k, v in after.items() if k != OURS} == before,
              "add changed other files")
        # a second add: backports is there now, nothing changes
        r = apt.run("add")
        check(r.returncode == 0 and r.stdout == "" and apt.tree() == after,
              "a second add did something: %r" % r.stdout)
        r = apt.run("remove")
        check(r.returncode == 0 and "removed " + os.path.join(apt.dir, OURS) in r.stdout,
              "remove printed %r" % r.stdout)
        check(apt.tree() == before, "remove did not restore the sources exactly")
        r = apt.run("remove")
        check(r.returncode == 0 and r.stdout == "", "a second remove printed %r" % r.stdout)
    finally:
        apt.close()


def test_one_line_sources_list_reused():
    apt = FakeApt({"sources.list":
                   "# deb http://commented.example/debian bookworm main\n"
                   "deb-src http://src.example/debian bookworm main\n"
                   "deb [ arch=amd64 signed-by=/usr/share/keyrings/mirror.gpg ] "
                   "https://mirror.example.org/debian bookworm main non-free-firmware\n"
                   "deb http://later.example/debian bookworm main\n"})
    try:
        f = added(apt, "https://mirror.example.org/debian", os.path.join(apt.dir, "sources.list"))
        check(f["Signed-By"] == "/usr/share/keyrings/mirror.gpg", "Signed-By %r" % f)
    finally:
        apt.close()


def test_inline_key_and_disabled_stanza():
    key = ("\n -----BEGIN PGP PUBLIC KEY BLOCK-----\n .\n mQINBGPL0BUBEADmW5NdOOHwPIJl\n"
           " -----END PGP PUBLIC KEY BLOCK-----")
    apt = FakeApt({"sources.list.d/a.sources":
                   "Types: deb\nURIs: http://disabled.example/debian\nSuites: bookworm\n"
                   "Components: main\nEnabled: no\n\n"
                   "Types: deb-src\nURIs: http://src.example/debian\nSuites: bookworm\n"
                   "Components: main\n\n"
                   "Types: deb\nURIs: http://inline.example/debian\nSuites: bookworm\n"
                   "Components: main\nSigned-By:" + key + "\n"})
    try:
        f = added(apt, "http://inline.example/debian",
                  os.path.join(apt.dir, "sources.list.d/a.sources"))
        check(f["Signed-By"] == key.strip("\n") or f["Signed-By"] == key,
              "the inline key was not copied: %r" % apt.ours())
        check(" -----END PGP PUBLIC KEY BLOCK-----\n" in apt.ours(), "key cut: %r" % apt.ours())
    finally:
        apt.close()


def test_backports_already_configured():
    for files in ({"sources.list.d/debian.sources": DEB822,
                   "sources.list": "deb http://deb.example/debian bookworm-backports main\n"},
                  {"sources.list.d/debian.sources":
                   DEB822.replace("Suites: bookworm bookworm-updates",
                                  "Suites: bookworm bookworm-updates bookworm-backports")},
                  {"sources.list.d/debian.sources": DEB822,
                   "sources.list.d/z.list":
                   "deb [signed-by=/k.gpg] http://z.example/debian bookworm-backports main\n"}):
        apt = FakeApt(files)
        try:
            before = apt.tree()
            r = apt.run("add")
            check(r.returncode == 0 and r.stdout == "" and r.stderr == "",
                  "add with backports present said %r %r" % (r.stdout, r.stderr))
            check(apt.tree() == before, "add with backports present changed %s" % files)
        finally:
            apt.close()


def test_no_bookworm_is_an_error():
    apt = FakeApt({"sources.list": "deb http://deb.example/debian trixie main\n"})
    try:
        before = apt.tree()
        r = apt.run("add")
        check(r.returncode == 1 and "no bookworm suite" in r.stderr,
              "add without bookworm: %d %r" % (r.returncode, r.stderr))
        check(apt.tree() == before, "add without bookworm wrote something")
    finally:
        apt.close()


def test_make_deps_leaves_sources_alone_when_installed():
    """Every package of DEB_PKGS is installed here (make check runs make
    deps first): make deps reads no source and writes none; deps-clean
    removes only the file the script adds."""
    apt = FakeApt({"sources.list.d/debian.sources": DEB822})
    try:
        before = apt.tree()
        r = subprocess.run(["make", "-s", "--no-print-directory", "deps", "APT_ETC=" + apt.dir],
                           cwd=ROOT, capture_output=True, text=True, timeout=120)
        check(r.returncode == 0 and r.stdout == "",
              "make deps (all installed): %d %r %r" % (r.returncode, r.stdout, r.stderr[-300:]))
        check(apt.tree() == before, "make deps changed the sources")
        check(apt.run("add").returncode == 0 and OURS in apt.tree(), "add did not add")
        r = subprocess.run(["make", "-s", "--no-print-directory", "deps-clean",
                            "APT_ETC=" + apt.dir], cwd=ROOT, capture_output=True, text=True,
                           timeout=60)
        check(r.returncode == 0 and apt.tree() == before,
              "make deps-clean: %d %r, left %s" % (r.returncode, r.stdout, sorted(apt.tree())))
    finally:
        apt.close()
