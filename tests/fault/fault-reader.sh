#!/bin/bash
# fault-reader.sh - a client holds a read transaction open on the database
# (as a long sqlite3 session or a report that never finishes would) while
# scalemond writes at 20 ms.  A reader pins the write-ahead log: nothing
# past its snapshot can be checkpointed, so every write makes the file
# longer.  With wal_limit = 256K the log stops growing at the limit, the
# daemon keeps sampling into memory, a run can still start and stop, and
# when the reader lets go everything held is written with no interval
# missing and the log is truncated.
. "${srcdir:-.}/tests/lib.sh"
# the write-ahead log grows by commits: commit every second, so that it
# reaches wal_limit within the test (at the default, every two minutes)
COMMIT_INTERVAL=${COMMIT_INTERVAL-1s}
need_root
command -v sqlite3 >/dev/null || skip_all "sqlite3 command-line tool not installed"
command -v python3 >/dev/null || skip_all "python3 not installed"

INTERVAL=20ms
LIMIT=$((256 * 1024))
printf 'interval = 20ms\nwal_limit = 256K\n' > "$TMP/r.conf"
start_daemon --config "$TMP/r.conf"
wal() { stat -c %s "$DB-wal" 2>/dev/null || echo 0; }
count_log() { grep -c -- "$1" "$TMP/daemon.log"; }
sleep 1.5      # a first checkpoint: the log starts short
first=$(sql "SELECT max(id) FROM tick")

# the reader: one read transaction, held until it is killed
python3 - "$DB" "$TMP/reader.ready" <<'EOF' &
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN")
n = c.execute("SELECT count(*) FROM sample").fetchone()[0]
open(sys.argv[2], "w").write(str(n))
time.sleep(3600)
EOF
READER=$!
trap 'kill $READER 2>/dev/null; cleanup' EXIT
for i in $(seq 100); do [ -s "$TMP/reader.ready" ] && break; sleep 0.05; done
[ -s "$TMP/reader.ready" ]; ok $? "a reader holds a read transaction ($(cat "$TMP/reader.ready") samples in its snapshot)"

# let the log run into the limit, watching its size
max=0
for i in $(seq 60); do
        w=$(wal); [ "$w" -gt "$max" ] && max=$w
        [ "$(count_log 'reached wal_limit')" -ge 1 ] && [ "$i" -ge 40 ] && break
        sleep 0.2
done
[ "$(count_log 'reached wal_limit')" = 1 ]; ok $? "the daemon says once that the log is at its limit: $(grep -m1 'wal_limit' "$TMP/daemon.log")"
"$WL/wl-pingpong" 2000 >/dev/null
ctl run start held >/dev/null; ok $? "a run starts while the reader holds the database"
"$WL/wl-pingpong" 2000 >/dev/null
ctl run stop held >/dev/null; ok $? "and stops"
for i in $(seq 15); do w=$(wal); [ "$w" -gt "$max" ] && max=$w; sleep 0.2; done
kill -0 "$DAEMON_PID"; ok $? "the daemon keeps running"
# one flush past the limit at most (the write that crossed it, and the
# run's two boundaries, which are written whatever the log's size)
[ "$max" -le $((LIMIT + 512 * 1024)) ]; ok $? "the log stayed near wal_limit: at most $max bytes for a 256K limit"
held_at=$(now_ns)

kill "$READER"; wait "$READER" 2>/dev/null
for i in $(seq 100); do [ "$(count_log 'let go')" -ge 1 ] && break; sleep 0.1; done
[ "$(count_log 'let go')" = 1 ]; ok $? "once the reader is gone the held intervals are written: $(grep -m1 'let go' "$TMP/daemon.log")"
wait_flushed "$held_at"
h=$(sql "SELECT count(*) FROM (SELECT t - lag(t + dur) OVER (ORDER BY id) AS hole FROM tick WHERE id >= $first)
         WHERE hole > 1000000 OR hole < -1000000")
n=$(sql "SELECT count(*) FROM tick WHERE id > $first")
[ "$h" = 0 ]; ok $? "sampling went on while held, no interval missing: $n intervals since the reader started, $h holes"
[ "$(sql 'SELECT count(*) FROM gap')" = 0 ]; ok $? "no gap row"
s=$(sql "SELECT value FROM run_totals WHERE run = 'held' AND metric = 'context_switches' AND level = 'system'")
c=$(sql "SELECT sum(value) FROM run_totals WHERE run = 'held' AND metric = 'context_switches' AND level = 'cpu'")
x=$(sql "SELECT sum(s.value) FROM sample_all s JOIN run r ON s.tick > r.start_tick AND s.tick <= r.end_tick
         JOIN metric m ON m.id = s.metric WHERE r.name = 'held' AND m.name = 'context_switches'")
[ -n "$s" ] && [ "${s%.0}" = "${c%.0}" ]; ok $? "the run's system total $s = sum over CPUs $c"
[ "${s%.0}" = "${x%.0}" ]; ok $? "= the sum of its samples $x"
# the "let go" line is logged once the log was truncated; from then on
# writes go on and each time the log passes the limit it is truncated
# again (no reader is in the way): it stays within a flush of the limit
max=0
for i in $(seq 10); do w=$(wal); [ "$w" -gt "$max" ] && max=$w; sleep 0.2; done
[ "$max" -le $((LIMIT + 512 * 1024)) ]; ok $? "after the reader, the log stays within a flush of wal_limit (at most $max bytes)"
check "the daemon stops cleanly" -- stop_daemon
[ "$(sqlite3 "$DB" 'PRAGMA integrity_check')" = ok ]; ok $? "integrity_check ok"
finish
