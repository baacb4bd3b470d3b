#!/bin/bash
# live-tracefs-fresh.sh - a fresh boot, where tracefs is not mounted yet:
# the first scalemond mounts it before any source opens, so the lock-wait
# source (BPF on lock:contention_begin/end) finds its tracepoints on that
# first start, as on a second one.  tracefs is unmounted for the test and
# mounted again afterwards, as it was.
. "${srcdir:-.}/tests/lib.sh"
need_root
command -v python3 >/dev/null || skip_all "python3 not installed"
INTERVAL=1s

mounted_at() { awk -v d="$1" '$2 == d && $3 == "tracefs" { f = 1 } END { exit !f }' /proc/mounts; }
had_tracing=no had_debug=no
mounted_at /sys/kernel/tracing && had_tracing=yes
mounted_at /sys/kernel/debug/tracing && had_debug=yes
restore() {
        mounted_at /sys/kernel/tracing || [ $had_tracing = no ] ||
                mount -t tracefs -o nosuid,nodev,noexec nodev /sys/kernel/tracing
        mounted_at /sys/kernel/debug/tracing || [ $had_debug = no ] ||
                mount -t tracefs -o nosuid,nodev,noexec nodev /sys/kernel/debug/tracing
}
trap 'cleanup; restore' EXIT

lockwait_why() { ctl --format json metrics | jpy "[m.get('why') or 'available' for m in d['metrics'] if m['name'] == 'lock_wait_ns'][0]"; }

# the second start's answer, with tracefs mounted: if lock wait cannot be
# had here at all, there is nothing to compare
[ $had_tracing = yes ] || mount -t tracefs -o nosuid,nodev,noexec nodev /sys/kernel/tracing ||
        skip_all "cannot mount tracefs here"
had_tracing=yes
start_daemon
second=$(lockwait_why)
stop_daemon
[ "$second" = available ] || skip_all "lock_wait_ns unavailable here even with tracefs mounted: $second"

# the fresh boot: tracefs nowhere
[ $had_debug = yes ] && { umount /sys/kernel/debug/tracing || skip_all "cannot unmount /sys/kernel/debug/tracing (busy)"; }
umount /sys/kernel/tracing || skip_all "cannot unmount /sys/kernel/tracing (busy: a tracer is running)"
mounted_at /sys/kernel/tracing; ok $((! $?)) "tracefs is not mounted before the first start"
start_daemon
first=$(lockwait_why)
[ "$first" = available ]; ok $? "lock_wait_ns available on the first start after a fresh boot (why: $first)"
mounted_at /sys/kernel/tracing; ok $? "the first start mounted tracefs at /sys/kernel/tracing"
grep -q 'mounted tracefs at /sys/kernel/tracing' "$TMP/daemon.log"; ok $? "scalemond says it mounted tracefs"
check "daemon stops cleanly" -- stop_daemon
finish
