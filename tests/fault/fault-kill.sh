#!/bin/bash
# fault-kill.sh - scalemond killed with SIGKILL at random moments, 100
# times, on the same database, sampling every 20 ms while a workload runs
# and a client opens and closes runs without pause.  After every kill the
# database passes PRAGMA integrity_check; after every restart each run the
# client saw stop successfully is still there, done, with the totals and
# score read right after its stop, and the runs the dead daemon left open
# are closed as interrupted.  At the default commit_interval (10 minutes)
# each kill loses at most max(1 s, an interval) of ticks: every tick is
# in the head file at once, and the restarted daemon commits what the
# database lacks before anything else.
. "${srcdir:-.}/tests/lib.sh"
need_root
command -v sqlite3 >/dev/null || skip_all "sqlite3 command-line tool not installed"
command -v python3 >/dev/null || skip_all "python3 not installed"

KILLS=${KILLS:-100}
INTERVAL=20ms
BOUND_NS=1000000000     # max(1 s, an interval)
BG=
stop_bg() {
        touch "$TMP/stop"
        for p in $BG; do kill "$p" 2>/dev/null; done
        for p in $BG; do wait "$p" 2>/dev/null; done
        BG=
}
trap 'stop_bg; cleanup' EXIT
sqlr() { sqlite3 -readonly -batch -noheader -cmd ".timeout 5000" -cmd ".load $SQLITE_EXT" -cmd "$SQL_UNPACK" "$DB" "$@"; }

# what runs look like in the database, one line each: name, status,
# score, number of totals, every total
dump_runs() {   # dump_runs WHERE-CLAUSE
        sqlr "SELECT r.name, r.status, (SELECT group_concat(key || '=' || value) FROM run_score WHERE run = r.id),
                     (SELECT count(*) FROM run_total WHERE run = r.id),
                     (SELECT group_concat(metric || ':' || level || ':' || loc || ':' || value, ' ')
                        FROM (SELECT * FROM run_total WHERE run = r.id ORDER BY metric, level, loc))
                FROM run r WHERE $1"
}

# the workload: pipe round trips, without end
( while [ -d "$TMP" ] && [ ! -e "$TMP/stop" ]; do "$WL/wl-pingpong" 20000 >/dev/null; done ) &
BG="$BG $!"

start_daemon
t_started=$(now_ns)

# the client: open a run, stop it with a score; on a successful stop,
# record what the database holds for it at once (before the next kill)
(
        k=0
        while [ -d "$TMP" ] && [ ! -e "$TMP/stop" ]; do
                k=$((k + 1))
                ctl run start "r$k" >/dev/null 2>&1 || { sleep 0.02; continue; }
                sleep "0.0$((RANDOM % 10))"
                if ctl run stop "r$k" --score x=$k >/dev/null 2>&1; then
                        line=$(dump_runs "r.name = 'r$k'")
                        echo "$line|END" >> "$TMP/seen"
                fi
        done
) &
BG="$BG $!"
touch "$TMP/seen"

# every run recorded as stopped: still there, identical (one query)
check_seen() {
        # what the client has recorded so far, before reading the database
        cp "$TMP/seen" "$TMP/seen.copy"
        dump_runs 1 > "$TMP/now"
        awk -F'|' 'FNR == NR { now[$1] = $0; next }
                   $NF != "END" { next }                  # the client is writing it
                   { line = $0; sub(/\|END$/, "", line)
                     if ($2 != "done" || $3 != "x=" substr($1, 2) ".0" || $4 < 1) { print "# " $1 " recorded as: " substr(line, 1, 80); bad++ }
                     else if (now[$1] != line) { print "# " $1 " changed: " substr(now[$1], 1, 80); bad++ } }
                   END { exit bad > 0 }' "$TMP/now" "$TMP/seen.copy"
}

