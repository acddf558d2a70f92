"""The live view, driven for real: build/memtop -p PID in a tmux pane
against mt_sites (whose leak_site never frees), with keys sent by
`tmux send-keys` and the screen read back with `tmux capture-pane`.

What is checked: the header names the target; sorted by leak score,
leak_site is the top row; Enter shows its stack; the help screen lists
every key of the key table (read from docs/keybindings.md, which
tests/unit/test_keys.c keeps equal to the table); the flame view shows
leak_site and can be walked and zoomed; resizing to 80x24 and to 200x60
leaves no garbage (the screen after the resize equals the screen after a
forced full repaint, Ctrl-L, of the same paused frame); e writes a pprof
file; q, SIGTERM, SIGHUP and SIGSEGV all leave a clean shell prompt and
the terminal settings as they were; a target that exits stays browsable
and exportable; TERM=vt100 in the C locale with NO_COLOR draws plain ASCII
without colour; a broken theme file is reported with its line number.

Each test runs its own tmux server (-L), so nothing here touches another
tmux, and kills it at the end, which hangs up whatever still runs in it.
"""

import gzip
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

from memtop_test import MEMTOP, ROOT, Workload, check, fail

# A leak that dominates in-use and keeps growing for the whole test, next
# to a plateauing cache and pure churn.
WL_ARGS = ("--iterations=20000", "--duration=90", "--leak-size=4096")
MEMTOP_ARGS = ("--rate", "4K", "-d", "0.5", "--max-overhead", "none")
PROMPT = "TUI-PROMPT$ "
KEYS_DOC = os.path.join(ROOT, "docs", "keybindings.md")
SGR = re.compile(r"\x1b\[([0-9;]*)m")


def colours_used(raw):
    """SGR parameters that set a colour (39/49 only reset to the default)."""
    out = set()
    for params in SGR.findall(raw):
        for p in params.split(";"):
            if p.isdigit() and (30 <= int(p) <= 38 or 40 <= int(p) <= 48 or
                                90 <= int(p) <= 97 or 100 <= int(p) <= 107):
                out.add(int(p))
    return out


class Pane:
    """One tmux server with one pane running a clean bash."""

    _n = 0

    def __init__(self, cols, rows, env, cwd):
        if not shutil.which("tmux"):
            fail("tmux is not installed (make deps installs it)")
        Pane._n += 1
        self.sock = "memtop-test-%d-%d" % (os.getpid(), Pane._n)
        self.cwd = cwd
        # Themes from the source tree, wherever MEMTOP_BUILD put the binary.
        base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": cwd,
                "PS1": PROMPT, "HISTFILE": "/dev/null",
                "MEMTOP_THEME_DIR": os.path.join(ROOT, "themes")}
        base.update(env)
        cmd = ["env", "-i"] + ["%s=%s" % kv for kv in base.items()] + \
              ["bash", "--norc", "--noprofile"]
        self.tmux("new-session", "-d", "-s", "t", "-x", str(cols), "-y", str(rows),
                  "-c", cwd, " ".join("'%s'" % c for c in cmd))
        self.wait_for(lambda s: PROMPT.strip() in s, 5, "the shell prompt")

    def tmux(self, *args, check_rc=True):
        r = subprocess.run(["tmux", "-L", self.sock, "-f", "/dev/null"] + list(args),
                           capture_output=True, timeout=10)
        if check_rc and r.returncode != 0:
            fail("tmux %s failed: %s" % (" ".join(args), r.stderr.decode(errors="replace")))
        return r.stdout.decode("utf-8", "replace")

    def keys(self, *keys):
        self.tmux("send-keys", "-t", "t", *keys)

    def type(self, text):
        self.tmux("send-keys", "-t", "t", "-l", text)

    def run(self, line):
        self.type(line)
        self.keys("Enter")

    def lines(self, escapes=False):
        args = ["capture-pane", "-p", "-t", "t"] + (["-e"] if escapes else [])
        out = self.tmux(*args)
        return (out[:-1] if out.endswith("\n") else out).split("\n")

    def screen(self, escapes=False):
        return "\n".join(self.lines(escapes))

    def size(self):
        w, h = self.tmux("display", "-p", "-t", "t", "#{pane_width} #{pane_height}").split()
        return int(w), int(h)

    def resize(self, cols, rows):
        self.tmux("resize-window", "-t", "t", "-x", str(cols), "-y", str(rows))

    def wait_for(self, pred, timeout, what):
        t0 = time.monotonic()
        while True:
            s = self.screen()
            if pred(s):
                return s
            if time.monotonic() - t0 > timeout:
                fail("waited %.0fs for %s; the screen:\n%s" % (timeout, what, s))
            time.sleep(0.2)

    def shell_pid(self):
        return int(self.tmux("display", "-p", "-t", "t", "#{pane_pid}").strip())

    def child_pid(self, comm):
        """pid of the pane shell's child named comm."""
        shell = self.shell_pid()
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                with open("/proc/%s/stat" % d) as f:
                    st = f.read()
            except OSError:
                continue
            name = st[st.index("(") + 1:st.rindex(")")]
            ppid = int(st[st.rindex(")") + 2:].split()[1])
            if ppid == shell and name == comm:
                return int(d)
        fail("no %s running in the tmux pane" % comm)

    def kill(self):
        self.tmux("kill-server", check_rc=False)


