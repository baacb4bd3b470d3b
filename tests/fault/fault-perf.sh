#!/bin/bash
# fault-perf.sh - perf counters that fail while the daemon counts them.
# Neither failure can be caused for real here: a perf read() does not fail
# on demand, and a tracepoint cannot disappear while it is counted (the
# kernel pins its module).  So this test uses the daemon's test-only fault
# injection (daemon/sampler/fault.c, a fake, via SCALEMON_TEST_FAULTS): CPU 0's
# software group read() fails with EIO, and lock:contention_begin behaves
# as gone when it is reopened.  Expected: CPU 0's software metrics are
# stored as not measured (NULL) while its reads fail, lock_contentions
# stops with the reason in the catalogue, every other metric goes on with
# no interval skipped, and the run open across it all keeps exact totals.
. "${srcdir:-.}/tests/lib.sh"
need_root
need_seam SCALEMON_TEST_FAULTS "$SCALEMOND"
command -v sqlite3 >/dev/null || skip_all "sqlite3 command-line tool not installed"

FAULTS=$TMP/faults
export SCALEMON_TEST_FAULTS=$FAULTS
INTERVAL=100ms
count_log() { grep -c -- "$1" "$TMP/daemon.log"; }
wait_log() {
        local i
        for i in $(seq 100); do [ "$(count_log "$1")" -ge 1 ] && return 0; sleep 0.1; done
        return 1
}
available() { ctl --format json metrics | jpy "[x for x in d['metrics'] if x['name'] == '$1'][0]['available']"; }
why() { ctl --format json metrics | jpy "[x for x in d['metrics'] if x['name'] == '$1'][0].get('why')"; }
mid() { sql "SELECT id FROM metric WHERE name = '$1'"; }

start_daemon
[ "$(available lock_contentions)" = true ] || skip_all "lock_contentions is not available here: $(why lock_contentions)"
ctl run start broken >/dev/null; ok $? "a run starts"
sleep 0.5
t0=$(sql "SELECT max(id) FROM tick")

# CPU 1 kept busy switching for the whole failure (an idle CPU can go a
# tickless 100 ms without a context switch)
( end=$(( $(date +%s) + 4 )); while [ "$(date +%s)" -lt "$end" ]; do taskset -c 1 "$WL/wl-pingpong" 2000 >/dev/null; done ) &
busy=$!
printf 'read-error 0 sw\nvanish lock_contentions\n' > "$FAULTS"
wait_log "cpu 0: reading its sw counters failed"; ok $? "the failed read is logged: $(grep -m1 'reading its sw' "$TMP/daemon.log")"
wait_log "lock_contentions stopped"; ok $? "the vanished tracepoint stops: $(grep -m1 'lock_contentions stopped' "$TMP/daemon.log")"
# the log line comes from the sampler, the catalogue row from the manager
# right after it in the same tick: a query in between still sees it
# available, so wait for the row
unavail() {
        local i
        for i in $(seq 50); do [ "$(available lock_contentions)" = false ] && return 0; sleep 0.1; done
        return 1
}
unavail; ok $? "lock_contentions is unavailable in the catalogue"
[ "$(count_log 'cannot record the metric catalogue')" = 0 ]; ok $? "and the catalogue was written at the first try"
w=$(why lock_contentions)
echo "$w" | grep -q "stopped counting: after a failed read on cpu 0 it could not be reopened"; ok $? "with the reason: $w"
sleep 1.5
[ "$(count_log 'reading its sw counters failed')" = 1 ]; ok $? "the failing reads are logged once"
fail_from=$(sql "SELECT min(tick) FROM sample_all WHERE tick > $t0 AND metric = $(mid context_switches) AND loc = 0 AND value IS NULL")
[ -n "$fail_from" ]; ok $? "CPU 0's context switches are stored as not measured (NULL) from tick $fail_from"
rm -f "$FAULTS"
wait "$busy"
wait_log "cpu 0: its counters read again"; ok $? "reads work again once the fault is gone"
"$WL/wl-pingpong" 3000 >/dev/null
sleep 0.5
ctl run stop broken >/dev/null; ok $? "the run stops"
t1=$(sql "SELECT max(id) FROM tick")

# during the failure: CPU 1 was counted in every interval, CPU 0 was NULL
# (never a made-up zero), and /proc/stat went on for both
last_null=$(sql "SELECT max(tick) FROM sample_all WHERE metric = $(mid context_switches) AND loc = 0 AND value IS NULL")
n=$(sql "SELECT count(*) FROM tick WHERE id >= $fail_from AND id <= $last_null")
c1=$(sql "SELECT count(*) FROM sample_all WHERE tick >= $fail_from AND tick <= $last_null AND metric = $(mid context_switches) AND loc = 1 AND value > 0")
nul=$(sql "SELECT count(*) FROM sample_all WHERE tick >= $fail_from AND tick <= $last_null AND metric = $(mid context_switches) AND loc = 0 AND value IS NULL")
idle=$(sql "SELECT count(DISTINCT tick) FROM sample_all JOIN metric ON metric.id = sample_all.metric
            WHERE tick >= $fail_from AND tick <= $last_null AND metric.name LIKE 'cpu\_%' ESCAPE '\' AND loc = 0")
[ "$n" -ge 5 ] && [ "$c1" = "$n" ]; ok $? "CPU 1 counted context switches in all $n failing intervals ($c1)"
[ "$nul" = "$n" ]; ok $? "CPU 0's were NULL in all of them ($nul)"
[ "$idle" -ge $((n - 1)) ]; ok $? "CPU 0's /proc/stat time went on ($idle of $n intervals)"
after=$(sql "SELECT count(*) FROM sample_all WHERE tick > $last_null AND metric = $(mid context_switches) AND loc = 0 AND value > 0")
[ "$after" -gt 0 ]; ok $? "CPU 0's context switches counted again afterwards ($after intervals)"
lc=$(sql "SELECT count(*) FROM sample_all WHERE tick > $fail_from AND metric = $(mid lock_contentions)")
[ "$lc" = 0 ]; ok $? "no lock_contentions samples after it stopped ($lc)"
h=$(sql "SELECT count(*) FROM (SELECT t - lag(t + dur) OVER (ORDER BY id) AS hole FROM tick WHERE id >= $t0 AND id <= $t1)
         WHERE hole > 1000000 OR hole < -1000000")
[ "$h" = 0 ]; ok $? "no interval skipped ($((t1 - t0)) intervals, $h holes)"
s=$(sql "SELECT value FROM run_totals WHERE run = 'broken' AND metric = 'context_switches' AND level = 'system'")
c=$(sql "SELECT sum(value) FROM run_totals WHERE run = 'broken' AND metric = 'context_switches' AND level = 'cpu'")
x=$(sql "SELECT sum(s.value) FROM sample_all s JOIN run r ON s.tick > r.start_tick AND s.tick <= r.end_tick
         WHERE r.name = 'broken' AND s.metric = $(mid context_switches)")
[ -n "$s" ] && [ "${s%.0}" = "${c%.0}" ] && [ "${s%.0}" = "${x%.0}" ]
ok $? "the run's totals count what was measured: system $s = CPUs $c = samples $x"
kill -0 "$DAEMON_PID"; ok $? "the daemon kept running"
check "it stops cleanly" -- stop_daemon
start_daemon
[ "$(available lock_contentions)" = true ]; ok $? "lock_contentions is back after a restart without the fault"
check "and stops" -- stop_daemon
finish
