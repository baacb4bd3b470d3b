#!/bin/bash
# analysis-seeds.sh - report --group-by/--baseline/--explain and curve on
# fixtures built from the published numbers of ../shared/seeds (see
# tests/fixtures/gen-seeds.py), imported with scalemonctl import: what a
# user must see.
. "${srcdir:-.}/tests/lib.sh"
command -v python3 >/dev/null || skip_all "python3 not installed (the test reads JSON with it)"
F=$srcdir/tests/fixtures/seeds
sm() { "$SCALEMONCTL" --db "$TMP/$1.db" "${@:2}"; }
for f in aim7 speedup thp; do
        sm "$f" import "$F/$f.json" >/dev/null; ok $? "import $f fixture"
done

# --- AIM7 (seed 000): config 1 vs 2 at 20/40/80 ways, 3 runs each ---
sm aim7 --format json report --group-by config,ways --baseline config=1 --explain > "$TMP/aim7.json"
g() { jpy "[x for x in d['groups'] if x['tags'] == {'config': '$1', 'ways': '$2'}][0]$3" < "$TMP/aim7.json"; }
[ "$(jpy 'len(d["groups"])' < "$TMP/aim7.json")" = 6 ]; ok $? "six groups"
[ "$(g 2 80 "['high_variance']")" = true ]; ok $? "config=2 ways=80 is HIGH VARIANCE (cv $(g 2 80 "['scores']['jobs_per_min']['cv']"))"
for w in 20 40 80; do
        [ "$(g 1 $w "['high_variance']")" = false ]; ok $? "config=1 ways=$w is not"
done
[ "$(g 2 80 "['vs_baseline']['jobs_per_min']['verdict']")" = regression ]
ok $? "config=2 ways=80 is a regression against config=1 ways=80 (p=$(g 2 80 "['vs_baseline']['jobs_per_min']['p_value']"))"
[ "$(g 2 80 "['baseline_tags']")" = "{'config': '1', 'ways': '80'}" ]; ok $? "its baseline is config=1 at the same ways"
[ "$(g 2 20 "['vs_baseline']['jobs_per_min']['verdict']")" = "no significant change" ]
ok $? "config=2 ways=20: no significant change (p=$(g 2 20 "['vs_baseline']['jobs_per_min']['p_value']"))"
[ "$(g 1 20 "['baseline']")" = true ]; ok $? "config=1 groups are the baselines"
m=$(g 2 80 "['scores']['jobs_per_min']['mean']"); md=$(g 2 80 "['scores']['jobs_per_min']['median']")
[ "$m" = 32133.333333333332 ] || awk -v m="$m" 'BEGIN { exit !(m > 32133.33 && m < 32133.34) }'
ok $? "mean of 21300, 43000, 32100 = 32133.33 ($m)"
[ "$md" = 32100 ]; ok $? "median 32100"
sd=$(g 2 80 "['scores']['jobs_per_min']['stddev']")
awk -v s="$sd" 'BEGIN { exit !(s > 10849.9 && s < 10850.1) }'; ok $? "stddev (n-1) 10850.0 ($sd)"
first=$(jpy 'd["explain"][0]["ranking"][0]["metric"]' < "$TMP/aim7.json")
rho=$(jpy 'd["explain"][0]["ranking"][0]["rho"]' < "$TMP/aim7.json")
[ "$first" = "lock_contentions/s" ]; ok $? "--explain across all runs: the counter built to explain ranks first ($first, rho=$rho)"
awk -v r="$rho" 'BEGIN { exit !(r < -0.99) }'; ok $? "and moves against the score"
[ "$(jpy 'd["explain"][0]["n"]' < "$TMP/aim7.json")" = 18 ]; ok $? "over all 18 runs"
note=$(g 2 80 "['explain'][0]['note']")
echo "$note" | grep -q "too few to tell"; ok $? "inside the flagged group, n=3 is said to be too few: $note"
top=$(g 2 80 "['metrics_vs_baseline'][0]['metric']")
[ "$top" = lock_contentions ]; ok $? "the counter that moved most against the baseline comes first ($top)"
sm aim7 report --group-by config,ways --baseline config=1 --explain > "$TMP/aim7.txt"
grep -q "config=2 ways=80 .*HIGH VARIANCE .*regression" "$TMP/aim7.txt"; ok $? "table: HIGH VARIANCE and the verdict at a glance"
# (the row shows both views and which one ranked it)
grep -Eq "lock_contentions/s +rho/s=-1.00 +rho/jobs_per_min=-1.00 +n=18 +p=.*\(ranked per (second|unit of score)\)" "$TMP/aim7.txt"
ok $? "table: 'lock_contentions/s  rho/s=-1.00  rho/jobs_per_min=-1.00  n=18  p=...  (ranked ...)'"
sm aim7 --format csv report --group-by config,ways --baseline config=1 > "$TMP/aim7.csv"
python3 -c 'import csv,sys; rows=list(csv.DictReader(open(sys.argv[1]))); r=[x for x in rows if x["tags.config"]=="2" and x["tags.ways"]=="80"][0]; sys.exit(not (r["high_variance"]=="true" and r["vs_baseline.jobs_per_min.verdict"]=="regression"))' "$TMP/aim7.csv"
ok $? "CSV: one row per group with high_variance and the verdict"
# fewer than 3 runs on a side: say so rather than guess
sm aim7 --format json report --group-by config,ways --baseline config=1 --until aim7-c2-w80-r2 > "$TMP/few.json"
[ "$(jpy "[x for x in d['groups'] if x['tags'] == {'config': '2', 'ways': '80'}][0]['vs_baseline']['jobs_per_min']['verdict']" < "$TMP/few.json")" = "too few runs" ]
ok $? "two runs against three: 'too few runs'"
# thresholds are settable
sm aim7 --format json report --group-by config,ways --variance-cv 50 --variance-minmax 0.3 > "$TMP/lax.json"
[ "$(jpy "[x['high_variance'] for x in d['groups'] if x['tags'] == {'config': '2', 'ways': '80'}][0]" < "$TMP/lax.json")" = false ]
ok $? "--variance-cv 50 --variance-minmax 0.3: no longer flagged"