# ==== Helpers ====

def start(pane, pid, extra=()):
    """Run memtop -p pid in the pane's shell, then wait for its header."""
    pane.run("stty -g > stty.before; clear")
    args = " ".join([MEMTOP] + list(MEMTOP_ARGS) + list(extra) + ["-p", str(pid)])
    pane.run("%s 2>memtop.err; echo MEMTOP-RC=$?" % args)
    return pane.wait_for(lambda s: re.search(r"^memtop +%d +mt_sites +alive" % pid, s, re.M),
                         20, "the header naming pid %d" % pid)


def check_clean_exit(pane, rc):
    """memtop is gone with exit status rc, the shell prompt is back on a
    clean screen and the terminal settings are those from before."""
    s = pane.wait_for(lambda s: re.search(r"MEMTOP-RC=\d", s), 10, "memtop to exit")
    m = re.search(r"MEMTOP-RC=(\d+)", s)
    check(int(m.group(1)) == rc, "memtop exit status %s, expected %d; stderr: %s" %
          (m.group(1), rc, open(os.path.join(pane.cwd, "memtop.err")).read()[-500:]))
    for junk in ("ALLOC/s", "FUNCTION", "Quit", "in-use bytes"):
        check(junk not in s, "%r left on the screen after memtop exited:\n%s" % (junk, s))
    # stty -g: the termios settings, not the window size (tests resize it).
    pane.run("stty -g > stty.after; cmp -s stty.before stty.after; echo STTY-CMP=$?")
    s = pane.wait_for(lambda s: re.search(r"STTY-CMP=\d\n+%s" % re.escape(PROMPT.strip()), s),
                      5, "stty's verdict, then the prompt")
    check("STTY-CMP=0" in s, "terminal settings changed by memtop:\n%s" % s)


def table_rows(screen):
    """Data rows of the site table: the lines after the column titles."""
    lines = screen.split("\n")
    for i, l in enumerate(lines):
        if "ALLOC/s" in l and "FUNCTION" in l:
            return [r for r in lines[i + 1:] if re.match(r"^ *[0-9.]+[KMGk]?(?:/s)? ", r)]
    return []


def leak_on_top(screen, min_score):
    rows = table_rows(screen)
    if not rows or "leak_site" not in rows[0]:
        return False
    m = re.search(r"\s(\d+) \S*\s+\S+ leak_site", rows[0])
    return m is not None and int(m.group(1)) >= min_score


def key_rows_from_docs():
    """[(keys, help)] of every row of the key table, from the generated
    tables of docs/keybindings.md."""
    rows = []
    with open(KEYS_DOC) as f:
        for line in f:
            m = re.match(r"^\| (`.*`) \| (.*) \|$", line.rstrip("\n"))
            if m:
                keys = " ".join(re.findall(r"`([^`]+)`", m.group(1)))
                rows.append((keys.replace("\\|", "|"), m.group(2)))
    check(len(rows) > 20, "docs/keybindings.md lists only %d key rows" % len(rows))
    return rows


def help_text(pane):
    """All lines of the help screen, paging down to the end."""
    seen = []
    for _ in range(20):
        s = pane.screen()
        seen.append(s)
        m = re.search(r"lines (\d+)-(\d+) of (\d+)", s)
        check(m is not None, "no 'lines a-b of n' in the help status line:\n%s" % s)
        if int(m.group(2)) >= int(m.group(3)):
            return "\n".join(seen)
        pane.keys("NPage")
        pane.wait_for(lambda s2: s2 != s, 3, "the help to page down")
    fail("the help screen did not reach its end")


