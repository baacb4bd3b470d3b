#!/bin/bash
# live-analysis.sh - the analysis on real runs of this machine: threads of
# one process hammering mmap/munmap (their kernel lock contention depends
# on how many run at once), at 1, 2, 4 and 8 threads, 3 repeats each, with
# run exec; then curve --by threads and report --group-by threads --explain.
. "${srcdir:-.}/tests/lib.sh"
need_root
start_daemon
for rep in 1 2 3; do
        for t in 1 2 4 8; do
                ctl run exec "storm-t$t-r$rep" --tag threads=$t --tag bench=mmapstorm \
                        --score-regex 'ops=ops=([0-9]+)' -- "$WL/wl-mmapstorm" $t 0.4 >/dev/null ||
                        bail "run exec storm-t$t-r$rep failed"
        done
done
[ "$(ctl --format json runs --tag bench=mmapstorm | jpy 'len(d["runs"])')" = 12 ]; ok $? "12 runs recorded"
ctl curve --by threads --metric lock_contentions,context_switches > "$TMP/curve.txt"; ok $? "curve --by threads"
sed 's/^/# /' "$TMP/curve.txt"
ctl --format json curve --by threads > "$TMP/curve.json"
[ "$(jpy '[p["n"] for p in d["points"]]' < "$TMP/curve.json" | tr '\n' ' ')" = "1 2 4 8 " ]; ok $? "one point per thread count"
[ "$(jpy '[p["runs"] for p in d["points"]]' < "$TMP/curve.json" | sort -u)" = 3 ]; ok $? "three runs each"
jpy 'd["usl"]["sigma"] is not None or "why" in d["usl"]' < "$TMP/curve.json" | grep -q true; ok $? "a USL fit, or why not"
l1=$(jpy '[p["per_score"]["lock_contentions"] for p in d["points"] if p["n"] == 1][0]' < "$TMP/curve.json")
l2=$(jpy 'max(p["per_score"]["lock_contentions"] for p in d["points"] if p["n"] > 1)' < "$TMP/curve.json")
awk -v a="$l1" -v b="$l2" 'BEGIN { exit !(b > 10 * a) }'; ok $? "lock contentions per op: alone $l1, with company up to $l2"
ctl report --group-by threads --explain > "$TMP/report.txt"; ok $? "report --group-by threads --explain"
sed -n '/^Groups/,$p' "$TMP/report.txt" | sed 's/^/# /'
ctl --format json report --group-by threads --explain > "$TMP/report.json"
[ "$(jpy 'len(d["groups"])' < "$TMP/report.json")" = 4 ]; ok $? "four groups"
[ "$(jpy 'd["explain"][0]["n"]' < "$TMP/report.json")" = 12 ]; ok $? "explain across all 12 runs"
[ "$(jpy 'len(d["explain"][0]["ranking"])' < "$TMP/report.json")" = 5 ]; ok $? "five strongest counters"
jpy 'all(abs(r["rho"]) <= 1 and 0 <= r["p_value"] <= 1 for r in d["explain"][0]["ranking"])' < "$TMP/report.json" | grep -q true
ok $? "each with rho in [-1, 1] and a p-value"
# ranked by the weaker view's |rho|, named in ranked_by
jpy '[abs(r["rho"] if r["ranked_by"] == "per second" else r["rho_per_score"]) for r in d["explain"][0]["ranking"]] == sorted([abs(r["rho"] if r["ranked_by"] == "per second" else r["rho_per_score"]) for r in d["explain"][0]["ranking"]], reverse=True)' \
        < "$TMP/report.json" | grep -q true; ok $? "strongest first, in the view that ranked each"

# a real time-like score, perf bench sched messaging -g N
# (the work grows with N), its direction recorded by run exec
if command -v perf >/dev/null && perf bench sched messaging -g 1 -l 10 >/dev/null 2>&1; then
        for g in 1 2 4; do
                ctl run exec "msg-g$g" --tag groups=$g --tag bench=messaging --lower-is-better seconds \
                        --score-regex 'seconds=Total time: ([0-9.]+)' -- perf bench sched messaging -g $g -l 200 \
                        > "$TMP/msg-g$g.out" || bail "run exec msg-g$g failed"
        done
        [ "$(ctl --format json runs --tag bench=messaging | jpy '[r["tags"]["lower_is_better"] for r in d["runs"]]' | sort -u)" = seconds ]
        ok $? "messaging: run exec --lower-is-better recorded the direction with each run"
        out=$(ctl curve --by groups --tag bench=messaging 2>&1); rc=$?
        [ $rc = 2 ] && echo "$out" | grep -q "seconds is lower-is-better"; ok $? "messaging: curve without --work refused (exit $rc)"
        ctl --format json curve --by groups --tag bench=messaging --work per-n > "$TMP/msg.json"; ok $? "messaging: curve --work per-n"
        # perf's own "Total time" lines, read here: throughput = N / seconds
        bad=0
        for g in 1 2 4; do
                t=$(sed -n 's/.*Total time: \([0-9.]*\).*/\1/p' "$TMP/msg-g$g.out")
                x=$(jpy "[p['throughput'] for p in d['points'] if p['n'] == $g][0]" < "$TMP/msg.json")
                awk -v g=$g -v t="$t" -v x="$x" 'BEGIN { exit !(t > 0 && x > g / t * 0.999 && x < g / t * 1.001) }' || bad=1
                diag "messaging -g $g: perf says $t s, throughput $x"
        done
        [ $bad = 0 ]; ok $? "messaging: throughput is N / perf's time at every N"
        s4=$(jpy "[p['speedup'] for p in d['points'] if p['n'] == 4][0]" < "$TMP/msg.json")
        t1=$(sed -n 's/.*Total time: \([0-9.]*\).*/\1/p' "$TMP/msg-g1.out"); t4=$(sed -n 's/.*Total time: \([0-9.]*\).*/\1/p' "$TMP/msg-g4.out")
        awk -v s="$s4" -v a="$t1" -v b="$t4" 'BEGIN { e = (4 / b) / (1 / a); exit !(s > e * 0.999 && s < e * 1.001) }'
        ok $? "messaging: speedup at 4 = (4/t4)/(1/t1) = $s4, not t4/t1"
        ctl curve --by groups --tag bench=messaging --work per-n | sed 's/^/# /'
else
        for i in 1 2 3 4 5 6; do skip_one "perf bench sched messaging cannot run here" -- "messaging check $i"; done
fi
check "daemon stops cleanly" -- stop_daemon
finish
