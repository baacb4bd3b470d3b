#!/bin/bash
# live-socket.sh - the control socket's limits and who may use it
# (scalemond(8), CONTROL SOCKET): a flood of connections is turned away
# while sampling and runs go on, a slow-loris client and a client sending an
# endless line are closed, a client that never reads its replies does not
# grow the daemon, a peer outside the control group cannot connect at all
# (the socket is 0660, owned by the control group, also after a reload)
# and, should it get through, may ask for status but change nothing.  All
# against a real scalemond on a real socket.
. "${srcdir:-.}/tests/lib.sh"
need_root
# nobody cannot use a python3 under root's home (pyenv): prefer the system's
PY=$(command -v /usr/bin/python3 || command -v python3) || skip_all "python3 not installed"
command -v sqlite3 >/dev/null || skip_all "sqlite3 command-line tool not installed"
command -v setpriv >/dev/null || skip_all "setpriv (util-linux) not installed"
getent passwd nobody >/dev/null && getent group nogroup >/dev/null || skip_all "no user nobody or group nogroup"

# The limits as scalemond(8) documents them; the test checks these numbers.
MAX_CLIENTS=64 RESERVED=8 MAX_LINE=65536 IDLE_S=10

chmod 0711 "$TMP"               # nobody may reach the socket, not the database
mkdir -m 0777 "$TMP/nb"          # files nobody's clients write
AS_NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
CG=users                         # the control group for this test: exists, nobody is not in it
getent group "$CG" >/dev/null || CG=
printf 'control_group = %s\n' "${CG:-scalemon}" > "$TMP/scalemon.conf"

cat > "$TMP/client.py" <<'PY'
import json, os, select, socket, sys, time

path, mode = sys.argv[1], sys.argv[2]
args = sys.argv[3:]

def conn():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    return s

def read_until_eof(s, limit=40.0):
    """Everything the daemon sends until it closes; None if it never does."""
    data, end = b"", time.monotonic() + limit
    while time.monotonic() < end:
        r, _, _ = select.select([s], [], [], 0.5)
        if not r:
            continue
        try:
            k = s.recv(65536)
        except ConnectionResetError:
            return data
        if not k:
            return data
        data += k
    return None

if mode == "raw":               # raw JSON [FILE]: one request, print the reply
    s = conn()
    line = (args[0] + "\n").encode()
    try:
        if len(args) > 1:
            with open(args[1], "rb") as f:
                socket.send_fds(s, [line], [f.fileno()])
        else:
            s.sendall(line)
    except (BrokenPipeError, ConnectionResetError):
        pass                    # turned away already: its line is there to read
    buf = b""
    while not buf.endswith(b"\n"):
        try:
            k = s.recv(65536)
        except ConnectionResetError:
            break
        if not k:
            break
        buf += k
    sys.stdout.write(buf.decode())

elif mode == "flood":           # flood N READY HOLD: N connections at once
    n, ready, hold = int(args[0]), args[1], args[2]
    socks = [conn() for _ in range(n)]
    # Connections are accepted in order: once the last one has its answer
    # (or 20s passed), every earlier one has had its own.
    select.select([socks[-1]], [], [], 20)
    accepted = refused = other = 0
    for s in socks:
        r, _, _ = select.select([s], [], [], 0)
        if not r:
            accepted += 1
            continue
        data = read_until_eof(s, 5) or b""
        if b'"ok":false' in data and b"too many connections" in data and data.count(b"\n") == 1:
            refused += 1
        else:
            other += 1
    with open(ready + ".tmp", "w") as f:
        f.write("accepted=%d refused=%d other=%d\n" % (accepted, refused, other))
    os.rename(ready + ".tmp", ready)
    end = time.monotonic() + 60
    while os.path.exists(hold) and time.monotonic() < end:
        time.sleep(0.1)

