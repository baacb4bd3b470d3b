#!/bin/bash
# groups-units.sh - groups that say what they pool, counters in their
# units, and curve's default columns, on a generated export
# (tests/fixtures/gen-units.py: a futex study by workers whose workers=1
# group pools runs of other studies).  The truth is the generator's: the
# tags it gave each run, the rates it wrote.  No root, no daemon.
. "${srcdir:-.}/tests/lib.sh"
command -v python3 >/dev/null || skip_all "python3 not installed (the test builds and reads JSON with it)"
python3 "$srcdir/tests/fixtures/gen-units.py" > "$TMP/units.json" || bail "generator"
sm() { "$SCALEMONCTL" --db "$TMP/u.db" "$@"; }
sm import "$TMP/units.json" >/dev/null || bail "import"
POOL="workers=1 pools study=noisy (3 runs) and observer=perf (1 run)"

# --- pools: report --group-by ---
sm report --group-by workers > "$TMP/g.txt"; ok $? "report --group-by workers"
grep -qxF "$POOL: add --tag or --group-by study" "$TMP/g.txt"; ok $? "the pooling group is named on one line: $(grep -m1 pools "$TMP/g.txt")"
[ "$(grep -c ' pools ' "$TMP/g.txt")" = 1 ]; ok $? "and only it (workers=2 and 4 have no other tag)"
sm --format json report --group-by workers > "$TMP/g.json"
[ "$(jpy '[g["pools"] for g in d["groups"] if g["tags"]["workers"] == "1"][0]' < "$TMP/g.json")" = "{'study': {'noisy': 3}, 'observer': {'perf': 1}}" ]
ok $? "JSON: pools {study: {noisy: 3}, observer: {perf: 1}}"
[ "$(jpy '[("pools" in g) for g in d["groups"] if g["tags"]["workers"] != "1"]' < "$TMP/g.json" | sort -u)" = False ]
ok $? "JSON: no pools key where the runs agree"
sm report --group-by workers,study > "$TMP/g2.txt"
grep -q "workers=1 study=(none) pools observer=perf (1 run): add --tag or --group-by observer" "$TMP/g2.txt"
ok $? "grouped by study too, what is left is named: $(grep -m1 pools "$TMP/g2.txt")"
! grep -q "study=noisy pools" "$TMP/g2.txt"; ok $? "and the study=noisy group pools nothing"
sm report --group-by workers --tag study=noisy | grep -q " pools "; [ $? = 1 ]; ok $? "with --tag study=noisy nothing is pooled"

# --- pools: curve and plot curve ---
sm curve --by workers > "$TMP/c.txt"; ok $? "curve --by workers"
grep -qxF "$POOL: add --tag or --series study" "$TMP/c.txt"; ok $? "curve names the pooling point: $(grep -m1 pools "$TMP/c.txt")"
sm --format json curve --by workers > "$TMP/c.json"
[ "$(jpy '[p.get("pools") for p in d["points"]]' < "$TMP/c.json" | tr '\n' ' ')" = "{'study': {'noisy': 3}, 'observer': {'perf': 1}} None None " ]
ok $? "curve JSON: pools on the workers=1 point only"
sm curve --by workers --series study | grep -q "study=noisy workers=1 pools"; [ $? = 1 ]; ok $? "curve --series study: the noisy series pools nothing"
sm --format json plot curve --by workers > "$TMP/p.json"; ok $? "plot curve --format json"
[ "$(jpy '[p.get("pools") for s in d["series"] for p in s["points"]]' < "$TMP/p.json" | tr '\n' ' ')" = "{'study': {'noisy': 3}, 'observer': {'perf': 1}} None None " ]
ok $? "plot JSON: the workers=1 point carries pools"
[ "$(jpy 'd["notes"]' < "$TMP/p.json")" = "$POOL: add --tag or --series study" ]; ok $? "plot JSON: and the line, in notes"
# a gnuplot that keeps the script it is given and writes an empty chart
cat > "$TMP/gp-standin" <<'GP'
#!/bin/sh
cat > "$GP_SCRIPT"
out=$(sed -n "s/^set output '\(.*\)'$/\1/p" "$GP_SCRIPT")
[ -z "$out" ] || : > "$out"
GP
chmod +x "$TMP/gp-standin"
GP_SCRIPT="$TMP/c.gp" SCALEMON_GNUPLOT="$TMP/gp-standin" sm plot curve --by workers -o "$TMP/c.png" 2> "$TMP/c.err"
grep -qF "$POOL" "$TMP/c.gp"; ok $? "plot curve -o: the chart carries the line (gnuplot's script)"
grep -qF "$POOL" "$TMP/c.err"; ok $? "and says it on stderr: $(cat "$TMP/c.err")"

