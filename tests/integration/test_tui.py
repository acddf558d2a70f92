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
        if os.environ.get("MEMTOP_TEST_RUNNER"):
            # tmux's server is not the runner's child: this tells the
            # other lanes' checks that the pane's memtop is the runner's
            base["MEMTOP_TEST_RUNNER"] = os.environ["MEMTOP_TEST_RUNNER"]
        base.update(env)
        cmd = ["env", "-i"] + ["%s=%s" % kv for kv in base.items()] + \
              ["bash", "--norc", "--noprofile"]
        self.tmux("new-session", "-d", "-s", "t", "-x", str(cols), "-y", str(rows),
                  "-c", cwd, " ".join("'%s'" % c for c in cmd))
        # The server names the window from the pane's foreground process by
        # reading its /proc/PID/cmdline, which waits on that process's
        # memory map: nothing here needs the name.
        self.tmux("set-option", "-g", "automatic-rename", "off")
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
        """The screen once pred holds for it, polled until timeout. A
        capture the server does not answer within its own 10 s (a machine
        stalled for that long: seen once in CI, where another lane's
        memtop was also late) is taken again while the deadline allows."""
        t0, stalled, s = time.monotonic(), 0, ""
        while True:
            try:
                s = self.screen()
            except subprocess.TimeoutExpired:
                stalled += 1
            else:
                if pred(s):
                    return s
            if time.monotonic() - t0 > timeout:
                fail("waited %.0fs for %s (%d captures unanswered); the screen:\n%s" %
                     (timeout, what, stalled, s))
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
        if "IN-USE" in l and "FUNCTION" in l:
            # the first cell: a number, "~" before it when the sampling
            # error is large (a site of few samples), or with several
            # targets a PID (1234+)
            return [r for r in lines[i + 1:] if re.match(r"^ *~?[0-9.]+\+?[KMGk]?(?:/s)? ", r)]
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


def key_sections_from_docs():
    """{section title: [(keys, help)]} from the generated tables of
    docs/keybindings.md, in order."""
    sections, cur = {}, None
    with open(KEYS_DOC) as f:
        for line in f:
            h = re.match(r"^### (.+)$", line.rstrip("\n"))
            if h:
                cur = sections.setdefault(h.group(1), [])
                continue
            m = re.match(r"^\| (`.*`) \| (.*) \|$", line.rstrip("\n"))
            if m and cur is not None:
                keys = " ".join(re.findall(r"`([^`]+)`", m.group(1)))
                cur.append((keys.replace("\\|", "|"), m.group(2)))
    check(len(sections.get("Everywhere", ())) > 10,
          "docs/keybindings.md has no Everywhere table: %s" % list(sections))
    return sections


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
    check(after[-1].startswith(("q Quit", "Esc Back")), "key bar not on the last line at %dx%d: %r" %
          (cols, rows, after[-1]))


def export(pane, cwd, pid):
    """e, a refusal, e again and y: the path asked about is the one
    written, in the current directory (the pane's cwd). Returns it."""
    pane.keys("e")
    scr = pane.wait_for(lambda x: "[y/N] write" in x, 5, "the export question")
    m = re.search(r"\[y/N\] write (/\S+/memtop-%d-\d{8}-\d{6}\.pb\.gz)" % pid, scr)
    check(m is not None, "the export question names no full path:\n%s" % scr)
    check(os.path.dirname(m.group(1)) == os.path.realpath(cwd),
          "export would write to %s, not the current directory %s" % (m.group(1), cwd))
    pane.keys("n")
    pane.wait_for(lambda x: "export cancelled" in x, 5, "the export cancelled")
    check(not [f for f in os.listdir(cwd) if f.endswith(".pb.gz")],
          "a refused export wrote a file")
    pane.keys("e")
    pane.wait_for(lambda x: "[y/N] write" in x, 5, "the export question again")
    pane.keys("y")
    scr = pane.wait_for(lambda x: re.search(r"(wrote|export failed)", x), 10, "export result")
    m = re.search(r"wrote (/\S+/memtop-%d-\d{8}-\d{6}\.pb\.gz)" % pid, scr)
    check(m is not None, "export did not report a file:\n%s" % scr)
    check(os.path.exists(m.group(1)), "%s was not written" % m.group(1))
    return m.group(1)


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
        # the size histogram: each bucket with its two shares whole
        # ("100.0% 100.0%" was cut to "100.0% 100.…")
        check(re.search(r"^ *\S+-\S+ B +\d+\.\d% +\d+\.\d% ", scr, re.M),
              "no whole size bucket line:\n%s" % scr)
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

        # Export: e names the whole path and asks; any key but y cancels,
        # y writes a gzipped profile there.
        path = export(p, s.dir, pid)
        with gzip.open(path) as f:
            check(len(f.read()) > 100, "exported profile is empty")

        p.keys("q")
        check_clean_exit(p, 0)
    finally:
        s.close()


