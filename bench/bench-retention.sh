#!/bin/bash
# bench-retention.sh - rolling up a backlog must not hold up sampling.
#
# A 256-CPU database is recorded by scalemond --simulate-cpus 256 at
# 100 ms with its clock set eight days back (the test seam
# SCALEMON_TEST_REALTIME_OFFSET_FILE), then copied forward in SQL into
# BENCH_RETAIN_MINUTES (60) minutes of such intervals, all past retain_raw.
# scalemond then starts on it with the defaults (raw 7d, 1m rollups),
# simulating 256 CPUs at the interval under test, and rolls the backlog up
# while it samples.  Printed, at 1 s and at 100 ms:
#   catch-up      seconds until every minute is one tick, and intervals
#                 merged per second
#   slice         the longest retention slice (scalemonctl status)
#   tick late     the latest a tick ran after its time, over the whole
#                 run; target: under one interval
#   CPU           the daemon's CPU time during catch-up over wall time
#                 (the work rests 4 parts in 5)
set -u
: "${top_builddir:=.}"
MIN=${BENCH_RETAIN_MINUTES:-60}
NS=1000000000
tmp=$(mktemp -d /tmp/scalemon-bench.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null && wait "$pid"; rm -rf "$tmp"' EXIT
command -v sqlite3 >/dev/null || { echo "bench-retention: needs the sqlite3 command-line tool"; exit 0; }
command -v python3 >/dev/null || { echo "bench-retention: needs python3"; exit 0; }
grep -qa SCALEMON_TEST_REALTIME_OFFSET_FILE "$top_builddir/scalemond" ||
        { echo "bench-retention: needs a build with the test seams (configure --enable-test-seams) for its clock offset"; exit 0; }
[ "$(id -u)" = 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 0 ] ||
        { echo "bench-retention: needs root (or perf_event_paranoid <= 0) for per-CPU perf events"; exit 0; }

cpu_ns() { awk '{ print $1 }' "/proc/$1/schedstat"; }
start() {       # start DB INTERVAL [env...]
        local db=$1 iv=$2; shift 2
        : >"$tmp/empty.conf"
        # committing every second: the latest tick is read from the database
        env "$@" "$top_builddir/scalemond" --foreground --config "$tmp/empty.conf" --db "$db" --socket "$tmp/sock" \
                --interval "$iv" --simulate-cpus 256 --commit-interval 1s 2>"$tmp/log" &
        pid=$!
        for _ in $(seq 200); do grep -q started: "$tmp/log" && return 0; sleep 0.05; done
        echo "bench-retention: scalemond did not start:"; cat "$tmp/log"; exit 1
}
stop() { kill -TERM "$pid"; wait "$pid"; pid=; }
status() {
        "$top_builddir/scalemonctl" --db "$1" --socket "$tmp/sock" --format json status |
                python3 -c 'import json, sys; r = json.load(sys.stdin)["daemon"]["retention"]
print(r["merged_intervals"], r["step_max_us"], r["tick_late_max_us"])'
}

# one minute of 256 simulated CPUs at 100 ms, eight days ago
echo "$(( -8 * 86400 * NS ))" > "$tmp/offset"
start "$tmp/seed.db" 100ms SCALEMON_TEST_REALTIME_OFFSET_FILE="$tmp/offset"
sleep 61
stop
sqlite3 -batch "$tmp/seed.db" >/dev/null <<EOF || { echo "bench-retention: cannot copy the minute forward"; exit 1; }
CREATE TEMP TABLE base AS SELECT min(id) AS id0, max(id) AS id1, min(t) AS t0, max(t + dur) - min(t) AS span FROM tick;
CREATE TEMP TABLE k AS WITH RECURSIVE s(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM s WHERE k < $MIN - 1) SELECT k FROM s;
BEGIN;
INSERT INTO tick (id, t, dur) SELECT tick.id + k * (id1 - id0 + 1), tick.t + k * span, dur FROM tick, base, k ORDER BY k, tick.id;
INSERT INTO cpu_sample (tick, metric, total, vals) SELECT tick + k * (id1 - id0 + 1), metric, total, vals FROM cpu_sample, base, k
  WHERE tick BETWEEN id0 AND id1;
INSERT INTO sample (tick, metric, loc, value) SELECT tick + k * (id1 - id0 + 1), metric, loc, value FROM sample, base, k
  WHERE tick BETWEEN id0 AND id1;
COMMIT;
PRAGMA wal_checkpoint(TRUNCATE);
EOF
read -r ticks bytes <<<"$(sqlite3 -batch -noheader -separator ' ' "$tmp/seed.db" \
        "SELECT count(*), page_count * page_size FROM tick, pragma_page_count, pragma_page_size")"
printf 'bench-retention: %d intervals of 256 simulated CPUs at 100 ms, eight days old (%d minutes, %d MiB)\n' \
        "$ticks" "$MIN" "$((bytes >> 20))"
printf '  %8s  %10s  %12s  %10s  %12s  %8s  %s\n' interval "catch-up s" "merged/s" "slice ms" "tick late ms" "CPU %" target
fail=0
for iv in 1s 100ms; do
        cp "$tmp/seed.db" "$tmp/db"
        ivns=$([ "$iv" = 1s ] && echo $NS || echo $((NS / 10)))
        want=$((ticks - 2 * MIN - 2))   # about one tick per minute is left
        t0=$(date +%s%N)
        start "$tmp/db" "$iv"
        c0=$(cpu_ns "$pid")
        merged=0
        while [ $(( ($(date +%s%N) - t0) / NS )) -lt 900 ]; do
                read -r merged slice late <<<"$(status "$tmp/db")"
                [ "$merged" -ge "$want" ] && break
                sleep 0.5
        done
        # done when a second goes by without merging
        while :; do
                sleep 1
                read -r m2 slice late <<<"$(status "$tmp/db")"
                [ "$m2" = "$merged" ] && break
                merged=$m2
        done
        t1=$(date +%s%N); c1=$(cpu_ns "$pid")
        stop
        left=$(sqlite3 -readonly -batch -noheader "$tmp/db" "SELECT count(*) FROM tick WHERE n = 1 AND t < $t0 - 7 * 86400 * $NS")
        awk -v iv="$iv" -v s="$(( (t1 - t0 - NS) ))" -v m="$merged" -v slice="$slice" -v late="$late" \
            -v ivns="$ivns" -v c="$((c1 - c0))" -v left="$left" 'BEGIN {
                sec = s / 1e9
                verdict = late * 1000 < ivns ? "PASS" : "MISS"
                printf "  %8s  %10.1f  %12.0f  %10.1f  %12.1f  %8.1f  late < %s: %s (%d raw left)\n",
                        iv, sec, m / sec, slice / 1000, late / 1000, 100 * c / (sec * 1e9), iv, verdict, left
                exit verdict != "PASS" }' || fail=1
done
exit 0
