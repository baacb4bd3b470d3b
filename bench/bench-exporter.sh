#!/bin/bash
# bench-exporter.sh - what a Prometheus scrape costs on a 256-CPU host,
# simulated (scalemond --simulate-cpus 256, interval 1s) with 50 runs in
# the database, scraped once a second for BENCH_SECONDS (30):
#   scrape        time of one GET /metrics (curl's total: the exporter's
#                 request to scalemond, the runs read from SQLite, the
#                 formatting), median and max, per CPU and per node
#   bytes/series  the size of the exposition and its samples, each way
#   totals        the time scalemond's loop spends building and writing
#                 the reply to {"cmd":"totals"} (bench-totals, in-process:
#                 mean, best, worst of 200), and the round trip on the
#                 control socket (median and max of 30)
#   ticks         scalemond's intervals while being scraped: the longest
#                 step between interval ends, and how many came more than
#                 half an interval late (step > 1.5 s)
# Targets: a scrape under 50 ms, and no tick late.
set -u
: "${top_builddir:=.}"
D=${BENCH_SECONDS:-30}
N=${BENCH_EXPORTER_CPUS:-256}
tmp=$(mktemp -d /tmp/scalemon-bench.XXXXXX)
pid= epid=
trap '[ -n "$epid" ] && kill "$epid" 2>/dev/null; [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null && wait "$pid"; rm -rf "$tmp"' EXIT
command -v curl >/dev/null || { echo "bench-exporter: needs curl"; exit 0; }
command -v sqlite3 >/dev/null || { echo "bench-exporter: needs the sqlite3 command-line tool"; exit 0; }
[ "$(id -u)" = 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 0 ] ||
        { echo "bench-exporter: needs root (or perf_event_paranoid <= 0) for per-CPU perf events"; exit 0; }
ctl() { "$top_builddir/scalemonctl" --db "$tmp/db" --socket "$tmp/sock" "$@"; }
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

# committing every second (--commit-interval 1s): the lateness below is read from the tick rows
"$top_builddir/scalemond" --foreground --db "$tmp/db" --socket "$tmp/sock" --interval 1s --simulate-cpus "$N" \
        --commit-interval 1s 2>"$tmp/log" &
pid=$!
for _ in $(seq 200); do grep -q started: "$tmp/log" && break; sleep 0.05; done
grep -q started: "$tmp/log" || { echo "bench-exporter: scalemond did not start:"; cat "$tmp/log"; exit 1; }
for i in $(seq 50); do
        ctl run start "bench-$i" --tag ways=$((i % 8 + 1)) --tag kernel=6.1 >/dev/null &&
                ctl run stop "bench-$i" --score jobs_per_min=$((i * 1000)) >/dev/null
done

# one exporter per mode; each scraped once a second, alternately
scrape_series() {      # MODE: scrape every second for D/2 seconds, print times in ms
        local mode=$1 i
        "$top_builddir/scalemon-exporter" --listen "127.0.0.1:$port" --socket "$tmp/sock" --db "$tmp/db" \
                --per "$mode" 2>"$tmp/exporter-$mode.log" &
        epid=$!
        for _ in $(seq 50); do curl -sf -o /dev/null "http://127.0.0.1:$port/metrics" && break; sleep 0.1; done
        curl -sf -o "$tmp/metrics-$mode.txt" -H 'Accept: application/openmetrics-text; version=1.0.0' \
                "http://127.0.0.1:$port/metrics"
        for i in $(seq $((D / 2))); do
                curl -sf -o /dev/null -w '%{time_total}\n' -H 'Accept: application/openmetrics-text; version=1.0.0' \
                        "http://127.0.0.1:$port/metrics"
                sleep 1
        done >"$tmp/times-$mode"
        kill "$epid"; wait "$epid"; epid=
}
first=$(sqlite3 -readonly "$tmp/db" "SELECT max(id) FROM tick")
scrape_series cpu
scrape_series node
last=$(sqlite3 -readonly "$tmp/db" "SELECT max(id) FROM tick")

# the totals request alone, 30 times
python3 - "$tmp/sock" >"$tmp/totals" <<'EOP'
import socket, sys, time
ts, size = [], 0
for i in range(30):
    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
    t0 = time.perf_counter(); s.sendall(b'{"cmd":"totals"}\n'); buf = b""
    while not buf.endswith(b"\n"):
        buf += s.recv(1 << 20)
    ts.append((time.perf_counter() - t0) * 1000); size = len(buf); s.close(); time.sleep(0.05)
ts.sort()
print("%.2f %.2f %d" % (ts[len(ts) // 2], ts[-1], size))
EOP
read -r tot_med tot_max tot_bytes <"$tmp/totals"
read -r in_mean in_best in_worst in_bytes <<<"$("$top_builddir/bench/bench-totals" "$N")"
read -r worst lates ticks <<<"$(sqlite3 -readonly -separator ' ' "$tmp/db" \
        "SELECT max(step) / 1e9, sum(step > 1500000000), count(*) FROM (SELECT t + dur - lag(t + dur) OVER (ORDER BY id) AS step
         FROM tick WHERE id > $first AND id <= $last)")"

printf 'bench-exporter: %d simulated CPUs, interval 1s, 50 runs, scraped once a second for %ss; times are noisy on a shared machine\n' "$N" "$D"
for mode in cpu node; do
        bytes=$(wc -c <"$tmp/metrics-$mode.txt")
        series=$(grep -vc '^#' "$tmp/metrics-$mode.txt")
        sort -n "$tmp/times-$mode" | awk -v mode="$mode" -v bytes="$bytes" -v series="$series" -v n="$N" '
                { t[NR] = $1 * 1000 }
                END { med = t[int((NR + 1) / 2)]; max = t[NR]
                      printf "  per %-4s: %d series, %d bytes; scrape median %.1f ms, max %.1f ms (target < 50 ms) %s\n",
                             mode, series, bytes, med, max, ((max < 50) ? "PASS" : "MISS") }'
done
printf '  totals request: the loop'"'"'s time mean %s ms (best %s, worst %s), %s bytes; round trip median %s ms, max %s ms\n' \
        "$in_mean" "$in_best" "$in_worst" "$in_bytes" "$tot_med" "$tot_max"
awk -v w="$worst" -v l="$lates" -v t="$ticks" 'BEGIN {
        printf "  ticks while scraped: %d intervals, longest step %.3f s, %d late by more than half an interval (target 0) %s\n",
               t, w, l, ((l == 0 && t > 0) ? "PASS" : "MISS") }'
