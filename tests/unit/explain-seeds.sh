#!/bin/bash
# explain-seeds.sh - scalemonctl explain on the seed fixtures (see
# tests/fixtures/gen-seeds.py): the AIM7 80-way config 2 group, whose
# 21300 jobs/min run was built with the most lock contention, and the THP
# fixture, where the runs with THP on differ in context from those with it
# off.  The fixtures carry totals only (imported runs): no time analysis,
# and explain says why.
. "${srcdir:-.}/tests/lib.sh"
command -v python3 >/dev/null || skip_all "python3 not installed (the test reads JSON with it)"
F=$srcdir/tests/fixtures/seeds
sm() { "$SCALEMONCTL" --db "$TMP/$1.db" "${@:2}"; }
for f in aim7 thp; do
        sm "$f" import "$F/$f.json" >/dev/null; ok $? "import $f fixture"
done

# --- AIM7 config 2 at 80 ways: 21300, 43000, 32100 jobs/min ---
sm aim7 --format json explain aim7-c2-w80-r1 > "$TMP/a.json"; ok $? "explain aim7-c2-w80-r1 (21300 jobs/min)"
[ "$(jpy 'd["siblings"]' < "$TMP/a.json" | tr '\n' ' ')" = "aim7-c2-w80-r2 aim7-c2-w80-r3 " ]
ok $? "siblings: the other two runs of its group (same tags)"
[ "$(jpy 'd["counters"][0]["metric"]' < "$TMP/a.json")" = lock_contentions ]
ok $? "lock contention first ($(jpy '[(c["metric"], round(c["score"], 1)) for c in d["counters"][:3]]' < "$TMP/a.json" | tr '\n' ' '))"
# by hand from gen-seeds.py: lock/s = 3e12 / jpm^1.6, so the run is
# (32100/21300)^1.6 = 1.929x the highest sibling; with e = 1% of the run's
# rate on both sides, (1.929 + 0.01929) / (1 + 0.01929) = 1.911
x=$(jpy 'd["counters"][0]["excess_ratio"]' < "$TMP/a.json")
awk -v x="$x" 'BEGIN { exit !(x > 1.905 && x < 1.917) }'; ok $? "1.91x above the siblings' range: (32100/21300)^1.6 with e ($x)"
[ "$(jpy 'd["counters"][0]["consistent"]' < "$TMP/a.json")" = true ]; ok $? "consistent"
[ "$(jpy '(d["counters"][0]["agree"], d["counters"][0]["n"])' < "$TMP/a.json")" = "(3, 3)" ]; ok $? "across 3 of 3 runs"
[ "$(jpy 'd["counters"][0]["spread_from"]' < "$TMP/a.json")" = "siblings" ]; ok $? "spread from the siblings alone"
# 356,216 contentions/s against the siblings' 184,805 at most: 171,411/s at
# 2 us each is 0.34 CPU-s a second, 0.43% of the 80-way machine's (floor 1%),
# and 2.0 spreads of the siblings' own (floor 3): no cause
[ "$(jpy 'len(d["causes"])' < "$TMP/a.json")" = 0 ]; ok $? "no cause passes the floors (lock contention: $(jpy '[round(c["share"] * 100, 2) for c in d["counters"] if c["metric"] == "lock_contentions"][0]' < "$TMP/a.json")% of the CPU-seconds)"
jpy 'd["summary"]' < "$TMP/a.json" | grep -q "^No clear cause: "; ok $? "the summary begins 'No clear cause'"
# context switches wobble by 7% by design but not with the score: inside the range
[ "$(jpy '[c["score"] for c in d["counters"] if c["metric"] == "context_switches"][0]' < "$TMP/a.json")" = 0.0 ]
ok $? "context_switches (noise by design) is inside the siblings' range"
sm aim7 explain aim7-c2-w80-r1 > "$TMP/a.txt"; ok $? "table output"
sed 's/^/# /' "$TMP/a.txt"
grep -Eq "^lock_contentions +.* 1\.9x above +\+2\.0 3 of 3$" "$TMP/a.txt"
ok $? "table: lock_contentions 1.9x above, +2.0 spreads, consistent 3 of 3"
jpy 'd["phases_why"]' < "$TMP/a.json" | grep -q "imported"; ok $? "no time analysis, and why: $(jpy 'd["phases_why"]' < "$TMP/a.json")"
[ "$(jpy 'len(d["context_differs"])' < "$TMP/a.json")" = 0 ]; ok $? "same context as its siblings"
# the fastest run: lock contention below the range, same order
sm aim7 --format json explain aim7-c2-w80-r2 > "$TMP/b.json"
[ "$(jpy '[(c["score"] < 0, c["consistent"], c["passes"]) for c in d["counters"] if c["metric"] == "lock_contentions"][0]' < "$TMP/b.json")" = "(True, True, False)" ]
ok $? "the 43000 run: lock contention below its siblings', consistent, no cause"

