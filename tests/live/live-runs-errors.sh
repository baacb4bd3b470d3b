#!/bin/bash
# live-runs-errors.sh - what goes wrong with runs, and what must not be
# lost when it does: every error by its message and exit status, a peer
# without permission, malformed control requests, kill -9 during an open
# run, export and import (good and bad files, with and without a daemon).
. "${srcdir:-.}/tests/lib.sh"
need_root
command -v sqlite3 >/dev/null || skip_all "sqlite3 command-line tool not installed"

err() {         # err WANT-EXIT WANT-TEXT -- COMMAND...
        local want=$1 text=$2; shift 3
        local out; out=$("$@" 2>&1 >/dev/null); local rc=$?
        [ "$rc" = "$want" ] && echo "$out" | grep -qF -- "$text" && [ "$(echo "$out" | wc -l)" = 1 ]
        ok $? "exit $want, '$text'"
        [ "$rc" = "$want" ] && echo "$out" | grep -qF -- "$text" || diag "got exit $rc: $out"
}

# --- no daemon ---
err 1 "cannot reach scalemond at $SOCK: No such file or directory (is scalemond running? --socket chooses another)" \
        -- ctl run start r0
start_daemon
ctl run exec base -- true >/dev/null || bail "first run failed"

# --- errors, exactly ---
err 1 "no run named 'run42' (see scalemonctl runs)" -- ctl report --since run42
err 1 "no run named 'run42' (see scalemonctl runs)" -- ctl runs --until run42
err 1 "no run named 'run42' (see scalemonctl runs)" -- ctl run stop run42
err 1 "no run named 'run42' (see scalemonctl runs)" -- ctl run mark run42 "x"
err 2 "--since '12:00': not a time; use a run name, an RFC 3339 time" -- ctl report --since 12:00
err 2 "--until '2026-13-40': not a time; use a run name" -- ctl runs --until 2026-13-40
err 2 "--since '-2parsecs': not a time" -- ctl runs --since -2parsecs
err 1 "no runs between" -- ctl report --since 2001-01-01 --until 2001-01-02
err 1 "no runs tagged ways=999 between" -- ctl runs --tag ways=999
err 1 "a run named 'base' already exists (started" -- ctl run start base
err 1 "run 'base' is not running (it ended at" -- ctl run stop base
err 1 "no run is open (scalemonctl run start NAME opens one)" -- ctl run stop
ctl run start open-a >/dev/null && ctl run start open-b >/dev/null
err 1 "several runs are open (open-a, open-b): name the one you mean" -- ctl run stop
err 1 "several runs are open (open-a, open-b): name the one you mean" -- ctl run mark "which?"
ctl run stop open-b >/dev/null && ctl run stop >/dev/null; ok $? "with one open run, stop needs no name"
err 2 "run start needs a NAME" -- ctl run start
err 2 "run name '-x': a run name does not start with '-' or '@'" -- ctl run start -- -x
err 2 "run name 'a b': a run name has only letters" -- ctl run start "a b"
err 2 "--tag 'ways': expected KEY=VALUE" -- ctl run start t1 --tag ways
err 2 "--tag '9x=1': a key starts with a letter" -- ctl run start t1 --tag 9x=1
err 2 "--score 'jobs=fast': the value must be a number" -- ctl run stop t1 --score jobs=fast
err 2 "--exit-status '300': expected a whole number from 0 to 255" -- ctl run stop t1 --exit-status 300
err 2 "--score-regex s: needs a capture group" -- ctl run exec t1 --score-regex 's=[0-9]+' -- true
err 2 "--score-regex s: not a POSIX extended regular expression" -- ctl run exec t1 --score-regex 's=([0-9]+' -- true
err 2 "run exec t1: no command given (put it after --)" -- ctl run exec t1 --
err 2 "unknown run verb 'begin': use start, stop, exec, mark or delete" -- ctl run begin x
err 2 "--metric: unknown metric 'nope'" -- ctl report --metric nope
[ -z "$(sql "SELECT name FROM run WHERE name = 't1'")" ]; ok $? "no run created by any bad command"