elif mode == "loris":           # one byte a second, never a newline
    s, t0, sent, closed = conn(), time.monotonic(), 0, False
    reply = b""
    while time.monotonic() - t0 < 60:
        r, _, _ = select.select([s], [], [], 1.0)
        if r:
            reply = read_until_eof(s, 5) or b""
            closed = True
            break
        try:
            s.send(b"{")
            sent += 1
        except (BrokenPipeError, ConnectionResetError):
            closed = True
            break
    print("closed=%d after_s=%.1f sent=%d reply=%s" % (closed, time.monotonic() - t0, sent,
                                                        reply.decode(errors="replace").strip()))

elif mode == "steady":          # N complete requests, GAP seconds apart, one connection
    n, gap = int(args[0]), float(args[1])
    s, answered = conn(), 0
    for i in range(n):
        if i:
            time.sleep(gap)
        try:
            s.sendall(b'{"cmd":"status"}\n')
            buf = b""
            while not buf.endswith(b"\n"):
                k = s.recv(65536)
                if not k:
                    break
                buf += k
            if json.loads(buf).get("ok") is True:
                answered += 1
        except (OSError, ValueError):
            break
    print("answered=%d" % answered)

elif mode == "endless":         # a line that never ends
    s, sent, err = conn(), 0, ""
    chunk = b"x" * 65536
    try:
        while sent < 64 * 1024 * 1024:
            sent += s.send(chunk)
    except (BrokenPipeError, ConnectionResetError) as e:
        err = type(e).__name__
    reply = read_until_eof(s, 20)
    print("sent=%d err=%s closed=%d reply=%s" % (sent, err, reply is not None,
                                                   (reply or b"").decode(errors="replace").strip()))

