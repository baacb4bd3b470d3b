#!/bin/bash
# bench-cgroup.sh - what a run's own counters cost (daemon/sampler/owncg.c).
#
# While a run with its own cgroup is open, scalemond holds per CPU one
# perf event in cgroup mode for each cpu-scope perf metric it samples
# (context switches, migrations, faults x3, lock contentions: 6 fds and
# 6 kernel perf_event structures per CPU).  The kernel switches a CPU's
# cgroup events in and out when it switches between tasks of different
# cgroups, so the cost grows with context switches, and is nothing once
# the run ends.  Measured here on the worst case, a pipe ping-pong
# (tests/workloads/wl-pingpong N: 2N switches), timed inside the run, alternating
#   nocg   run exec --no-cgroup (the machine's counters only)
#   cg     run exec (its own cgroup, counted)
# and the run-start latency with and without a cgroup (the events'
# perf_event_open calls and the mkdir).  Reported: medians, the cost per
# context switch in ns, and per CPU at 100,000 switches/s.  Targets:
#   cg vs nocg on the ping-pong: under 5% (or within noise)
#   run start with a cgroup: under 50 ms
# ROUNDS (default 7), N (default 200000) set the size.
set -u
: "${top_builddir:=.}"
R=${ROUNDS:-7}
N=${N:-200000}
tmp=$(mktemp -d /tmp/scalemon-bench.XXXXXX)
d=
trap '[ -n "$d" ] && kill "$d" 2>/dev/null; rm -rf "$tmp"' EXIT
[ "$(id -u)" = 0 ] || { echo "bench-cgroup: needs root (cgroups, system-wide perf)"; exit 0; }
awk '$3 == "cgroup2" { f = 1 } END { exit !f }' /proc/self/mounts || { echo "bench-cgroup: no cgroup2 mount"; exit 0; }
"$top_builddir/scalemond" --foreground --db "$tmp/db" --socket "$tmp/sock" 2>"$tmp/log" & d=$!
for _ in $(seq 100); do grep -q started: "$tmp/log" && break; sleep 0.05; done
ctl() { "$top_builddir/scalemonctl" --db "$tmp/db" --socket "$tmp/sock" "$@"; }
wl="$top_builddir/tests/workloads/wl-pingpong"
cgdir=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)/scalemon-bench-$$
mkdir -p "$cgdir"
trap '[ -n "$d" ] && kill "$d" 2>/dev/null; rmdir "$cgdir" 2>/dev/null; rm -rf "$tmp"' EXIT
i=0
for r in $(seq "$R"); do
        for c in nocg cg; do
                [ $((r % 2)) = 0 ] && c=$([ $c = cg ] && echo nocg || echo cg)
                i=$((i + 1))
                opt=; [ $c = nocg ] && opt=--no-cgroup
                s=$(ctl run exec "b$i" $opt -- sh -c "t0=\$(date +%s%N); '$wl' $N >/dev/null; t1=\$(date +%s%N); echo \$((t1 - t0))")
                cs=$(ctl --format json report --since "b$i" --until "b$i" |
                     python3 -c 'import json,sys; m=json.load(sys.stdin)["runs"][0]["metrics"]["context_switches"]; print(round(m.get("own_total", m["total"])))')
                echo "$c $s $cs" >> "$tmp/ping"
                t0=$(date +%s%N); ctl run start "s$i" $([ $c = cg ] && echo --cgroup "$cgdir") >/dev/null
                t1=$(date +%s%N); ctl run stop "s$i" >/dev/null
                echo "$c $((t1 - t0))" >> "$tmp/start"
        done
done
kill "$d"; wait "$d" 2>/dev/null; d=
python3 - "$tmp/ping" "$tmp/start" "$(nproc)" "$N" <<'EOF'
import statistics as st, sys
ping, start, ncpu, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
t, sw, s = {}, {}, {}
for line in open(ping):
    c, ns, cs = line.split()
    t.setdefault(c, []).append(int(ns) / 1e9)
    if c == "cg":
        sw.setdefault(c, []).append(int(cs))
for line in open(start):
    c, ns = line.split()
    s.setdefault(c, []).append(int(ns) / 1e6)
base, cg = st.median(t["nocg"]), st.median(t["cg"])
noise = st.median([abs(x - base) for x in t["nocg"]]) / base * 100
cost = (cg / base - 1) * 100
switches = st.median(sw["cg"])
per_switch = (cg - base) / switches * 1e9
ok = lambda b: "PASS" if b else "MISS"
print(f"bench-cgroup: {len(t['nocg'])} rounds, {ncpu} CPUs, wl-pingpong {n} ({switches:.0f} own context switches)")
print(f"  ping-pong nocg {base:.4f}s  cg {cg:.4f}s  cost {cost:+.2f}%  noise (MAD) {noise:.2f}%")
print(f"    runs nocg " + " ".join(f"{x:.3f}" for x in t["nocg"]) + " | cg " + " ".join(f"{x:.3f}" for x in t["cg"]))
print(f"  cost per context switch of the run's tasks: {per_switch:.0f} ns; "
      f"per CPU at 100,000 switches/s: {per_switch * 1e5 / 1e9 * 100:.2f}% of that CPU; 6 perf fds per CPU")
print(f"  run start: no cgroup {st.median(s['nocg']):.1f} ms, with --cgroup {st.median(s['cg']):.1f} ms "
      f"({ncpu} CPUs x 6 events opened)")
print(f"  ping-pong cg vs nocg: {cost:+.2f}% (target < 5%, or within noise) " + ok(cost < 5 or cost <= noise))
print(f"  run start with a cgroup: {st.median(s['cg']):.1f} ms (target < 50 ms) " + ok(st.median(s['cg']) < 50))
EOF