def check_no_garbage(pane, cols, rows):
    """Resize to cols x rows (the display is paused, so frames repeat
    exactly) and compare the screen with a forced full repaint."""
    pane.resize(cols, rows)
    check(pane.size() == (cols, rows), "pane is %s, not %dx%d" % (pane.size(), cols, rows))
    pane.wait_for(lambda s: len(s.split("\n")) == rows and s.startswith("memtop"), 5,
                  "the %dx%d redraw" % (cols, rows))
    time.sleep(0.5)
    before = pane.lines()
    pane.keys("C-l")
    time.sleep(0.5)
    after = pane.lines()
    if before != after:
        diff = ["%2d: %r\n    %r" % (i, a, b) for i, (a, b) in enumerate(zip(before, after))
                if a != b]
        fail("garbage after resizing to %dx%d (screen differs from a full repaint):\n%s" %
             (cols, rows, "\n".join(diff[:8])))
    for i, l in enumerate(after):
        check(len(l) <= cols, "line %d wider than %d: %r" % (i, cols, l))
    check(after[0].startswith("memtop"), "header not on the first line at %dx%d" % (cols, rows))
    check(after[-1].startswith("q Quit"), "key bar not on the last line at %dx%d: %r" %
          (cols, rows, after[-1]))


class Session:
    """A workload, a scratch directory and a tmux pane, torn down together."""

    def __init__(self, cols, rows, env, wl_args=WL_ARGS):
        self.dir = tempfile.mkdtemp(prefix="memtop-tui-")
        self.wl = Workload("mt_sites", *wl_args).wait_ready()
        self.pane = Pane(cols, rows, env, self.dir)

    def close(self):
        self.pane.kill()
        self.wl.release()
        shutil.rmtree(self.dir, ignore_errors=True)


# ==== Tests ====

def test_tui_walkthrough():
    s = Session(120, 40, {"TERM": "screen-256color", "LANG": "C.UTF-8"})
    p, pid = s.pane, s.wl.pid
    try:
        start(p, pid)
        s.wl.trigger()

        # Sorted by leak score (L), the leak is the top row and scores high.
        p.keys("L")
        scr = p.wait_for(lambda x: leak_on_top(x, 50), 40, "leak_site on top with score >= 50")
        check("LEAK\u25bc" in scr, "the LEAK column is not marked as the sort column:\n%s" % scr)

        # Enter: the site, its stack by name, the reasons for its score.
        p.keys("Home", "Enter")
        scr = p.wait_for(lambda x: "Stacks (" in x, 5, "the site detail")
        lines = scr.split("\n")
        check(lines[3].startswith("leak_site ("), "detail title is not leak_site: %r" % lines[3])
        stack = scr[scr.index("Stacks ("):]
        check(re.search(r"^ +leak_site \(mt_sites", stack, re.M) and
              re.search(r"^ +main \(mt_sites", stack, re.M),
              "the stack leak_site <- main is not shown:\n%s" % scr)
        check("Why this score" in scr, "no leak-score reasons:\n%s" % scr)
        p.keys("Escape")
        p.wait_for(lambda x: "FUNCTION" in x, 5, "the table after Esc")

        # Help: every row of the key table, keys and words.
        p.keys("?")
        p.wait_for(lambda x: "Everywhere" in x, 5, "the help screen")
        text = help_text(p)
        for keys, words in key_rows_from_docs():
            if not re.search(r"^  %s +%s" % (re.escape(keys), re.escape(words)), text, re.M):
                fail("help screen lacks the row %r %r:\n%s" % (keys, words, text))
        p.keys("Escape")
        p.wait_for(lambda x: "FUNCTION" in x, 5, "the table after closing help")

        # Flame view: leak_site is there; walk down the widest path to it.
        p.keys("Tab")
        scr = p.wait_for(lambda x: "in-use bytes" in x and "leak_site" in x, 5,
                         "leak_site in the flame view")
        p.keys("End")
        scr = p.wait_for(lambda x: x.split("\n")[-3].startswith("leak_site"), 5,
                         "the flame cursor on leak_site (End)")
        p.keys("Up", "Enter")
        p.wait_for(lambda x: " zoom all > " in x.split("\n")[3] and
                   x.split("\n")[3].endswith("> main"), 5, "a zoom into main")
        p.keys("Escape")  # one level out: the zoom is on main's caller
        p.wait_for(lambda x: x.split("\n")[3].endswith("> __libc_start_call_main") or
                   x.split("\n")[3].endswith("zoom all > _start"), 5, "zooming out")
        p.keys("/")
        p.type("leak")
        p.keys("Enter")
        p.wait_for(lambda x: '"leak":' in x, 5, "the search total in the flame title")

        # Resizes, on a paused frame so that repaints must be identical.
        p.keys("Space")
        p.wait_for(lambda x: "PAUSED" in x, 5, "the pause marker")
        check_no_garbage(p, 80, 24)
        check_no_garbage(p, 200, 60)
        p.keys("Tab")
        p.wait_for(lambda x: "FUNCTION" in x, 5, "the table")
        check_no_garbage(p, 80, 24)
        p.keys("Space")

        # Export: the file named in the status line is a gzipped profile.
        p.keys("e")
        scr = p.wait_for(lambda x: re.search(r"(wrote|export failed)", x), 10, "export result")
        m = re.search(r"wrote (memtop-%d-\d{8}-\d{6}\.pb\.gz)" % pid, scr)
        check(m is not None, "export did not report a file:\n%s" % scr)
        with gzip.open(os.path.join(s.dir, m.group(1))) as f:
            check(len(f.read()) > 100, "exported profile is empty")

        p.keys("q")
        check_clean_exit(p, 0)
    finally:
        s.close()


