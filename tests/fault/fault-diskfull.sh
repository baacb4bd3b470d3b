#!/bin/bash
# fault-diskfull.sh - the database's filesystem fills up while scalemond
# samples, for real: a 6 MiB tmpfs filled with a file until ENOSPC.  The
# daemon says so once, keeps sampling into memory, writes the backlog out
# when space returns (no interval missing), and a run open across it keeps
# exact totals.  Then with a small backlog_limit the backlog overflows: the
# oldest intervals are dropped and one gap row says which; the database
# stays consistent throughout.
. "${srcdir:-.}/tests/lib.sh"
# a full disk fails the commits: commit every second, so that the writes
# fail, and the backlog is written out, within the test (at the default,
# every two minutes)
COMMIT_INTERVAL=${COMMIT_INTERVAL-1s}
need_root
command -v sqlite3 >/dev/null || skip_all "sqlite3 command-line tool not installed"

FS=$TMP/fs
mkdir -p "$FS"
mount -t tmpfs -o size=6m,mode=0755 scalemon-test "$FS" 2>/dev/null || skip_all "cannot mount a tmpfs (needs CAP_SYS_ADMIN)"
umount_fs() { umount -l "$FS" 2>/dev/null; }
# the daemon stops first, then the filesystem goes, then the directory
trap 'stop_daemon 2>/dev/null; umount_fs; cleanup' EXIT
DB=$FS/scalemon.db
INTERVAL=50ms

fill() {        # fill the filesystem to the last byte
        dd if=/dev/zero of="$FS/filler" bs=64k status=none 2>/dev/null
        dd if=/dev/zero of="$FS/filler2" bs=512 status=none 2>/dev/null
        [ "$(stat -f -c %a "$FS")" = 0 ]
}
free_space() { rm -f "$FS/filler" "$FS/filler2"; }
count_log() { grep -c -- "$1" "$TMP/daemon.log"; }
wait_log() {    # wait_log PATTERN [COUNT]: until the log has COUNT lines matching
        local i
        for i in $(seq 200); do
                [ "$(count_log "$1")" -ge "${2:-1}" ] && return 0
                sleep 0.1
        done
        return 1
}
# holes FROM_ID: intervals missing between consecutive ticks from FROM_ID on
# (a tick starts where the one before it ended, to within a millisecond)
holes() {
        sql "SELECT count(*) FROM (SELECT t - lag(t + dur) OVER (ORDER BY id) AS hole FROM tick WHERE id >= $1)
             WHERE hole > 1000000 OR hole < -1000000"
}
system_total() {  # system_total RUN METRIC
        sql "SELECT value FROM run_total JOIN run ON run.id = run_total.run JOIN metric ON metric.id = run_total.metric
             WHERE run.name = '$1' AND metric.name = '$2' AND level = 'system'"
}
cpu_sum() {
        sql "SELECT sum(value) FROM run_total JOIN run ON run.id = run_total.run JOIN metric ON metric.id = run_total.metric
             WHERE run.name = '$1' AND metric.name = '$2' AND level = 'cpu'"
}
samples_sum() {   # the run's samples of METRIC on every CPU, in the metric's unit
        sql "SELECT sum(s.value) * m.scale FROM sample_all s JOIN run r ON s.tick > r.start_tick AND s.tick <= r.end_tick
             JOIN metric m ON m.id = s.metric WHERE r.name = '$1' AND m.name = '$2'"
}
same() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= 1e-6 * (a < 0 ? -a : a) + 1e-9) }'; }

printf 'interval = 50ms\n' > "$TMP/a.conf"
start_daemon --config "$TMP/a.conf"
ctl run start full1 >/dev/null; ok $? "a run starts before the disk fills"
sleep 0.5
first=$(sql "SELECT max(id) FROM tick")

