#!/bin/bash
# live-retention.sh - retention = DUR: samples older than that are deleted
# (a chunk at a time), the runs and their totals stay, recent samples stay.
. "${srcdir:-.}/tests/lib.sh"
need_root
command -v sqlite3 >/dev/null || skip_all "sqlite3 command-line tool not installed"

# a database that already holds three days' old intervals (the ids of
# ticks grow with their times), with a run over them and its totals
echo '{"format":"scalemon-runs","version":1,"hosts":[],"runs":[]}' > "$TMP/empty.json"
"$SCALEMONCTL" --db "$DB" import "$TMP/empty.json" >/dev/null || bail "cannot make a database"
old=$(( $(date +%s) - 3 * 86400 ))
{
        echo "BEGIN;"
        echo "INSERT INTO host (machine_id, hostname, kernel, ncpus, nnodes, first_seen, last_seen) VALUES ('old', 'old', '6.1', 2, 1, 0, 0);"
        echo "INSERT OR IGNORE INTO metric (name, scope, unit, source, available) VALUES ('context_switches', 'cpu', 'switches', 'perf', 1);"
        for i in $(seq 1 12000); do
                echo "INSERT INTO tick (id, t, dur) VALUES ($i, $(( (old + i) * 1000000000 )), 1000000000);"
                # CPU 0: 100 (the token 100 + 2, schema 0004)
                echo "INSERT INTO cpu_sample (tick, metric, total, vals) VALUES ($i, (SELECT id FROM metric WHERE name = 'context_switches'), 100, x'66');"
        done
        echo "INSERT INTO run (name, host, status, start, end, start_tick, end_tick) VALUES ('oldrun', 1, 'done', $(( old * 1000000000 )), $(( (old + 12000) * 1000000000 )), 0, 12000);"
        echo "INSERT INTO run_total (run, metric, level, loc, value) VALUES (1, (SELECT id FROM metric WHERE name = 'context_switches'), 'system', 0, 1200000);"
        echo "COMMIT;"
} | sqlite3 "$DB" || bail "cannot fill the database"
[ "$(sql 'SELECT count(*) FROM tick')" = 12000 ]; ok $? "12000 intervals of three days ago"

printf 'retention = 1d\n' > "$TMP/ret.conf"
"$SCALEMOND" --check-config --config "$TMP/ret.conf" >/dev/null; ok $? "retention = 1d is a good setting"
printf 'retention = 10m\n' > "$TMP/bad.conf"
out=$("$SCALEMOND" --check-config --config "$TMP/bad.conf" 2>&1)
[ $? = 1 ] && echo "$out" | grep -q "bad.conf:1: retention 10m is too short: at least 1h, or 'forever'"; ok $? "a retention under an hour is refused: $out"

INTERVAL=200ms start_daemon --config "$TMP/ret.conf"
grep -q "samples kept 1d" "$TMP/daemon.log"; ok $? "the start-up line says how long samples are kept"
for i in $(seq 50); do [ "$(sql 'SELECT count(*) FROM tick WHERE t < strftime("%s", "now", "-1 day") * 1000000000')" = 0 ] && break; sleep 0.1; done
left=$(sql 'SELECT count(*) FROM tick WHERE t < strftime("%s", "now", "-1 day") * 1000000000')
[ "$left" = 0 ]; ok $? "old intervals deleted at start, in chunks ($left left)"
[ "$(sql 'SELECT count(*) FROM sample WHERE tick <= 12000')" = 0 ]; ok $? "and their samples"
wait_flushed "$(now_ns)"
[ "$(sql 'SELECT count(*) FROM tick WHERE id > 12000')" -gt 0 ]; ok $? "new intervals are kept"
v=$("$SCALEMONCTL" --db "$DB" --socket "$SOCK" --format json report --since oldrun --until oldrun --metric context_switches |
    jpy 'd["runs"][0]["metrics"]["context_switches"]["total"]')
[ "$v" = 1200000 ]; ok $? "the old run and its totals stay ($v)"
check "daemon stops cleanly" -- stop_daemon
[ "$(sql 'PRAGMA integrity_check')" = ok ]; ok $? "integrity_check"
finish
