#!/bin/bash
# fault-commit.sh - what a crash may lose with commit_interval.
# At 100 ms with commit_interval = 3s: the database advances in commits
# about 3 s apart, not every tick, while the status request says the
# newest tick sampled; run boundaries are written at once; kill -9 two
# seconds after a run's start leaves the database file without the ticks
# since that commit (at most commit_interval plus an interval), no older
# tick missing, every run boundary there; the restart commits them from
# the head file first (the kill lost at most an interval) and closes the
# open run as interrupted there; SIGTERM writes everything held; a reload with a bad
# commit_interval is refused with file:line, and nothing is lost.
. "${srcdir:-.}/tests/lib.sh"
need_root
command -v sqlite3 >/dev/null || skip_all "sqlite3 command-line tool not installed"
command -v python3 >/dev/null || skip_all "python3 not installed"

INTERVAL=100ms
COMMIT_INTERVAL=            # lib.sh's start_daemon: leave it to the file
CONF=$TMP/c.conf
printf 'commit_interval = 3s\n' >"$CONF"
SLACK=1500000000            # ns: a shared, loaded machine's scheduling and sqlite3's start
# the database file alone: not sql(), whose scalemon.so adds the head file's ticks
fsql() { sqlite3 -readonly -batch -noheader "$DB" "$@"; }
last_end() { fsql "SELECT coalesce(max(t + dur), 0) FROM tick"; }
# the status request's newest tick end, straight from the socket
status_sampled() {
        python3 - "$SOCK" <<'EOF'
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall(b'{"cmd":"status"}\n')
buf = b""
while not buf.endswith(b"\n"):
    d = s.recv(65536)
    if not d:
        break
    buf += d
print(json.loads(buf)["sampled_at_ns"])
EOF
}
# contiguous [ID]: ticks all there from the first after ID to the last:
# ids without holes, each starting where the one before ended (within 5 ms)
contiguous() {
        local from=${1:-0}
        fsql "SELECT (SELECT count(*) FROM tick WHERE id > $from) = max(id) - min(id) + 1 AND
                    (SELECT count(*) FROM tick a JOIN tick b ON b.id = a.id + 1
                      WHERE a.id > $from AND abs(b.t - (a.t + a.dur)) > 5000000) = 0
             FROM tick WHERE id > $from"
}

out=$("$SCALEMOND" --config "$CONF" --check-config 2>&1); rc=$?
[ $rc = 0 ]; ok $? "--check-config takes commit_interval = 3s: $out"
printf 'commit_interval = 2h\n' >"$TMP/bad.conf"
out=$("$SCALEMOND" --config "$TMP/bad.conf" --check-config 2>&1); rc=$?
[ $rc = 1 ] && [ "$out" = "scalemond: $TMP/bad.conf:1: commit_interval 2h is out of range (0..1h; 0 commits every tick)" ]
ok $? "--check-config refuses commit_interval = 2h in one line (exit $rc): $out"
out=$("$SCALEMOND" --commit-interval soon --check-config 2>&1); rc=$?
[ $rc = 2 ] && [ "$(echo "$out" | wc -l)" = 1 ]; ok $? "--commit-interval soon: exit $rc, one line: $out"

start_daemon --config "$CONF"
t_start=$(now_ns)

# 1. commits every 3 s, not every tick; status is live meanwhile (the
# loop's pace is the machine's: sqlite3 and python3 start each time)
: >"$TMP/seen"
t0=$(now_ns)
while [ $(($(now_ns) - t0)) -lt 9000000000 ]; do
        # each time taken just before its look: a loaded machine's slow
        # start of sqlite3 or python3 does not count as lag
        n1=$(now_ns); e=$(last_end); n2=$(now_ns); st=$(status_sampled)
        echo "$n1 $e ${st:-0} $n2" >>"$TMP/seen"
        sleep 0.1
