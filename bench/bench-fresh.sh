#!/bin/bash
# bench-fresh.sh - how old is the newest tick a reader sees, at the
# defaults (commit_interval 10m: the ticks since the last commit come from
# the head file), and what reading the head costs a query.
#
# scalemond at 1 s and at 100 ms (every other setting its default), on
# this machine's CPUs, for BENCH_FRESH_SECONDS (40) each after a 3 s
# warm-up: a reader runs `scalemonctl --format json query
# context_switches --since -10s` at random moments (a random pause of up
# to 0.4 s between queries) and takes the age of the newest tick it got:
# the time the query started less the end of that tick.  A tick is
# appended when it ends, so the age is at most one interval plus the time
# sampling takes (a millisecond or two).  PASS if the largest age is at
# most one interval plus 10 ms, and every query got a tick.
# Also printed: the head file's bytes per tick, and the median wall time
# of the query (head included).
set -u
: "${top_builddir:=.}"
SECS=${BENCH_FRESH_SECONDS:-40}
tmp=$(mktemp -d /tmp/scalemon-bench-fresh.XXXXXX)
dpid=
trap '[ -n "$dpid" ] && kill "$dpid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
command -v python3 >/dev/null || { echo "bench-fresh: needs python3"; exit 0; }
[ "$(id -u)" = 0 ] || { echo "bench-fresh: needs root (system-wide perf events)"; exit 0; }

one() {         # one INTERVAL INTERVAL_NS
        rm -f "$tmp"/db* "$tmp/log"
        "$top_builddir/scalemond" --foreground --db "$tmp/db" --socket "$tmp/sock" --interval "$1" 2>"$tmp/log" &
        dpid=$!
        for _ in $(seq 100); do grep -q started: "$tmp/log" && break; sleep 0.05; done
        sleep 3
        python3 - "$top_builddir/scalemonctl" "$tmp/db" "$SECS" "$2" "$1" <<'EOF'
import json, random, subprocess, sys, time, datetime, os, statistics
ctl, db, secs, iv, name = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
def ns(s):
    t = datetime.datetime.fromisoformat(s.replace('Z', '+00:00'))
    return int(t.timestamp()) * 10**9 + t.microsecond * 1000
ages, walls, empty = [], [], 0
end = time.time() + secs
while time.time() < end:
    time.sleep(random.uniform(0, 0.4))
    t0 = time.time_ns()
    p = subprocess.run([ctl, '--db', db, '--format', 'json', 'query', 'context_switches', '--since', '-10s'],
                       capture_output=True, text=True)
    walls.append((time.time_ns() - t0) / 1e6)
    pts = json.loads(p.stdout)['points'] if p.returncode == 0 else []
    if not pts:
        empty += 1
        continue
    last = pts[-1]
    ages.append(t0 - (ns(last['time']) + int(round(last['interval_s'] * 1e9))))
size = os.path.getsize(db + '-head')
mx = max(ages) if ages else 10**12
ok = ages and mx <= iv + 10_000_000 and empty == 0
print(f"  {name:>6}: {len(ages)} queries, newest tick's age median {statistics.median(ages) / 1e6:.0f} ms, "
      f"max {mx / 1e6:.0f} ms (goal <= {iv / 1e6:.0f} ms + 10 ms); {empty} without a tick; "
      f"query wall median {statistics.median(walls):.0f} ms; head file {size} B now: "
      f"{'PASS' if ok else 'MISS'}")
EOF
        kill -TERM "$dpid"; wait "$dpid" 2>/dev/null; dpid=
}

echo "bench-fresh: age of the newest tick a reader sees at the defaults (commit_interval 10m), ${SECS} s each"
one 1s 1000000000
one 100ms 100000000