def test_tui_help_first_page_quit_and_everywhere():
    """On a 24-line terminal the help's first screen, before any scrolling,
    says how to quit (the table's quit row, whose own section comes after
    a screenful of keys), and every row of the docs' Everywhere table is
    in the help's Everywhere section, keys and words."""
    sections = key_sections_from_docs()
    quit_row = [r for r in sections["Site table"] if r[1].startswith("Quit memtop")]
    check(len(quit_row) == 1, "docs/keybindings.md has no quit row: %s" % sections["Site table"])
    s = Session(120, 24, {"TERM": "screen-256color", "LANG": "C.UTF-8"})
    p, pid = s.pane, s.wl.pid
    try:
        start(p, pid)
        p.keys("?")
        first = p.wait_for(lambda x: "keys, page 1/2" in x, 5, "the help")
        keys, words = quit_row[0]
        check(re.search(r"^  %s +%s" % (re.escape(keys), re.escape(words)), first, re.M),
              "the help's first screen does not say how to quit:\n%s" % first)
        text = help_text(p)
        lines = text.split("\n")
        start_at = next(i for i, l in enumerate(lines) if l.strip() == "Everywhere")
        titles = [t for t in sections if t != "Everywhere"]
        end_at = next(i for i in range(start_at + 1, len(lines)) if lines[i].strip() in titles)
        everywhere = "\n".join(lines[start_at:end_at])
        for keys, words in sections["Everywhere"]:
            check(re.search(r"^  %s +%s" % (re.escape(keys), re.escape(words)), everywhere, re.M),
                  "the help's Everywhere section lacks %r %r:\n%s" % (keys, words, everywhere))
        p.keys("Escape")
        p.wait_for(lambda x: "FUNCTION" in x, 5, "the table after closing help")
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
        export(p, s.dir, pid)

        p.keys("q", "q")  # the flame view goes back to the table, which quits
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


# ==== Narrow terminals, htop reflexes, settings ====

def titles_line(screen):
    for l in screen.split("\n"):
        if "IN-USE" in l and "FUNCTION" in l:
            return l
    return None


def layout_problem(scr, cols, rows, have, lack, name_min, bar, pids):
    """What is wrong with a site-table screen at cols x rows, or None."""
    lines = scr.split("\n")
    t = titles_line(scr)
    if len(lines) != rows or any(len(l) > cols for l in lines) or t is None:
        return "not a %dx%d table yet" % (cols, rows)
    for c in have:
        if not re.search(r"(^| )%s" % re.escape(c), t):
            return "no %s column: %r" % (c, t)
    for c in lack:
        if re.search(r"(^| )%s" % re.escape(c), t):
            return "%s should have given way: %r" % (c, t)
    if cols - t.index("FUNCTION") < name_min:
        return "FUNCTION gets %d columns: %r" % (cols - t.index("FUNCTION"), t)
    rows_ = table_rows(scr)
    if not any("leak_site (" in r for r in rows_):
        return "leak_site's name is cut"
    # the budget's warning: backed off (uprobes), or over it (in-process)
    if not any(re.match(r"^! .*(BACKOFF|backed off|OVER BUDGET|over budget)", l)
               for l in lines[:3]):
        return "the budget's warning is gone"
    if not lines[-1].startswith(bar):
        return "key bar %r does not start with %r" % (lines[-1], bar)
    if "PID" in have and not any(re.match(r"^ *(%d|%d)\+? " % pids, r) for r in rows_):
        return "no row names its process"
    return None


def test_tui_sizes_keep_names_warnings_keys():
    """At 80x24, 60x20 and 40x12, with two targets and a budget memtop
    cannot keep: the function name stays readable (numeric columns give
    way first), the back-off warning stays on screen, and the key bar
    starts with the most important keys. The PID column comes with the
    second target and gives way at 40 columns."""
    s = Session(80, 24, {"TERM": "screen-256color", "LANG": "C.UTF-8"})
    other = Workload("mt_sites", *WL_ARGS).wait_ready()
    p, pid = s.pane, s.wl.pid
    try:
        args = " ".join([MEMTOP] + list(MEMTOP_ARGS) + ["--max-overhead", "1",
                                                        "-p", "%d,%d" % (pid, other.pid)])
        p.run("stty -g > stty.before; clear")
        p.run("%s 2>memtop.err; echo MEMTOP-RC=$?" % args)
        s.wl.trigger()
        other.trigger()
        sizes = ((80, 24, ("PID", "ALLOC/s", "IN-USE", "GROWTH/m", "LEAK", "AGE"), ("OBJ/s",), 24,
                  "q Quit ? Help Enter Detail \\ Filter / Search s Sort g Group"),
                 (60, 20, ("PID", "IN-USE", "GROWTH/m", "LEAK"), ("ALLOC/s", "AGE"), 20,
                  "q Quit ? Help Enter Detail \\ Filter"),
                 (40, 12, ("IN-USE", "LEAK"), ("PID", "ALLOC/s", "AGE", "OBJ/s"), 13,
                  "q Quit ? Help Enter Detail"))
        for cols, rows, have, lack, name_min, bar in sizes:
            p.resize(cols, rows)
            why = [None]

            def ok(x):
                why[0] = layout_problem(x, cols, rows, have, lack, name_min, bar,
                                        (pid, other.pid))
                return why[0] is None
            t0 = time.monotonic()
            while not ok(p.screen()):
                if time.monotonic() - t0 > 30:
                    fail("%dx%d: %s:\n%s" % (cols, rows, why[0], p.screen()))
                time.sleep(0.2)
        p.keys("q")
        check_clean_exit(p, 0)
    finally:
        other.release()
        s.close()


