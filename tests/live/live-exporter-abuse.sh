#!/bin/bash
# live-exporter-abuse.sh - bad clients against scalemon-exporter (loopback
# only): a slow client that never finishes its request, 50 slow-loris
# clients, 500 connections opened at once, a 1 MiB request line and a
# 1 MiB header, a 10 MB body, 10,000 scrapes in a row.  The bounds are
# scalemon-exporter(8)'s LIMITS: it holds at most --max-connections, and
# when they are all taken the connection that has waited longest for a
# request is closed, so a scraper always gets in; a slow client is closed
# after --timeout; a request line or header over 16 kB is refused without
# being kept; its memory grows by at most 17 kB a connection; each kind of
# complaint is logged once a minute at most.  Meanwhile a scraper (50 ms
# apart) is answered, within twice its latency on a quiet exporter, and
# scalemond's ticks stay on time (none a whole interval late).  The two
# timing judgements are made in the plain build, where timing means
# something, with up to 3 tries of the attack, failing when every try
# fails; the sanitizer build judges everything else.  The attackers run at
# nice 19: they stand for clients on other machines, and what is judged is
# the exporter's effect on scalemond, not theirs.
. "$srcdir/tests/lib.sh"
need_root
command -v curl >/dev/null || skip_all "no curl"
EXPORTER=$top_builddir/scalemon-exporter
SAN=0; grep -q '^SAN_CFLAGS = .*-fsanitize' "$top_builddir/Makefile" 2>/dev/null && SAN=1
# a small quarantine, so that the memory judged is the exporter's, not ASan's
[ $SAN = 1 ] && export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=1:thread_local_quarantine_size_kb=64
CONN_KB=17              # a connection's memory: CONN_MEMORY_LIMIT in exporter/scalemon-exporter.c (16 kB)
                        # and libmicrohttpd's own record of it (under 1 kB), scalemon-exporter(8) LIMITS
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
EXP_T0=$(date +%s)
for i in $(seq 50); do curl -sf "http://127.0.0.1:$PORT/metrics" >/dev/null && break; sleep 0.1; done
out=$(timeout 5 "$EXPORTER" --listen "127.0.0.1:$PORT" --socket "$SOCK" 2>&1); rc=$?
[ $rc = 1 ] && echo "$out" | grep -q "cannot listen on 127.0.0.1:$PORT: Address already in use"
ok $? "a second exporter on the same port: exit $rc, $out"
cat >"$TMP/abuse.py" <<'EOP'
# abuse.py MODE PORT PID ARGS...: clients of the exporter on
# 127.0.0.1:PORT (its pid PID), printing key=value results on one line.
#   probe SECS|STOPFILE  a scraper: a scrape every 50 ms, each on a new
#                     connection, for SECS or until STOPFILE exists; and
#                     how many connections the exporter holds (its sockets
#                     on PORT, from /proc), sampled every 10 ms
#   conc N            N connections opened at once (RLIMIT_NOFILE raised
#                     to fit), held for 2 s and until settled
#   loris N SECS      N slow clients for SECS, each sending a header line a
#                     second and coming back when closed
#   huge REPS         a 1 MiB request line, then a 1 MiB header, REPS times
#   many N            N scrapes one after another, each on a new connection
import os, resource, select, socket, statistics, sys, threading, time

mode, port, pid = sys.argv[1], int(sys.argv[2]), sys.argv[3]
REQ = b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"

def scrape():
    """one scrape on a new connection: ms, or None when it failed"""
    t0 = time.perf_counter()
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(REQ)
        buf = b""
        while True:
            d = s.recv(1 << 16)
            if not d:
                break
            buf += d
        s.close()
    except OSError:
        return None
    if not buf.startswith(b"HTTP/1.1 200") or b"\nscalemon_up 1\n" not in buf:
        return None
    return (time.perf_counter() - t0) * 1000