done
span=$(( ($(now_ns) - t0) / 1000000 ))
read -r commits lagmax stmax < <(awk 'BEGIN { lm = 0; sm = 0 }
                                     $2 > 0 { if ($2 != prev) n++; prev = $2
                                              lag = $1 - $2; if (lag > lm) lm = lag
                                              s = $4 - $3; if (s > sm) sm = s }
                                     END { print n + 0, lm, sm }' "$TMP/seen")
diag "$span ms at 100 ms: $commits distinct database ends in $(wc -l < "$TMP/seen") looks, lag at most $((lagmax / 1000000)) ms, status at most $((stmax / 1000000)) ms behind"
[ "$commits" -ge 2 ] && [ "$commits" -le $((span / 3000 + 2)) ]
ok $? "the database advances in commits every 3 s ($commits in $span ms, not one a tick)"
[ "$lagmax" -ge 2000000000 ] && [ "$lagmax" -le $((3000000000 + 100000000 + SLACK)) ]
ok $? "it lags by up to commit_interval, no more ($((lagmax / 1000000)) ms)"
[ "$(awk '$3 == 0' "$TMP/seen" | wc -l)" = 0 ] && [ "$stmax" -le $((100000000 + SLACK)) ]
ok $? "status's sampled_at is the newest tick, held or not ($((stmax / 1000000)) ms behind at most)"

# 2. run boundaries are written at once
t0=$(now_ns)
ctl run start a >/dev/null; ok $? "run a starts"
e=$(last_end)
[ "$e" -ge "$t0" ] && [ "$(fsql "SELECT count(*) FROM run WHERE name = 'a' AND start_tick <= (SELECT max(id) FROM tick)")" = 1 ]
ok $? "its start is in the database at once, with every tick before it ($(((e - t0) / 1000000)) ms past the request)"
sleep 0.5
t0=$(now_ns)
ctl run stop a >/dev/null; ok $? "run a stops"
[ "$(last_end)" -ge "$t0" ] && [ "$(fsql "SELECT status = 'done' AND end_tick <= (SELECT max(id) FROM tick) AND
                                        (SELECT count(*) FROM run_total WHERE run = run.id) > 0 FROM run WHERE name = 'a'")" = 1 ]
ok $? "its stop and totals are in the database at once"

# 3. kill -9 two seconds after a boundary (a commit)
t_b=$(now_ns)
ctl run start b >/dev/null; ok $? "run b starts (a commit)"
sleep 2
# the kill's time: t_kill just before the signal (what was sampled by then
# must be kept), t_dead once the daemon is gone (a tick may end between the
# two: the last tick sampled ends by t_dead)
t_kill=$(now_ns)
kill -KILL "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null; DAEMON_PID=
t_dead=$(now_ns)
e=$(last_end)
lost=$((t_kill - e))
diag "killed $(((t_kill - t_b) / 1000000)) ms after run b's start; the database file ends $((lost / 1000000)) ms before the kill"
[ "$lost" -le $((3000000000 + 100000000 + SLACK)) ]; ok $? "the file lacks at most commit_interval + an interval ($((lost / 1000000)) ms)"
[ "$lost" -ge 1000000000 ]; ok $? "and it does lack the held ticks: they are in the head file only ($((lost / 1000000)) ms)"
[ "$e" -ge "$t_b" ]; ok $? "every tick up to the last commit (run b's start) is there"
[ "$(fsql 'PRAGMA integrity_check')" = ok ]; ok $? "integrity_check ok after the kill"
[ "$(contiguous)" = 1 ]; ok $? "no older tick is missing: ids and times contiguous from the first to the last"
[ "$(fsql "SELECT group_concat(name || ':' || status, ' ') FROM (SELECT * FROM run ORDER BY id)")" = "a:done b:running" ]
ok $? "both runs' boundaries are there (a done, b running)"
first=$(fsql "SELECT min(t) FROM tick")
[ "$first" -le $((t_start + 200000000)) ]; ok $? "the first ticks, from the start, are there"

# 4. the restart commits the head file's ticks first, and closes b at
# the last tick before the kill; SIGTERM writes all
start_daemon --config "$CONF"
e2=$(fsql "SELECT coalesce(max(t + dur), 0) FROM tick WHERE t + dur <= $t_kill")
[ $((t_kill - e2)) -le $((100000000 + 200000000)) ]
ok $? "the restart committed the head's ticks: the kill lost $(((t_kill - e2) / 1000000)) ms (at most an interval and a loaded machine's 200 ms)"
[ "$(fsql "SELECT status FROM run WHERE name = 'b'")" = interrupted ]; ok $? "the restart closes run b as interrupted"
[ "$(fsql "SELECT end_tick = (SELECT max(id) FROM tick WHERE t + dur <= $t_dead) FROM run WHERE name = 'b'")" = 1 ]
ok $? "at the last tick sampled before the kill"
sleep 1.5
t_stop=$(now_ns)
check "SIGTERM stops the daemon" -- stop_daemon
e=$(last_end)
[ "$e" -ge $((t_stop - 100000000)) ]; ok $? "SIGTERM 1.5 s after a commit writes every tick held ($(((t_stop - e) / 1000000)) ms before the signal)"

# 5. reloads: a bad commit_interval is refused, the running one kept and
# nothing lost; a good one applies
before=$(fsql "SELECT max(id) FROM tick")
start_daemon --config "$CONF"
t0=$(now_ns)
printf 'commit_interval = soon\n' >"$CONF"
out=$(ctl reload 2>&1); rc=$?
[ $rc != 0 ] && [ "$(echo "$out" | wc -l)" = 1 ] && echo "$out" | grep -q "$CONF:1: commit_interval 'soon' is not a duration"
ok $? "reload with commit_interval = soon: refused (exit $rc), one line: $out"
kill -HUP "$DAEMON_PID"
sleep 0.5
grep -q "reload refused, keeping the running configuration: $CONF:1: commit_interval 'soon'" "$TMP/daemon.log"
ok $? "SIGHUP with it: refused in the log, the daemon goes on"
kill -0 "$DAEMON_PID"; ok $? "still running"
printf 'commit_interval = 0\n' >"$CONF"
out=$(ctl reload 2>&1); ok $? "reload with commit_interval = 0: $out"
sleep 1
lag=$(( $(now_ns) - $(last_end) ))
[ "$lag" -le $((100000000 + SLACK)) ]; ok $? "then every tick is committed ($((lag / 1000000)) ms behind)"
check "stops" -- stop_daemon
[ "$(contiguous "$before")" = 1 ] && [ "$(fsql "SELECT max(t + dur) >= $t0 FROM tick")" = 1 ]
ok $? "nothing lost across the refused and applied reloads: ticks contiguous (since the last start)"
finish
