#!/bin/bash
# systemd-teardown.sh - the systemd test harness leaves nothing behind:
# not after a test that fails, not after one killed with SIGKILL (no
# processes, no mounts on the host, no cgroup directory once the next
# container boots).
. "${srcdir:-.}/tests/lib.sh"
. "$srcdir/tests/systemd/systemd-harness.sh"
sd_need

alive() { local p; for p in "$@"; do [ -d "/proc/$p" ] && return 0; done; return 1; }
mounts() { grep -c ' scalemon-\(root\|ovl\|tree\|dev\|run\|tmp\|shm\) ' /proc/self/mountinfo; }

# A test that boots a container and then fails (exit 1) or waits to be
# killed (sleep); it writes down what it started.
child='. "$srcdir/tests/lib.sh"; . "$srcdir/tests/systemd/systemd-harness.sh"
       sd_boot >/dev/null
       echo "$TMP $SD_CGROUP $SD_UNSHARE_PID $SD_PID1 $(sd_host_pids | tr "\n" " ")" > "$1"
       [ "$2" = fail ] && exit 1
       exec sleep 600'

m0=$(mounts)

# --- a test that fails ---
bash -c "$child" _ "$TMP/fail.info" fail; rc=$?
read -r ctmp cg upid pid1 pids < "$TMP/fail.info"
diag "failing test: rc $rc, cgroup $cg, host pids $upid $pid1 $pids"
[ $rc = 1 ] && [ -n "$pid1" ]; ok $? "a failing test booted a container (PID 1 = host PID $pid1)"
! alive $upid $pid1 $pids; ok $? "no process of it is left"
[ ! -d "$cg" ]; ok $? "its cgroup is removed"
[ "$(mounts)" = "$m0" ]; ok $? "no mount of it on the host"
[ ! -e "$ctmp" ]; ok $? "its temporary directory is removed"

# --- a test killed with SIGKILL ---
bash -c "$child" _ "$TMP/kill.info" sleep &
cpid=$!
sd_poll 30 test -s "$TMP/kill.info"
read -r ctmp cg upid pid1 pids < "$TMP/kill.info"
alive $pid1; ok $? "a second test booted a container (PID 1 = host PID $pid1)"
kill -KILL $cpid; wait $cpid 2>/dev/null
sd_poll 10 eval '! alive $upid $pid1 $pids'; ok $? "SIGKILL of the test takes the whole container down"
[ "$(mounts)" = "$m0" ]; ok $? "no mount of it on the host"
rm -rf "$ctmp"
sd_boot
[ ! -d "$cg" ]; ok $? "its cgroup is removed when the next container boots"

finish