def test_tui_reflexes_settings_mouse():
    """htop's keys answer; q one level down goes back, not out; unknown
    keys say so; F2 settings are saved, read at the next start and
    ignored with --no-config; a click selects, the wheel scrolls;
    TERM=dumb is refused with the -b suggestion."""
    s = Session(100, 30, {"TERM": "screen-256color", "LANG": "C.UTF-8"})
    p, pid = s.pane, s.wl.pid
    try:
        start(p, pid)
        s.wl.trigger()
        p.wait_for(lambda x: len(table_rows(x)) >= 3, 20, "three sites")
        # q in the detail goes back to the table; memtop keeps running
        p.keys("Enter")
        p.wait_for(lambda x: "Stacks (" in x, 5, "the site detail")
        p.keys("q")
        p.wait_for(lambda x: titles_line(x) is not None, 5, "the table after q in the detail")
        check("MEMTOP-RC" not in p.screen(), "q in a sub-view quit memtop")
        # F1 help, ? again the legend, Esc back
        p.keys("F1")
        p.wait_for(lambda x: "keys, page 1/2" in x, 5, "the help")
        p.keys("?")
        scr = p.wait_for(lambda x: "memtop legend, page 2/2" in x, 5, "the legend")
        check("heap since attach" in scr and "live map full" in scr, "legend incomplete:\n%s" % scr)
        p.keys("Escape")
        p.wait_for(lambda x: titles_line(x) is not None, 5, "the table after the legend")
        p.keys("x")
        p.wait_for(lambda x: "x does nothing here: ? or h lists the keys" in x, 5, "the unknown-key hint")
        # F3 search: the cursor goes to the site, Enter opens it
        p.keys("F3")
        p.type("churn")
        p.keys("Enter", "Enter")
        scr = p.wait_for(lambda x: "Stacks (" in x, 5, "the searched site's detail")
        check(scr.split("\n")[3].startswith("churn_site ("), "search did not select churn_site:\n%s" % scr)
        p.keys("Escape")
        p.wait_for(lambda x: titles_line(x) is not None, 5, "the table")
        # a click on the third data row selects it: Enter opens that one
        # (paused, so the rows hold still)
        p.keys("Space")
        scr = p.wait_for(lambda x: "PAUSED" in x, 5, "the pause")
        lines = scr.split("\n")
        ty = next(i for i, l in enumerate(lines) if l == titles_line(scr))
        third = table_rows(scr)[2]
        name = re.search(r"(\w+_site) \(", third).group(1)
        y = lines.index(third)
        # X10 mouse report: button 1 press, then release, at (col 10, row y), 1-based
        p.tmux("send-keys", "-t", "t", "-H", "1b", "5b", "4d", "20", "%02x" % (32 + 11),
               "%02x" % (32 + y + 1))
        p.tmux("send-keys", "-t", "t", "-H", "1b", "5b", "4d", "23", "%02x" % (32 + 11),
               "%02x" % (32 + y + 1))
        p.keys("Enter")
        scr = p.wait_for(lambda x: "Stacks (" in x, 5, "the clicked site's detail")
        check(scr.split("\n")[3].startswith(name + " ("), "a click on %s opened:\n%s" % (name, scr))
        p.keys("Escape")
        p.wait_for(lambda x: titles_line(x) is not None, 5, "the table")
        # the wheel down three notches from the top reaches the last row
        p.keys("Home")
        for _ in range(3):
            p.tmux("send-keys", "-t", "t", "-H", "1b", "5b", "4d", "61", "2b", "%02x" % (32 + ty + 2))
        last = re.search(r"(\w+_site) \(", table_rows(p.screen())[-1]).group(1)
        p.keys("Enter")
        scr = p.wait_for(lambda x: "Stacks (" in x, 5, "the detail after the wheel")
        check(scr.split("\n")[3].startswith(last + " ("), "the wheel did not reach %s:\n%s" % (last, scr))
        p.keys("Escape", "Space")
        # F2: hide OBJ/s (the 8th setting), Esc saves to ~/.config/memtop/memtoprc
        p.keys("F2")
        p.wait_for(lambda x: "Settings, saved to" in x, 5, "the settings")
        p.keys(*(["Down"] * 7))
        p.keys("Right")
        p.wait_for(lambda x: re.search(r"Column OBJ/s +. hidden", x), 5, "OBJ/s hidden")
        p.keys("Escape")
        p.wait_for(lambda x: "settings saved to" in x, 5, "the settings saved")
        rc = os.path.join(s.dir, ".config", "memtop", "memtoprc")
        text = open(rc).read()
        check(re.search(r"^hidden_columns = OBJ/s$", text, re.M), "memtoprc:\n%s" % text)
        check("OBJ/s" not in titles_line(p.wait_for(lambda x: titles_line(x), 5, "the table")),
              "OBJ/s still shown after hiding it")
        p.keys("q")
        check_clean_exit(p, 0)
        # read at the next start; --no-config ignores it
        scr = start(p, pid)
        scr = p.wait_for(lambda x: titles_line(x), 10, "the table")
        check("OBJ/s" not in titles_line(scr), "the saved settings were not read:\n%s" % scr)
        p.keys("q")
        check_clean_exit(p, 0)
        scr = start(p, pid, ("--no-config",))
        scr = p.wait_for(lambda x: titles_line(x), 10, "the table")
        check("OBJ/s" in titles_line(scr), "--no-config did not ignore the settings:\n%s" % scr)
        p.keys("q")
        check_clean_exit(p, 0)
        # a terminal that cannot address the cursor is refused, politely
        p.run("TERM=dumb %s -p %d 2>dumb.err; echo DUMB-RC=$?" % (MEMTOP, pid))
        scr = p.wait_for(lambda x: re.search(r"DUMB-RC=\d+", x), 20, "memtop to refuse TERM=dumb")
        err = open(os.path.join(s.dir, "dumb.err")).read()
        # one line, and before anything was attached to the target
        check("DUMB-RC=0" not in scr and re.match(r"memtop: terminal 'dumb' cannot move the "
                                                  r"cursor: use -b", err) and
              err.count("\n") == 1, "TERM=dumb not refused in one line with the -b "
              "suggestion: %r, %s" % (err, scr))
    finally:
        s.close()