# --- TCG speedup curve (seed 001): 1 to 28 vCPUs, three series ---
sm speedup --format json curve --by vcpus --series variant > "$TMP/curve.json"
pt() { jpy "[p for s in d['series'] if s['value'] == '$1' for p in s['points'] if p['n'] == $2][0]['$3']" < "$TMP/curve.json"; }
us() { jpy "[s['usl'] for s in d['series'] if s['value'] == '$1'][0]['$2']" < "$TMP/curve.json"; }
[ "$(jpy 'len(d["series"])' < "$TMP/curve.json")" = 3 ]; ok $? "three series"
[ "$(jpy '[len(s["points"]) for s in d["series"]]' < "$TMP/curve.json" | sort -u)" = 8 ]; ok $? "eight points each"
# by hand: baseline at 8 vCPUs: runs at 720 x 0.99, 1.00, 1.01, mean 720; 1 vCPU mean 100
awk -v s="$(pt baseline 8 speedup)" 'BEGIN { exit !(s > 7.19999 && s < 7.20001) }'; ok $? "baseline speedup at 8 = 720/100 = 7.2"
awk -v e="$(pt baseline 8 efficiency)" 'BEGIN { exit !(e > 0.89999 && e < 0.90001) }'; ok $? "efficiency at 8 = 7.2/8 = 0.9"
awk -v s="$(pt cputlb-no-bql 28 speedup)" 'BEGIN { exit !(s > 13.7999 && s < 13.8001) }'; ok $? "cputlb-no-bql speedup at 28 = 13.8"
awk -v e="$(pt cputlb-no-bql 28 efficiency)" 'BEGIN { exit !(e > 0.49285 && e < 0.49286) }'; ok $? "efficiency at 28 = 13.8/28 = 0.49286"
awk -v a="$(pt baseline 12 min)" -v b="$(pt baseline 12 max)" -v m="$(pt baseline 12 mean)" \
        'BEGIN { exit !(a > 871.19 && a < 871.21 && b > 888.79 && b < 888.81 && m > 879.99 && m < 880.01) }'
ok $? "baseline at 12: mean 880, min 871.2, max 888.8"
sb=$(us baseline sigma); sc=$(us cputlb-no-bql sigma)
awk -v a="$sb" -v b="$sc" 'BEGIN { exit !(a > b) }'; ok $? "the series that flattens has the larger sigma ($sb > $sc)"
awk -v r="$(us baseline r2)" 'BEGIN { exit !(r > 0.99) }'; ok $? "USL fits the baseline (r2 $(us baseline r2))"
sm speedup curve --by vcpus --series variant > "$TMP/curve.txt"
grep -q "^USL: sigma=.*(contention), kappa=.*(coherency).*peak throughput at N=" "$TMP/curve.txt"; ok $? "table prints sigma, kappa, peak N"
ps=$(jpy "[p for s in d['series'] if s['value'] == 'baseline' for p in s['points'] if p['n'] == 28][0]['per_score']['lock_contentions']" < "$TMP/curve.json")
p1=$(jpy "[p for s in d['series'] if s['value'] == 'baseline' for p in s['points'] if p['n'] == 1][0]['per_score']['lock_contentions']" < "$TMP/curve.json")
awk -v a="$ps" -v b="$p1" 'BEGIN { exit !(a > 20 * b) }'; ok $? "lock contentions per unit of score grow with N ($p1 -> $ps)"
out=$(sm speedup curve --by vcpus 2>&1 >/dev/null); rc=$?
[ $rc = 0 ]; ok $? "curve without --series: one curve over all runs"
out=$(sm speedup curve --by variant 2>&1); rc=$?
[ $rc = 1 ] && echo "$out" | grep -q "no run in range has both score builds_per_hour and a numeric tag variant"; ok $? "a non-numeric --by says so ($out)"

