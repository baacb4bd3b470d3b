#!/bin/bash
# live-fresh.sh - at the default commit_interval (10 minutes), what happened
# a tick ago is there to read: a pipe ping-pong of N round trips (at
# least 2N context switches, its known count) runs inside `perf stat -a`;
# right after, scalemonctl's ticks inside perf's span tile it without a
# hole up to the last tick ended, hold at least the workload's own count
# (perf stat on the workload) and at most the machine's (perf stat -a), and
# none of them is in the database file yet (they come from the head file).
# After the daemon stops (its last commit), the same query gives the same
# points.  A reader that cannot read the head file says so once.
. "${srcdir:-.}/tests/lib.sh"
need_root
command -v python3 >/dev/null || skip_all "python3 not installed"
command -v perf >/dev/null || skip_all "perf not installed"
perf stat -a -e context-switches true >/dev/null 2>&1 || skip_all "perf stat -a cannot count context-switches here"
command -v sqlite3 >/dev/null || skip_all "sqlite3 command-line tool not installed"
INTERVAL=200ms
IV_NS=200000000
N=20000

start_daemon
sleep 0.5
# the workload inside perf stat -a, with room on both sides for whole ticks
p0=$(now_ns)
perf stat -a -x, -e context-switches -o "$TMP/all.out" -- \
        sh -c "sleep 0.5; perf stat -x, -e context-switches -o '$TMP/wl.out' -- '$WL/wl-pingpong' $N >/dev/null; sleep 0.5" \
        >/dev/null 2>&1
p1=$(now_ns)
ctl --format json query context_switches --since "$(ns_to_when "$p0")" --until "$(ns_to_when "$p1")" >"$TMP/q1.json"
rc=$?
ctl query context_switches --since -5s >"$TMP/q5.txt" 2>&1
ok $? "query context_switches --since -5s right after the workload: $(wc -l <"$TMP/q5.txt") lines"
ok $rc "the window of the workload can be queried at once"
all=$(awk -F, '$3 == "context-switches" { print $1 }' "$TMP/all.out")
wl=$(awk -F, '$3 == "context-switches" { print $1 }' "$TMP/wl.out")
diag "perf stat: the workload $wl switches, the machine $all"

# the ticks inside perf's span: tiling it up to the last tick ended
read -r sum covered last_end gaps first_start < <(python3 - "$TMP/q1.json" "$p0" "$p1" <<'EOF'
import json, sys, datetime
d = json.load(open(sys.argv[1])); p0, p1 = int(sys.argv[2]), int(sys.argv[3])
def ns(s):
    t = datetime.datetime.fromisoformat(s.replace('Z', '+00:00'))
    return int(t.timestamp()) * 10**9 + t.microsecond * 1000
pts = [(ns(p['time']), int(round(p['interval_s'] * 1e9)), p['value']) for p in d['points']]
pts = [p for p in pts if p[0] >= p0 and p[0] + p[1] <= p1]
gaps = sum(1 for a, b in zip(pts, pts[1:]) if abs(b[0] - (a[0] + a[1])) > 2_000_000)
print(int(sum(p[2] for p in pts)), len(pts), (pts[-1][0] + pts[-1][1]) if pts else 0, gaps, pts[0][0] if pts else 0)
EOF
)
diag "ticks inside perf's span: $covered, switches $sum, last tick ended $(((p1 - last_end) / 1000000)) ms before perf did"
[ "$gaps" = 0 ] && [ "$covered" -ge 5 ]; ok $? "the ticks tile the window without a hole ($covered ticks, $gaps holes)"
[ $((p1 - last_end)) -le $((2 * IV_NS)) ]; ok $? "the window is complete up to a tick ago (last tick ended $(((p1 - last_end) / 1000000)) ms before)"
[ -n "$wl" ] && [ "$sum" -ge "$wl" ] && [ "$sum" -ge $((2 * N)) ]
ok $? "the window holds the workload's switches: $sum >= perf stat's $wl of the workload and >= 2N = $((2 * N))"
[ -n "$all" ] && [ "$sum" -le "$all" ]
ok $? "and at most the machine's over a longer span: $sum <= perf stat -a's $all"
# the same window, up to the last tick ended, before and after the commit
win() { ctl --format json query context_switches --since "$(ns_to_when "$p0")" --until "$(ns_to_when "$last_end")"; }
win >"$TMP/w1.json"
indb=$(sqlite3 -readonly -batch -noheader "$DB" "SELECT count(*) FROM tick WHERE t >= $first_start")
[ "$indb" = 0 ]; ok $? "none of these ticks is in the database file yet ($indb): they came from the head file"

# a reader that may read the database but not the head file
chmod 0644 "$DB" "$DB-shm" "$DB-wal" 2>/dev/null; chmod 0600 "$DB-head"; chmod 0755 "$TMP"
setpriv --reuid=nobody --regid=nogroup --clear-groups "$SCALEMONCTL" --db "$DB" --socket "$SOCK" status \
        >/dev/null 2>"$TMP/nobody.err"
n=$(grep -c 'the newest ticks are not in the database yet' "$TMP/nobody.err")
[ "$n" = 1 ]; ok $? "a reader without access to the head file says so, once ($n): $(head -c 160 "$TMP/nobody.err")"

check "daemon stops cleanly (its last commit)" -- stop_daemon
win >"$TMP/w2.json"
cmp -s "$TMP/w1.json" "$TMP/w2.json" && [ -s "$TMP/w1.json" ]
ok $? "after the commit, the same query gives the same points ($(grep -o '"time"' "$TMP/w1.json" | wc -l) points)"
[ "$(wc -c <"$DB-head")" -le 32 ]; ok $? "the head file is empty after the last commit"
finish