# --- a peer that may not change state ---
if command -v setpriv >/dev/null && ! getent group scalemon >/dev/null; then
        chmod 0711 "$TMP"; chmod 0644 "$DB"* 2>/dev/null
        out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$SCALEMONCTL" --db "$DB" --socket "$SOCK" \
                run start intruder 2>&1); rc=$?
        # the socket is 0660, root and the daemon's group (no group scalemon):
        # it cannot even connect (tests/live/live-socket.sh has the daemon's own check)
        [ $rc = 1 ] && echo "$out" | grep -q "^scalemonctl: permission denied on $SOCK: only root, scalemond's user and members of group [^ ]* may use it"
        ok $? "uid 65534 may not start a run: $out"
        out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$SCALEMONCTL" --db "$DB" --socket "$SOCK" \
                run stop base 2>&1); rc=$?
        [ $rc = 1 ] && echo "$out" | grep -q "permission denied"; ok $? "nor stop one"
        [ -z "$(sql "SELECT name FROM run WHERE name = 'intruder'")" ]; ok $? "no run created"
        ! grep -q "control: uid 65534" "$TMP/daemon.log"; ok $? "the daemon never heard from it"
        out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$SCALEMONCTL" --db "$DB" --socket "$SOCK" \
                --format json status 2>&1)
        echo "$out" | jpy 'd["daemon"]["running"] and not d["daemon"]["reachable"] and d["daemon"]["why"]' |
                grep -q "^permission denied on $SOCK"
        ok $? "its status, from the database it may read, says the daemon runs and why it does not answer"
else
        for i in 1 2 3 4 5; do echo "ok $((tap_n += 1)) # SKIP no setpriv, or a group scalemon exists here"; done
fi

# --- malformed control requests: an error reply each, the daemon goes on ---
if command -v socat >/dev/null; then
        ask() { printf '%s\n' "$1" | socat -t 2 - "UNIX-CONNECT:$SOCK"; }
        ask 'not json' | grep -q '"ok":false,"error":"not JSON'; ok $? "not JSON"
        ask '[1,2]' | grep -q 'a request is a JSON object'; ok $? "not an object"
        ask '{"cmd":"launch"}' | grep -q "unknown cmd 'launch'"; ok $? "unknown cmd"
        ask '{"cmd":"run-start"}' | grep -q "'run-start' needs a 'name'"; ok $? "missing field"
        ask '{"cmd":"run-start","name":5}' | grep -q "'name' must be a string"; ok $? "wrong type"
        ask '{"cmd":"run-start","name":"x","colour":"red"}' | grep -q "'run-start' does not take 'colour'"; ok $? "unknown field"
        ask '{"cmd":"run-stop","exit_status":-1}' | grep -q "exit_status' must be a whole number"; ok $? "out of range"
        ask '{"cmd":"status","cmd":"status"}' | grep -q '"ok":false'; ok $? "duplicate keys refused"
        head -c 70000 /dev/zero | tr '\0' 'x' | socat -t 2 - "UNIX-CONNECT:$SOCK" | grep -q "longer than 65536 bytes"
        ok $? "oversized request refused"
        ask '{"cmd":"status"}' | grep -q '"ok":true'; ok $? "and the daemon still answers"
        kill -0 "$DAEMON_PID"; ok $? "still running"
else
        for i in $(seq 11); do echo "ok $((tap_n += 1)) # SKIP socat not installed"; done
fi

# --- the most a run may carry: 64 scores and 64 tags with the longest keys ---
long=$(printf 'k%.0s' $(seq 64))
sargs=(); targs=()
for i in $(seq 10 73); do sargs+=(--score "${long:0:62}$i=$i.25"); targs+=(--tag "${long:0:62}$i=$(printf 'v%.0s' $(seq 250))"); done
ctl run start biggest "${targs[@]}" >/dev/null && ctl run stop biggest "${sargs[@]}" >/dev/null
ok $? "a run with 64 tags of 256 characters and 64 scores"
ctl report --since biggest >/dev/null && ctl runs --since biggest >/dev/null && ctl --format csv report --since biggest >/dev/null
ok $? "reports on it (fixed-size buffers truncate, never overflow)"
[ "$(ctl --format json runs --since biggest | jpy 'len(d["runs"][0]["scores"]) + len(d["runs"][0]["tags"])')" = 128 ]
ok $? "every score and tag kept"

# --- kill -9 with a run open ---
ctl run start crash1 --tag kind=crash >/dev/null
"$WL/wl-pingpong" 5000 >/dev/null
sleep 1.3                                   # let a flush happen
kill -KILL "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null; DAEMON_PID=
[ "$(sql 'PRAGMA integrity_check')" = ok ]; ok $? "database intact after kill -9"
start_daemon
grep -q "run crash1 was open when scalemond stopped: closed as interrupted" "$TMP/daemon.log"; ok $? "restart closes it, and says so"
j=$(ctl --format json report --since crash1 --until crash1)
[ "$(echo "$j" | jpy 'd["runs"][0]["status"]')" = interrupted ]; ok $? "reported as interrupted"
echo "$j" | jpy 'd["runs"][0]["why"]' | grep -q "scalemond stopped during the run"; ok $? "with why"
cs=$(echo "$j" | jpy 'd["runs"][0]["metrics"]["context_switches"]["total"]')
[ "$cs" -ge 10000 ]; ok $? "its totals reach the last interval written ($cs context switches for 5000 round trips)"
ctl report --since crash1 | grep -q "INTERRUPTED"; ok $? "the table says so too"

