#!/bin/bash
# live-retention.sh - rollups, retain_rollup and max_db_size (schema 0005).
# A database is filled with known intervals: three hours at 1 s that ended
# eight days ago, with a run in them, and ten minutes a hundred days ago
# with another run.  With the defaults (raw 7d, 1m rollups, kept 90d) the
# daemon must merge each minute of the eight-day-old ticks outside the run
# into one tick with exactly the sums of the raw ones (NULL only where no
# interval was counted), leave the run's ticks as they were, and delete
# the hundred-day-old ticks except the run's, until that run is deleted.
# Then a larger database and max_db_size: the oldest ticks outside runs
# go until the file's pages in use fit, and when only runs are left, one
# line says so and sampling goes on.
. "${srcdir:-.}/tests/lib.sh"
fake_kernel
command -v sqlite3 >/dev/null || skip_all "sqlite3 command-line tool not installed"
[ -r "$SQLITE_EXT" ] || skip_all "the SQL extension $SQLITE_EXT is not built"

INTERVAL=200ms
NS=1000000000
wsql() { sqlite3 -batch -cmd ".load $SQLITE_EXT" "$DB" "$@"; }
status() { ctl --format json status | jpy "d['daemon']['retention']['$1']"; }
# wait_status KEY N: until the daemon's retention counter KEY reaches N
wait_status() {
        local i
        for i in $(seq 300); do [ "$(status "$1")" -ge "$2" ] 2>/dev/null && return 0; sleep 0.1; done
        return 1
}

echo '{"format":"scalemon-runs","version":1,"hosts":[],"runs":[]}' > "$TMP/empty.json"
"$SCALEMONCTL" --db "$DB" import "$TMP/empty.json" >/dev/null || bail "cannot make a database"

# ticks 1..600: a hundred days ago; 1001..11800: tick 1000 + i starts at
# T0 + i s, eight days ago, T0 on a minute, so tick 1000 + i is in minute
# i / 60.  Values (context_switches, cpu_user per CPU; numa_hit on node 0,
# thp_fault_alloc system-wide) follow formulas; CPU 1 is not counted in
# minute 5 and once in minute 6, thp_fault_alloc not in minute 7; CPU 0's
# software group ran half the time in every tenth interval.
now=$(date +%s)
T0=$(( (now - 8 * 86400 - 3 * 3600) / 60 * 60 * NS ))
TA=$(( (now - 100 * 86400) / 60 * 60 * NS ))
wsql <<EOF || bail "cannot fill the database"
BEGIN;
INSERT INTO host (machine_id, hostname, kernel, ncpus, nnodes, first_seen, last_seen) VALUES ('old', 'old', '6.1', 2, 1, 0, 0);
INSERT OR IGNORE INTO metric (name, scope, unit, source, available) VALUES
  ('context_switches', 'cpu', 'switches', 'perf', 1), ('cpu_user', 'cpu', 's', 'proc', 1),
  ('numa_hit', 'node', 'pages', 'numastat', 1), ('thp_fault_alloc', 'system', 'faults', 'vmstat', 1);
CREATE TEMP TABLE m AS SELECT name, id FROM metric;
WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 600)
  INSERT INTO tick (id, t, dur) SELECT i, $TA + i * $NS, $NS FROM s;
WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 10800)
  INSERT INTO tick (id, t, dur) SELECT 1000 + i, $T0 + i * $NS, $NS FROM s;
WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 600)
  INSERT INTO cpu_sample (tick, metric, total, vals)
  SELECT i, (SELECT id FROM m WHERE name = 'context_switches'), 5, scalemon_pack(0, 5) FROM s GROUP BY i;
WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 10800),
  v(i, cpu, metric, value) AS (
    SELECT i, 0, 'context_switches', i % 97 + 1 FROM s
    UNION ALL SELECT i, 1, 'context_switches', CASE WHEN i / 60 = 5 OR i = 370 THEN NULL ELSE i * 7 % 13 END FROM s
    UNION ALL SELECT i, 0, 'cpu_user', 100 FROM s
    UNION ALL SELECT i, 1, 'cpu_user', i % 3 FROM s)
  INSERT INTO cpu_sample (tick, metric, total, vals)
  SELECT 1000 + i, (SELECT id FROM m WHERE name = v.metric),
         CASE WHEN count(value) = count(*) THEN sum(value) END, scalemon_pack(cpu, value)
    FROM v GROUP BY i, metric HAVING count(value) < count(*) OR sum(value) <> 0;
WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 10800)
  INSERT INTO sample (tick, metric, loc, value)
  SELECT 1000 + i, (SELECT id FROM m WHERE name = 'numa_hit'), 0, i % 5 FROM s WHERE i % 5 <> 0
  UNION ALL
  SELECT 1000 + i, (SELECT id FROM m WHERE name = 'thp_fault_alloc'), 0, CASE WHEN i / 60 = 7 THEN NULL ELSE i % 2 END
    FROM s WHERE i / 60 = 7 OR i % 2 <> 0;
WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 10800)
  INSERT INTO mux (tick, cpu, grp, duty) SELECT 1000 + i, 0, 'sw', 0.5 FROM s WHERE i % 10 = 0;
INSERT INTO run (name, host, status, start, end, start_tick, end_tick)
  VALUES ('ancient', 1, 'done', $TA + 300 * $NS, $TA + 360 * $NS, 300, 360),
         ('oldrun', 1, 'done', $T0 + 3000 * $NS, $T0 + 3600 * $NS, 4000, 4600);
INSERT INTO run_total (run, metric, level, loc, value)
  SELECT run.id, m.id, 'system', 0, 12345 FROM run, m WHERE m.name = 'context_switches';
COMMIT;
EOF

# what the minutes hold before: per minute, the ticks the rollup must
# leave (the run's, plus one if any is outside it), and every sum
bucket="(t - $T0) / 60 / $NS"
kept="(id BETWEEN 4000 AND 4600)"
sql "SELECT $bucket, sum($kept) + max(NOT $kept), sum(dur) FROM tick WHERE id BETWEEN 1001 AND 11800 GROUP BY 1" > "$TMP/want-ticks"
sums() {
        sql "SELECT $bucket AS b, m.name, s.loc, sum(s.value) FROM sample_all s
             JOIN tick ON tick.id = s.tick JOIN metric m ON m.id = s.metric WHERE tick.id BETWEEN 1001 AND 11800
             GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"
}
sums > "$TMP/sums-before"
runrows() { sql "SELECT tick, metric, loc, value FROM sample_all WHERE tick BETWEEN 4000 AND 4600 ORDER BY 1, 2, 3"; }
runrows | md5sum > "$TMP/run-before"
outside=$(sql "SELECT count(*) FROM tick WHERE id BETWEEN 1001 AND 11800 AND NOT $kept")
minutes=$(sql "SELECT count(DISTINCT $bucket) FROM tick WHERE id BETWEEN 1001 AND 11800 AND NOT $kept")
diag "$outside raw intervals outside the run, in $minutes minutes"

start_daemon
grep -q "raw samples kept 7d, then 1m rollups to 90d" "$TMP/daemon.log"; ok $? "the start-up line says what is kept"
wait_status merged_intervals $((outside - minutes)); ok $? "$((outside - minutes)) intervals merged away ($(status merged_intervals))"
wait_status deleted_intervals 539; ok $? "539 of the hundred-day-old intervals deleted ($(status deleted_intervals))"

sql "SELECT $bucket, count(*), sum(dur) FROM tick WHERE id BETWEEN 1001 AND 11800 GROUP BY 1" > "$TMP/got-ticks"
cmp -s "$TMP/want-ticks" "$TMP/got-ticks"; ok $? "each minute is one tick outside the run, plus the run's, and keeps its length"
diff "$TMP/want-ticks" "$TMP/got-ticks" | head -5 | sed 's/^/# /'
n=$(sql "SELECT sum(n) FROM tick WHERE id BETWEEN 1001 AND 11800")
[ "$n" = 10800 ]; ok $? "their n add up to the 10800 raw intervals ($n)"
r=$(sql "SELECT count(*) FROM tick WHERE id BETWEEN 1001 AND 11800 AND n > 1 AND (n <> 60 OR dur <> 60 * $NS)")
[ "$r" -le 2 ]; ok $? "every full minute is a 60-interval tick of 60 s ($r partial: the first, and the one the run cuts)"
sums > "$TMP/sums-after"
cmp -s "$TMP/sums-before" "$TMP/sums-after"; ok $? "every metric's sum per minute and place is unchanged ($(wc -l < "$TMP/sums-after") sums)"
diff "$TMP/sums-before" "$TMP/sums-after" | head -5 | sed 's/^/# /'
[ "$(runrows | md5sum)" = "$(cat "$TMP/run-before")" ]; ok $? "the run's samples are untouched"
r=$(sql "SELECT count(*), sum(n) FROM tick WHERE id BETWEEN 4000 AND 4600")
[ "$r" = "601|601" ]; ok $? "and so are its ticks ($r)"

