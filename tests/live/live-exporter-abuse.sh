#!/bin/bash
# live-exporter-abuse.sh - bad clients against scalemon-exporter (loopback
# only): a slow client that never finishes its request, a 1 MB request
# line, and 500 connections at once.  Each is bounded (the slow one is
# closed after --timeout, the long line is refused with an HTTP error
# without being buffered, connections past --max-connections are closed at
# once, the exporter's memory stays small), each is logged once rather
# than once per connection, a real scrape is still answered meanwhile or
# right after, and scalemond's ticks are unaffected (no interval more than
# one late, as fault-load.sh judges it).
. "$srcdir/tests/lib.sh"
# reads the database file with sqlite3 (sql) while scalemond runs, and that
# file holds committed ticks only: commit every second
COMMIT_INTERVAL=${COMMIT_INTERVAL-1s}
need_root
command -v curl >/dev/null || skip_all "no curl"
EXPORTER=$top_builddir/scalemon-exporter
SAN=0; grep -q '^SAN_CFLAGS = .*-fsanitize' "$top_builddir/Makefile" 2>/dev/null && SAN=1
MAXC=32
TIMEOUT=3

PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
EXP_PID=
stop_all() { [ -n "$EXP_PID" ] && kill "$EXP_PID" 2>/dev/null && wait "$EXP_PID" 2>/dev/null; EXP_PID=; cleanup; }
trap stop_all EXIT

# --- bad command lines: one line, exit 2; a port in use: exit 1 ---
for args in "--per socket" "--listen 127.0.0.1:99999" "--listen nonsense" "--timeout 0s" "--max-connections 1" "extra"; do
        out=$(timeout 5 "$EXPORTER" $args 2>&1); rc=$?
        [ $rc = 2 ] && [ "$(echo "$out" | wc -l)" = 1 ]; ok $? "scalemon-exporter $args: exit $rc, one line: $out"
done
"$EXPORTER" --help | grep -q -- "--listen ADDR:PORT"; ok $? "--help describes --listen"

start_daemon
"$EXPORTER" --listen "127.0.0.1:$PORT" --socket "$SOCK" --db "$DB" --max-connections $MAXC --timeout ${TIMEOUT}s \
        >"$TMP/exporter.log" 2>&1 &