sm --format json plot groups --group-by workers > "$TMP/pg.json"; ok $? "plot groups --format json"
[ "$(jpy '[p.get("pools") for s in d["series"] if s["name"] != "HIGH VARIANCE" for p in s["points"]]' < "$TMP/pg.json" | tr '\n' ' ')" = "{'study': {'noisy': 3}, 'observer': {'perf': 1}} None None " ] &&
        [ "$(jpy 'd["notes"]' < "$TMP/pg.json")" = "$POOL: add --tag or --group-by study" ]
ok $? "plot groups: the workers=1 point carries pools, and the note says it"

# --- units and kinds: report --baseline ---
sm report --group-by workers --baseline workers=1 > "$TMP/b.txt"
sed -n '/^workers=2 vs workers=1:/,/^$/p' "$TMP/b.txt" > "$TMP/b2.txt"
grep -Eq "^  lock_wait_ns +\+100\.0%  \(98\.4 ms/s vs 49\.2 ms/s\)  p<0\.001$" "$TMP/b2.txt"
ok $? "lock wait as ms/s (49217449.5 ns/s is 49.2 ms/s): $(grep lock_wait_ns "$TMP/b2.txt")"
grep -Eq "^  runqueue_wait_ns .*\(10\.0 ms/s vs 2\.50 ms/s\)" "$TMP/b.txt"; ok $? "run-queue wait as ms/s (workers=4)"
grep -q "^  negligible (below 10/s, or 10 ms/s for times, on both sides): runqueue_wait_ns" "$TMP/b2.txt"
ok $? "run-queue wait at 5.00 and 2.50 ms/s is negligible (below 1% of a CPU), not a change of +100%"
grep -Eq "^  lock_wait_max_ns +\+10\.0%  \(max 1\.26 ms vs 1\.15 ms\)  a maximum: not tested$" "$TMP/b2.txt"
ok $? "lock_wait_max_ns as a maximum in ms, not tested: $(grep lock_wait_max_ns "$TMP/b2.txt")"
! grep -E "^  (lock_wait|runqueue_wait|psi_)" "$TMP/b.txt" | grep -Eq "[0-9]{4,}(\.[0-9])?/s"
ok $? "no time as a bare rate anywhere (ns/s): $(grep -E "^  (lock_wait|runqueue_wait|psi_)" "$TMP/b.txt" | grep -Eo "[0-9]{4,}(\.[0-9])?/s" | head -1)"
grep -q "negligible (below 10/s, or 10 ms/s for times, on both sides): .*psi_memory_some_us" "$TMP/b.txt"
ok $? "a time below 10 ms/s is negligible (psi_memory_some_us at 200 us/s)"
sm --format json report --group-by workers --baseline workers=1 > "$TMP/b.json"
c() { jpy "[c for g in d['groups'] if g['tags']['workers'] == '$1' for c in g['metrics_vs_baseline'] if c['metric'] == '$2'][0]$3" < "$TMP/b.json"; }
[ "$(c 2 lock_wait_max_ns "['rank']")" = maximum ] && [ "$(c 2 lock_wait_max_ns "['p_value']")" = null ] &&
        [ "$(c 2 lock_wait_max_ns "['per_s']")" = null ]
ok $? "JSON: the maximum's rank is maximum, with no p-value and no rate"
[ "$(c 2 lock_wait_max_ns "['max']")" = 1259307 ] && [ "$(c 2 lock_wait_max_ns "['baseline_max']")" = 1145136 ]
ok $? "JSON: the largest of each side's maxima (1259307 vs 1145136 ns), not their sum or mean"
[ "$(c 2 lock_wait_ns "['rank']")" = significant ]; ok $? "JSON: lock_wait_ns is tested as a rate"
m() { jpy "[g['metrics']['$1'] for g in d['groups'] if g['tags']['workers'] == '1'][0]$2" < "$TMP/b.json"; }
[ "$(m lock_wait_max_ns "['max']")" = 1145136 ] && [ "$(m lock_wait_max_ns "['per_s']")" = null ]
ok $? "JSON: the group's maximum is the largest run's, with no per_s"