elif mode == "noread":          # requests, replies never read: NREQ BLOCKED-FILE
    nreq, blocked = int(args[0]), args[1]
    s = conn()
    s.setblocking(False)
    batch = b'{"cmd":"status"}\n' * 1000
    sent = 0
    while sent < nreq * len(b'{"cmd":"status"}\n'):
        _, w, _ = select.select([], [s], [], 3.0)
        if not w:
            break               # the daemon stopped taking requests
        try:
            sent += s.send(batch)
        except BlockingIOError:
            continue
        except (BrokenPipeError, ConnectionResetError):
            break
    with open(blocked, "w") as f:
        f.write("%d\n" % (sent // len(b'{"cmd":"status"}\n')))
    t0 = time.monotonic()
    p = select.poll()
    p.register(s, select.POLLHUP | select.POLLERR)
    closed = bool(p.poll(60000))
    print("requests_sent=%d closed=%d" % (sent // len(b'{"cmd":"status"}\n'), closed))
PY
client() { "$PY" "$TMP/client.py" "$SOCK" "$@"; }
nobody_client() { "${AS_NOBODY[@]}" "$PY" "$TMP/client.py" "$SOCK" "$@"; }

# In a sanitizer build, AddressSanitizer keeps freed memory in quarantine
# (256 MB), which would read as growth below: keep it small, so that VmRSS
# measures what the daemon holds.  Other builds ignore the variable.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=1:thread_local_quarantine_size_kb=64
INTERVAL=100ms start_daemon --config "$TMP/scalemon.conf"
ticks() { sql "SELECT count(*) FROM tick"; }

# --- the socket file: who owns it, its mode ---
gid_of() { getent group "$1" | cut -d: -f3; }
CGID=$(gid_of "${CG:-scalemon}"); CGID=${CGID:-$(id -g)}      # no such group: the daemon's own
st=$(stat -c '%F %a %u %g' "$SOCK")
[ "$st" = "socket 660 $(id -u) $CGID" ]
ok $? "socket is mode 0660, owned by the daemon's uid and the control group ${CG:-scalemon} ($st)"

# --- a peer that is neither root nor in the control group cannot connect ---
ctl run start keep >/dev/null; ok $? "root starts run keep"
out=$(nobody_client raw '{"cmd":"status"}' 2>&1)
echo "$out" | grep -q "PermissionError"; ok $? "as nobody: connect() refused by the file's mode ($(echo "$out" | tail -n 1))"
denied_line="^scalemonctl: permission denied on $SOCK: only root, scalemond's user and members of group ${CG:-[^ ]*} may use it (ask to be added to the group)\$"
for verb in "status" "run start intruder"; do
        out=$("${AS_NOBODY[@]}" "$SCALEMONCTL" --db "$DB" --socket "$SOCK" $verb 2>&1); rc=$?
        [ $rc = 1 ] && [ "$(echo "$out" | wc -l)" = 1 ] && echo "$out" | grep -q "$denied_line"
        ok $? "scalemonctl $verb as nobody: exit $rc, one line naming the group ($out)"
done
# with the database readable (its group, root) but still not the socket:
# status from the database, and why the daemon does not answer
AS_NOBODY_DB=(setpriv --reuid=nobody --regid=0 --clear-groups)
out=$("${AS_NOBODY_DB[@]}" "$SCALEMONCTL" --db "$DB" --socket "$SOCK" status 2>&1); rc=$?
[ $rc = 0 ] && echo "$out" | head -n 1 |
        grep -q "^daemon:    running (pid $DAEMON_PID), but permission denied on $SOCK: only root, scalemond's user and members of group"
ok $? "scalemonctl status as nobody in group root (reads the database): exit $rc, says why ($(echo "$out" | head -n 1))"
why=$("${AS_NOBODY_DB[@]}" "$SCALEMONCTL" --db "$DB" --socket "$SOCK" --format json status | jpy '"reachable=%s why=%s" % (d["daemon"]["reachable"], d["daemon"]["why"])')
[[ "$why" == "reachable=False why=permission denied on $SOCK: "* ]]; ok $? "in JSON: reachable false, and why ($why)"
! grep -q "control: uid 65534" "$TMP/daemon.log"; ok $? "the daemon never heard from them"

# --- should such a peer get through: the daemon's own check per request ---
# A socket opened up by hand simulates a peer that got a descriptor some
# other way (or a mode changed behind the daemon's back), to test the
# daemon-side check; 0660 is restored after.
chmod 0666 "$SOCK"
ctl export > "$TMP/export.json" 2>/dev/null && chmod 0644 "$TMP/export.json"
state() { sql "SELECT name, status, coalesce(end, '') FROM run ORDER BY id; SELECT count(*) FROM run_mark;
               SELECT count(*) FROM event WHERE kind NOT IN ('cpu-offline', 'cpu-online')"; }
before=$(state)
denied=0
for req in '{"cmd":"run-start","name":"intruder"}' '{"cmd":"run-stop","name":"keep"}' '{"cmd":"run-stop"}' \
           '{"cmd":"run-mark","name":"keep","text":"x"}' '{"cmd":"reload"}'; do
        out=$(nobody_client raw "$req")
        echo "$out" | grep -q '"ok":false,"error":"permission denied: uid 65534' && denied=$((denied + 1)) ||
                diag "$req -> $out"
done
out=$(nobody_client raw '{"cmd":"import"}' "$TMP/export.json")
echo "$out" | grep -q '"ok":false,"error":"permission denied: uid 65534' && denied=$((denied + 1)) || diag "import -> $out"
[ "$denied" = 6 ]; ok $? "as nobody: run-start, run-stop (named and not), run-mark, reload, import: permission denied ($denied of 6)"
for verb in "run start intruder" "run stop keep" "run mark keep x" "reload"; do
        out=$("${AS_NOBODY[@]}" "$SCALEMONCTL" --db "$DB" --socket "$SOCK" $verb 2>&1); rc=$?
        [ $rc = 1 ] && echo "$out" | grep -q "^scalemonctl: permission denied: uid 65534 is not root, not scalemond's user and not in group"
        ok $? "scalemonctl $verb as nobody: exit 1, one line ($out)"
done
out=$(nobody_client raw '{"cmd":"status"}')
[ "$(echo "$out" | jpy 'd["ok"] and d["pid"]')" = "$DAEMON_PID" ]; ok $? "as nobody: status is answered, with the daemon's pid"
after=$(state)
[ "$before" = "$after" ]; ok $? "database unchanged by the refused requests (runs, marks, events)"
[ "$(sql "SELECT status FROM run WHERE name = 'keep'")" = running ]; ok $? "run keep still running"
n=$(grep -c "control: uid 65534 (pid [0-9]*) may not" "$TMP/daemon.log")
[ "$n" = 10 ]; ok $? "each refusal logged, naming the uid ($n of 10)"
chmod 0660 "$SOCK"
if [ -n "$CG" ]; then
        out=$(setpriv --reuid=nobody --regid=nogroup --groups="$CG" "$SCALEMONCTL" --db "$DB" --socket "$SOCK" \
                run mark keep "from the group" 2>&1)
        ok $? "nobody with supplementary group $CG may mark a run ($out)"
        out=$(setpriv --reuid=nobody --regid="$CG" --clear-groups "$SCALEMONCTL" --db "$DB" --socket "$SOCK" \
                run mark keep "primary group" 2>&1)
        ok $? "nobody with primary group $CG may mark a run ($out)"
        [ "$(sql "SELECT count(*) FROM run_mark")" = 2 ]; ok $? "both marks stored"
        # a reload re-applies the control group to the socket file: another
        # group, one that does not exist (the daemon's own then), and back
        reload_group() { printf 'control_group = %s\n' "$1" > "$TMP/scalemon.conf" && ctl reload >/dev/null &&
                         stat -c '%a %u %g' "$SOCK"; }
        st=$(reload_group nogroup)
        [ "$st" = "660 $(id -u) $(gid_of nogroup)" ]; ok $? "reload with control_group nogroup: socket group nogroup ($st)"
        out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups "$SCALEMONCTL" --db "$DB" --socket "$SOCK" \
                run mark keep "as nogroup" 2>&1)
        ok $? "nobody, primary group nogroup, may now mark a run ($out)"
        st=$(reload_group no-such-group-scalemon)
        [ "$st" = "660 $(id -u) $(id -g)" ]; ok $? "reload with a group that does not exist: the daemon's own group ($st)"
        acc=$(ctl status | sed -n 's/^access: *//p')
        [ "$acc" = "root and uid $(id -u) may start and stop runs (group no-such-group-scalemon does not exist: groupadd no-such-group-scalemon, and its members may too)" ]
        ok $? "status says who may start and stop runs now ($acc)"
        ! grep -q "no-such-group-scalemon" "$TMP/daemon.log"; ok $? "and the log says nothing of it"
        st=$(reload_group "$CG")
        [ "$st" = "660 $(id -u) $CGID" ]; ok $? "reload back to control_group $CG: socket group $CG ($st)"
else
        for i in $(seq 8); do echo "ok $((tap_n += 1)) # SKIP no group users to use as the control group"; done
fi

# --- a flood of connections from an unprivileged user ---
# One outside the control group cannot connect at all (above): open the
# socket up for the flood, as for a peer that got through, so that the
# limits are what turns it away.
chmod 0666 "$SOCK"
t0=$(ticks)
touch "$TMP/nb/flood.hold"
nobody_client flood 200 "$TMP/nb/flood.ready" "$TMP/nb/flood.hold" > "$TMP/flood.out" 2>&1 &
flood_pid=$!
for i in $(seq 300); do [ -e "$TMP/nb/flood.ready" ] && break; kill -0 $flood_pid 2>/dev/null || break; sleep 0.1; done
res=$(cat "$TMP/nb/flood.ready" 2>/dev/null); diag "200 connections as nobody: $res $(cat "$TMP/flood.out")"
want="accepted=$((MAX_CLIENTS - RESERVED)) refused=$((200 - MAX_CLIENTS + RESERVED)) other=0"
[ "$res" = "$want" ]; ok $? "flood: $((MAX_CLIENTS - RESERVED)) held, the rest told \"too many connections\" in one line and closed"
n=$(grep -c "too many connections" "$TMP/daemon.log")
[ "$n" = 1 ]; ok $? "the burst of $((200 - MAX_CLIENTS + RESERVED)) refusals logged once ($n lines)"
out=$(nobody_client raw '{"cmd":"status"}')
echo "$out" | grep -q "too many connections"; ok $? "during the flood another unprivileged client is turned away ($out)"
reachable() { ctl --format json status | jpy 'd["daemon"]["reachable"] and d["daemon"]["pid"]'; }
[ "$(reachable)" = "$DAEMON_PID" ]
ok $? "during the flood: scalemonctl status as root answers (a reserved slot)"
ctl run start during-flood --tag phase=flood >/dev/null && ctl run mark during-flood "mid" >/dev/null &&
        ctl run stop during-flood >/dev/null
ok $? "during the flood: run start, mark, stop work"
t1=$(ticks)
rm -f "$TMP/nb/flood.hold"; wait $flood_pid
chmod 0660 "$SOCK"
ctl run start after-flood >/dev/null && ctl run stop after-flood >/dev/null; ok $? "after the flood: run start and stop work"
wait_flushed "$(now_ns)"
t2=$(ticks)
diag "ticks: $t0 before the flood, $t1 during, $t2 after"
[ "$t1" -gt "$t0" ] && [ "$t2" -gt "$t1" ]; ok $? "sampling went on through the flood ($t0 < $t1 < $t2 ticks)"
[ "$(sql "SELECT status FROM run WHERE name = 'during-flood'")" = done ]; ok $? "the run made during the flood is done"

# --- slow loris; a steady client on one connection; a command longer than
# the idle timeout under run exec; and a client that never reads its
# replies (checked further down); all at once, as each waits out the idle
# timeout ---
rss() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$DAEMON_PID/status"; }
reply_bytes=$(client raw '{"cmd":"status"}' | wc -c)
echo 5 > "/proc/$DAEMON_PID/clear_refs"          # VmHWM := VmRSS
rss0=$(rss VmRSS)
nreq=100000
client noread $nreq "$TMP/noread.blocked" > "$TMP/noread.out" 2>&1 &
noread_pid=$!
client loris > "$TMP/loris.out" 2>&1 &
loris_pid=$!
client steady 4 $((IDLE_S * 6 / 10)) > "$TMP/steady.out" 2>&1 &
steady_pid=$!
ctl run exec longer-than-idle -- sleep $((IDLE_S + 2)) > "$TMP/exec.out" 2>&1 &
exec_pid=$!
sleep 2
ctl run start beside-loris >/dev/null && ctl run stop beside-loris >/dev/null
ok $? "while a slow client dribbles, others start and stop runs"
wait $loris_pid; loris=$(cat "$TMP/loris.out"); diag "slow loris: $loris"
echo "$loris" | grep -q "^closed=1 " ; ok $? "slow loris closed by the daemon"
after_s=$(echo "$loris" | sed -n 's/.* after_s=\([0-9.]*\) .*/\1/p')
awk -v s="${after_s:-0}" -v i=$IDLE_S 'BEGIN { exit !(s >= i) }'; ok $? "not before the idle timeout, though it sent a byte every second (${after_s}s >= ${IDLE_S}s)"
echo "$loris" | grep -q "idle for ${IDLE_S}s without a complete request"; ok $? "and told why"
grep -q "control: closing the connection of pid [0-9]* (uid 0): [0-9]* bytes without a newline for ${IDLE_S}s" "$TMP/daemon.log"
ok $? "logged with the partial line's size"
wait $steady_pid; steady=$(cat "$TMP/steady.out")
[ "$steady" = "answered=4" ]; ok $? "a client with a request every $((IDLE_S * 6 / 10))s keeps its connection past the idle timeout ($steady)"
wait $exec_pid; rc=$?
[ $rc = 0 ] && [ "$(sql "SELECT status FROM run WHERE name = 'longer-than-idle'")" = done ]
ok $? "run exec of a command longer than the idle timeout: exit $rc, run done ($(cat "$TMP/exec.out"))"

# --- requests whose replies are never read (started with the loris) ---
wait $noread_pid; out=$(cat "$TMP/noread.out"); diag "never reads: $out"
sent=$(cat "$TMP/noread.blocked")
hwm=$(rss VmHWM)
diag "status reply $reply_bytes bytes; VmRSS before ${rss0} kB, VmHWM after ${hwm} kB; $sent requests sent"
[ "$sent" -lt "$nreq" ]; ok $? "the daemon stopped taking requests from it ($sent of $nreq sent)"
[ $((hwm - rss0)) -lt 16384 ]
ok $? "peak memory grew $((hwm - rss0)) kB, under 16 MiB (its replies unbounded would be $((nreq * reply_bytes / 1024)) kB)"
echo "$out" | grep -q "closed=1$"; ok $? "and its connection was closed"
grep -q "control: pid [0-9]* (uid 0) does not read its replies" "$TMP/daemon.log" &&
        grep -q "control: closing the connection of pid [0-9]* (uid 0): [0-9]* bytes of replies unread for ${IDLE_S}s" "$TMP/daemon.log"
ok $? "logged when held and when closed"
[ "$(reachable)" = "$DAEMON_PID" ]; ok $? "scalemonctl status still reaches the daemon"

# --- a line that never ends ---
out=$(client endless); diag "endless line: ${out:0:200}"
echo "$out" | grep -q "closed=1 reply={\"ok\":false,\"error\":\"request longer than $MAX_LINE bytes; closing the connection\"}$"
ok $? "endless line: one error line, then closed"
sent=$(echo "$out" | sed -n 's/^sent=\([0-9]*\) .*/\1/p')
[ "${sent:-0}" -ge $MAX_LINE ] && [ "${sent:-0}" -lt $((64 * 1024 * 1024)) ]
ok $? "the daemon stopped taking it ($sent bytes sent of 64 MiB)"
out=$(client raw '{"cmd":"status"}'); echo "$out" | grep -q '"ok":true'; ok $? "daemon still answers"

stop_daemon; ok $? "daemon stops cleanly (exit 0)"

# --- a daemon that may not give the socket to the control group ---
# As under systemd: not root, CAP_PERFMON only, and here not in group $CG.
nb_sock=$TMP/nb/control.sock nb_log=$TMP/nobody-daemon.log
if [ -n "$CG" ]; then
        printf 'control_group = %s\n' "$CG" > "$TMP/scalemon.conf"
        setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=+perfmon --ambient-caps=+perfmon \
                "$SCALEMOND" --foreground --config "$TMP/scalemon.conf" --db "$TMP/nb/nobody.db" \
                --socket "$nb_sock" --interval 100ms > "$nb_log" 2>&1 &
        nb_pid=$!
        for i in $(seq 100); do grep -q 'started:' "$nb_log" && break; kill -0 $nb_pid 2>/dev/null || break; sleep 0.05; done
fi
if [ -n "$CG" ] && grep -q 'started:' "$nb_log"; then
        st=$(stat -c '%a %u %g' "$nb_sock")
        [ "$st" = "660 $(id -u nobody) $(gid_of nogroup)" ]; ok $? "daemon as nobody: socket 0660, its own group nogroup ($st)"
        n=$(grep -c "cannot give the control socket to group $CG: Operation not permitted; it keeps scalemond's group nogroup" "$nb_log")
        [ "$n" = 1 ]; ok $? "one notice that it cannot be given to group $CG ($(grep "cannot give" "$nb_log"))"
        "$SCALEMONCTL" --db "$TMP/nb/nobody.db" --socket "$nb_sock" run start as-daemon-user >/dev/null
        ok $? "root still starts a run"
        kill -TERM $nb_pid; wait $nb_pid; ok $? "daemon as nobody stops cleanly"
else
        [ -n "${nb_pid:-}" ] && { kill -TERM $nb_pid 2>/dev/null; wait $nb_pid 2>/dev/null; }
        diag "scalemond as nobody with CAP_PERFMON: $(head -n 3 "$nb_log" 2>/dev/null)"
        for i in 1 2 3 4; do echo "ok $((tap_n += 1)) # SKIP no group users, or no ambient CAP_PERFMON for nobody here"; done
fi
finish
