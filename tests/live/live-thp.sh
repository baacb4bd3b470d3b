#!/bin/bash
# live-thp.sh - THP faults and PMD splits: the daemon's deltas against the
# workload's known count and against /proc/vmstat read around the window.
. "${srcdir:-.}/tests/lib.sh"
need_root
command -v sqlite3 >/dev/null || skip_all "sqlite3 command-line tool not installed"
mode=$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)
case $mode in *"[never]"*|"") skip_all "transparent huge pages are disabled ($mode)";; esac

K=32
start_daemon
sleep 0.3
fa0=$(vmstat thp_fault_alloc); sp0=$(vmstat thp_split_pmd); t0=$(now_ns)
out=$("$WL/wl-thp" $K); rc=$?
t1=$(now_ns); fa1=$(vmstat thp_fault_alloc); sp1=$(vmstat thp_split_pmd)
[ $rc = 77 ] && skip_all "wl-thp could not run here"
ok $rc "wl-thp ran: $out"
wait_flushed "$((t1 + 2 * $(interval_ns)))"
iv=$(interval_ns)
fa=$(total thp_fault_alloc "$t0" "$((t1 + iv))")
sp=$(total thp_split_pmd "$t0" "$((t1 + iv))")
diag "daemon: thp_fault_alloc $fa, thp_split_pmd $sp; /proc/vmstat: $((fa1 - fa0)), $((sp1 - sp0)); K = $K"
[ "$fa" -ge $K ]; ok $? "thp_fault_alloc >= K ($fa >= $K)"
[ "$sp" -ge $K ]; ok $? "thp_split_pmd >= K ($sp >= $K)"
[ "$fa" -eq $((fa1 - fa0)) ]; ok $? "thp_fault_alloc equals the /proc/vmstat delta ($fa = $((fa1 - fa0)))"
[ "$sp" -eq $((sp1 - sp0)) ]; ok $? "thp_split_pmd equals the /proc/vmstat delta ($sp = $((sp1 - sp0)))"
n=$(sql "SELECT count(DISTINCT loc) FROM samples_all WHERE metric = 'thp_split_pmd'")
[ "$n" = 1 ]; ok $? "system-scope metric stored once per tick, not per CPU"
check "daemon stops cleanly" -- stop_daemon
finish
