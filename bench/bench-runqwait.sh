#!/bin/bash
# bench-runqwait.sh - what runqueue_wait_ns costs where it is rebuilt with
# BPF (kernels without /proc/schedstat): one program run per context
# switch (sched_switch).
#
# 1. The programs' own time, measured by the kernel (kernel.bpf_stats_
#    enabled, set for this part only) during perf bench sched messaging:
#    ns per run of each program, and their share of the machine.
# 2. perf bench sched messaging (seconds, lower is better), the worst case
#    (hundreds of thousands of switches a second), under
#      sm-norq  scalemond at 1 s, runqueue_wait_ns excluded
#      sm-rq    scalemond at 1 s with it (the default)
#    alternated run by run (the order rotates each round), ROUNDS (7).
#    Target: sm-rq within 3% of sm-norq (median), or within the noise
#    (the median absolute deviation of sm-norq).
set -u
: "${top_builddir:=.}"
R=${ROUNDS:-7}
tmp=$(mktemp -d /tmp/scalemon-bench.XXXXXX)
obs_pid=
trap '[ -n "$obs_pid" ] && kill "$obs_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
[ "$(id -u)" = 0 ] || { echo "bench-runqwait: needs root (BPF)"; exit 0; }
[ -r /proc/schedstat ] && { echo "bench-runqwait: this kernel has /proc/schedstat: runqueue_wait_ns is read from it, no BPF to measure"; exit 0; }
printf 'exclude = runqueue_wait_ns\n' >"$tmp/norq.conf"
: >"$tmp/rq.conf"

start_daemon() {        # CONF
        rm -f "$tmp"/db*
        "$top_builddir/scalemond" --foreground --config "$1" --db "$tmp/db" --socket "$tmp/sock" --interval 1s \
                2>"$tmp/log" &
        obs_pid=$!
        for _ in $(seq 200); do grep -q started: "$tmp/log" && break; sleep 0.05; done
        grep -q started: "$tmp/log" || { echo "bench-runqwait: scalemond did not start:"; cat "$tmp/log"; exit 1; }
        if [ "$1" = "$tmp/rq.conf" ] && grep -q 'runqueue_wait_ns unavailable' "$tmp/log"; then
                echo "bench-runqwait: $(grep 'runqueue_wait_ns unavailable' "$tmp/log")"; exit 0
        fi
        sleep 1         # past start-up: steady-state cost only
}
stop_daemon() {
        [ -n "$obs_pid" ] || return 0
        kill -TERM "$obs_pid" 2>/dev/null; wait "$obs_pid" 2>/dev/null
        obs_pid=
}
messaging() { perf bench sched messaging -g 10 -l 500 2>/dev/null | awk '/Total time/ { print $3 }'; }
command -v perf >/dev/null || { echo "bench-runqwait: needs perf (linux-perf)"; exit 0; }
printf 'bench-runqwait: %s rounds, %s CPUs\n' "$R" "$(nproc)"

# --- 1. the programs' own time ---
if command -v bpftool >/dev/null && [ -w /proc/sys/kernel/bpf_stats_enabled ]; then
        old=$(cat /proc/sys/kernel/bpf_stats_enabled)
        start_daemon "$tmp/rq.conf"
        echo 1 >/proc/sys/kernel/bpf_stats_enabled
        bpftool -j prog show >"$tmp/p0.json"
        s0=$(awk '$1 == "ctxt" { print $2 }' /proc/stat); t0=$(date +%s%N)
        messaging >/dev/null
        t1=$(date +%s%N); s1=$(awk '$1 == "ctxt" { print $2 }' /proc/stat)
        bpftool -j prog show >"$tmp/p1.json"
        echo "$old" >/proc/sys/kernel/bpf_stats_enabled
        stop_daemon
        python3 - "$tmp/p0.json" "$tmp/p1.json" "$((t1 - t0))" "$(nproc)" "$((s1 - s0))" <<'PY'
import json, sys
names = ('rq_switch',)
def stats(path):
    return {p['name']: (p.get('run_time_ns', 0), p.get('run_cnt', 0)) for p in json.load(open(path))
            if p.get('name') in names}
a, b = stats(sys.argv[1]), stats(sys.argv[2])
wall, ncpu, switches = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
tot = 0
for n in names:
    if n in a and n in b:
        dt, dc = b[n][0] - a[n][0], b[n][1] - a[n][1]
        tot += dt
        print(f"  {n}: {dc} runs, {dt / dc if dc else 0:.0f} ns each")
print(f"  during messaging: {switches} context switches in {wall / 1e9:.2f} s; the programs' time "
      f"{tot / 1e6:.2f} ms = {tot / switches if switches else 0:.0f} ns per switch, "
      f"{tot / (wall * ncpu) * 100:.3f}% of the machine")
PY
fi

# --- 2. messaging, alternated ---
: >"$tmp/scores"
for r in $(seq "$R"); do
        set -- norq rq
        [ $((r % 2)) = 0 ] && set -- rq norq
        for o in "$@"; do
                start_daemon "$tmp/$o.conf"
                echo "sm-$o $(messaging)" >>"$tmp/scores"
                stop_daemon
        done
done
python3 - "$tmp/scores" <<'PY'
import statistics as st, sys
s = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) == 2:
        s.setdefault(f[0], []).append(float(f[1]))
base = st.median(s["sm-norq"])
noise = st.median([abs(x - base) for x in s["sm-norq"]]) / base * 100
for o in ("sm-norq", "sm-rq"):
    v = s[o]
    print(f"  messaging {o:8s} median {st.median(v):.3f} s  min {min(v):.3f}  max {max(v):.3f}  runs "
          + " ".join(f"{x:g}" for x in v))
d = (st.median(s["sm-rq"]) / base - 1) * 100
print(f"  messaging: sm-rq vs sm-norq {d:+.2f}% (target < 3%, or within noise {noise:.2f}%) "
      + ("PASS" if d < 3 or d <= noise else "MISS"))
PY
