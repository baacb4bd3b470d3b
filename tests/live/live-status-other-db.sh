#!/bin/bash
# live-status-other-db.sh - `scalemonctl --db OTHER status` while a daemon
# writes another database.  The daemon at the socket
# says which database it writes; status compares it with --db by inode
# (not by spelling: a symlink or a relative path is the same file) and on
# an imported copy says that no daemon writes it, instead of showing that
# daemon's state beside an empty host, and lists the hosts its runs came
# from.  The truth: hostname(1) and uname -r, the runs imported, $DB.
. "${srcdir:-.}/tests/lib.sh"
fake_kernel
command -v python3 >/dev/null || skip_all "python3 not installed"

start_daemon
ctl run exec r1 --tag a=1 -- true >/dev/null && ctl run exec r2 --tag a=2 -- true >/dev/null &&
        ctl run exec r3 --tag a=3 -- true >/dev/null
ok $? "three runs"
ctl export >"$TMP/e.json" && "$SCALEMONCTL" --db "$TMP/other.db" --socket "$SOCK" import "$TMP/e.json" >/dev/null
ok $? "exported and imported into other.db"
H=$(hostname); K=$(uname -r)

other() { "$SCALEMONCTL" --db "$TMP/other.db" --socket "$SOCK" "$@"; }
other status >"$TMP/st"; ok $? "status on other.db"
sed 's/^/# /' "$TMP/st"
grep -qx "daemon:    none writes this database (the daemon at $SOCK, pid $DAEMON_PID, writes $DB)" "$TMP/st"
ok $? "says no daemon writes it, and which database the daemon at the socket writes"
! grep -q "running (pid" "$TMP/st" && ! grep -q "^memory:" "$TMP/st"; ok $? "and does not show that daemon as this database's"
grep -qx "host:      none: no daemon has sampled into this database (imported runs only)" "$TMP/st" &&
        ! grep -q "^CPUs:" "$TMP/st" && ! grep -q "^metrics:" "$TMP/st"
ok $? "no host, CPU or metric counts made up from nothing"
grep -qx "runs from: $H (kernel $K, 3 runs)" "$TMP/st"; ok $? "the hosts its runs came from: $H, 3 runs"
other --format json status >"$TMP/json"; ok $? "status --format json"
python3 - "$TMP/json" "$DB" "$H" <<'PY'; ok $? "JSON: writes_this_database false, other.database, run_hosts"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["daemon"]["running"] is False and d["daemon"]["reachable"] is False, d["daemon"]
assert d["daemon"]["writes_this_database"] is False
assert d["daemon"]["other"]["database"] == sys.argv[2], d["daemon"]
assert d["run_hosts"] == [{"hostname": sys.argv[3], "kernel": d["run_hosts"][0]["kernel"], "runs": 3}], d["run_hosts"]
PY

# the same file under another name is the daemon's database
ln -s "$DB" "$TMP/link.db"
"$SCALEMONCTL" --db "$TMP/link.db" --socket "$SOCK" status >"$TMP/st2"
grep -q "^daemon:    running (pid $DAEMON_PID)" "$TMP/st2"; ok $? "through a symlink: the running daemon's database"
(cd "$TMP" && "$SCALEMONCTL" --db ./scalemon.db --socket "$SOCK" status) >"$TMP/st3"
grep -q "^daemon:    running (pid $DAEMON_PID)" "$TMP/st3"; ok $? "by a relative path: the same"
grep -qx "runs from: $H (kernel $K, 3 runs)" "$TMP/st3" && grep -q "^CPUs:      [0-9]* online of [0-9]*" "$TMP/st3"
ok $? "the daemon's own database shows its host, CPUs and the runs' hosts"
ctl --format json status | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["daemon"]["writes_this_database"] is True and "other" not in d["daemon"]'
ok $? "JSON on the daemon's own database: writes_this_database true"
stop_daemon
other status >"$TMP/st4"
grep -qx "daemon:    not running (no answer at $SOCK)" "$TMP/st4" && grep -qx "runs from: $H (kernel $K, 3 runs)" "$TMP/st4"
ok $? "with no daemon at all: not running, and the runs' hosts"
finish
