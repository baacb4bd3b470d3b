#!/bin/bash
# live-pressure.sh - scheduler pressure: 4 CPU hogs on this machine's CPUs
# while a run's workload runs.  With more runnable tasks than CPUs, some
# task waits for a CPU all the time, so /proc/pressure/cpu's "some" total
# grows by about the hogs' wall time; the run's psi_cpu_some_us must be
# at least 90% of it, no more than /proc/pressure/cpu's own delta read by
# this test around the run, and no less than that delta minus the time
# the test's window has outside the run.  runqueue_wait_ns (from
# /proc/schedstat) is checked the same way where the kernel has it.
. "${srcdir:-.}/tests/lib.sh"
need_root
[ -r /proc/pressure/cpu ] || skip_all "no /proc/pressure/cpu (kernel without CONFIG_PSI, or psi=0)"
ncpu=$(getconf _NPROCESSORS_ONLN)
H=$((2 * ncpu)); [ "$H" -lt 4 ] && H=4
SECS=3
psi_some() { awk '$1 == "some" { sub("total=", "", $5); print $5 }' /proc/pressure/cpu; }
rq_sum() { awk '$1 ~ /^cpu[0-9]+$/ { s += $9 } END { printf "%.0f\n", s }' /proc/schedstat; }

start_daemon
sleep 0.3
t0=$(now_ns); p0=$(psi_some); [ -r /proc/schedstat ] && q0=$(rq_sum)
# the hogs: H busy loops for SECS seconds, as the run's workload
ctl run exec psi-hog -- sh -c "for i in \$(seq $H); do timeout $SECS sh -c 'while :; do :; done' & done; wait" \
        >/dev/null; rc=$?
p1=$(psi_some); [ -r /proc/schedstat ] && q1=$(rq_sum); t1=$(now_ns)
ok $rc "run exec of $H busy loops for ${SECS}s on $ncpu CPUs"
j=$(ctl --format json report --since psi-hog --until psi-hog)
dur=$(echo "$j" | jpy 'd["runs"][0]["duration_s"]')
run=$(echo "$j" | jpy 'round(d["runs"][0]["metrics"]["psi_cpu_some_us"]["total"])')
win_us=$(( (t1 - t0) / 1000 )); own=$((p1 - p0))
diag "run ${dur}s: psi_cpu_some_us $run; /proc/pressure/cpu some delta $own over the test's window of ${win_us}us"
python3 -c "import sys; sys.exit(0 if $run >= 0.9 * $SECS * 1e6 else 1)"
ok $? "psi_cpu_some_us >= 90% of the hogs' ${SECS}s ($run >= $((SECS * 900000)))"
[ "$run" -le "$own" ]; ok $? "and <= /proc/pressure/cpu's delta around the run ($run <= $own)"
python3 -c "import sys; sys.exit(0 if $run >= $own - ($win_us - $dur * 1e6) else 1)"
ok $? "and >= that delta minus the window's time outside the run ($run >= $own - ($win_us - ${dur}e6))"
n=$(sql "SELECT count(DISTINCT loc) FROM samples WHERE metric = 'psi_cpu_some_us'")
[ "$n" = 1 ]; ok $? "PSI is a system counter: one location"
if [ -r /proc/schedstat ]; then
        rq=$(echo "$j" | jpy 'round(d["runs"][0]["metrics"]["runqueue_wait_ns"]["total"])')
        diag "runqueue_wait_ns $rq; /proc/schedstat run_delay delta $((q1 - q0))"
        # (H - ncpu) tasks wait at any time while the hogs run
        python3 -c "import sys; sys.exit(0 if $rq >= 0.9 * ($H - $ncpu) * $SECS * 1e9 else 1)"
        ok $? "runqueue_wait_ns >= 90% of ($H - $ncpu) waiting tasks x ${SECS}s"
        [ "$rq" -le "$((q1 - q0))" ]; ok $? "and <= /proc/schedstat's delta around the run"
else
        why=$(ctl --format json metrics | jpy '[m["why"] for m in d["metrics"] if m["name"] == "runqueue_wait_ns"][0]')
        skip_one "no /proc/schedstat on this kernel" -- "runqueue_wait_ns against /proc/schedstat"
        echo "$why" | grep -q CONFIG_SCHEDSTATS; ok $? "runqueue_wait_ns unavailable, and says why: $why"
fi
check "daemon stops cleanly" -- stop_daemon
finish
