#!/bin/bash
# bench-daemon.sh - what scalemond costs in CPU, side by side with
# `perf stat -a -A -I` counting the same per-CPU events at the same
# interval (the tool people would otherwise leave running).
#
# Steady state: in each round scalemond and perf stat are started
# together and both run through the same window, so the machine's other
# load hits them alike.  After a warm-up (BENCH_WARMUP s, default 3), each
# process's CPU time is read from /proc/PID/task/*/schedstat (the first
# field: ns on the CPU, all its threads) at the start and at the end of
# the window (BENCH_SECONDS s, default 30).  ROUNDS (default 5) rounds,
# at each interval of BENCH_INTERVALS (ms, default "1000 100"), idle and
# under `perf bench sched messaging -g 4 -l 1000` run in a loop
# (BENCH_LOADS, default "idle messaging").  Reported: each side's CPU per
# tick and the ratio scalemond / perf stat, min/median/max over the rounds.
# Target: the median ratio <= 1.0 at every interval and load.
# scalemond commits every BENCH_COMMIT (default 10s, so that a window
# holds whole commits; the default commit_interval, 10m, commits sixty
# times less often and costs less still).
#
# Start-up, its own figure: wall time and CPU time from exec to the first
# sample written, each alone, idle, ROUNDS times: for scalemond, the first
# row of the tick table in its database (sqlite3 polled every 10 ms); for
# perf stat, the first interval line in its output file.  Both include
# the first interval itself (neither can write a delta sooner).  scalemond
# runs with --commit-interval 0 here, so its first sample is on disk at
# the first tick (with the default it is held up to 10 minutes).  Target:
# scalemond's start-up CPU at most twice perf stat's (median ratio), on a
# new database (the schema made); beside it, scalemond started again on
# that database (a service's start: the schema there).
# The start-up figure alone: BENCH_LOADS= BENCH_INTERVALS=1000.
#
# The machine may be shared: absolute figures swing several-fold with the
# other load; the ratio, measured side by side, is the figure to compare.
# For a quick run: BENCH_SECONDS=5 ROUNDS=2.
set -u
: "${top_builddir:=.}"
D=${BENCH_SECONDS:-30}
W=${BENCH_WARMUP:-3}
R=${ROUNDS:-5}
C=${BENCH_COMMIT:-10s}
IVS=${BENCH_INTERVALS:-1000 100}
LOADS=${BENCH_LOADS-idle messaging}
tmp=$(mktemp -d /tmp/scalemon-bench.XXXXXX)
sm_pid= pf_pid= load_pid=
cleanup() {
        [ -n "$sm_pid" ] && kill -TERM "$sm_pid" 2>/dev/null
        [ -n "$pf_pid" ] && kill -INT "$pf_pid" 2>/dev/null
        [ -n "$load_pid" ] && { : >"$tmp/stop"; wait "$load_pid" 2>/dev/null; }
        wait 2>/dev/null
        rm -rf "$tmp"
}
trap cleanup EXIT
[ "$(id -u)" = 0 ] || { echo "bench-daemon: needs root for system-wide counting"; exit 0; }
command -v perf >/dev/null && perf stat -e task-clock true >/dev/null 2>&1 ||
        { echo "bench-daemon: needs perf (linux-perf) with permission to count"; exit 0; }
command -v sqlite3 >/dev/null || { echo "bench-daemon: needs sqlite3 (start-up figure)"; exit 0; }
# the per-CPU software events scalemond opens, and the tracepoints it
# counts that this kernel has
events=context-switches,cpu-migrations     # no fault events: scalemond opens none by default (per_cpu_faults)
for tp in lock:contention_begin kvm:kvm_exit kvm:kvm_ple_window_update; do
        perf stat -e "$tp" true >/dev/null 2>&1 && events=$events,$tp
done