def test_tui_exited_target_vt100_ascii_nocolor():
    s = Session(80, 24, {"TERM": "vt100", "LANG": "C", "NO_COLOR": "1"},
                ("--iterations=3000", "--duration=4", "--leak-size=4096"))
    p, pid = s.pane, s.wl.pid
    try:
        start(p, pid)
        s.wl.trigger()
        p.wait_for(lambda x: leak_on_top(x, 0), 20, "leak_site on top")
        s.wl.read_truth(timeout=30)
        s.wl.release()  # the workload exits
        scr = p.wait_for(lambda x: re.search(r"^memtop +%d +mt_sites +exited" % pid, x, re.M),
                         15, "the target marked exited")
        check("target exited" in scr, "no exit notice in the status line:\n%s" % scr)
        check(leak_on_top(scr, 0), "the exited target's sites are gone:\n%s" % scr)

        used = colours_used(p.screen(escapes=True))
        check(not used, "colours %s with NO_COLOR and TERM=vt100" % sorted(used))
        check(all(ord(c) < 128 for c in p.screen()), "non-ASCII characters in the C locale")

        # Still browsable: detail and flame of the exited target.
        p.keys("Enter")
        p.wait_for(lambda x: re.search(r"^ +main \(mt_sites", x, re.M), 5, "the stack")
        p.keys("Tab")
        scr = p.wait_for(lambda x: "leak_site" in x and "in-use bytes" in x, 5, "the flame")
        check("|" in scr and all(ord(c) < 128 for c in scr), "flame not drawn in ASCII")

        # And exportable.
        p.keys("e")
        scr = p.wait_for(lambda x: re.search(r"(wrote|export failed)", x), 10, "export")
        check("wrote memtop-%d-" % pid in scr, "export after exit failed:\n%s" % scr)

        p.keys("q")
        check_clean_exit(p, 0)
    finally:
        s.close()


def test_tui_signals_restore_terminal():
    """SIGTERM (kill), SIGHUP (the SSH connection drops) and SIGSEGV (a
    crash) each leave the terminal as it was."""
    s = Session(100, 30, {"TERM": "screen", "LANG": "C.UTF-8"})
    try:
        for sig, rc in ((signal.SIGTERM, 0), (signal.SIGHUP, 0), (signal.SIGSEGV, 128 + 11)):
            start(s.pane, s.wl.pid)
            s.pane.keys("Tab")  # somewhere other than the first screen
            s.pane.wait_for(lambda x: "in-use bytes" in x, 5, "the flame view")
            os.kill(s.pane.child_pid("memtop"), sig)
            check_clean_exit(s.pane, rc)
            s.pane.run("clear")
    finally:
        s.close()


def test_tui_bad_theme_reported():
    s = Session(100, 30, {"TERM": "screen-256color", "LANG": "C.UTF-8"})
    try:
        path = os.path.join(s.dir, "broken.theme")
        with open(path, "w") as f:
            f.write("# a theme with a typo\nnormal = default, default\n"
                    "table_header = black, gren\n")
        scr = start(s.pane, s.wl.pid, ("--theme", path))
        check(re.search(r"theme: .*broken\.theme:3: unknown colour 'gren'", scr),
              "no message naming line 3 of the broken theme:\n%s" % scr)
        s.pane.keys("q")
        check_clean_exit(s.pane, 0)
        # Shipped themes load by name, silently.
        for name in ("light", "high-contrast", "mono"):
            scr = start(s.pane, s.wl.pid, ("--theme", name))
            check("theme:" not in scr, "theme %s reported a problem:\n%s" % (name, scr))
            s.pane.keys("q")
            check_clean_exit(s.pane, 0)
            s.pane.run("clear")
    finally:
        s.close()
