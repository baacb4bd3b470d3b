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
jpy 'sorted([abs(r["rho"]) for r in d["explain"][0]["ranking"]], reverse=True) == [abs(r["rho"]) for r in d["explain"][0]["ranking"]]' \
        < "$TMP/report.json" | grep -q true; ok $? "strongest first"
check "daemon stops cleanly" -- stop_daemon
finish