# ---- 1. full, then space again: nothing lost ----
fill; ok $? "the filesystem is full ($(df -k --output=avail "$FS" | tail -n 1 | tr -d ' ') KiB left)"
wait_log "cannot write to the database"; ok $? "the daemon says it cannot write: $(grep -m1 'cannot write' "$TMP/daemon.log")"
"$WL/wl-pingpong" 3000 >/dev/null
sleep 2
kill -0 "$DAEMON_PID"; ok $? "the daemon is still running after 2 s of a full disk"
[ "$(count_log 'cannot write to the database')" = 1 ]; ok $? "and said so once ($(count_log 'cannot write to the database') lines)"
ctl status >/dev/null; ok $? "status answers while the disk is full"
held_at=$(now_ns)
free_space
wait_log "database writes work again"; ok $? "writes resume once there is space: $(grep -m1 'work again' "$TMP/daemon.log")"
wait_flushed "$held_at"
h=$(holes "$first")
[ "$h" = 0 ]; ok $? "no interval missing across the full period ($h holes)"
n=$(sql "SELECT count(*) FROM tick WHERE id > $first")
diag "$n intervals since the disk filled, all stored"
ctl run stop full1 >/dev/null; ok $? "the run stops"
for m in context_switches cpu_system; do
        s=$(system_total full1 $m) c=$(cpu_sum full1 $m) x=$(samples_sum full1 $m)
        [ -n "$s" ] && same "$s" "$c" && same "$s" "$x"
        ok $? "full1 $m: system total $s = sum over CPUs $c = sum of its samples $x"
done
[ "$(sql 'SELECT count(*) FROM gap')" = 0 ]; ok $? "no gap recorded: the backlog held everything"
[ "$(sqlite3 "$DB" 'PRAGMA integrity_check')" = ok ]; ok $? "integrity_check ok"

# ---- 2. the backlog overflows: a gap row, explicitly ----
printf 'interval = 50ms\nbacklog_limit = 64K\n' > "$TMP/a.conf"
kill -HUP "$DAEMON_PID"
wait_log "configuration reloaded" 1; ok $? "reloaded with backlog_limit = 64K"
ctl run start full2 >/dev/null; ok $? "a second run starts"
sleep 0.3
# the last tick committed: the ones held past it (in the head file) are
# the oldest the backlog drops, and the ticks after them take their ids
before=$(sql "SELECT max(id) FROM main.tick")
fill; ok $? "the filesystem is full again"
wait_log "reached backlog_limit"; ok $? "the backlog overflows: $(grep -m1 'backlog_limit' "$TMP/daemon.log")"
sleep 1
[ "$(count_log 'reached backlog_limit')" = 1 ]; ok $? "said once"
free_space
wait_log "recorded a gap"; ok $? "the gap is written when space returns: $(grep -m1 'recorded a gap' "$TMP/daemon.log")"
wait_flushed "$(now_ns)"
read -r gs ge gn why <<<"$(sql -separator ' ' 'SELECT start, end, intervals, reason FROM gap')"
[ "$(sql 'SELECT count(*) FROM gap')" = 1 ] && [ "${gn:-0}" -gt 0 ] && [ "$ge" -gt "$gs" ]
ok $? "one gap row: $gn intervals, $(( (ge - gs) / 1000000 )) ms: $why"
echo "$why" | grep -q "backlog_limit reached while the database could not be written"; ok $? "its reason says why"
h=$(holes "$before")
[ "$h" = 1 ]; ok $? "the ticks have exactly one hole ($h)"
hole=$(sql "SELECT t - lag(t + dur) OVER (ORDER BY id) AS hole FROM tick WHERE id >= $before ORDER BY hole DESC LIMIT 1")
miss=$(sql "SELECT count(*) FROM tick WHERE t < $ge - 1000000 AND t + dur > $gs + 1000000")
[ "$miss" = 0 ] && [ $(( hole - (ge - gs) )) -le 1000000 ] && [ $(( (ge - gs) - hole )) -le 1000000 ]
ok $? "and it is the gap's span ($(( hole / 1000000 )) ms), with no tick inside it"
ctl run stop full2 >/dev/null; ok $? "the run open across the gap stops"
for m in context_switches cpu_system; do
        s=$(system_total full2 $m) c=$(cpu_sum full2 $m)
        [ -n "$s" ] && same "$s" "$c"; ok $? "full2 $m: totals still exact, system $s = sum over CPUs $c"
done
kill -0 "$DAEMON_PID"; ok $? "the daemon kept running"
check "the daemon stops cleanly" -- stop_daemon
[ "$(sqlite3 "$DB" 'PRAGMA integrity_check')" = ok ]; ok $? "integrity_check ok"
umount_fs
finish