# --- THP (seed 003): sys time 20-fold with THP on ---
sm thp --format json report --group-by thp,cores --baseline thp=off --lower-is-better seconds > "$TMP/thp.json"
t() { jpy "[x for x in d['groups'] if x['tags'] == {'thp': 'on', 'cores': '$1'}][0]$2" < "$TMP/thp.json"; }
ratio=$(t 128 "['times_vs_baseline']['sys_s']['ratio']")
awk -v r="$ratio" 'BEGIN { exit !(r > 22.96 && r < 22.97) }'; ok $? "sys time ratio at 128 cores: 143m13.764s / 6m14.220s = 22.96 ($ratio)"
[ "$(t 128 "['vs_baseline']['seconds']['verdict']")" = regression ]; ok $? "run time up: a regression (lower is better)"
new=$(jpy "[m['metric'] for m in [x for x in d['groups'] if x['tags'] == {'thp': 'on', 'cores': '128'}][0]['metrics_vs_baseline'] if m['change_pct'] is None]" < "$TMP/thp.json")
echo "$new" | grep -q thp_fault_alloc && echo "$new" | grep -q thp_split_page; ok $? "THP counters that appear only with THP on: $(echo $new)"
mig=$(jpy "[m['change_pct'] for m in [x for x in d['groups'] if x['tags'] == {'thp': 'on', 'cores': '128'}][0]['metrics_vs_baseline'] if m['metric'] == 'numa_pages_migrated'][0]" < "$TMP/thp.json")
awk -v m="$mig" 'BEGIN { exit !(m > 100) }'; ok $? "NUMA pages migrated up ($mig%)"
sm thp report --group-by thp,cores --baseline thp=off --lower-is-better seconds > "$TMP/thp.txt"
grep -q "sys_s  22.96x" "$TMP/thp.txt"; ok $? "table: 'sys_s  22.96x'"
grep -Eq "thp_fault_alloc +new" "$TMP/thp.txt"; ok $? "table: thp_fault_alloc new with THP on"

