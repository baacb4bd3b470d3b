#!/bin/bash
# live-top-follow.sh - a subscription follows CPU hotplug and reload: cpu1
# goes offline for a second and comes back, then a reload changes the
# interval (100 ms to 200 ms) and excludes cpu_user.  A subscriber gets
# the reply again before the tick that shows each change: cpu1 offline,
# then online; the new interval and cpu_user unavailable, with why.
# scalemonctl top, running all along, redraws from it: its blocks say
# 1 CPU while cpu1 is away, 2 again after, and "every 200ms" after the
# reload, without a restart.
. "${srcdir:-.}/tests/lib.sh"
need_root
command -v python3 >/dev/null || skip_all "python3 not installed"
need_hotplug 1
[ "$(nproc --all)" = 2 ] || skip_all "the checks count 2 CPUs; this machine has $(nproc --all)"

printf 'interval = 100ms\n' > "$TMP/live.conf"
INTERVAL= start_daemon --config "$TMP/live.conf"

python3 - "$SOCK" > "$TMP/infos" <<'EOF' &
import json, socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b'{"cmd": "subscribe", "metrics": ["context_switches", "cpu_user"], "per": "cpu"}\n')
s.settimeout(0.5)
buf, end = b"", time.time() + 9
while time.time() < end:
    try:
        d = s.recv(1 << 16)
    except socket.timeout:
        continue
    if not d:
        break
    buf += d
    *lines, buf = buf.split(b"\n")
    for l in lines:
        o = json.loads(l)
        if "subscribed" in o:
            i = o["subscribed"]
            cu = next(m for m in i["metrics"] if m["name"] == "cpu_user")
            print("info online=%s interval=%g cpu_user=%s why=%s" % (
                "".join("1" if x else "0" for x in i["online"]), i["interval_s"],
                "yes" if cu["available"] else "no", cu.get("why", "-").replace(" ", "_")))
        elif "tick" in o:
            print("tick")
        else:
            print("other %s" % l[:100])
EOF
SUBPID=$!
"$SCALEMONCTL" --socket "$SOCK" top --iterations 45 > "$TMP/top" 2> "$TMP/top.err" &
TOPPID=$!

sleep 1.5
echo 0 > "$ONLINE"; ok $? "cpu$CPU taken offline"
sleep 1
echo 1 > "$ONLINE"; ok $? "cpu$CPU back online"
sleep 1
printf 'interval = 200ms\nexclude = cpu_user\n' > "$TMP/live.conf"
ctl reload >/dev/null; ok $? "reload: 200 ms, without cpu_user"
wait "$TOPPID"; rc=$?
wait "$SUBPID"
grep -v '^tick' "$TMP/infos" | sed 's/^/# /'
grep '^ticks ' "$TMP/top" | sed 's/^ticks [^ ]* .. [^ ]* ([0-9.]*s)  /# top: /' | uniq -c | sed 's/^/#/'

# the subscription: the reply again before each change's tick
seq=$(awk '$1 == "info" { print $2, $3, $4 }' "$TMP/infos" | uniq | tr '\n' '|')
echo "$seq" | grep -q '^online=11 interval=0.1 cpu_user=yes|online=10 interval=0.1 cpu_user=yes|online=11 interval=0.1 cpu_user=yes|online=11 interval=0.2 cpu_user=no|$'
ok $? "the subscriber's replies: 2 CPUs, cpu1 away, back, then 200 ms without cpu_user ($seq)"
grep -q '^info .*cpu_user=no why=disabled_in_the_configuration$' "$TMP/infos"; ok $? "and why cpu_user went"
! grep -q '^other' "$TMP/infos"; ok $? "nothing else on the connection"
# each pushed reply comes before a tick, never two in a row from one change
awk '$1 == "info" { if (prev == "info") bad++ } { prev = $1 } END { exit bad }' "$TMP/infos"
ok $? "each change's reply is followed by its tick"

# top, running all along
[ "$rc" = 0 ] && [ "$(grep -c '^ticks ' "$TMP/top")" = 45 ]; ok $? "top ran 45 refreshes through it all, exit $rc"
heads=$(grep '^ticks ' "$TMP/top" | sed -n 's/.*)  \([0-9]* CPUs*\), per cpu, every \([0-9a-z]*\)$/\1 \2/p' | uniq | tr '\n' '|')
echo "$heads" | grep -q '^2 CPUs 100ms|1 CPU 100ms|2 CPUs 100ms|2 CPUs 200ms|$'
ok $? "its blocks followed: $heads"
[ ! -s "$TMP/top.err" ]; ok $? "and it said nothing on stderr"
finish
