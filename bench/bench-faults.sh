#!/bin/bash
# bench-faults.sh - what counting page faults costs a fault-heavy workload,
# option by option.
#
# Every page fault pays for each perf software event enabled on its path
# (page-faults, minor-faults, major-faults: the kernel walks the enabled
# events of that type on the faulting CPU), whoever reads them; the
# kernel's own per-CPU vm counters (/proc/vmstat pgfault, pgmajfault)
# cost nothing extra.  Workloads, each scored by its CPU time (user +
# system of all its processes, from getrusage: what the fault path adds
# to, and what the machine's other load hardly moves), wall time beside:
#   touch   tests/workloads/wl-touch, 4 x 200,000 fresh pages (0.8 M minor faults)
#   mmap    stress-ng --mmap 1 --mmap-ops 2 --mmap-bytes 128M (about 0.5 M faults)
#   memset  perf bench mem memset -s 256MB (its buffers' first touch)
# Observers (OBSERVERS, default all):
#   none       nothing running
#   sm         scalemond at its defaults, 1 s (faults from /proc/vmstat: no event)
#   sm-percpu  scalemond at 1 s with per_cpu_faults = yes (three events per CPU)
#   perf-3     perf stat -a -A -I 1000 -e page-faults,minor-faults,major-faults
#   perf-1     perf stat -a -A -I 1000 -e page-faults (one event)
#   perf-tp    perf stat -a -A -I 1000 -e exceptions:page_fault_user (one
#              tracepoint on the user fault path: what a BPF counter there
#              pays before its program runs)
# Observers alternate run by run (the order rotates each round), so drift
# on a shared machine hits them alike.  Reported per workload and
# observer: the median time, its cost against none in percent, min..max
# of the per-round costs (each round's time over that round's none), and
# the noise (the median absolute deviation of none, in percent).
# Targets: sm under 1% (or within noise); sm-percpu and perf-3 are shown
# for the record.  ROUNDS (default 7).  SCORES=FILE appends each round's
# times to FILE and reports over all of FILE (to run rounds one at a time,
# e.g. each under a lock: ROUNDS=1 SCORES=/tmp/f bench-faults.sh).
set -u
: "${top_builddir:=.}"
R=${ROUNDS:-7}
OBS=${OBSERVERS:-none sm sm-percpu perf-3 perf-1 perf-tp}
WLS=${WORKLOADS:-touch mmap memset}
tmp=$(mktemp -d /tmp/scalemon-bench.XXXXXX)
scores=${SCORES:-$tmp/scores}
obs_pid=
trap '[ -n "$obs_pid" ] && kill "$obs_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
[ "$(id -u)" = 0 ] || { echo "bench-faults: needs root for system-wide counting"; exit 0; }
command -v perf >/dev/null && perf stat -e task-clock true >/dev/null 2>&1 ||
        { echo "bench-faults: needs perf (linux-perf) with permission to count"; exit 0; }
command -v stress-ng >/dev/null || WLS=${WLS/mmap/}
perf stat -e exceptions:page_fault_user true >/dev/null 2>&1 || OBS=${OBS/perf-tp/}
echo "per_cpu_faults = yes" > "$tmp/percpu.conf"

start_observer() {
        local conf=/dev/null
        obs_pid=
        case $1 in
        none) return ;;
        sm|sm-percpu)
                [ "$1" = sm-percpu ] && conf=$tmp/percpu.conf
                rm -f "$tmp"/db*
                "$top_builddir/scalemond" --foreground --config "$conf" --db "$tmp/db" --socket "$tmp/sock" \
                        --interval 1s 2>"$tmp/log" &
                obs_pid=$!
                for _ in $(seq 100); do grep -q started: "$tmp/log" && break; sleep 0.05; done ;;
        perf-*)
                local ev=page-faults
                [ "$1" = perf-3 ] && ev=page-faults,minor-faults,major-faults
                [ "$1" = perf-tp ] && ev=exceptions:page_fault_user
                perf stat -a -A -x, -I 1000 -e "$ev" -o /dev/null sleep 100000 2>/dev/null &
                obs_pid=$! ;;
        esac
        sleep 1         # past start-up: steady-state cost only
}
stop_observer() {
        [ -n "$obs_pid" ] || return 0
        pkill -TERM -P "$obs_pid" 2>/dev/null
        kill -TERM "$obs_pid" 2>/dev/null; wait "$obs_pid" 2>/dev/null
        obs_pid=
}
score() {       # workload -> "CPU-seconds wall-seconds"
        local cmd
        case $1 in
        touch) cmd="for i in 1 2 3 4; do $top_builddir/tests/workloads/wl-touch 200000; done" ;;
        mmap) cmd="stress-ng --mmap 1 --mmap-ops 2 --mmap-bytes 128M -q" ;;
        memset) cmd="perf bench mem memset -s 256MB -l 1" ;;
        esac
        python3 -c '
import resource, subprocess, sys, time
t = time.monotonic()
subprocess.run(sys.argv[1], shell=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
w = time.monotonic() - t
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{r.ru_utime + r.ru_stime:.6f} {w:.6f}")' "$cmd"
}

printf 'bench-faults: %s rounds, %s CPUs, observers %s\n' "$R" "$(nproc)" "$OBS"
base=0
[ -f "$scores" ] && base=$(awk 'END { print $1 + 0 }' "$scores")
for r in $(seq "$R"); do
        round=$(( base + r ))
        for w in $WLS; do
                set -- $OBS
                for _ in $(seq $(( (round - 1) % $# ))); do set -- "$@" "$1"; shift; done
                for o in "$@"; do
                        start_observer "$o"
                        echo "$round $w $o $(score "$w")" >> "$scores"
                        stop_observer
                done
        done
done
python3 - "$scores" <<'EOF'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
by, wall = {}, {}
for rnd, w, o, v, wv in rows:
    by.setdefault(w, {}).setdefault(o, {})[rnd] = float(v)
    wall.setdefault(w, {}).setdefault(o, {})[rnd] = float(wv)
ok = lambda b: "PASS" if b else "MISS"
for w, obs in by.items():
    none = obs["none"]
    base = st.median(none.values())
    noise = st.median([abs(x - base) for x in none.values()]) / base * 100
    wn = st.median(wall[w]["none"].values())
    print(f"  {w}: CPU seconds, {len(none)} rounds; noise (MAD of none) {noise:.2f}%; wall beside")
    costs = {}
    for o, s in obs.items():
        per = [(s[r] / none[r] - 1) * 100 for r in s if r in none]
        costs[o] = (st.median(s.values()) / base - 1) * 100
        wc = (st.median(wall[w][o].values()) / wn - 1) * 100
        print(f"    {o:10s} {st.median(s.values()):8.3f} s  cost {costs[o]:+6.2f}%  per round "
              f"{min(per):+.1f}..{max(per):+.1f}%  wall {wc:+6.2f}%")
    if "sm" in costs:
        c = costs["sm"]
        print(f"    {w}: scalemond at its defaults vs none: {c:+.2f}% (target < 1%, or within noise {noise:.2f}%) "
              + ok(c < 1 or c <= noise))
EOF