def held():
    """the exporter's TCP connections on PORT (not the listening socket)"""
    inodes = set()
    for f in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = open(f).read().splitlines()[1:]
        except OSError:
            continue
        for l in lines:
            p = l.split()
            if int(p[1].split(":")[1], 16) == port and p[3] != "0A":
                inodes.add(p[9])
    n = 0
    try:
        for fd in os.listdir("/proc/%s/fd" % pid):
            try:
                t = os.readlink("/proc/%s/fd/%s" % (pid, fd))
            except OSError:
                continue
            if t.startswith("socket:[") and t[8:-1] in inodes:
                n += 1
    except OSError:
        pass
    return n

def probe(until):
    times, failed, held_max = [], 0, 0
    t_end = time.monotonic() + float(until) if until[0].isdigit() else None
    next_scrape = 0
    while (time.monotonic() < t_end) if t_end else not os.path.exists(until):
        held_max = max(held_max, held())
        if time.monotonic() >= next_scrape:
            ms = scrape()
            if ms is None:
                failed += 1
            else:
                times.append(ms)
            next_scrape = time.monotonic() + 0.05
        time.sleep(0.01)
    t = sorted(times) or [0]
    return "scrapes=%d failed=%d median_ms=%.2f max_ms=%.2f held_max=%d" % (
        len(times), failed, statistics.median(t), t[-1], held_max)

def series(n):
    t, failed = [], 0
    for _ in range(n):
        ms = scrape()
        if ms is None:
            failed += 1
        else:
            t.append(ms)
    t.sort()
    t = t or [0]
    return "scrapes=%d failed=%d median_ms=%.2f max_ms=%.2f" % (n, failed, statistics.median(t), t[-1])

def still_open(socks):
    """those of socks the exporter (or the kernel, for it) keeps open"""
    out = []
    for s in socks:
        try:
            if s.recv(1, socket.MSG_DONTWAIT) != b"":
                out.append(s)
        except BlockingIOError:
            out.append(s)
        except OSError:
            pass
    return out

def tcpext(*keys):
    """counters of /proc/net/netstat's TcpExt lines"""
    l = [x.split() for x in open("/proc/net/netstat") if x.startswith("TcpExt:")]
    return [int(l[1][l[0].index(k)]) for k in keys]

def conc(n):
    want = n + 64
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, max(hard, want)))
    socks, refused = [], 0
    for _ in range(n):
        s = socket.socket()
        s.setblocking(False)
        try:
            s.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        except OSError:
            refused += 1
            s.close()
            continue
        socks.append(s)
    # every connect done (or refused) before judging
    t_end = time.monotonic() + 10
    pending = list(socks)
    while pending and time.monotonic() < t_end:
        _, w, _ = select.select([], pending[:900], [], 0.5)
        for s in w:
            pending.remove(s)
    # Held 2 s, then until every one still open on this side is one the
    # exporter holds (15 s at most).  500 SYNs at once overflow the
    # listen backlog and the kernel answers with SYN cookies: such a
    # connection is open here and nowhere on the server until it sends
    # something, so each one still open sends a byte (half a request line).
    c0 = tcpext("SyncookiesSent", "ListenOverflows")
    t0 = time.monotonic()
    time.sleep(2.0)
    kicks = 0
    while True:
        left, h = still_open(socks), held()
        if len(left) == h or time.monotonic() - t0 > 15:
            break
        for s in left:
            try:
                s.send(b"G", socket.MSG_DONTWAIT)
            except OSError:
                pass
        kicks += 1
        time.sleep(0.5)
    c1 = tcpext("SyncookiesSent", "ListenOverflows")
    print("connected=%d refused=%d unfinished=%d still_open=%d held=%d settled_s=%.1f kicks=%d "
          "syncookies=%d overflows=%d rlimit=%d" % (
        len(socks), refused, len(pending), len(left), h, time.monotonic() - t0, kicks,
        c1[0] - c0[0], c1[1] - c0[1], resource.getrlimit(resource.RLIMIT_NOFILE)[0]))
    for s in socks:
        s.close()

