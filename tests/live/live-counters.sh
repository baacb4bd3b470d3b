#!/bin/bash
# live-counters.sh - the daemon against workloads with known counts, on
# the real kernel: context switches, minor faults, migrations.  Each count
# is also checked against `perf stat` on the workload, an independent
# reading of the same kernel counter.
. "${srcdir:-.}/tests/lib.sh"
need_root
command -v sqlite3 >/dev/null || skip_all "sqlite3 command-line tool not installed"
HAVE_PERF=0
perf stat -e context-switches true >/dev/null 2>&1 && HAVE_PERF=1

perf_count() {  # perf_count EVENT CMD...: the workload's own count
        perf stat -x, -e "$1" -o "$TMP/perf.out" -- "${@:2}" >/dev/null || return 1
        awk -F, -v e="$1" '$3 == e { print $1 }' "$TMP/perf.out"
}

start_daemon

# context switches: N round trips, each side blocks once per trip
N=20000
t0=$(now_ns); out=$("$WL/wl-pingpong" $N); t1=$(now_ns)
ok $? "ping-pong ran: $out"
wait_flushed "$t1"
cs=$(total context_switches "$t0" "$t1")
diag "context_switches over the window: $cs, 2N = $((2 * N))"
[ "$cs" -ge $((2 * N)) ]; ok $? "context_switches >= 2N ($cs >= $((2 * N)))"
if [ $HAVE_PERF = 1 ]; then
        t0=$(now_ns); pc=$(perf_count context-switches "$WL/wl-pingpong" $N); t1=$(now_ns)
        wait_flushed "$t1"
        cs=$(total context_switches "$t0" "$t1")
        diag "perf stat counted $pc switches of the workload itself; daemon $cs system-wide"
        [ -n "$pc" ] && [ "$cs" -ge "$pc" ]; ok $? "daemon's system-wide count >= perf stat's count of the workload"
fi

# page faults at the defaults: the machine's, from /proc/vmstat (no event
# on the fault path); M fresh 4 KiB pages, judged by the workload's count
# and by /proc/vmstat's own delta over the same window
M=20000
v0=$(vmstat pgfault); t0=$(now_ns); out=$("$WL/wl-touch" $M); t1=$(now_ns); v1=$(vmstat pgfault)
ok $? "touch ran: $out"
wait_flushed "$t1"
pf=$(total pgfault "$t0" "$t1")
diag "pgfault: $pf over the ticks around the workload; /proc/vmstat moved $((v1 - v0)) during it, M = $M"
[ $((v1 - v0)) -ge $M ] && [ "$pf" -ge $((v1 - v0)) ]; ok $? "pgfault >= /proc/vmstat's delta >= M ($pf >= $((v1 - v0)) >= $M)"
out=$(ctl query page_faults --since "$(ns_to_when "$t0")" 2>&1); rc=$?
[ $rc = 1 ] && echo "$out" | grep -q "page_faults is not available: disabled: .*per_cpu_faults = yes"
ok $? "page_faults at the defaults: not available, and says why, no zeros (exit $rc: $out)"

# per CPU, one setting away: per_cpu_faults = yes (the three perf events)
stop_daemon
echo "per_cpu_faults = yes" >"$TMP/faults.conf"
start_daemon --config "$TMP/faults.conf"
t0=$(now_ns); out=$("$WL/wl-touch" $M); t1=$(now_ns)
ok $? "touch ran: $out"
wait_flushed "$t1"
pf=$(total page_faults_minor "$t0" "$t1")
diag "page_faults_minor: $pf, M = $M"
[ "$pf" -ge $M ]; ok $? "page_faults_minor >= M ($pf >= $M)"
all=$(total page_faults "$t0" "$t1")
# the kernel counts a fault at its start and its minor or major kind at
# its end: a fault in flight on a CPU when an interval ends has its start
# in one interval and its kind in the next: one per CPU at each end
[ $((all + 2 * $(nproc))) -ge "$pf" ]; ok $? "page_faults ($all) >= page_faults_minor ($pf), give or take a fault per CPU at each end"
if [ $HAVE_PERF = 1 ]; then
        t0=$(now_ns); pc=$(perf_count minor-faults "$WL/wl-touch" $M); t1=$(now_ns)
        wait_flushed "$t1"
        pf=$(total page_faults_minor "$t0" "$t1")
        diag "perf stat: $pc minor faults of the workload; daemon $pf"
        [ -n "$pc" ] && [ "$pc" -ge $M ] && [ "$pf" -ge "$pc" ]; ok $? "daemon >= perf stat's count >= M"
fi
stop_daemon
start_daemon

# migrations: N hops between two CPUs
if [ "$(nproc)" -ge 2 ]; then
        H=2000
        t0=$(now_ns); out=$("$WL/wl-hop" $H); t1=$(now_ns)
        ok $? "hop ran: $out"
        wait_flushed "$t1"
        mg=$(total cpu_migrations "$t0" "$t1")
        diag "cpu_migrations: $mg, N = $H"
        [ "$mg" -ge $H ]; ok $? "cpu_migrations >= N ($mg >= $H)"
        # per CPU: the hops land on both CPUs, so the per-CPU series add up
        c0=$(total cpu_migrations "$t0" "$t1" --cpu 0); c1=$(total cpu_migrations "$t0" "$t1" --cpu 1)
        [ $((c0 + c1)) -le "$mg" ] && [ "$c0" -gt 0 ] && [ "$c1" -gt 0 ]
        ok $? "migrations seen on cpu0 ($c0) and cpu1 ($c1)"
else
        echo "ok $((tap_n += 1)) # SKIP one CPU: nothing to migrate to"
fi

# cpu time: the busy loop of the storm shows as user+system time
t0=$(now_ns); "$WL/wl-mmapstorm" 2 1 >/dev/null; t1=$(now_ns)
wait_flushed "$t1"
busy=$(ctl --format csv query cpu_system --since "$(ns_to_when "$t0")" --until "$(ns_to_when "$t1")" |
       awk -F, 'NR > 1 { s += $3 } END { printf "%.2f\n", s }')
diag "cpu_system over a 1 s two-thread storm: ${busy}s"
awk -v b="$busy" 'BEGIN { exit !(b >= 0.5) }'; ok $? "cpu_system shows the storm's kernel time (${busy}s >= 0.5s)"

# nothing is stored as zero (schema invariant 1)
z=$(sql "SELECT count(*) FROM sample_all WHERE value = 0")
[ "$z" = 0 ]; ok $? "no zero rows stored"

check "daemon stops cleanly on SIGTERM" -- stop_daemon
check "database passes integrity_check" -- test "$(sql 'PRAGMA integrity_check')" = ok
last=$(sql "SELECT kind FROM event ORDER BY id DESC LIMIT 1")
[ "$last" = stop ]; ok $? "stop recorded as the last event"
finish
