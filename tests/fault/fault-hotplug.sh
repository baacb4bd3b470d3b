#!/bin/bash
# fault-hotplug.sh - cpu1 goes offline for a second and comes back while a
# run is open and a workload runs on CPU 0.  CPU 0 is sampled on every
# tick without a gap, CPU 1 has no rows while offline and no bogus delta
# when it returns, the events are recorded, and the run's totals are still
# exactly the sums of its samples.  (live-hotplug.sh covers hotplug
# without a run.)
. "${srcdir:-.}/tests/lib.sh"
need_root
command -v sqlite3 >/dev/null || skip_all "sqlite3 command-line tool not installed"
command -v taskset >/dev/null || skip_all "taskset not installed"
need_hotplug 1
WLPID=
restore() {
        echo 1 > "$ONLINE" 2>/dev/null
        touch "$TMP/stop"
        [ -z "$WLPID" ] || { kill "$WLPID" 2>/dev/null; wait "$WLPID" 2>/dev/null; }
        cleanup
}
trap restore EXIT

INTERVAL=100ms
start_daemon
# the workload, on CPU 0 only: pipe round trips, so CPU 0 switches
# contexts in every interval
( while [ ! -e "$TMP/stop" ]; do taskset -c 0 "$WL/wl-pingpong" 20000 >/dev/null; done ) &
WLPID=$!
sleep 0.3
ctl run start hp >/dev/null; ok $? "run started"
sleep 0.5
echo 0 > "$ONLINE"; ok $? "cpu$CPU taken offline during the run"
sleep 1
echo 1 > "$ONLINE"; ok $? "cpu$CPU back online"
sleep 1
ctl run stop hp >/dev/null; ok $? "run stopped"
touch "$TMP/stop"; kill "$WLPID" 2>/dev/null; wait "$WLPID" 2>/dev/null; WLPID=
kill -0 "$DAEMON_PID"; ok $? "daemon kept running"

read -r st et < <(sql "SELECT start_tick, end_tick FROM run WHERE name = 'hp'" | tr '|' ' ')
iv=$(interval_ns)
inrun="tick > $st AND tick <= $et"
nt=$((et - st))
diag "run hp: ticks $st < id <= $et ($nt ticks at ${iv}ns)"
[ "$nt" -ge 10 ]; ok $? "the run has its ticks ($nt)"

