#!/bin/bash
# live-daemon.sh - scalemond's start-up, configuration and life cycle:
# --check-config, usage errors, a second daemon on the same database, a
# user without perf permission, SIGHUP reloads (good and broken), SIGINT,
# and going into the background.
. "${srcdir:-.}/tests/lib.sh"
need_root
command -v sqlite3 >/dev/null || skip_all "sqlite3 command-line tool not installed"

# --- configuration checks, no daemon ---
cat > "$TMP/good.conf" <<CONF
# test
interval = 250ms
exclude = kvm_exits
CONF
out=$("$SCALEMOND" --check-config --config "$TMP/good.conf" 2>&1); rc=$?
[ $rc = 0 ] && echo "$out" | grep -q "ok (interval 250ms"; ok $? "--check-config on a good file: exit 0 ($out)"
printf 'interval = 1s\nmetrics = context_switches, nope\n' > "$TMP/bad.conf"
out=$("$SCALEMOND" --check-config --config "$TMP/bad.conf" 2>&1); rc=$?
[ $rc = 1 ] && echo "$out" | grep -q "bad.conf:2: unknown metric 'nope'"; ok $? "--check-config on a bad file: exit 1, file:line ($out)"
[ "$(echo "$out" | wc -l)" = 1 ]; ok $? "one line"
out=$("$SCALEMOND" --foreground --db "$DB" --interval 5ms 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q -- "--interval 5ms: out of range; use 10ms..60s"; ok $? "--interval 5ms: exit 2 ($out)"
out=$("$SCALEMOND" --foreground --db "$DB" --interval soon 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "not a duration"; ok $? "--interval soon: exit 2 ($out)"
out=$("$SCALEMOND" --foreground --config "$TMP/missing.conf" --db "$DB" 2>&1); rc=$?
[ $rc = 1 ] && echo "$out" | grep -q "missing.conf: cannot read"; ok $? "missing --config file: exit 1 ($out)"
out=$("$SCALEMOND" --bogus 2>&1); rc=$?
[ $rc = 2 ]; ok $? "unknown option: exit 2"
[ ! -e "$DB" ]; ok $? "no database created by any of these"

# --- a user who may not open system-wide perf events ---
if [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -ge 1 ] && command -v setpriv >/dev/null; then
        chmod 0711 "$TMP"; mkdir -m 0777 "$TMP/nobody"
        out=$(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
                "$SCALEMOND" --foreground --db "$TMP/nobody/db" --socket "$TMP/nobody/sock" 2>&1); rc=$?
        diag "as nobody: $out"
        [ $rc != 0 ] && echo "$out" | grep -q "perf_event_paranoid" && echo "$out" | grep -q "CAP_PERFMON"
        ok $? "without permission: non-zero exit, names kernel.perf_event_paranoid and CAP_PERFMON"
else
        echo "ok $((tap_n += 1)) # SKIP perf_event_paranoid < 1 or no setpriv: anyone may count"
fi

# --- second daemon on the same database ---
cp "$TMP/good.conf" "$TMP/live.conf"
sed -i 's/250ms/100ms/' "$TMP/live.conf"
INTERVAL= start_daemon --config "$TMP/live.conf"    # the file sets the interval
out=$("$SCALEMOND" --foreground --db "$DB" --socket "$TMP/other.sock" 2>&1); rc=$?
[ $rc != 0 ] && echo "$out" | grep -q "in use by another scalemond"; ok $? "second daemon refused: $out"
kill -0 "$DAEMON_PID"; ok $? "first daemon unharmed"

# --- reload with a new interval and metric set ---
t_reload=$(now_ns)
sed -i 's/interval = .*/interval = 200ms/; s/exclude = .*/exclude = kvm_exits, lock_contentions/' "$TMP/live.conf"
kill -HUP "$DAEMON_PID"
sleep 2.5
wait_flushed "$(now_ns)"
grep -q "configuration reloaded: .* every 200ms" "$TMP/daemon.log"; ok $? "reload logged with the new interval"
[ "$(interval_ns)" = 200000000 ]; ok $? "new interval recorded in the database"
med=$(sql "SELECT dur FROM tick WHERE t > $t_reload + 300000000 ORDER BY dur LIMIT 1 OFFSET (SELECT count(*) / 2 FROM tick WHERE t > $t_reload + 300000000)")
diag "median tick length after reload: ${med} ns"
[ "${med:-0}" -gt 150000000 ] && [ "${med:-0}" -lt 260000000 ]; ok $? "new samples are ~200ms apart"
why=$(ctl --format json metrics | jpy "[m.get('why') for m in d['metrics'] if m['name'] == 'lock_contentions'][0]")
[ "$why" = "disabled in the configuration" ]; ok $? "lock_contentions now disabled ($why)"
n=$(sql "SELECT count(*) FROM samples_all WHERE metric = 'lock_contentions' AND t_ns > $t_reload + 300000000")
[ "$n" = 0 ]; ok $? "and no longer sampled"
gaps=$(sql "SELECT count(*) FROM tick a JOIN tick b ON b.id = a.id + 1 WHERE b.t - (a.t + a.dur) > 5000000")
[ "$gaps" = 0 ]; ok $? "no gap between intervals across the reload"

# --- a broken config on reload is refused; the old one stays ---
echo "interval = sometimes" >> "$TMP/live.conf"
kill -HUP "$DAEMON_PID"
sleep 0.5
grep -q "reload refused, keeping the running configuration: $TMP/live.conf:4: 'interval' is set twice" "$TMP/daemon.log" ||
        grep -q "reload refused.*live.conf:4:" "$TMP/daemon.log"
ok $? "broken reload refused with file:line ($(grep 'reload refused' "$TMP/daemon.log"))"
kill -0 "$DAEMON_PID"; ok $? "daemon still running"
[ "$(interval_ns)" = 200000000 ]; ok $? "old interval still in force"
out=$(ctl reload 2>&1); rc=$?
[ $rc = 1 ] && echo "$out" | grep -q "reload refused, keeping the running configuration: $TMP/live.conf:4:"
ok $? "scalemonctl reload says it was refused, with file:line ($out)"
sed -i '$d' "$TMP/live.conf"
out=$(ctl reload); rc=$?
[ $rc = 0 ] && echo "$out" | grep -q "^reloaded: sampling .* every 200ms"; ok $? "and reloads a good one ($out)"
kill -0 "$DAEMON_PID"; ok $? "daemon still running"

# --- SIGINT stops cleanly too ---
kill -INT "$DAEMON_PID"; wait "$DAEMON_PID"; ok $? "SIGINT: clean exit"
DAEMON_PID=
[ "$(sql 'PRAGMA integrity_check')" = ok ]; ok $? "integrity_check ok"
[ ! -e "$DB-wal" ] || [ ! -s "$DB-wal" ]; ok $? "WAL checkpointed at stop"

# --- into the background ---
"$SCALEMOND" --db "$DB" --socket "$SOCK" --interval 100ms; rc=$?
ok $rc "without --foreground: the parent returns 0 once the daemon is ready"
pid=$(sql "SELECT value FROM meta WHERE key = 'daemon_pid'")
[ -n "$pid" ] && kill -0 "$pid" && [ "$(cat /proc/$pid/comm)" = scalemond ]; ok $? "daemon runs in the background (pid $pid)"
[ "$(ps -o sid= -p "$pid" | tr -d ' ')" = "$pid" ] || [ "$(ps -o ppid= -p "$pid" | tr -d ' ')" = 1 ] ||
        [ "$(ps -o sid= -p "$pid" | tr -d ' ')" != "$(ps -o sid= -p $$ | tr -d ' ')" ]
ok $? "in a session of its own"
ctl status | grep -q "running (pid $pid)"; ok $? "status sees it"
kill -TERM "$pid"
for i in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
! kill -0 "$pid" 2>/dev/null; ok $? "stops on SIGTERM"
ctl status | grep -q "not running"; ok $? "status says not running"
finish