def test_tui_man_page_and_completion():
    """memtop --man (the page the build writes as memtop.1) renders without
    a groff warning and names every option of --help; the bash completion
    offers every option --help lists, and the values of --group."""
    from memtop_test import BUILD
    helptext = subprocess.run([MEMTOP, "--help"], capture_output=True, text=True).stdout
    opts = sorted(set(re.findall(r"(?:^|[ ,])(--[a-z][a-z-]*)", helptext, re.M)))
    check(len(opts) > 20, "--help lists %d options" % len(opts))
    page = os.path.join(BUILD, "memtop.1")
    check(os.path.isfile(page), "the build wrote no %s" % page)
    man = subprocess.run([MEMTOP, "--man"], capture_output=True, text=True).stdout
    check(open(page).read() == man, "%s differs from memtop --man" % page)
    r = subprocess.run(["groff", "-ww", "-z", "-man", page], capture_output=True, text=True)
    check(r.returncode == 0 and not r.stderr.strip(), "groff warns: %s" % r.stderr[-500:])
    text = subprocess.run(["man", "-l", page], capture_output=True, text=True,
                          env=dict(os.environ, MANWIDTH="100", MAN_KEEP_FORMATTING="")).stdout
    text = re.sub(r".\x08", "", text)
    for o in opts:
        check(o in text, "the man page lacks %s" % o)
    for words in ("KEYS", "THE SCREEN", "heap since attach", "memtoprc"):
        check(words in text, "the man page lacks %r" % words)
    comp = os.path.join(ROOT, "completions", "memtop.bash")

    def complete(*words):
        script = ('source %s; COMP_WORDS=(%s); COMP_CWORD=%d; _memtop; '
                  'printf "%%s\\n" "${COMPREPLY[@]}"' %
                  (comp, " ".join("'%s'" % w for w in (MEMTOP,) + words), len(words)))
        return subprocess.run(["bash", "-c", script], capture_output=True, text=True).stdout.split()
    got = complete("--")
    for o in opts:
        check(o in got, "bash completion lacks %s: %s" % (o, got))
    check(complete("--group", "") == ["function", "line", "stack"],
          "--group completes to %s" % complete("--group", ""))
    check(os.path.isfile(os.path.join(ROOT, "completions", "_memtop")), "no zsh completion")