def loris(n, secs):
    socks = [None] * n
    connects = 0
    t_end = time.monotonic() + secs
    beat = 0
    while time.monotonic() < t_end:
        for i in range(n):
            s = socks[i]
            if s is not None:
                try:
                    d = s.recv(4096, socket.MSG_DONTWAIT)
                    if d == b"":
                        raise OSError("closed")
                except BlockingIOError:
                    pass
                except OSError:
                    s.close()
                    s = socks[i] = None
            if s is None:
                try:
                    s = socks[i] = socket.create_connection(("127.0.0.1", port), timeout=1)
                    s.sendall(b"GET /metrics HTTP/1.1\r\n")
                    connects += 1
                except OSError:
                    socks[i] = None
                continue
            try:
                s.sendall(b"X-%d: %d\r\n" % (beat, i))
            except OSError:
                s.close()
                socks[i] = None
        beat += 1
        time.sleep(1.0)
    print("connects=%d open_at_end=%d" % (connects, sum(s is not None for s in socks)))
    for s in socks:
        if s is not None:
            s.close()

def huge(what):
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(10)
    big = b"a" * (1 << 20)
    req = (b"GET /" + big + b" HTTP/1.1\r\nHost: x\r\n\r\n" if what == "line"
           else b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + big + b"\r\n\r\n")
    sent = 0
    try:
        while sent < len(req):
            sent += s.send(req[sent:sent + 65536])
    except OSError:
        pass
    try:
        data = s.recv(4096)
    except OSError:
        data = b""
    status = data.split(b"\r\n")[0].decode(errors="replace") or "closed"
    return "%s_sent=%d %s_status=%s" % (what, sent, what, status.replace(" ", "_"))

if mode == "probe":
    print(probe(sys.argv[4]))
elif mode == "many":
    print(series(int(sys.argv[4])))
elif mode == "conc":
    conc(int(sys.argv[4]))
elif mode == "loris":
    loris(int(sys.argv[4]), float(sys.argv[5]))
elif mode == "huge":
    # each REPS times, 50 ms apart; the last, and how many got its answers
    answers = []
    for i in range(int(sys.argv[4])):
        answers.append((huge("line"), huge("header")))
        time.sleep(0.05)
    status = lambda a: [w for w in a[0].split() + a[1].split() if "_status=" in w]
    print(answers[-1][0], answers[-1][1], "alike=%d" % sum(status(a) == status(answers[-1]) for a in answers))
EOP
abuse() { python3 "$TMP/abuse.py" "$1" "$PORT" "$EXP_PID" "${@:2}"; }
kv() { echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }    # kv KEY LINE
status_kb() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$EXP_PID/status"; }
iv=$(interval_ns)
# ticks_late FROM_NS TO_NS: "LATE LONGEST_MS" of the ticks ending in the
# window, LATE those that ended more than twice the interval after the one
# before (a whole interval late)
ticks_late() {
        wait_flushed "$2" >/dev/null
        sql "SELECT coalesce(sum(step > 2 * $iv), 0) || ' ' || coalesce(max(step) / 1000000, 0) FROM
             (SELECT t + dur AS e, t + dur - lag(t + dur) OVER (ORDER BY id) AS step FROM tick) WHERE e > $1 AND e <= $2"
}

# warm up: a few scrapes; the memory from here on is the connections'
abuse probe 1 >/dev/null
hwm0=$(status_kb VmHWM)
diag "exporter after its first scrapes: VmHWM $hwm0 kB, VmRSS $(status_kb VmRSS) kB"

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
wait $SLOW
out=$(cat "$TMP/slow.out")
secs=$(echo "$out" | sed -n 's/closed_after=\([0-9.]*\).*/\1/p')
python3 -c "import sys; sys.exit(0 if $TIMEOUT - 0.5 <= ${secs:-99} <= $TIMEOUT + 2 else 1)"
ok $? "a client that stops half way through its request line is closed after the ${TIMEOUT}s timeout ($out)"