EXP_PID=$!
for i in $(seq 50); do curl -sf "http://127.0.0.1:$PORT/metrics" >/dev/null && break; sleep 0.1; done
out=$(timeout 5 "$EXPORTER" --listen "127.0.0.1:$PORT" --socket "$SOCK" 2>&1); rc=$?
[ $rc = 1 ] && echo "$out" | grep -q "cannot listen on 127.0.0.1:$PORT: Address already in use"
ok $? "a second exporter on the same port: exit $rc, $out"
scrape_ms() {   # a scrape's time in ms, or "failed"
        curl -sf -o "$TMP/scrape.txt" -w '%{time_total}' --max-time 5 "http://127.0.0.1:$PORT/metrics" |
                awk '{ printf "%d\n", $1 * 1000 }' && grep -q '^scalemon_up 1$' "$TMP/scrape.txt" || echo failed
}
rss() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$EXP_PID/status"; }
# a baseline for the judgement below: the same daemon, 5 s without
# abuse (on a loaded shared machine ticks can be late without any)
sleep 0.5
base0=$(sql "SELECT coalesce(max(id), 0) FROM tick")
sleep 5
first=$(sql "SELECT coalesce(max(id), 0) FROM tick")
iv=$(interval_ns)
base=$(sql "SELECT sum(step > 2 * $iv) || ' late, longest step ' || (max(step) / 1000000) || ' ms' FROM
            (SELECT t + dur - lag(t + dur) OVER (ORDER BY id) AS step FROM tick WHERE id >= $base0 AND id <= $first)")
diag "baseline, 5 s without abuse: $base"
phase_from=$first
phase() {       # phase NAME: diag the ticks since the last phase
        local to; to=$(sql "SELECT max(id) FROM tick")
        diag "ticks during $1: $(sql "SELECT sum(step > 2 * $iv) || ' late, longest step ' || (max(step) / 1000000) || ' ms' FROM
            (SELECT t + dur - lag(t + dur) OVER (ORDER BY id) AS step FROM tick WHERE id >= $phase_from AND id <= $to)")"
        phase_from=$to
}
rss0=$(rss)

# --- a slow client: half a request line, then nothing ---
python3 - "$PORT" "$TIMEOUT" >"$TMP/slow.out" <<'EOP' &
import socket, sys, time
port, timeout = int(sys.argv[1]), int(sys.argv[2])
s = socket.create_connection(("127.0.0.1", port))
s.sendall(b"GET /metr")
t0 = time.time()
s.settimeout(timeout + 10)
try:
    data = s.recv(100)
except OSError:
    data = b"?"
print("closed_after=%.1f bytes=%d" % (time.time() - t0, len(data)))
EOP
SLOW=$!
sleep 0.5
ms=$(scrape_ms)
check "a scrape is answered while a slow client holds a connection ($ms ms)" -- test "$ms" != failed
wait $SLOW
out=$(cat "$TMP/slow.out")
secs=$(echo "$out" | sed -n 's/closed_after=\([0-9.]*\).*/\1/p')
python3 -c "import sys; sys.exit(0 if $TIMEOUT - 0.5 <= ${secs:-99} <= $TIMEOUT + 2 else 1)"
ok $? "the slow client is closed after the ${TIMEOUT}s timeout ($out)"
phase "the slow client"

# --- a 1 MB request line ---
resp=$(python3 - "$PORT" <<'EOP'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.settimeout(10)
sent = 0
line = b"GET /" + b"a" * (1 << 20) + b" HTTP/1.1\r\nHost: x\r\n\r\n"
try:
    while sent < len(line):
        sent += s.send(line[sent:sent + 65536])
except OSError as e:
    pass
try:
    data = s.recv(4096)
except OSError as e:
    data = b""
print("sent=%d status=%s" % (sent, data.split(b"\r\n")[0].decode(errors="replace") or "closed"))
EOP
)
diag "1 MB request line: $resp"
echo "$resp" | grep -Eq 'status=(HTTP/1.1 (414|431|413|400)|closed)'
ok $? "a 1 MB request line is refused ($(echo "$resp" | sed 's/.*status=//'))"
ms=$(scrape_ms)
check "and a scrape right after is answered ($ms ms)" -- test "$ms" != failed
phase "the 1 MB request line"

# --- a 10 MB body that nothing here takes ---
head -c $((10 << 20)) /dev/zero >"$TMP/body"
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 -X POST --data-binary @"$TMP/body" "http://127.0.0.1:$PORT/metrics")
check "a POST with a 10 MB body gets 405 without the body being kept ($code)" -- test "$code" = 405
rm -f "$TMP/body"
phase "the 10 MB POST"

