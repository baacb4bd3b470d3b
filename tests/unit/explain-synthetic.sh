#!/bin/bash
# explain-synthetic.sh - explain's time and place analysis on a database
# with a known phase (tests/workloads/gen-explain.c): 32 CPUs in 4 nodes at 100 ms,
# three runs of 600 ticks with the same tags; in the third, lock
# contentions are 9x on node 1 (CPUs 8-15) and context switches 2x there,
# from tick 180 to tick 360.  explain must find exactly that: the phase's
# bounds to the tick, node 1, its CPUs; and nothing in the other runs.
. "${srcdir:-.}/tests/lib.sh"
command -v python3 >/dev/null || skip_all "python3 not installed (the test reads JSON with it)"
"$top_builddir/tests/workloads/gen-explain" "$TMP/x.db" 32 600 >/dev/null; ok $? "database generated"
x() { "$SCALEMONCTL" --db "$TMP/x.db" "$@"; }
x --format json explain bx-slow > "$TMP/slow.json"; ok $? "explain bx-slow"
[ "$(jpy 'd["counters"][0]["metric"]' < "$TMP/slow.json")" = lock_contentions ]; ok $? "lock_contentions first"
[ "$(jpy 'len(d["phases"])' < "$TMP/slow.json")" = 1 ]; ok $? "one phase ($(jpy '[(p["start_offset_s"], p["duration_s"]) for p in d["phases"]]' < "$TMP/slow.json" | tr '\n' ' '))"
[ "$(jpy '(d["phases"][0]["start_offset_s"], d["phases"][0]["duration_s"])' < "$TMP/slow.json")" = "(18.0, 18.0)" ]
ok $? "from +18.0s for 18.0s: ticks 180 to 360 exactly"
[ "$(jpy 'd["phases"][0]["metrics"][0]["metric"]' < "$TMP/slow.json")" = lock_contentions ]; ok $? "led by lock_contentions"
# found on node 1 alone (9x there; 3x machine-wide, (24 + 8 * 9) / 32),
# with e (1% of the 95th percentile, about 0.09 of the usual rate) on both
# sides: (9 + 0.09) / (1 + 0.09) = 8.34
[ "$(jpy 'd["phases"][0]["metrics"][0]["node"]' < "$TMP/slow.json")" = 1 ]; ok $? "found on node 1"
r=$(jpy 'd["phases"][0]["metrics"][0]["ratio"]' < "$TMP/slow.json")
awk -v r="$r" 'BEGIN { exit !(r > 8.0 && r < 8.7) }'; ok $? "8.3x the siblings' there (9x with e): $r"
[ "$(jpy 'd["phases"][0]["nodes"]' < "$TMP/slow.json")" = 1 ]; ok $? "on node 1"
[ "$(jpy 'd["phases"][0]["cpus"]' < "$TMP/slow.json" | tr '\n' ' ')" = "8 9 10 11 12 13 14 15 " ]; ok $? "on CPUs 8-15"
[ "$(jpy 'd["place"]["nodes"]' < "$TMP/slow.json")" = 1 ]; ok $? "over the whole run, node 1 too"
jpy 'd["summary"]' < "$TMP/slow.json" | grep -Eq "From \+18s for 18s \(30% of the run\): lock_contentions 8\.[0-9]x the siblings'.* on CPUs 8-15 \(node 1\)"
ok $? "summary: $(jpy 'd["summary"]' < "$TMP/slow.json" | grep -o 'From.*')"
for r in bx-r1 bx-r2; do
        [ "$(x --format json explain $r | jpy 'len(d["phases"])')" = 0 ]; ok $? "$r: no phase"
done
x plot explain bx-slow -o "$TMP/x.png" && [ -s "$TMP/x.png" ]; ok $? "plot explain -o x.png"
# the terminal chart fills no area: the phase, +18 s to +36 s, between two
# vertical lines at those x, numbered at the top
COLUMNS=100 LINES=30 x plot explain bx-slow > "$TMP/term.txt" 2>&1; ok $? "plot explain in the terminal"
python3 - "$TMP/term.txt" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().split("\n")
rows = [l for l in lines if re.match(r"^ *[0-9.]* *\|", l)]       # inside the frame
L = rows[0].index("|")
R = rows[0].rstrip().rindex("|")
tics = [c for c in range(L + 1, R) if rows[0][c] == "+"]           # the x tics, every 10 s from 10
col = lambda x: L + (tics[0] - L) * x / 10
inner = [c for c in range(L + 1, R) if sum(len(r) > c and r[c] == "|" for r in rows) * 2 >= len(rows)]
want = [col(18), col(36)]
print("# lines at columns %s, the phase's bounds at %s" % (inner, ["%.1f" % w for w in want]))
ok = len(inner) == 2 and all(abs(a - b) <= 1 for a, b in zip(inner, want))
ok = ok and any("phase 1" in l for l in lines) and "(phases between lines)" in "".join(lines)
sys.exit(0 if ok else 1)
PY
ok $? "the terminal chart marks the phase: two lines at +18 s and +36 s, \"phase 1\" between them"
# a run longer than 20,000 ticks is binned by several: 24,000 ticks in bins of 2
"$top_builddir/tests/workloads/gen-explain" "$TMP/long.db" 8 24000 >/dev/null; ok $? "a long database generated (8 CPUs, 24,000 ticks a run)"
"$SCALEMONCTL" --db "$TMP/long.db" --format json explain bx-slow > "$TMP/long.json"; ok $? "explain on it"
[ "$(jpy '(d["tick_s"], [(p["start_offset_s"], p["duration_s"], p["cpus"], p["nodes"]) for p in d["phases"]])' < "$TMP/long.json")" = \
  "(0.2, [(720.0, 720.0, [2, 3], [1])])" ]
ok $? "bins of 0.2 s; the phase from +12m for 12m on CPUs 2-3, node 1: $(jpy '[(p["start_offset_s"], p["duration_s"]) for p in d["phases"]]' < "$TMP/long.json")"
finish