# --- what a first real study tripped over (tests/fixtures/study.json, gen-study.py) ---
sm study import "$srcdir/tests/fixtures/study.json" >/dev/null; ok $? "import the study fixture"
# 1: seconds where lower is better, work growing with N (messaging -g N)
out=$(sm study curve --by groups --tag bench=messaging 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "seconds is lower-is-better (a time): a curve needs throughput.*--work fixed.*--work per-n"
ok $? "1: curve of a recorded lower-is-better time without --work: refused, saying what it needs (exit $rc)"
out=$(sm study curve --by threads --tag bench=flat --lower-is-better ops_per_s 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "ops_per_s is lower-is-better"; ok $? "1: curve --lower-is-better K is an option"
sm study --format json curve --by groups --tag bench=messaging --work per-n > "$TMP/msg.json"; ok $? "1: curve --work per-n"
s8=$(jpy '[p["speedup"] for p in d["points"] if p["n"] == 8][0]' < "$TMP/msg.json")
awk -v s="$s8" 'BEGIN { x1 = (1/0.099 + 1/0.1 + 1/0.101) / 3; x8 = (8/0.6237 + 8/0.63 + 8/0.6363) / 3; exit !(s > x8/x1 - 1e-6 && s < x8/x1 + 1e-6) }'
ok $? "1: speedup at N=8 is throughput (N/seconds) over N=1's: $s8, not 6.30"
[ "$(jpy 'd["lower_is_better"]' < "$TMP/msg.json")" = true ]; ok $? "1: the JSON says lower is better"
sm study curve --by groups --tag bench=messaging --work per-n > "$TMP/msg.txt"
grep -q "throughput is N / score" "$TMP/msg.txt" && grep -q "THROUGHPUT (N/score)" "$TMP/msg.txt"; ok $? "1: the table says what throughput is"
sm study --format json report --group-by groups --baseline groups=1 --tag bench=messaging > "$TMP/msgrep.json"
[ "$(jpy '[g for g in d["groups"] if g["tags"]["groups"] == "8"][0]["vs_baseline"]["seconds"]["verdict"]' < "$TMP/msgrep.json")" = regression ]
ok $? "1: report reads the recorded direction too: seconds up at -g 8 is a regression"
# 2: a fit that means nothing; one N
sm study --format json curve --by threads --tag bench=flat > "$TMP/flat.json"
[ "$(jpy 'd["usl"]["sigma"]' < "$TMP/flat.json")" = null ] && jpy 'd["usl"]["why"]' < "$TMP/flat.json" | grep -q "r2 0.09 is below 0.90"
ok $? "2: r2 0.09: usl sigma null, with why"
sm study curve --by threads --tag bench=flat | grep -q "USL: no meaningful fit (r2 0.09 is below 0.90"; ok $? "2: the table says no meaningful fit"
sm study --format json curve --by threads --tag bench=futex > "$TMP/futex.json"
[ "$(jpy 'd["points"][0]["speedup"]' < "$TMP/futex.json")" = null ] && [ "$(jpy 'd["points"][0]["efficiency"]' < "$TMP/futex.json")" = null ]
ok $? "2: one N: speedup and efficiency null (not 4.00 and 100%)"
sm study curve --by threads --tag bench=futex | grep -q "speedup: none (one value of N"; ok $? "2: the table says why"
# 3: the baseline's counters ranked by a significance test, tiny rates apart
sm study report --group-by config --baseline config=base --tag bench=mmap > "$TMP/base.txt"
sed -n '/vs config=base:/,$p' "$TMP/base.txt" | sed -n 2p | grep -q "^  context_switches  *+61.0%"
ok $? "3: context_switches +61% ranks first: $(sed -n '/vs config=base:/,$p' "$TMP/base.txt" | sed -n 2p)"
grep -q "negligible (below 10/s, or 10 ms/s for times, on both sides): .*cpu_iowait" "$TMP/base.txt" &&
        grep "negligible" "$TMP/base.txt" | grep -q "cpu_steal" && grep "negligible" "$TMP/base.txt" | grep -q "page_faults_major"
ok $? "3: cpu_iowait, cpu_steal, page_faults_major on the negligible line"
grep -Eq "cpu_migrations .*p=0.5.* \(not significant\)" "$TMP/base.txt"; ok $? "3: cpu_migrations +198% from one run: not significant"
# 4: explain, both views
sm study --format json report --tag bench=explain --explain --score ops > "$TMP/ex.json"
[ "$(jpy 'd["explain"][0]["ranking"][0]["metric"]' < "$TMP/ex.json")" = "context_switches/s" ] &&
        [ "$(jpy 'd["explain"][0]["ranking"][1]["ranked_by"]' < "$TMP/ex.json")" = "per unit of score" ]
ok $? "4: context_switches first; lock_contentions (proportional to the work) below it, ranked per unit of score"
# 12: display
sm study curve --by threads --tag bench=flat --metric lock_contentions > "$TMP/flat.txt"
grep -q "^counters per unit of work (rate / ops_per_s)" "$TMP/flat.txt" && grep -Eq "^N .* lock_contentions$" "$TMP/flat.txt"
ok $? "12: the curve's counters are said to be per unit of score: '$(grep -m1 "per unit of work" "$TMP/flat.txt")'"
sm study report --since cmp-a --metric lock_contentions > "$TMP/cmp.txt"
grep -Eq "^lock_contentions +198.1 +19.81 .* -99.98%$" "$TMP/cmp.txt"; ok $? "12: 19.81/s vs 87,669/s: -99.98%, not -100.0%"
sed -n '/^other:/,$p' "$TMP/cmp.txt" | grep -Eq "^lock_contentions +500 +50 .* -  *$"
ok $? "12: no VS_FIRST for a run whose tags differ from the first run's"
sm study --format json report --since cmp-a --metric lock_contentions > "$TMP/cmp.json"
[ "$(jpy '[r for r in d["runs"] if r["name"] == "other"][0]["metrics"]["lock_contentions"].get("vs_first_pct")' < "$TMP/cmp.json")" = null ]
ok $? "12: nor vs_first_pct in JSON"

# --- usage errors ---
err() { local out; out=$("$@" 2>&1 >/dev/null); local rc=$?; [ $rc = 2 ] && [ "$(echo "$out" | wc -l)" = 1 ]; ok $? "exit 2: $out"; }
err sm aim7 report --baseline config=1
err sm aim7 report --group-by config --baseline ways=80
err sm aim7 report --group-by config --variance-cv x
err sm speedup curve
err sm aim7 curve --by "bad key"
err sm study curve --by groups --work some
finish