# --- export / import ---
ctl export > "$TMP/all.json"; ok $? "export"
nruns=$(jpy 'len(d["runs"])' < "$TMP/all.json")
[ "$(jpy 'd["format"] + " " + str(d["version"])' < "$TMP/all.json")" = "scalemon-runs 1" ]; ok $? "versioned document ($nruns runs)"
"$SCALEMONCTL" --db "$TMP/copy.db" import "$TMP/all.json" >/dev/null; ok $? "import into an empty database (no daemon)"
ctl --format json report | jpy 'json.dumps(d, sort_keys=True)' > "$TMP/r1"
"$SCALEMONCTL" --db "$TMP/copy.db" --format json report | jpy 'json.dumps(d, sort_keys=True)' > "$TMP/r2"
cmp -s "$TMP/r1" "$TMP/r2"; ok $? "the imported database gives the same report"
ctl report > "$TMP/t1"; "$SCALEMONCTL" --db "$TMP/copy.db" report > "$TMP/t2"
cmp -s "$TMP/t1" "$TMP/t2"; ok $? "the same table too"
"$SCALEMONCTL" --db "$TMP/copy.db" export > "$TMP/again.json"; ok $? "export from the copy"
# every field of every run and host (tags, scores, context, marks, totals)
# comes back as it went out
jpy 'json.dumps([d["hosts"], d["runs"]], sort_keys=True)' < "$TMP/all.json" > "$TMP/x1"
jpy 'json.dumps([d["hosts"], d["runs"]], sort_keys=True)' < "$TMP/again.json" > "$TMP/x2"
cmp -s "$TMP/x1" "$TMP/x2"; ok $? "exported again, the same runs and hosts ($(wc -c < "$TMP/x1") bytes)"
before=$(sql "SELECT count(*) FROM run")
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["runs"][-1]["status"]="exploded"; json.dump(d, open(sys.argv[2],"w"))' \
        "$TMP/all.json" "$TMP/bad.json"
err 1 "not a valid scalemon export: run '" -- "$SCALEMONCTL" --db "$TMP/copy2.db" import "$TMP/bad.json"
[ "$(sqlite3 "$TMP/copy2.db" 'SELECT count(*) FROM run' 2>/dev/null || echo 0)" = 0 ]; ok $? "a bad file imports nothing"
# its own export again: nothing to add, and it says so
out=$(ctl import "$TMP/all.json" 2>&1); rc=$?
[ $rc = 0 ] && echo "$out" | grep -q "imported 0 runs .*already there (same name, host and start), skipped"
ok $? "the database's own export imported again adds nothing, exit $rc: $out"
# a real clash: the same name from this host with another start
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); r=d["runs"][0]; r.pop("start_ns", None); r["start"]="2001-01-01T00:00:00.000Z"; json.dump(d, open(sys.argv[2],"w"))' \
        "$TMP/all.json" "$TMP/clash.json"
err 1 "already exists in" -- ctl import "$TMP/clash.json"
[ "$(sql "SELECT count(*) FROM run")" = "$before" ]; ok $? "a clash changes nothing"
# through the daemon, into its own database: other runs, renamed
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); [r.update(name="imp-" + r["name"]) for r in d["runs"]]; json.dump(d, open(sys.argv[2],"w"))' \
        "$TMP/all.json" "$TMP/renamed.json"
out=$(ctl import "$TMP/renamed.json"); ok $? "import through the running daemon: $out"
[ "$(sql "SELECT count(*) FROM run WHERE imported")" = "$nruns" ]; ok $? "all $nruns runs added, marked imported"
grep -q "imported $nruns runs" "$TMP/daemon.log"; ok $? "logged by the daemon"
echo '{"format":"scalemon-runs","version":9,"hosts":[],"runs":[]}' > "$TMP/v9.json"
err 1 "export version 9 is not one this scalemonctl reads (1)" -- ctl import "$TMP/v9.json"
echo 'garbage' > "$TMP/garbage.json"
err 1 "not a valid scalemon export: not JSON" -- "$SCALEMONCTL" --db "$TMP/copy3.db" import "$TMP/garbage.json"

check "daemon stops cleanly" -- stop_daemon
[ "$(sql 'PRAGMA integrity_check')" = ok ]; ok $? "integrity_check"
finish