# attack NAME MODE ARGS...: `abuse MODE ARGS` at nice 19 while `abuse probe` scrapes, after a
# 2 s quiet probe; up to 3 tries while the timing fails (plain build).
# Sets ATTACK, PROBE, QUIET (each one's output line), LATE ("N LONGEST_MS")
# of the last try, and TIMING ("ok" or why not) of the last try; FAILED
# and HELD, the scrapes failed and the most connections held over every
# try; the figures of every try go to diag.
attack() {
        local name=$1 try from to q m f h; shift
        FAILED=0 HELD=0
        for try in 1 2 3; do
                QUIET=$(abuse probe 2)
                rm -f "$TMP/stop"
                from=$(now_ns)
                abuse probe "$TMP/stop" >"$TMP/probe.out" &
                ATTACK=$(nice -n 19 python3 "$TMP/abuse.py" "$1" "$PORT" "$EXP_PID" "${@:2}")
                touch "$TMP/stop"; wait $!
                to=$(now_ns)
                PROBE=$(cat "$TMP/probe.out")
                f=$(kv failed "$PROBE"); h=$(kv held_max "$PROBE")       # none: the scraper died
                FAILED=$((FAILED + ${f:-1})); [ "${h:-999}" -gt $HELD ] && HELD=${h:-999}
                LATE=$(ticks_late "$from" "$to")
                q=$(kv median_ms "$QUIET"); m=$(kv median_ms "$PROBE")
                TIMING=ok
                [ "${LATE%% *}" = 0 ] || TIMING="${LATE%% *} ticks late"
                python3 -c "import sys; sys.exit(0 if $m <= 2 * $q else 1)" ||
                        TIMING="scrape median $m ms > 2 x quiet $q ms${TIMING#ok}"
                diag "$name, try $try: $ATTACK; scraper: $PROBE; quiet before: $QUIET; ticks: ${LATE%% *} late, longest step ${LATE#* } ms: $TIMING"
                [ $SAN = 1 ] || [ "$TIMING" = ok ] && break
        done
}
# on_time NAME: the timing of the last try judged, in the plain build
on_time() {
        local what="while $1 scalemond's ticks stay on time and the scrape median within 2x quiet"
        if [ $SAN = 1 ]; then
                skip_one "the sanitizer build: timing is judged in the plain build ($TIMING)" -- "$what"
        else
                [ "$TIMING" = ok ]; ok $? "$what ($TIMING; last of up to 3 tries)"
        fi
}
# answered NAME: every scrape meanwhile answered, the connections held
# within --max-connections, in every try
answered() {
        local n
        n=$(kv scrapes "$PROBE")
        [ "${n:-0}" -gt 0 ] && [ "$FAILED" = 0 ]; ok $? "while $1 every scrape is answered ($n in the last try, $FAILED failed in all)"
        [ "$HELD" -le $MAXC ]; ok $? "while $1 the exporter holds at most --max-connections $MAXC ($HELD)"
}

# --- 50 slow-loris clients: a header line a second, back when closed ---
attack "50 slow-loris clients" loris 50 6
answered "50 slow-loris clients"
c=$(kv connects "$ATTACK")
[ "${c:-0}" -gt 50 ]; ok $? "the slow-loris clients over --max-connections are closed to make room ($c connects by 50)"
on_time "50 slow-loris clients"

# --- 500 connections at once ---
attack "500 connections at once" conc 500
answered "500 connections at once"
c=$(kv connected "$ATTACK"); st=$(kv still_open "$ATTACK")
[ "$c" = 500 ] && [ "$(kv unfinished "$ATTACK")" = 0 ]
ok $? "500 connections at once all connect (the client's own fd limit raised: $ATTACK)"
# every one accepted (a place is kept free), all but the newest waiting
# ones closed to make room: at most --max-connections - 1 stay open, each
# one the exporter holds (those the kernel answered with a SYN cookie too,
# once they sent something)
h=$(kv held "$ATTACK")
[ "${st:-999}" -le $((MAXC - 1)) ] && [ "$st" = "$h" ]
ok $? "of 500 connections at most --max-connections - 1 = $((MAXC - 1)) stay open, all held by the exporter ($st open, $h held, settled in $(kv settled_s "$ATTACK") s)"
on_time "500 connections at once"

