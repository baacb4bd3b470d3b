#!/bin/bash
# bench-reports.sh - what a month of a big machine costs: its size on
# disk, and how long scalemonctl takes to report on it.
#
# The database (bench/bench-reports-gen.c): a 256-CPU machine (4 nodes of
# 64) sampled at 1 s for 30 days ending when it was made, the last 7 days
# raw and the 23 before as 1-minute rollups, with 2,000 runs whose ticks
# stay raw, each with the totals scalemond writes at a run's stop.  It
# takes minutes to make, so it is kept:
#   BENCH_REPORTS_DB    the file (default
#                       /var/tmp/scalemon-bench/reports-256x<DAYS>d.db),
#                       made again when another generator version made it
#   BENCH_REPORTS_DAYS  days to simulate (30); fewer for a quick run (the
#                       raw share and the runs scale with it)
#   BENCH_REPEATS       timed repeats of each command (5)
#
# Targets: 30 days of 256 CPUs at 1 s in 10 GiB; each of these under 1 s,
# the median of BENCH_REPEATS runs after one untimed run (warm page cache):
#   report --since RUN      RUN: the first run of the raw week, 7 days back
#                           (some 470 runs); then the same with the group
#                           analysis (--group-by, --baseline, --explain)
#   runs                    every run
#   curve --by ways         every run loaded, the aim7 ones plotted
#   query METRIC --step 1m  the database's last hour (--since/--until as
#                           @EPOCH: -1h and now, for a database made today)
set -u
: "${top_builddir:=.}"
DAYS=${BENCH_REPORTS_DAYS:-30}
DB=${BENCH_REPORTS_DB:-/var/tmp/scalemon-bench/reports-256x${DAYS}d.db}
N=${BENCH_REPEATS:-5}
CTL="$top_builddir/scalemonctl"
command -v sqlite3 >/dev/null || { echo "bench-reports: needs the sqlite3 command-line tool"; exit 0; }

mkdir -p "$(dirname "$DB")" || exit 1
free_kb=$(df -Pk "$(dirname "$DB")" | awk 'NR == 2 { print $4 }')
[ -e "$DB" ] || [ "$free_kb" -ge $((DAYS * 200 * 1024)) ] ||      # 30 days: 5.0 GiB
        { echo "bench-reports: $(dirname "$DB") has $((free_kb / 1024)) MiB free, $((DAYS * 200)) MiB needed"; exit 0; }
"$top_builddir/bench/bench-reports-gen" "$DB" "$DAYS" || exit 1

q() { sqlite3 -readonly -batch -noheader "$DB" "$1"; }
end_ns=$(q "SELECT max(t + dur) FROM tick")
raw_from=$(q "SELECT min(t) FROM tick WHERE t > $end_ns - (SELECT value FROM meta WHERE key = 'bench_reports_raw_s') * 1000000000")
since_run=$(q "SELECT name FROM run WHERE start >= $raw_from ORDER BY start LIMIT 1")
nsince=$(q "SELECT count(*) FROM run WHERE start >= (SELECT start FROM run WHERE name = '$since_run')")
nruns=$(q "SELECT count(*) FROM run")
hour_from="@$(((end_ns - 3600000000000) / 1000000000))"
hour_to="@$((end_ns / 1000000000))"

median_ms() {           # command... -> median wall time in ms over N runs, after a warm-up
        local i t0 t1
        "$@" >/dev/null 2>"$tmp_err" || { echo "FAILED"; return; }
        for ((i = 0; i < N; i++)); do
                t0=$(date +%s%N)
                "$@" >/dev/null 2>>"$tmp_err" || { echo "FAILED"; return; }
                t1=$(date +%s%N)
                echo $(((t1 - t0) / 1000))
        done | sort -n | awk '{ v[NR] = $1 } END { printf "%.1f\n", (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) / 1000 }'
}
tmp_err=$(mktemp /tmp/scalemon-bench.XXXXXX)
trap 'rm -f "$tmp_err"' EXIT

timed() {               # figure, command...
        local what=$1 ms
        shift
        ms=$(median_ms "$CTL" --db "$DB" "$@")
        if [ "$ms" = FAILED ]; then
                printf '  %-46s %16s  %-12s %s\n' "$what" "failed" "< 1000 ms" "FAIL"
                sed 's/^/    /' "$tmp_err" | head -5
                return
        fi
        awk -v w="$what" -v ms="$ms" 'BEGIN {
                printf "  %-46s %13.1f ms  %-12s %s\n", w, ms, "< 1000 ms", ms < 1000 ? "PASS" : "MISS" }'
}

printf 'bench-reports: scalemonctl on it, median of %d runs after one untimed (warm page cache)\n' "$N"
timed "report --since $since_run ($nsince runs)" report --since "$since_run"
timed "report ... --group-by, --baseline, --explain" report --since "$since_run" \
        --group-by bench,config,ways --baseline config=base --explain
timed "runs ($nruns runs)" runs
timed "curve --by ways --score jobs_per_min" curve --by ways --score jobs_per_min
timed "query context_switches, last hour, --step 1m" query context_switches --since "$hour_from" --until "$hour_to" --step 1m
