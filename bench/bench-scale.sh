#!/bin/bash
# bench-scale.sh - what scalemond costs on big machines, from this one:
# scalemond --simulate-cpus N drives the real sampler-to-store path for N
# CPUs (real perf group reads and /proc/stat replayed per simulated CPU,
# real decode, batching and SQLite writes).
#
# For N in 2, 64, 256 and 1024 at a 1s interval, over BENCH_SECONDS (30):
#   CPU per tick   the daemon's CPU time (ns, /proc/PID/schedstat; else
#                  utime+stime) over the ticks it wrote in that time
#   peak RSS       VmHWM
#   DB per tick    growth of the database (pages, WAL included) per tick
# Targets: at 1024 CPUs under 5 ms of CPU per tick and at most 8 MiB peak
# RSS (the row that catches a memory regression: peak RSS at 2, 64, 256
# and 1024 CPUs side by side); cost per CPU at 1024 within 1.5x of that
# at 256 (linear).
# On a shared, loaded machine the CPU numbers are noisy: read them as such.
set -u
: "${top_builddir:=.}"
D=${BENCH_SECONDS:-30}
CPUS=${BENCH_SCALE_CPUS:-2 64 256 1024}
tmp=$(mktemp -d /tmp/scalemon-bench.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null && wait "$pid"; rm -rf "$tmp"' EXIT
command -v sqlite3 >/dev/null || { echo "bench-scale: needs the sqlite3 command-line tool"; exit 0; }
[ "$(id -u)" = 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 0 ] ||
        { echo "bench-scale: needs root (or perf_event_paranoid <= 0) for per-CPU perf events"; exit 0; }
HZ=$(getconf CLK_TCK)

cpu_ns() {              # the process's CPU time so far, ns
        if [ -r "/proc/$1/schedstat" ]; then
                awk '{ print $1 }' "/proc/$1/schedstat"
        else            # fields 14, 15 after the (comm)
                sed 's/.*) //' "/proc/$1/stat" | awk -v hz="$HZ" '{ printf "%.0f\n", ($12 + $13) * 1e9 / hz }'
        fi
}
db_state() {            # "ticks bytes" as a reader sees the database
        sqlite3 -readonly -batch -noheader -separator ' ' "$tmp/db" \
                "SELECT (SELECT count(*) FROM tick), (SELECT page_count * page_size FROM pragma_page_count, pragma_page_size)"
}

printf 'bench-scale: %ss per run, interval 1s, %s real CPUs replayed; CPU times are noisy on a shared machine\n' \
        "$D" "$(getconf _NPROCESSORS_ONLN)"
printf '  %6s  %8s  %12s  %12s  %10s  %12s\n' CPUs ticks "ms CPU/tick" "us/CPU/tick" "peak MiB" "KiB DB/tick"
: >"$tmp/results"
for n in $CPUS; do
        rm -f "$tmp"/db*
        # committing every second (the ticks are counted in the database;
        # the default, every 10 minutes, costs less per tick)
        "$top_builddir/scalemond" --foreground --db "$tmp/db" --socket "$tmp/sock" --interval 1s \
                --simulate-cpus "$n" --commit-interval 1s 2>"$tmp/log" &
        pid=$!
        for _ in $(seq 200); do grep -q started: "$tmp/log" && break; sleep 0.05; done
        grep -q started: "$tmp/log" || { echo "bench-scale: scalemond did not start:"; cat "$tmp/log"; exit 1; }
        sleep 2.5       # past the first flush
        read -r t0 b0 <<<"$(db_state)"; c0=$(cpu_ns "$pid")
        sleep "$D"
        read -r t1 b1 <<<"$(db_state)"; c1=$(cpu_ns "$pid")
        hwm=$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$pid/status")
        kill -TERM "$pid"; wait "$pid"; pid=
        awk -v n="$n" -v t="$((t1 - t0))" -v c="$((c1 - c0))" -v b="$((b1 - b0))" -v hwm="$hwm" 'BEGIN {
                if (t <= 0) { printf "  %6d  no ticks written\n", n; exit }
                ms = c / t / 1e6
                printf "  %6d  %8d  %12.2f  %12.2f  %10.1f  %12.1f\n", n, t, ms, ms * 1000 / n, hwm / 1024, b / t / 1024
                print n, ms, hwm / 1024 >> "'"$tmp/results"'"
        }'
done
awk 'function verdict(ok) { return ok ? "PASS" : "MISS" }
     { n = $1; ms[n] = $2; rss[n] = $3
       printf "  %d CPUs: %.2f ms CPU per tick (target < 5 ms) %s\n", n, ms[n], n == 1024 ? verdict(ms[n] < 5) : "(no target)"
       row = row sprintf("%s%d: %.1f", row == "" ? "" : ", ", n, rss[n]) }
     END {
        if (1024 in rss)
                printf "  peak RSS, MiB by CPUs: %s (target at 1024: <= 8 MiB) %s\n", row, verdict(rss[1024] <= 8)
        if ((1024 in ms) && (256 in ms) && ms[256] > 0) {
                r = (ms[1024] / 1024) / (ms[256] / 256)
                printf "  linearity: per-CPU cost at 1024 / at 256 = %.2f (target <= 1.5) %s\n", r, verdict(r <= 1.5)
        }
     }' "$tmp/results"