# --- a 1 MiB request line and a 1 MiB header ---
attack "a 1 MiB request line and header, 40 times" huge 40
[ "$(kv alike "$ATTACK")" = 40 ]; ok $? "each of 40 tries got the same answers ($(kv alike "$ATTACK") alike)"
echo "$ATTACK" | grep -Eq 'line_status=HTTP/1.1_(414|431|413|400)'
ok $? "a 1 MiB request line is refused ($(kv line_status "$ATTACK"), $(kv line_sent "$ATTACK") bytes sent before the answer)"
echo "$ATTACK" | grep -Eq 'header_status=HTTP/1.1_(431|413|400)'
ok $? "a 1 MiB header is refused ($(kv header_status "$ATTACK"), $(kv header_sent "$ATTACK") bytes sent before the answer)"
answered "a 1 MiB request line and header, 40 times"
on_time "a 1 MiB request line and header, 40 times"

# --- 10,000 scrapes in a row ---
rss0=$(status_kb VmRSS)
attack "10,000 scrapes in a row" many 10000
n=$(kv scrapes "$ATTACK"); f=$(kv failed "$ATTACK"); rss1=$(status_kb VmRSS)
[ "$n" = 10000 ] && [ "$f" = 0 ]; ok $? "10,000 scrapes in a row are all answered ($ATTACK)"
answered "10,000 scrapes in a row"
on_time "10,000 scrapes in a row"
# no growth a scrape: what one scrape leaves (a page or two of the heap)
# would be 10,000 times that
[ "$rss1" -le $((rss0 + 256)) ]; ok $? "10,000 scrapes leave the exporter's memory flat (VmRSS $rss0 -> $rss1 kB)"

# --- a 10 MB body that nothing here takes ---
head -c $((10 << 20)) /dev/zero >"$TMP/body"
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 -X POST --data-binary @"$TMP/body" "http://127.0.0.1:$PORT/metrics")
check "a POST with a 10 MB body gets 405 without the body being kept ($code)" -- test "$code" = 405
rm -f "$TMP/body"

# --- memory and the log ---
hwm1=$(status_kb VmHWM)
diag "exporter VmHWM $hwm0 kB after its first scrapes, $hwm1 kB after everything"
# the sanitizer build: each 17 kB takes 24 (ASan's redzones, 512 bytes for
# the 16 kB, its size classes and shadow memory, an eighth), and freed
# memory waits in the quarantine set above (1 MB and 64 kB)
bound=$((hwm0 + MAXC * CONN_KB)); [ $SAN = 1 ] && bound=$((hwm0 + MAXC * 24 + 1024 + 64))
[ "$hwm1" -le $bound ]
ok $? "the exporter's peak memory grows by at most --max-connections x $CONN_KB kB ($hwm0 -> $hwm1 kB, bound $bound$([ $SAN = 1 ] && echo " with ASan's"))"
sed 's/^/# exporter: /' "$TMP/exporter.log"
# each kind once, and once a minute after: at most 1 + minutes run lines a kind
mins=$(( ($(date +%s) - EXP_T0) / 60 ))
worst=$(grep 'http: ' "$TMP/exporter.log" | sed 's/.*http: //; s/ (further ones.*//; s/ (and [0-9]* more like it.*//' |
        sort | uniq -c | sort -rn | head -1)
kinds=$(grep 'http: ' "$TMP/exporter.log" | sed 's/.*http: //; s/ (further ones.*//; s/ (and [0-9]* more like it.*//' | sort -u | wc -l)
[ "$kinds" -ge 2 ] && [ "$(echo "${worst:-0}" | awk '{ print $1 + 0 }')" -le $((1 + mins)) ]
ok $? "libmicrohttpd's and the exporter's complaints: $kinds kinds, each logged at most 1 + $mins (minutes run) times (most: ${worst:-none})"
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
