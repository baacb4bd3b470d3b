#!/bin/bash
# live-run-delete.sh - scalemonctl run delete NAME: a finished run goes
# with its tags, scores, marks and totals (and its context set once no run
# shares it); other runs and the samples stay; a running run, an unknown
# name and a bad name are refused with one line and nothing changed; it
# works through the daemon and directly on a database no daemon holds.
. "${srcdir:-.}/tests/lib.sh"
fake_kernel
command -v sqlite3 >/dev/null || skip_all "sqlite3 command-line tool not installed"

count() { sql "SELECT count(*) FROM $1"; }
rows_of() {     # rows_of NAME: rows in every table that belong to run NAME
        sql "SELECT (SELECT count(*) FROM run_tag WHERE run = r.id) + (SELECT count(*) FROM run_score WHERE run = r.id) +
                    (SELECT count(*) FROM run_mark WHERE run = r.id) + (SELECT count(*) FROM run_total WHERE run = r.id)
               FROM run r WHERE r.name = '$1'"
}
runs_dump() { sqlite3 -readonly "$DB" '.dump run' '.dump run_tag' '.dump run_score' '.dump run_mark' '.dump run_total' \
              '.dump context_kv' '.dump context_set'; }

start_daemon
for r in keep gone other; do
        ctl run start "$r" --tag k="$r" >/dev/null
        "$WL/wl-pingpong" 500 >/dev/null
        ctl run mark "$r" "middle" >/dev/null
        ctl run stop "$r" --score s=1 >/dev/null
done
ctl run start open >/dev/null
n_gone=$(rows_of gone)
[ "${n_gone:-0}" -gt 10 ]; ok $? "run gone has $n_gone rows of tags, scores, marks and totals"
keep_before=$(rows_of keep)
samples=$(count sample)

out=$(ctl run delete gone); rc=$?
[ $rc = 0 ] && [ "$out" = "deleted run gone" ]; ok $? "run delete gone: exit $rc, '$out'"
[ "$(sql "SELECT count(*) FROM run WHERE name = 'gone'")" = 0 ]; ok $? "the run is gone"
[ "$(sql "SELECT count(*) FROM run_tag t LEFT JOIN run r ON r.id = t.run WHERE r.id IS NULL")" = 0 ] &&
[ "$(sql "SELECT count(*) FROM run_total t LEFT JOIN run r ON r.id = t.run WHERE r.id IS NULL")" = 0 ] &&
[ "$(sql "SELECT count(*) FROM run_mark t LEFT JOIN run r ON r.id = t.run WHERE r.id IS NULL")" = 0 ] &&
[ "$(sql "SELECT count(*) FROM run_score t LEFT JOIN run r ON r.id = t.run WHERE r.id IS NULL")" = 0 ]
ok $? "no tag, score, mark or total is left without its run"
[ "$(rows_of keep)" = "$keep_before" ]; ok $? "the other runs keep theirs ($keep_before rows for keep)"
[ "$(count sample)" -ge "$samples" ]; ok $? "the samples stay ($(count sample) >= $samples)"
[ "$(sql "SELECT count(*) FROM context_set")" -ge 1 ]; ok $? "the shared context set stays while runs use it"
grep -q "run gone deleted (uid $(id -u))" "$TMP/daemon.log"; ok $? "the daemon logged it"

before=$(runs_dump)
out=$(ctl run delete open 2>&1); rc=$?
[ $rc = 1 ] && [ "$out" = "scalemonctl: run open is still running: stop it first (scalemonctl run stop open)" ]
ok $? "a running run is refused: exit $rc, $out"
out=$(ctl run delete nosuch 2>&1); rc=$?
[ $rc = 1 ] && [ "$(echo "$out" | wc -l)" = 1 ] && echo "$out" | grep -q "no run named nosuch"
ok $? "an unknown run: exit $rc, $out"
out=$(ctl run delete 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "run delete takes one NAME"; ok $? "no name: exit $rc, $out"
out=$(ctl run delete "a'b" 2>&1); rc=$?
[ $rc = 2 ]; ok $? "a bad name: exit $rc, $out"
[ "$(runs_dump)" = "$before" ]; ok $? "none of these changed the database"

ctl run stop open >/dev/null
check "the daemon stops" -- stop_daemon
# no daemon: directly in the file; the last runs free their context set
out=$(ctl run delete other); rc=$?
[ $rc = 0 ]; ok $? "without a daemon, directly: exit $rc, $out"
ctl run delete keep >/dev/null && ctl run delete open >/dev/null
[ "$(count run)" = 0 ] && [ "$(count context_set)" = 0 ] && [ "$(count context_kv)" = 0 ]
ok $? "all runs deleted: no context set left ($(count context_set))"
[ "$(sql 'PRAGMA integrity_check')" = ok ] && [ -z "$(sql 'PRAGMA foreign_key_check')" ]; ok $? "integrity and foreign keys ok"
finish
