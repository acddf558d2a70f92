"""Every number right at the moment it is drawn, across regrouping (issue 17
item 1): in the live view, a steady 2 MiB/s leak (scenario_dies) is grouped
by line, by stack and back by function with `g`. On the first frame after
each `g` its ALLOC/s is a rate near the truth (not the cumulative bytes),
and its leak score and growth carry on instead of restarting."""

import os
import re
import shutil
import tempfile

from memtop_test import MEMTOP, Workload, check, fail

LEAK = "leak_until_death"
TRUE_RATE = 2 * 1024 * 1024
UNITS = {"": 1, "K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}
# ALLOC/s OBJ/s IN-USE GROWTH/m LEAK: the first numbers of a table row
ROW = re.compile(r"^\s*(~?)([\d.]+)([KMG]?)\s+~?[\d.]+[KMG]?\s+~?[\d.]+[KMG]?\s+"
                 r"(\+?-?[\d.]+[KMG]?|-)\s+(\d+)\b")


def leak_row(screen):
    """(ALLOC/s in bytes, growth text, score) of the leak's row, or None."""
    for line in screen.splitlines():
        if LEAK in line:
            m = ROW.match(line)
            if m:
                return float(m.group(2)) * UNITS[m.group(3)], m.group(4), int(m.group(5))
    return None


def test_regroup_keeps_rates_and_scores():
    from test_tui import Pane  # the tmux helpers

    w = Workload("scenario_dies", "--die=never").wait_ready()
    tmp = tempfile.mkdtemp(prefix="memtop-regroup-")
    pane = Pane(120, 30, {"TERM": "xterm-256color", "LANG": "C.UTF-8"}, tmp)
    try:
        pane.run("%s -d 0.5 -p %d 2>memtop.err; echo MEMTOP-RC=$?" % (MEMTOP, w.pid))
        pane.wait_for(lambda s: re.search(r"^memtop +%d +scenario_dies" % w.pid, s, re.M),
                      20, "the header")
        w.trigger()

        def scoring(s):
            r = leak_row(s)
            return r and r[2] >= 90

        pane.wait_for(scoring, 40, "the leak scoring 90")
        for group in ("line", "stack", "function"):
            pane.keys("g")
            scr = pane.wait_for(lambda s: "grouped by %s" % group in s, 5,
                                "the regroup to %s" % group)
            r = leak_row(scr)
            check(r is not None, "no row for %s after grouping by %s:\n%s" % (LEAK, group, scr))
            rate, growth, score = r
            check(TRUE_RATE / 3 < rate < TRUE_RATE * 3,
                  "by %s: ALLOC/s %.0f on the first frame, the truth is %d/s:\n%s" %
                  (group, rate, TRUE_RATE, scr))
            check(score >= 90, "by %s: the score restarted (%d) on the first frame:\n%s" %
                  (group, score, scr))
            check(growth != "-", "by %s: growth hidden after the regroup:\n%s" % (group, scr))
            check("histories restart" not in scr, "the message still says histories restart")
        pane.keys("q")
        pane.wait_for(lambda s: "MEMTOP-RC=0" in s, 10, "memtop to quit")
    finally:
        pane.kill()
        w.kill()
        shutil.rmtree(tmp, ignore_errors=True)