# --- CPU 0: every tick, no gap ---
cs=$(sql "SELECT id FROM metric WHERE name = 'context_switches'")
miss=$(sql "SELECT count(*) FROM tick t WHERE t.id > $st AND t.id <= $et
            AND NOT EXISTS (SELECT 1 FROM sample_all WHERE tick = t.id AND metric = $cs AND loc = 0 AND value > 0)")
[ "$miss" = 0 ]; ok $? "every tick of the run has context_switches for CPU 0 ($miss without)"
read -r mind maxd < <(sql "SELECT min(dur), max(dur) FROM tick WHERE id > $st AND id <= $et" | tr '|' ' ')
diag "tick dur in the run: min ${mind}ns max ${maxd}ns"
[ "$mind" -gt 0 ] && [ "$maxd" -lt $((10 * iv)) ]; ok $? "tick lengths stay near the interval ($mind..$maxd ns)"
# back to back: a tick starts where the one before ended (t is the wall
# clock, dur the monotonic one: they agree to well under a millisecond)
gap=$(sql "SELECT max(abs(b.t - (a.t + a.dur))) FROM tick a JOIN tick b ON b.id = a.id + 1
           WHERE a.id >= $st AND b.id <= $et")
[ "$gap" -lt 1000000 ]; ok $? "ticks are back to back through the hotplug (largest gap or overlap $gap ns)"

# --- CPU 1: offline, then back without a bogus first delta ---
ev=$(sql "SELECT group_concat(kind, ' ') FROM (SELECT kind FROM event WHERE cpu = $CPU ORDER BY id)")
[ "$ev" = "cpu-offline cpu-online" ]; ok $? "hotplug events recorded: $ev"
t_evoff=$(sql "SELECT t FROM event WHERE cpu = $CPU AND kind = 'cpu-offline'")
t_evon=$(sql "SELECT t FROM event WHERE cpu = $CPU AND kind = 'cpu-online'")
read -r rs re < <(sql "SELECT start, end FROM run WHERE name = 'hp'" | tr '|' ' ')
[ "$t_evoff" -gt "$rs" ] && [ "$t_evon" -lt "$re" ]; ok $? "both events fall inside the run"
# the ticks that ended after the offline event and before the online one
off="SELECT id FROM tick WHERE t >= $t_evoff AND t + dur <= $t_evon"
noff=$(sql "SELECT count(*) FROM ($off)")
n1=$(sql "SELECT count(*) FROM sample_all s JOIN metric m ON m.id = s.metric WHERE m.scope = 'cpu' AND s.loc = $CPU AND s.tick IN ($off)")
[ "$noff" -ge 5 ] && [ "$n1" = 0 ]; ok $? "no rows for cpu$CPU in the $noff ticks it was offline ($n1)"
n0=$(sql "SELECT count(*) FROM sample_all WHERE metric = $cs AND loc = 0 AND tick IN ($off)")
[ "$n0" = "$noff" ]; ok $? "CPU 0 has context_switches in each of them ($n0)"
back=$(sql "SELECT id FROM tick WHERE t + dur = $t_evon")
non=$(sql "SELECT count(*) FROM sample_all WHERE metric = $cs AND loc = $CPU AND tick > $back AND tick <= $et")
[ "$non" -gt 0 ]; ok $? "cpu$CPU's context_switches resume after it returns ($non ticks)"
nfirst=$(sql "SELECT count(*) FROM sample_all s JOIN metric m ON m.id = s.metric WHERE m.scope = 'cpu' AND s.loc = $CPU
              AND s.tick = $back AND m.source NOT LIKE '/proc%'")
[ -n "$back" ] && [ "$nfirst" = 0 ]; ok $? "no perf delta for cpu$CPU in the interval it came back in (tick $back)"
# a CPU cannot spend more time than passed: /proc/stat times per CPU and
# tick stay within the tick's length (+ two 10 ms clock ticks of rounding)
read -r over worst < <(sql "SELECT count(*), max(secs - dur / 1e9) FROM (SELECT s.tick, s.loc, sum(s.value * m.scale) AS secs, t.dur
              FROM sample_all s JOIN metric m ON m.id = s.metric JOIN tick t ON t.id = s.tick
             WHERE m.source LIKE '/proc/stat%' AND m.scope = 'cpu' AND s.tick > $st AND s.tick <= $et
             GROUP BY s.tick, s.loc) WHERE secs > dur / 1e9 * 1.5 + 0.02" | tr '|' ' ')
[ "$over" = 0 ]; ok $? "no CPU's /proc/stat time in a tick exceeds the tick's length ($over do${worst:+, worst by ${worst}s})"
# perf counts: cpu$CPU's context switches after its return are not above
# 3x the busiest CPU-tick rate seen before it went (floor 1000/s)
read -r maxrate firstrate < <(sql "SELECT
        (SELECT max(max(s.value * 1e9 / t.dur), 1000) FROM sample_all s JOIN tick t ON t.id = s.tick
          WHERE s.metric = $cs AND s.tick > $st AND t.t + t.dur <= $t_evoff),
        (SELECT coalesce(max(s.value * 1e9 / t.dur), 0) FROM sample_all s JOIN tick t ON t.id = s.tick
          WHERE s.metric = $cs AND s.loc = $CPU AND s.tick > $back AND s.tick <= $back + 3)" | tr '|' ' ')
diag "context_switches/s: busiest CPU-tick before offline $maxrate, cpu$CPU in its first 3 ticks back $firstrate"
awk -v a="$firstrate" -v b="$maxrate" 'BEGIN { exit !(a <= 3 * b) }'; ok $? "no bogus context_switches delta for cpu$CPU when it returns"

# --- the run's totals: exact ---
for m in context_switches cpu_migrations cpu_idle cpu_system cpu_user; do
        for loc in 0 $CPU; do
                tot=$(sql "SELECT value FROM run_totals WHERE run = 'hp' AND metric = '$m' AND level = 'cpu' AND loc = $loc")
                smp=$(sql "SELECT total(s.value) * m.scale FROM sample_all s JOIN metric m ON m.id = s.metric
                           WHERE m.name = '$m' AND s.loc = $loc AND s.$inrun")
                awk -v a="$tot" -v b="$smp" 'BEGIN { d = a - b; exit !(a != "" && d < 1e-9 && d > -1e-9) }'
                ok $? "$m: run total for CPU $loc $tot = sum of its samples in the run $smp"
        done
        sys=$(sql "SELECT value FROM run_totals WHERE run = 'hp' AND metric = '$m' AND level = 'system'")
        cpus=$(sql "SELECT total(value) FROM run_totals WHERE run = 'hp' AND metric = '$m' AND level = 'cpu'")
        awk -v a="$sys" -v b="$cpus" 'BEGIN { d = a - b; exit !(a != "" && d < 1e-9 && d > -1e-9) }'
        ok $? "$m: system total $sys = sum of CPUs $cpus"
done
check "daemon stops cleanly" -- stop_daemon
finish
