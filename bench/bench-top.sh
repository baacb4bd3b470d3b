#!/bin/bash
# bench-top.sh - what `scalemonctl top` costs per refresh, on a terminal
# (tmux, 120x40, ncurses drawing), against scalemond at 100 ms: with this
# machine's CPUs, and with 256 simulated CPUs (--simulate-cpus 256), both
# folded to nodes (the default on 40 lines) and --per cpu (every CPU's
# values decoded and sorted, 33 rows drawn).  CPU time is top's task-clock
# as perf counts it; the cost of one refresh is the difference between
# N refreshes and one, divided by N - 1, so start-up is not in it.
#
# Target: under 5 ms of CPU per refresh at 256 CPUs (5% of a CPU at
# 100 ms), and each run of N refreshes takes N intervals (it keeps up).
set -u
: "${top_builddir:=.}"
N=${BENCH_REFRESHES:-100}
tmp=$(mktemp -d /tmp/scalemon-bench.XXXXXX)
TM="tmux -L scalemon-bench-$$ -f /dev/null"
trap '$TM kill-server 2>/dev/null; [ -n "${dpid:-}" ] && kill "$dpid" 2>/dev/null; rm -rf "$tmp"' EXIT
command -v tmux >/dev/null || { echo "bench-top: needs tmux"; exit 0; }
command -v perf >/dev/null && perf stat -e task-clock true >/dev/null 2>&1 ||
        { echo "bench-top: needs perf (linux-perf) with permission to count"; exit 0; }

start_daemon() {
        rm -f "$tmp"/db* "$tmp/log"
        "$top_builddir/scalemond" --foreground --db "$tmp/db" --socket "$tmp/sock" --interval 100ms "$@" 2>"$tmp/log" &
        dpid=$!
        for _ in $(seq 100); do grep -q started: "$tmp/log" && break; sleep 0.05; done
}
stop_daemon() { kill -TERM "$dpid"; wait "$dpid"; dpid=; }

# top_cpu N ARGS... -> "ms-of-CPU wall-ms" for N refreshes in the terminal
top_cpu() {
        local n=$1; shift
        rm -f "$tmp/out" "$tmp/done"
        $TM send-keys -t b "clear; t0=\$(date +%s%N); perf stat -x, -e task-clock -o $tmp/out -- \
$top_builddir/scalemonctl --socket $tmp/sock top --iterations $n $*; \
echo \$(( (\$(date +%s%N) - t0) / 1000000 )) > $tmp/done" Enter
        for _ in $(seq 600); do [ -s "$tmp/done" ] && break; sleep 0.1; done
        echo "$(awk -F, '$3 == "task-clock" { print $1 }' "$tmp/out") $(cat "$tmp/done")"
}

$TM new-session -d -x 120 -y 40 -s b "env TERM=xterm-256color sh" || { echo "bench-top: cannot start tmux"; exit 0; }
printf 'bench-top: %d refreshes at 100 ms, terminal 120x40, CPU per refresh = (CPU(N) - CPU(1)) / (N - 1)\n' "$N"
worst=0
for case in "real" "256 folded" "256 --per cpu"; do
        case $case in
        real) start_daemon; args= ;;
        "256 folded") start_daemon --simulate-cpus 256; args= ;;
        "256 --per cpu") args="--per cpu" ;;
        esac
        read -r one _ < <(top_cpu 1 $args)
        read -r many wall < <(top_cpu "$N" $args)
        awk -v c="$case" -v one="$one" -v many="$many" -v n="$N" -v wall="$wall" -v cpus="$(nproc)" 'BEGIN {
                per = (many - one) / (n - 1)
                printf "  %-14s %s  %6.3f ms CPU per refresh (%.2f%% of a CPU at 100 ms); %d refreshes in %.1f s\n",
                        c, c == "real" ? "(" cpus " CPUs)" : "", per, per / 1, n, wall / 1000
        }'
        awk -v one="$one" -v many="$many" -v n="$N" 'BEGIN { print (many - one) / (n - 1) }' >> "$tmp/per"
        [ "$case" = "256 folded" ] || stop_daemon
        [ "$case" = "real" ] || echo "$wall" >> "$tmp/walls"
done
# the daemon's side: its CPU per tick at 256 CPUs with no subscriber, and
# with top --per cpu subscribed (every CPU's values encoded each tick)
start_daemon --simulate-cpus 256
sleep 1
daemon_ms() { perf stat -x, -e task-clock -p "$dpid" -o "$tmp/d.out" -- sleep 5 2>/dev/null; awk -F, '$3 == "task-clock" { print $1 }' "$tmp/d.out"; }
idle=$(daemon_ms)
$TM send-keys -t b "clear; $top_builddir/scalemonctl --socket $tmp/sock top --per cpu --iterations 80" Enter
sleep 1
busy=$(daemon_ms)
awk -v a="$idle" -v b="$busy" 'BEGIN { printf "  scalemond at 256 CPUs, 100 ms: %.2f ms CPU a tick without a subscriber, %.2f with top --per cpu (+%.2f ms to encode and send)\n", a / 50, b / 50, (b - a) / 50 }'
stop_daemon

awk -v n="$N" 'NR == FNR { if ($1 > w) w = $1; next } { if ($1 > wall) wall = $1 }
        END { printf "  at 256 CPUs: worst %.3f ms CPU per refresh (target < 5 ms)  %s\n", w, w < 5 ? "PASS" : "MISS"
              printf "  keeps up: %d refreshes in at most %.1f s (target < %.1f s)  %s\n", n, wall / 1000, n * 0.1 * 1.2,
                     wall / 1000 < n * 0.1 * 1.2 ? "PASS" : "MISS" }' <(tail -n 2 "$tmp/per") "$tmp/walls"
