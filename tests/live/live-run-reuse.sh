#!/bin/bash
# live-run-reuse.sh - a loop script run twice: run names
# cannot be reused, so by default the second `run exec NAME` refuses before
# running the benchmark, and says which options would let it; with
# --name-suffix the run is recorded as NAME-2, NAME-3... (the first free),
# with --replace a finished run of that name is deleted and the new one
# recorded.  A running run is never replaced.  Checked in the database
# (names, tags, scores, marks of the replaced run gone) and by counting how
# often the benchmark really ran.
. "${srcdir:-.}/tests/lib.sh"
need_root
command -v sqlite3 >/dev/null || skip_all "sqlite3 command-line tool not installed"

start_daemon
RAN=$TMP/ran
bench() { echo "ran $1" >>"$RAN"; echo "jobs: $1"; }
export -f bench; export RAN
nran() { [ -f "$RAN" ] && wc -l <"$RAN" || echo 0; }

ctl run exec loop --tag v=1 --score-regex 'jobs=jobs: ([0-9]+)' -- bash -c 'bench 11' >/dev/null
ok $? "first run exec loop"
ctl run exec loop --tag v=2 --score-regex 'jobs=jobs: ([0-9]+)' -- bash -c 'bench 22' >"$TMP/out" 2>"$TMP/err"; rc=$?
[ $rc = 1 ]; ok $? "the second run exec loop fails (exit $rc)"
[ "$(nran)" = 1 ]; ok $? "and did not run the benchmark (ran $(nran) times)"
grep -q "^scalemonctl: a run named 'loop' already exists (started .*--name-suffix.*--replace" "$TMP/err"
ok $? "the refusal names --name-suffix and --replace: $(head -c 300 "$TMP/err")"

# --name-suffix: loop-2, loop-3, and run start too
ctl run exec loop --name-suffix --tag v=2 --score-regex 'jobs=jobs: ([0-9]+)' -- bash -c 'bench 22' >/dev/null 2>"$TMP/err"
ok $? "run exec loop --name-suffix"
grep -q "^scalemonctl: a run named loop exists: recording this one as loop-2$" "$TMP/err"
ok $? "it says the name it recorded: $(head -c 200 "$TMP/err")"
ctl run exec loop --name-suffix -- bash -c 'bench 33' >/dev/null 2>&1; ok $? "again"
[ "$(nran)" = 3 ]; ok $? "the benchmark ran each time ($(nran))"
[ "$(sql "SELECT group_concat(name, ' ') FROM (SELECT name FROM run ORDER BY id)")" = "loop loop-2 loop-3" ]
ok $? "runs loop loop-2 loop-3: $(sql "SELECT group_concat(name, ' ') FROM run")"
[ "$(sql "SELECT s.value FROM run r JOIN run_score s ON s.run = r.id WHERE r.name = 'loop-2'")" = 22.0 ]
ok $? "loop-2 has its own score (22)"
[ "$(sql "SELECT s.value FROM run r JOIN run_score s ON s.run = r.id WHERE r.name = 'loop'")" = 11.0 ]
ok $? "loop kept its score (11)"
out=$(ctl run start loop --name-suffix); ok $? "run start loop --name-suffix: $out"
[[ $out == "run loop-4 started at "* ]]; ok $? "started as loop-4"
ctl run stop loop-4 >/dev/null; ok $? "run stop loop-4"

# --replace: a finished run
old_id=$(sql "SELECT id FROM run WHERE name = 'loop'")
ctl run exec loop --replace --tag v=9 --score-regex 'jobs=jobs: ([0-9]+)' -- bash -c 'bench 99' >/dev/null 2>"$TMP/err"
ok $? "run exec loop --replace"
[ ! -s "$TMP/err" ]; ok $? "quietly (stderr: $(head -c 200 "$TMP/err"))"
[ "$(sql "SELECT count(*) FROM run WHERE name = 'loop'")" = 1 ]; ok $? "one run named loop"
new_id=$(sql "SELECT id FROM run WHERE name = 'loop'")
[ "$new_id" != "$old_id" ]; ok $? "a new run (id $old_id -> $new_id)"
[ "$(sql "SELECT s.value FROM run_score s WHERE s.run = $new_id")" = 99.0 ] &&
        [ "$(sql "SELECT value FROM run_tag WHERE run = $new_id AND key = 'v'")" = 9 ]
ok $? "with the new score and tag"
[ "$(sql "SELECT (SELECT count(*) FROM run_tag WHERE run = $old_id) + (SELECT count(*) FROM run_score WHERE run = $old_id) + (SELECT count(*) FROM run_total WHERE run = $old_id)")" = 0 ]
ok $? "the old run's tags, scores and totals are gone"
[ "$(sql "SELECT count(*) FROM run")" = 4 ]; ok $? "4 runs in all"
[ "$(nran)" = 4 ]; ok $? "the benchmark ran 4 times"
grep -q "run loop deleted: replaced" "$TMP/daemon.log"; ok $? "the daemon logged the replacement"

# never a running run
ctl run start busy >/dev/null; ok $? "run start busy"
ctl run start busy --replace >"$TMP/out" 2>"$TMP/err"; rc=$?
[ $rc = 1 ] && grep -q "^scalemonctl: a run named 'busy' is running (started .*): --replace replaces only a finished run$" "$TMP/err"
ok $? "--replace refuses a running run (exit $rc): $(head -c 200 "$TMP/err")"
[ "$(sql "SELECT status FROM run WHERE name = 'busy'")" = running ]; ok $? "busy still running"
ctl run stop busy >/dev/null; ok $? "run stop busy"
ctl run start busy --name-suffix --replace >"$TMP/out" 2>"$TMP/err"; rc=$?
[ $rc = 2 ] && grep -q "use only one of --name-suffix and --replace" "$TMP/err"; ok $? "not both (exit $rc)"
[ "$(sql "SELECT count(*) FROM run")" = 5 ]; ok $? "5 runs"
[ "$(sqlite3 -readonly "$DB" 'PRAGMA integrity_check')" = ok ]; ok $? "integrity_check ok"
stop_daemon; ok $? "the daemon stops cleanly"
finish