# --- units: one run's table ---
sm report --since w2-r1 --until w2-r1 --per cpu > "$TMP/r.txt"
grep -Eq "^lock_wait_ns +984 ms +98\.4 ms/s +394 ms +492 ms +591 ms +1\.20 *$" "$TMP/r.txt"
ok $? "a run's lock wait: total, rate and spread in ms: $(grep '^lock_wait_ns' "$TMP/r.txt")"
grep -Eq "^lock_wait_max_ns +max 1\.26 ms +- " "$TMP/r.txt"; ok $? "a run's maximum: max 1.26 ms, no rate"
grep -Eq "^psi_cpu_some_us +4\.90 s +490 ms/s " "$TMP/r.txt"; ok $? "PSI (stored in us) in s and ms/s"
grep -Eq "^context_switches +100000 +10000 " "$TMP/r.txt"; ok $? "counts stay counts"
sm --format json report --since w2-r1 --until w2-r1 > "$TMP/r.json"
[ "$(jpy 'd["runs"][0]["metrics"]["lock_wait_ns"]["total"]' < "$TMP/r.json")" = 984348990 ]; ok $? "JSON keeps the stored unit (ns)"

# --- curve: the heads, the rest on request ---
hdr=$(grep -m1 "^N " "$TMP/c.txt")
[ "$(echo "$hdr" | awk '{ print NF - 7 }')" = 6 ]; ok $? "curve shows six counter columns by default: $hdr"
echo "$hdr" | grep -Eq "context_switches +cpu_migrations +page_faults +lock_wait +runqueue_wait +cpu_time$"
ok $? "the heads of the families, times without their stored unit"
w=$(awk '{ if (length($0) > m) m = length($0) } END { print m }' "$TMP/c.txt")
[ "$w" -le 140 ]; ok $? "no line over 140 characters ($w)"
sed -n '/^N /,/^USL/p' "$TMP/c.txt" | grep -E "^1 " > "$TMP/c1.txt"
# per unit of work at workers=1 (mean over its six runs of rate / score)
want=$(python3 -c '
import json
d = json.load(open("'"$TMP/units.json"'"))
r = [x for x in d["runs"] if x["tags"]["workers"] == "1"]
lw = sum(x["totals"]["system"]["lock_wait_ns"] / 10 / x["scores"]["bogo_ops_s"] for x in r) / len(r)
cpu = sum((x["totals"]["system"]["cpu_user"] + x["totals"]["system"]["cpu_system"]) / 10 / x["scores"]["bogo_ops_s"] for x in r) / len(r)
print("%.1f us,%.2f ms" % (lw / 1e3, cpu * 1e3))')
grep -q " ${want%,*} " "$TMP/c1.txt" && grep -q " ${want#*,}$" "$TMP/c1.txt"
ok $? "lock wait and busy CPU time per unit of work, in us and ms ($want): $(cat "$TMP/c1.txt")"
sm curve --by workers --all-metrics > "$TMP/ca.txt"
[ "$(grep -m1 "^N " "$TMP/ca.txt" | awk '{ print NF - 7 }')" -gt 15 ]; ok $? "--all-metrics: every counter that moved ($(grep -m1 "^N " "$TMP/ca.txt" | awk '{ print NF - 7 }') columns)"
! grep -q "lock_wait_max" "$TMP/ca.txt"; ok $? "never the maximum: it has no value per unit of work"
sm curve --by workers --metric numa_hit,lock_wait_ns > "$TMP/cm.txt"
grep -Eq "^N .* numa_hit +lock_wait$" "$TMP/cm.txt"; ok $? "--metric: the counters named"
[ "$(jpy '"lock_wait_max_ns" in d["points"][0]["per_score"]' < "$TMP/c.json")" = false ] &&
        [ "$(jpy 'len(d["points"][0]["per_score"])' < "$TMP/c.json")" -gt 15 ]
ok $? "curve JSON: every counter per unit of work but the maximum"
finish