# --- inside report --group-by --explain: each HIGH VARIANCE group's lowest-scoring run ---
sm aim7 --format json report --group-by config,ways --explain > "$TMP/r.json"; ok $? "report --group-by config,ways --explain"
[ "$(jpy '[(g["tags"]["config"], g["tags"]["ways"], g["explain_run"]["run"]) for g in d["groups"] if "explain_run" in g]' < "$TMP/r.json")" = "('2', '80', 'aim7-c2-w80-r1')" ]
ok $? "only the HIGH VARIANCE group has explain_run: its 21300 run"
[ "$(jpy '[g["explain_run"]["counters"][0]["metric"] for g in d["groups"] if "explain_run" in g][0]' < "$TMP/r.json")" = lock_contentions ]
ok $? "lock_contentions first there too"
sm aim7 report --group-by config,ways --explain > "$TMP/r.txt"
grep -q "^    aim7-c2-w80-r1 against the other 2: no clear cause$" "$TMP/r.txt"; ok $? "table: '$(grep -m1 'against the other 2' "$TMP/r.txt" | cut -c1-90)'"
sm aim7 --format csv report --group-by config,ways --explain > "$TMP/r.csv"; ok $? "CSV without it"
! grep -q explain_run "$TMP/r.csv"; ok $? "no explain_run column in CSV"

# --- THP: context first ---
sm thp --format json explain thp-on-c128-r2 --against thp-off-c128-r1,thp-off-c128-r2,thp-off-c128-r3 > "$TMP/t.json"
ok $? "explain thp-on-c128-r2 --against the THP-off runs"
[ "$(jpy '[(c["key"], c["run"]) for c in d["context_differs"]]' < "$TMP/t.json")" = "('thp_enabled', 'always')" ]
ok $? "context: thp_enabled differs (always here)"
[ "$(jpy 'sorted(set(d["context_differs"][0]["siblings"].values()))' < "$TMP/t.json")" = never ]; ok $? "never in the siblings"
summary=$(jpy 'd["summary"]' < "$TMP/t.json")
# the system time (88.7 CPU-s a second against 6.5: 32% of the 128-way
# machine's) is the one cause; THP's own counters cost too little at their
# nominal price (676 allocations/s at 50 us: 0.03%) to pass the floor
[ "$(jpy '" ".join(c["family"] + ":" + c["metrics"][0] for c in d["causes"])' < "$TMP/t.json")" = "cpu_time:cpu_system" ]
ok $? "one cause: system CPU time"
echo "$summary" | grep -q "^System CPU time: 7966.32 s above the siblings' highest (12.2x; 32.1% of the run's CPU-seconds)"
ok $? "the summary begins with it: $(jpy 'd["summary"][:90]' < "$TMP/t.json")"
echo "$summary" | grep -q "Context differs from its siblings: thp_enabled is 'always' here, 'never' in the siblings"
ok $? "and says that the context differs: thp_enabled"
top3=$(jpy '[c["metric"] for c in d["counters"][:3]]' < "$TMP/t.json" | tr '\n' ' ')
echo "$top3" | grep -q thp_; ok $? "THP counters lead the counters ($top3)"
sm thp --format json explain thp-on-c128-r2 > "$TMP/t2.json"
[ "$(jpy 'len(d["context_differs"])' < "$TMP/t2.json")" = 0 ]; ok $? "against its own group (THP on too): no context differs"

# --- bad input ---
err() { local want=$1 out rc; shift; out=$("$@" 2>&1 >/dev/null); rc=$?; [ $rc = "$want" ] && [ "$(echo "$out" | wc -l)" = 1 ]; ok $? "exit $want: $out"; }
err 1 sm aim7 explain aim7-nope
err 1 sm aim7 explain aim7-c2-w80-r1 --against aim7-c2-w80-r2,aim7-nope
err 2 sm aim7 explain aim7-c2-w80-r1 --against aim7-c2-w80-r1
err 2 sm aim7 explain
err 2 sm aim7 --format csv explain aim7-c2-w80-r1
err 2 sm aim7 explain aim7-c2-w80-r1 --bogus
finish
