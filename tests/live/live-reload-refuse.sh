#!/bin/bash
# live-reload-refuse.sh - what scalemond does not apply, and what it
# refuses.  A reload that changes `database =` or
# `socket =` says that they are not applied and why (opened once, at
# start), and the daemon goes on writing the running database; a
# configuration that enables no metric is refused by --check-config and by
# reload with file:line; a second daemon refused because the control
# socket is in use leaves no database file behind.
. "${srcdir:-.}/tests/lib.sh"
fake_kernel
command -v sqlite3 >/dev/null || skip_all "sqlite3 command-line tool not installed"
command -v python3 >/dev/null || skip_all "python3 not installed"

CONF=$TMP/live.conf
NEWDB=$TMP/other/new.db
mkdir -p "$TMP/other"
printf 'interval = 100ms\ndatabase = %s\n' "$DB" >"$CONF"

# --check-config: nothing enabled is an error with file:line
printf 'interval = 100ms\nmetrics = context_switches\nexclude = context_switches\n' >"$TMP/empty.conf"
out=$("$SCALEMOND" --config "$TMP/empty.conf" --check-config 2>&1); rc=$?
[ $rc = 1 ] && [ "$out" = "scalemond: $TMP/empty.conf:3: metrics and exclude leave no metric enabled: exclude removes every metric that metrics names" ]
ok $? "--check-config refuses a set that enables nothing (exit $rc): $out"
out=$("$SCALEMOND" --config "$CONF" --check-config 2>&1); rc=$?
# all but the three per-CPU fault events, which the defaults leave off
n=$(echo "$out" | sed -n 's/.*, \([0-9]*\) of \([0-9]*\) metrics enabled; per-CPU fault events off: per_cpu_faults = no)$/\2 - \1/p')
[ $rc = 0 ] && echo "$out" | grep -q "ok (interval 100ms, database $DB, " && [ -n "$n" ] && [ $((n)) = 3 ]
ok $? "and passes the good one ($out)"

# the daemon, on the file's database (no --db: the file decides)
"$SCALEMOND" --foreground --config "$CONF" --socket "$SOCK" >>"$TMP/daemon.log" 2>&1 &
DAEMON_PID=$!
for i in $(seq 200); do grep -q 'started:' "$TMP/daemon.log" && break; sleep 0.05; done
grep -q 'started:' "$TMP/daemon.log" || bail "scalemond did not start: $(cat "$TMP/daemon.log")"
ok 0 "scalemond started on $DB from $CONF"

# reload with another database: said, not applied, the running one kept
printf 'interval = 100ms\ndatabase = %s\n' "$NEWDB" >"$CONF"
out=$(ctl reload 2>&1); rc=$?
echo "$out" | sed "s/^/# /"
[ $rc = 0 ] && echo "$out" | grep -q "^reloaded: "; ok $? "reload with a new database path succeeds (exit $rc)"
echo "$out" | grep -qx "not applied: database = $NEWDB (the database is opened once, at start: restart scalemond); still $DB"
ok $? "and says the database is not applied, why, and which one is still written"
ctl --format json reload >"$TMP/json"; ok $? "reload --format json"
python3 - "$TMP/json" "$NEWDB" "$DB" <<'PY'; ok $? "JSON: not_applied [{key, value, running, why}]"
import json, sys
d = json.load(open(sys.argv[1]))
na = d["not_applied"]
assert len(na) == 1 and na[0]["key"] == "database" and na[0]["value"] == sys.argv[2] \
    and na[0]["running"] == sys.argv[3] and "restart" in na[0]["why"], na
PY
grep -q "database changed to $NEWDB: not applied, scalemond keeps $DB until it restarts" "$TMP/daemon.log"
ok $? "the daemon logs it"
ctl --format json status | python3 -c 'import json,sys; d=json.load(sys.stdin); print(json.dumps(d.get("database")))' >"$TMP/st"
grep -q "$DB" "$TMP/st" && ! grep -q "$NEWDB" "$TMP/st"; ok $? "status still names the running database ($(head -c 200 "$TMP/st"))"
[ ! -e "$NEWDB" ]; ok $? "no file at the new path"
t=$(now_ns); wait_flushed "$t"; ok $? "samples still go into $DB"

# reload with nothing enabled: refused with file:line, the daemon goes on
printf 'interval = 100ms\ndatabase = %s\nmetrics = context_switches\nexclude = context_switches\n' "$DB" >"$CONF"
out=$(ctl reload 2>&1); rc=$?
[ $rc = 1 ] && [ "$out" = "scalemonctl: reload refused, keeping the running configuration: $CONF:4: metrics and exclude leave no metric enabled: exclude removes every metric that metrics names" ]
ok $? "reload refuses a set that enables nothing (exit $rc): $out"
kill -0 "$DAEMON_PID"; ok $? "the daemon is still running"
n0=$(sql "SELECT count(*) FROM samples_all WHERE metric = 'context_switches'")
t=$(now_ns); sleep 0.5; wait_flushed "$t"
[ "$(sql "SELECT count(*) FROM samples_all WHERE metric = 'context_switches'")" -gt "$n0" ]; ok $? "with every metric still sampled"
printf 'interval = 100ms\ndatabase = %s\n' "$DB" >"$CONF"
out=$(ctl reload); rc=$?
[ $rc = 0 ] && ! echo "$out" | grep -q "not applied"; ok $? "back to the running paths: nothing to report ($out)"

# a second daemon on another database, refused for the socket: no file made
"$SCALEMOND" --foreground --db "$TMP/other/second.db" --socket "$SOCK" --interval 100ms >"$TMP/second.log" 2>&1; rc=$?
[ $rc != 0 ] && grep -q "control socket $SOCK is in use by another scalemond" "$TMP/second.log"
ok $? "a second daemon on the same socket is refused (exit $rc): $(head -c 200 "$TMP/second.log")"
ls "$TMP/other" >"$TMP/ls"
[ ! -s "$TMP/ls" ]; ok $? "and created no database file ($(tr '\n' ' ' <"$TMP/ls"))"
kill -0 "$DAEMON_PID"; ok $? "the first daemon is unharmed"
stop_daemon; ok $? "the daemon stops cleanly"
finish