integrity_bad=0 seen_bad=0 open_bad=0 restarts=0 lost_max=0
for i in $(seq "$KILLS"); do
        sleep "$(printf '0.%03d' $((RANDOM % 300)))"
        t_kill=$(now_ns)
        kill -KILL "$DAEMON_PID"
        wait "$DAEMON_PID" 2>/dev/null
        DAEMON_PID=
        ic=$(sqlr "PRAGMA integrity_check" 2>&1)
        [ "$ic" = ok ] || { integrity_bad=$((integrity_bad + 1)); diag "after kill $i: integrity_check: $ic"; }
        maxid=$(sqlr "SELECT coalesce(max(id), 0) FROM run")
        start_daemon
        # what the kill lost, once the new daemon has committed what the
        # head held: from the last tick before the kill (or the dead
        # daemon's start, if it wrote none) to the kill
        e=$(sqlr "SELECT coalesce(max(t + dur), 0) FROM main.tick WHERE t + dur <= $t_kill")
        lost=$((t_kill - (e > t_started ? e : t_started)))
        [ "$lost" -gt "$lost_max" ] && lost_max=$lost
        t_started=$(now_ns)
        restarts=$((restarts + 1))
        ic=$(sqlr "PRAGMA integrity_check" 2>&1)
        [ "$ic" = ok ] || { integrity_bad=$((integrity_bad + 1)); diag "after restart $i: integrity_check: $ic"; }
        # runs open before this daemon started were closed by it
        left=$(sqlr "SELECT group_concat(name) FROM run WHERE status = 'running' AND id <= $maxid")
        [ -z "$left" ] || { open_bad=$((open_bad + 1)); diag "after restart $i: still running: $left"; }
        check_seen || seen_bad=$((seen_bad + 1))
done
stop_bg
ok "$integrity_bad" "integrity_check ok after each of $KILLS kills and restarts ($integrity_bad not)"
ok "$open_bad" "runs left open are closed at each restart ($open_bad restarts left some)"
ok "$seen_bad" "runs seen stopped are there, done, totals and score unchanged, after every restart ($seen_bad restarts found one not)"
[ "$lost_max" -le "$BOUND_NS" ]
ok $? "each kill lost at most max(1 s, an interval) of ticks at the default commit_interval: at most $((lost_max / 1000000)) ms"

check "daemon stops cleanly after the last restart" -- stop_daemon
nseen=$(grep -c '|END$' "$TMP/seen")
read -r ndone nint nrun nfail < <(sqlr "SELECT sum(status = 'done'), sum(status = 'interrupted'), sum(status = 'running'),
                                               sum(status = 'failed') FROM run" | tr '|' ' ')
nstart=$(sqlr "SELECT count(*) FROM event WHERE kind = 'start'")
diag "kills $KILLS, daemon starts $nstart, runs done $ndone (client saw $nseen stop), interrupted $nint, still running $nrun"
[ "$nstart" = $((KILLS + 1)) ]; ok $? "every restart is recorded ($nstart start events)"
[ "$nrun" = 0 ]; ok $? "no run left running after a clean stop ($nrun)"
[ "$ndone" -ge "$nseen" ] && [ "$nseen" -gt 0 ]; ok $? "every run seen stopped is done ($ndone done >= $nseen seen)"
[ "$nint" -gt 0 ]; ok $? "some runs were interrupted by the kills ($nint)"
check_seen; ok $? "the recorded runs are unchanged at the end"

# an interrupted run's totals are the sum of its samples up to the last
# tick written, system = sum of CPUs
bad=$(sqlr "SELECT count(*) FROM run r JOIN metric m ON m.name = 'context_switches'
            WHERE r.status = 'interrupted' AND (
              abs((SELECT coalesce(sum(value), 0) FROM run_total WHERE run = r.id AND metric = m.id AND level = 'system') -
                  (SELECT coalesce(sum(value), 0) FROM run_total WHERE run = r.id AND metric = m.id AND level = 'cpu')) > 1e-9
              OR abs((SELECT coalesce(sum(value), 0) FROM run_total WHERE run = r.id AND metric = m.id AND level = 'system') -
                     (SELECT coalesce(sum(value), 0) * m.scale FROM sample_all WHERE metric = m.id
                        AND tick > r.start_tick AND tick <= r.end_tick)) > 1e-9
              OR r.end < r.start OR r.end_tick < r.start_tick)")
[ "$bad" = 0 ]; ok $? "interrupted runs: totals = sum of their samples = sum of CPUs, end after start ($bad not)"
finish