# --- 500 connections at once ---
fds0=$(ls "/proc/$EXP_PID/fd" | wc -l)
res=$(python3 - "$PORT" "$EXP_PID" <<'EOP'
import os, socket, sys, time
port, pid = int(sys.argv[1]), sys.argv[2]
socks, refused = [], 0
for i in range(500):
    try:
        socks.append(socket.create_connection(("127.0.0.1", port), timeout=5))
    except OSError:
        refused += 1
time.sleep(1.0)
fds = len(os.listdir("/proc/%s/fd" % pid))
# a connection the exporter closed reads as EOF at once
open_ = 0
for s in socks:
    s.setblocking(False)
    try:
        d = s.recv(1)
        if d == b"":
            continue
        open_ += 1
    except BlockingIOError:
        open_ += 1
    except OSError:
        pass
print("connected=%d refused=%d still_open=%d exporter_fds=%d" % (len(socks), refused, open_, fds))
time.sleep(0.5)
for s in socks:
    s.close()
EOP
)
diag "500 connections: $res"
# The exporter holds at most --max-connections of them; the kernel's
# listen backlog (128) holds more, completed but not accepted, and
# refuses the rest: bounded either way.
fds=$(echo "$res" | sed -n 's/.*exporter_fds=\([0-9]*\).*/\1/p')
still=$(echo "$res" | sed -n 's/.*still_open=\([0-9]*\).*/\1/p')
[ "${fds:-999}" -le $((fds0 + MAXC)) ]
ok $? "of 500 connections the exporter holds at most --max-connections $MAXC (fds $fds0 -> $fds)"
[ "${still:-999}" -le $((MAXC + 128 + 2)) ]
ok $? "the rest wait in the kernel's backlog or are refused: $still of 500 open, at most $MAXC + backlog 128"
sleep 0.3
ms=$(scrape_ms)
check "a scrape after them is answered ($ms ms)" -- test "$ms" != failed
phase "500 connections"
rss1=$(rss)
diag "exporter RSS ${rss0} kB before, ${rss1} kB after"
[ "$rss1" -lt $((rss0 + 16384)) ]; ok $? "the exporter's memory stays bounded (${rss0} -> ${rss1} kB)"
lines=$(grep -c 'http: ' "$TMP/exporter.log")
sed 's/^/# exporter: /' "$TMP/exporter.log"
ok $(( lines <= 4 ? 0 : 1 )) "libmicrohttpd's complaints are logged once each, not per connection ($lines lines)"

# --- scalemond's ticks ---
ctl --format json status >"$TMP/status.json"
late_us=$(jpy 'd["daemon"]["retention"]["tick_late_max_us"]' <"$TMP/status.json")
last=$(sql "SELECT max(id) FROM tick")
late=$(sql "SELECT count(*) FROM (SELECT t + dur - lag(t + dur) OVER (ORDER BY id) AS step FROM tick
            WHERE id >= $first AND id <= $last) WHERE step > 2 * $iv")
worst=$(sql "SELECT max(step) / 1000000 FROM (SELECT t + dur - lag(t + dur) OVER (ORDER BY id) AS step FROM tick
             WHERE id >= $first AND id <= $last)")
if [ $SAN = 1 ]; then
        skip_one "the sanitizer build: $late late, longest step ${worst} ms" -- "scalemond's ticks unaffected"
else
        [ "$late" = 0 ]; ok $? "scalemond's ticks unaffected: none more than one interval late ($late late, longest step ${worst} ms, status tick_late_max_us $late_us; baseline without abuse: $base)"
fi
kill "$EXP_PID"; wait "$EXP_PID"; rc=$?; EXP_PID=
check "the exporter stops cleanly ($rc)" -- test "$rc" = 0

# --- a database with many runs: --max-runs keeps the newest ---
for i in 1 2 3 4 5; do ctl run start "many-$i" >/dev/null && ctl run stop >/dev/null; done
ctl run start many-open >/dev/null
"$EXPORTER" --listen "127.0.0.1:$PORT" --socket "$SOCK" --db "$DB" --max-runs 2 >>"$TMP/exporter.log" 2>&1 &
EXP_PID=$!
for i in $(seq 50); do curl -sf -o "$TMP/runs.txt" "http://127.0.0.1:$PORT/metrics" && break; sleep 0.1; done
got=$(sed -n 's/^scalemon_run_info{run="\([^"]*\)".*/\1/p' "$TMP/runs.txt" | sort | tr '\n' ' ')
check "--max-runs 2: the two newest runs, one of them still open ($got)" -- test "$got" = "many-5 many-open "
ctl run stop many-open >/dev/null
kill "$EXP_PID"; wait "$EXP_PID" 2>/dev/null; EXP_PID=       # finish() drops the EXIT trap that would
finish