# NULL: CPU 1 was counted in no interval of minute 5, in all but one of
# minute 6
cs="(SELECT id FROM metric WHERE name = 'context_switches')"
r=$(sql "SELECT count(*), count(value) FROM sample_all s JOIN tick ON tick.id = s.tick
         WHERE metric = $cs AND loc = 1 AND $bucket = 5")
[ "$r" = "1|0" ]; ok $? "a CPU counted in none of a minute's intervals is NULL in its rollup ($r)"
want=0; for i in $(seq 360 419); do [ "$i" = 370 ] || want=$((want + i * 7 % 13)); done
r=$(sql "SELECT value FROM sample_all s JOIN tick ON tick.id = s.tick WHERE metric = $cs AND loc = 1 AND $bucket = 6")
[ "$r" = "$want" ]; ok $? "one counted in 59 of 60 has their sum ($r, by the formula $want)"
r=$(sql "SELECT count(*), count(value) FROM sample_all s JOIN tick ON tick.id = s.tick
         WHERE metric = (SELECT id FROM metric WHERE name = 'thp_fault_alloc') AND $bucket = 7")
[ "$r" = "1|0" ]; ok $? "the same for a system-wide metric ($r)"
r=$(sql "SELECT total IS NULL FROM cpu_sample JOIN tick ON tick.id = cpu_sample.tick WHERE metric = $cs AND $bucket = 6")
[ "$r" = 0 ]; ok $? "a rollup's total is the sum of what was counted"
r=$(sql "SELECT printf('%.4f', duty) FROM mux JOIN tick ON tick.id = mux.tick WHERE $bucket = 1")
[ "$r" = 0.9500 ]; ok $? "the duty cycle is averaged over the minute (6 intervals at 0.5: $r)"

# a hundred days: only the run's ticks (its start tick to its end tick)
r=$(sql "SELECT count(*), min(id), max(id) FROM tick WHERE id <= 600")
[ "$r" = "61|300|360" ]; ok $? "past retain_rollup only the run's intervals stay ($r)"
r=$(sql "SELECT count(*) FROM cpu_sample WHERE tick <= 600")
[ "$r" = 61 ]; ok $? "with their samples ($r)"
r=$(sql "SELECT count(*) FROM run_total WHERE value = 12345")
[ "$r" = 2 ]; ok $? "both runs' totals stay ($r)"

# the rollups read like any interval
since=$(ns_to_when $((T0 + 60 * NS))); until=$(ns_to_when $((T0 + 120 * NS - 1)))
v=$(ctl --format csv query context_switches --since "$since" --until "$until" |
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "value") c = i; next } { s += $c } END { print s + 0 }')
want=0; for i in $(seq 60 119); do want=$((want + i % 97 + 1 + i * 7 % 13)); done
[ "$v" = "$want" ]; ok $? "query over a rolled-up minute gives its switches ($v, by the formula $want)"

ctl run delete ancient >/dev/null; ok $? "the hundred-day-old run is deleted"
wait_status deleted_intervals 600; ok $? "and its intervals go with the retention ($(status deleted_intervals) deleted)"
r=$(sql "SELECT count(*) FROM tick WHERE id <= 600")
[ "$r" = 0 ]; ok $? "none left ($r)"
kill -0 "$DAEMON_PID"; ok $? "the daemon kept sampling"
late=$(status tick_late_max_us); step=$(status step_max_us)
diag "longest retention slice ${step} us, latest tick ${late} us after its time (interval 200 ms)"
check "it stops cleanly" -- stop_daemon
[ "$(sql 'PRAGMA integrity_check')" = ok ]; ok $? "integrity_check"

# ---- max_db_size ----
rm -f "$DB" "$DB-wal" "$DB-shm"
"$SCALEMONCTL" --db "$DB" import "$TMP/empty.json" >/dev/null || bail "cannot make a database"
T1=$(( (now - 2 * 86400) / 60 * 60 * NS ))
wsql <<EOF || bail "cannot fill the database"
BEGIN;
INSERT INTO host (machine_id, hostname, kernel, ncpus, nnodes, first_seen, last_seen) VALUES ('old', 'old', '6.1', 64, 1, 0, 0);
INSERT OR IGNORE INTO metric (name, scope, unit, source, available) VALUES
  ('context_switches', 'cpu', 'switches', 'perf', 1), ('cpu_user', 'cpu', 's', 'proc', 1), ('page_faults', 'cpu', 'faults', 'perf', 1);
WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 20000)
  INSERT INTO tick (id, t, dur) SELECT i, $T1 + i * $NS, $NS FROM s;
WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 20000),
  c(cpu) AS (SELECT 0 UNION ALL SELECT cpu + 1 FROM c WHERE cpu < 63)
  INSERT INTO cpu_sample (tick, metric, total, vals)
  SELECT i, metric.id, sum((i * 31 + cpu * 17 + metric.id * 7) % 1000 + 200),
         scalemon_pack(cpu, (i * 31 + cpu * 17 + metric.id * 7) % 1000 + 200)
    FROM s, c, metric WHERE metric.name IN ('context_switches', 'cpu_user', 'page_faults') GROUP BY i, metric.id;
INSERT INTO run (name, host, status, start, end, start_tick, end_tick)
  VALUES ('capped', 1, 'done', $T1 + 10000 * $NS, $T1 + 15000 * $NS, 10000, 15000);
COMMIT;
EOF
used() { sql "SELECT (p.page_count - f.freelist_count) * z.page_size FROM pragma_page_count() p, pragma_freelist_count() f, pragma_page_size() z"; }
before=$(used)
diag "a 64-CPU database of 20000 intervals two days old: $before bytes in use"
printf 'max_db_size = 4M\n' > "$TMP/cap.conf"
start_daemon --config "$TMP/cap.conf"
grep -q "database capped at 4M" "$TMP/daemon.log"; ok $? "the start-up line gives the cap"
for i in $(seq 300); do [ "$(status db_bytes)" -gt 0 ] && [ "$(status db_bytes)" -le $((4 << 20)) ] && break; sleep 0.1; done
b=$(status db_bytes)
[ "$b" -le $((4 << 20)) ]; ok $? "old intervals go until it fits in 4M ($before -> $b bytes in use)"
r=$(sql "SELECT count(*) FROM tick WHERE id BETWEEN 10000 AND 15000")
[ "$r" = 5001 ]; ok $? "the run's intervals stay ($r)"
lo=$(sql "SELECT min(id) FROM tick WHERE id > 15000")
gone=$(sql "SELECT 20000 - 5001 - count(*) FROM tick WHERE id <= 20000 AND id NOT BETWEEN 10000 AND 15000")
[ "$gone" -gt 0 ] && [ "$(sql "SELECT count(*) FROM tick WHERE id < 10000")" = 0 ]
ok $? "the oldest went first: $gone intervals, all before the run, then from $lo on"
grep -q "over max_db_size" "$TMP/daemon.log"; [ $? = 1 ]; ok $? "no complaint while there was something to delete"
check "it stops cleanly" -- stop_daemon

# a cap the run alone exceeds: one line, and sampling goes on
printf 'max_db_size = 1M\n' > "$TMP/cap.conf"
start_daemon --config "$TMP/cap.conf"
for i in $(seq 300); do grep -q "over max_db_size" "$TMP/daemon.log" && break; sleep 0.1; done
l=$(grep -c "over max_db_size (1M), and what is left is inside runs or from the last hour" "$TMP/daemon.log")
[ "$l" = 1 ]; ok $? "when only the run is left, one line says so: $(grep -m1 'over max_db_size' "$TMP/daemon.log" | cut -c1-160)"
r=$(sql "SELECT count(*) FROM tick WHERE id BETWEEN 10000 AND 15000")
[ "$r" = 5001 ]; ok $? "and the run's intervals still stay ($r)"
t=$(now_ns); wait_flushed "$t"; ok $? "sampling goes on"
sleep 1.5
[ "$(grep -c "over max_db_size" "$TMP/daemon.log")" = 1 ]; ok $? "said once"
check "it stops cleanly" -- stop_daemon
[ "$(sql 'PRAGMA integrity_check')" = ok ]; ok $? "integrity_check"
finish