cpu_ns() {              # PID -> ns on the CPU so far, all its threads
        local sum=0 f v
        for f in /proc/"$1"/task/*/schedstat; do
                read -r v _ <"$f" 2>/dev/null && sum=$((sum + v))
        done
        echo "$sum"
}
now_ns() { date +%s%N; }

start_scalemond() {     # interval_ms commit_interval [keep: start on the database there is]
        [ -n "${3:-}" ] || rm -f "$tmp"/db*
        "$top_builddir/scalemond" --foreground --db "$tmp/db" --socket "$tmp/sock" --interval "${1}ms" \
                --commit-interval "$2" 2>"$tmp/sm.log" &
        sm_pid=$!
}
stop_scalemond() {
        kill -TERM "$sm_pid" 2>/dev/null; wait "$sm_pid" 2>/dev/null; sm_pid=
}
start_perf() {          # interval_ms output
        perf stat -a -A -x, -I "$1" -e "$events" -o "$2" 2>/dev/null &
        pf_pid=$!
}
stop_perf() {
        kill -INT "$pf_pid" 2>/dev/null; wait "$pf_pid" 2>/dev/null; pf_pid=
}
start_load() {
        rm -f "$tmp/stop"
        ( while [ ! -e "$tmp/stop" ]; do perf bench sched messaging -g 4 -l 1000 >/dev/null 2>&1; done ) &
        load_pid=$!
}
stop_load() {
        : >"$tmp/stop"; wait "$load_pid" 2>/dev/null; load_pid=
}

steady_round() {        # interval_ms load: appends "iv load sm_ns pf_ns" to $tmp/steady
        local a0 b0 a1 b1
        start_scalemond "$1" "$C"
        start_perf "$1" /dev/null
        sleep "$W"
        if ! kill -0 "$sm_pid" 2>/dev/null || ! kill -0 "$pf_pid" 2>/dev/null; then
                echo "bench-daemon: an observer died during warm-up:" >&2; cat "$tmp/sm.log" >&2; exit 1
        fi
        a0=$(cpu_ns "$sm_pid"); b0=$(cpu_ns "$pf_pid")
        sleep "$D"
        a1=$(cpu_ns "$sm_pid"); b1=$(cpu_ns "$pf_pid")
        stop_scalemond; stop_perf
        echo "$1 $2 $((a1 - a0)) $((b1 - b0))" >>"$tmp/steady"
}

# Poll (every 10 ms) until CMD succeeds; then "wall_ns cpu_ns" since t0.
startup_wait() {        # pid t0 cmd...
        local pid=$1 t0=$2 i; shift 2
        for i in $(seq 3000); do
                if "$@"; then echo "$(($(now_ns) - t0)) $(cpu_ns "$pid")"; return 0; fi
                sleep 0.01
        done
        echo "bench-daemon: no first sample within 30 s" >&2; return 1
}
sm_ticks() { sqlite3 "file:$tmp/db?mode=ro" 'SELECT count(*) FROM tick' 2>/dev/null || echo 0; }
sm_has_tick() { [ -e "$tmp/db" ] && [ "$(sm_ticks)" -gt "${ticks0:-0}" ] 2>/dev/null; }
pf_has_line() { grep -q '^ *[0-9]' "$tmp/pf.out" 2>/dev/null; }

startup_round() {       # interval_ms: appends "iv sm_wall sm_cpu pf_wall pf_cpu sm2_wall sm2_cpu" to $tmp/startup
        local t0 sm pf sm2
        ticks0=0
        t0=$(now_ns); start_scalemond "$1" 0
        sm=$(startup_wait "$sm_pid" "$t0" sm_has_tick) || { cat "$tmp/sm.log" >&2; exit 1; }
        stop_scalemond
        rm -f "$tmp/pf.out"
        t0=$(now_ns); start_perf "$1" "$tmp/pf.out"
        pf=$(startup_wait "$pf_pid" "$t0" pf_has_line) || exit 1
        stop_perf
        # again on the database the first made (a restart: a service's start)
        ticks0=$(sm_ticks)
        t0=$(now_ns); start_scalemond "$1" 0 keep
        sm2=$(startup_wait "$sm_pid" "$t0" sm_has_tick) || { cat "$tmp/sm.log" >&2; exit 1; }
        stop_scalemond
        echo "$1 $sm $pf $sm2" >>"$tmp/startup"
}

stats() {               # python: summaries and the verdicts, from $tmp/steady and $tmp/startup
        python3 - "$tmp/steady" "$tmp/startup" "$D" <<'EOF'
import statistics as st, sys
steady, startup, D = sys.argv[1], sys.argv[2], float(sys.argv[3])
def mmm(xs, fmt):
    return "/".join(fmt.format(x) for x in (min(xs), st.median(xs), max(xs)))
rows = {}
for line in open(steady):
    iv, load, a, b = line.split()
    rows.setdefault((int(iv), load), []).append((int(a), int(b)))
for (iv, load), rs in sorted(rows.items(), key=lambda k: (-k[0][0], k[0][1])):
    ticks = D * 1000 / iv
    sm = [a / ticks / 1000 for a, b in rs]
    pf = [b / ticks / 1000 for a, b in rs]
    ratio = [a / b if b else float("inf") for a, b in rs]
    med = st.median(ratio)
    print(f"  {iv:5d}ms {load:9s} scalemond {mmm(sm, '{:.1f}')} us/tick   perf stat {mmm(pf, '{:.1f}')} us/tick"
          f"   ratio {mmm(ratio, '{:.2f}')} (min/median/max of {len(rs)})")
    print(f"  {iv:5d}ms {load:9s} steady state, scalemond / perf stat: median {med:.2f} (target <= 1.0)  "
          + ("PASS" if med <= 1.0 else "MISS"))
    if iv == 1000 and load == "idle":
        print(f"  at 1s idle: scalemond {st.median(sm) * 3600 / 1e6:.2f} s of CPU per hour, perf stat "
              f"{st.median(pf) * 3600 / 1e6:.2f} s")
su = {}
for line in open(startup):
    iv, *v = line.split()
    su.setdefault(int(iv), []).append([int(x) for x in v])
for iv, rs in sorted(su.items(), key=lambda k: -k[0]):
    col = lambda i: [r[i] / 1e6 for r in rs]
    print(f"  {iv:5d}ms start-up to the first sample written: scalemond {mmm(col(0), '{:.0f}')} ms wall, "
          f"{mmm(col(1), '{:.1f}')} ms CPU;  perf stat {mmm(col(2), '{:.0f}')} ms wall, {mmm(col(3), '{:.1f}')} ms CPU"
          f" (min/median/max of {len(rs)})")
    print(f"  {iv:5d}ms start-up of scalemond on the database it made (a restart): {mmm(col(4), '{:.0f}')} ms wall, "
          f"{mmm(col(5), '{:.1f}')} ms CPU")
    cr = st.median([r[1] / r[3] for r in rs if r[3]])
    wr = st.median([r[0] / r[2] for r in rs if r[2]])
    rr = st.median([r[5] / r[3] for r in rs if r[3]])
    print(f"  {iv:5d}ms start-up, scalemond / perf stat: CPU {cr:.2f}, wall {wr:.2f}; restarted, CPU {rr:.2f} "
          "(medians; target: CPU <= 2) " + ("PASS" if cr <= 2 else "MISS"))
EOF
}

printf 'bench-daemon: steady state %s rounds of %ss after %ss warm-up, scalemond and perf stat at once; %s CPUs; events %s\n' \
        "$R" "$D" "$W" "$(nproc)" "$events"
: >"$tmp/steady"; : >"$tmp/startup"
for load in $LOADS; do
        [ "$load" = idle ] || start_load
        for r in $(seq "$R"); do
                for iv in $IVS; do
                        steady_round "$iv" "$load"
                done
        done
        [ "$load" = idle ] || stop_load
done
for r in $(seq "$R"); do
        for iv in $IVS; do
                startup_round "$iv"
        done
done
stats
