#!/bin/bash
# systemd-exporter.sh - scalemon-exporter under a real systemd, socket
# activated: `make install` into a container booted by
# tests/systemd/systemd-harness.sh; scalemon-exporter.socket listens on port 9993
# and the service is not running until the first connection starts it;
# it then serves scalemond's counters and the database's runs, as a
# dynamic user of its own in group scalemon, in a network namespace of its
# own, and cannot write the database (neither by its permissions nor
# through its read-only view of /var); systemd-analyze security rates it at
# most 2.0; a drop-in moves it to another port.
. "${srcdir:-.}/tests/lib.sh"
. "$srcdir/tests/systemd/systemd-harness.sh"
sd_need
command -v curl >/dev/null || skip_all "curl not installed"
command -v python3 >/dev/null || skip_all "python3 not installed"

DBC=/var/lib/scalemon/scalemon.db
PORT=9993
show() { sd systemctl show -P "$1" scalemon-exporter.service; }
journal() { sd journalctl -u scalemon-exporter.service --no-pager -o cat "$@"; }
scrape() { sd curl -sf --max-time 10 "http://127.0.0.1:${2:-$PORT}/metrics" ${1:+-H "Accept: $1"}; }
metric() { awk -v k="$1" '$1 == k { print $2 }'; }

sd_boot
sd_install
sd test -f /usr/local/lib/systemd/system/scalemon-exporter.socket -o -f /lib/systemd/system/scalemon-exporter.socket \
        -o -f /usr/lib/systemd/system/scalemon-exporter.socket
ok $? "make install put scalemon-exporter.socket where systemd loads it ($(sd systemctl show -P FragmentPath scalemon-exporter.socket))"
sd grep -q '^ExecStart=/.*/bin/scalemon-exporter$' "$(show FragmentPath)"
ok $? "and the service, starting scalemon-exporter from bindir"
printf 'interval = 200ms\n' | sd sh -c 'cat > /etc/scalemon/scalemon.conf'
sd systemctl start scalemon.service; ok $? "scalemon.service started"
sd scalemonctl run exec sd-run --tag where=systemd -- "$top_builddir/tests/workloads/wl-pingpong" 2000 >/dev/null
ok $? "a run recorded"

sd systemctl start scalemon-exporter.socket; ok $? "systemctl start scalemon-exporter.socket"
[ "$(sd systemctl is-active scalemon-exporter.socket)" = active ] && [ "$(show ActiveState)" = inactive ]
ok $? "the socket listens; the service is not running yet ($(show ActiveState))"
sd_poll 5 sd sh -c "ss -ltnH 'sport = :$PORT' | grep -q LISTEN" 2>/dev/null ||
        sd_poll 5 sd sh -c "grep -q ':$(printf %04X $PORT) ' /proc/net/tcp6 /proc/net/tcp"
ok $? "port $PORT is open"

out=$(scrape)
ok $? "the first connection is answered"
[ "$(show ActiveState)" = active ]; ok $? "and started scalemon-exporter.service ($(show ActiveState))"
[ "$(echo "$out" | metric scalemon_up)" = 1 ]; ok $? "scalemon_up 1: it reached scalemond over the control socket"
[ "$(echo "$out" | metric scalemon_database_up)" = 1 ]; ok $? "scalemon_database_up 1: it read the database"
echo "$out" | grep -q '^scalemon_run_info{run="sd-run",status="done",where="systemd"} 1$'
ok $? "the run is in scalemon_run_info"
cs=$(echo "$out" | awk '$1 ~ /^scalemon_context_switches_total\{/ { s += $2 } END { print s + 0 }')
[ "${cs%.*}" -ge 4000 ]; ok $? "context switches since scalemond started: $cs (>= 2 x 2000)"
om=$(scrape 'application/openmetrics-text; version=1.0.0')
[ "$(echo "$om" | tail -n 1)" = "# EOF" ]; ok $? "OpenMetrics when asked for"

pid=$(show MainPID)
st=$(sd cat "/proc/$pid/status")
uid=$(echo "$st" | awk '$1 == "Uid:" { print $2 }')
gid=$(echo "$st" | awk '$1 == "Gid:" { print $2 }')
sgid=$(sd getent group scalemon | cut -d: -f3)
diag "exporter pid $pid: uid $uid gid $gid, groups $(echo "$st" | awk '$1 == "Groups:"'), user $(sd ps -o user= -p "$pid")"
[ "$uid" != 0 ] && [ "$uid" != "$(sd id -u scalemon)" ] && [ "$uid" -ge 61184 ] && [ "$uid" -le 65519 ]
ok $? "runs as a dynamic user of its own (uid $uid), not root, not scalemon"
echo "$st" | awk '$1 == "Groups:"' | grep -qw "$sgid"; ok $? "in group scalemon ($sgid) for the socket and the database"
[ "$(echo "$st" | awk '$1 == "CapEff:" { print $2 }')" = 0000000000000000 ] &&
        [ "$(echo "$st" | awk '$1 == "CapBnd:" { print $2 }')" = 0000000000000000 ]
ok $? "with no capabilities, not even in its bounding set"
[ "$(sd readlink "/proc/$pid/ns/net")" != "$(sd readlink /proc/1/ns/net)" ]
ok $? "in a network namespace of its own: it only has the socket systemd passed"

# It can never write the database: as its own user and groups, in its own
# mount namespace, opening the file for writing fails.
wr=$(sd nsenter --target "$pid" --mount -- setpriv --reuid="$uid" --regid="$gid" --groups="$sgid" \
        python3 -c "
import errno, os, sys
for path, flags in (('$DBC', os.O_RDWR), ('$DBC-wal', os.O_RDWR), ('/var/lib/scalemon/new', os.O_CREAT | os.O_WRONLY)):
    try:
        os.close(os.open(path, flags, 0o600)); print(path, 'writable'); sys.exit(1)
    except OSError as e:
        print(path, errno.errorcode[e.errno], end='; ')
" 2>&1)
ok $? "the exporter's user cannot write the database, its WAL or its directory: $wr"
ro=$(sd nsenter --target "$pid" --mount -- sh -c "touch /var/lib/scalemon/x 2>&1")
echo "$ro" | grep -q "Read-only file system"
ok $? "and in its mount namespace /var/lib/scalemon is read-only even for root ($ro)"

sec=$(sd systemd-analyze security --no-pager scalemon-exporter.service 2>&1)
level=$(echo "$sec" | sed -n 's/.*Overall exposure level for scalemon-exporter.service: \([0-9.]*\).*/\1/p')
echo "$sec" | grep '✗' | sed 's/  */ /g; s/^/# exposed: /'
python3 -c "import sys; sys.exit(0 if float('${level:-99}') <= 2.0 else 1)"
ok $? "systemd-analyze security: overall exposure ${level:-unknown} (at most 2.0)"

# scalemond down: scalemon_up 0, said once in the journal
sd systemctl stop scalemon.service
a=$(scrape | metric scalemon_up); b=$(scrape | metric scalemon_up)
[ "$a" = 0 ] && [ "$b" = 0 ]; ok $? "scalemon_up 0 while scalemond is stopped"
[ "$(journal | grep -c 'scalemond: cannot reach')" = 1 ]; ok $? "logged once: $(journal | grep 'scalemond: cannot reach')"
sd systemctl start scalemon.service
sd_poll 10 sh -c "[ \"\$(curl -sf http://127.0.0.1:$PORT/metrics 2>/dev/null)\" ]" 2>/dev/null
[ "$(scrape | metric scalemon_up)" = 1 ]; ok $? "back to 1 when scalemond is back"

# another port with a drop-in
sd mkdir -p /run/systemd/system/scalemon-exporter.socket.d
printf '[Socket]\nListenStream=\nListenStream=127.0.0.1:19993\n' |
        sd sh -c 'cat > /run/systemd/system/scalemon-exporter.socket.d/port.conf'
sd systemctl stop scalemon-exporter.service scalemon-exporter.socket && sd systemctl daemon-reload &&
        sd systemctl start scalemon-exporter.socket
ok $? "a drop-in moves the socket to 127.0.0.1:19993"
[ "$(scrape '' 19993 | metric scalemon_up)" = 1 ] && ! sd curl -sf --max-time 2 "http://127.0.0.1:$PORT/metrics" >/dev/null
ok $? "served there, and no longer on $PORT"

sd systemctl stop scalemon-exporter.service scalemon-exporter.socket
[ "$(show Result)" = success ]; ok $? "the service stops cleanly (Result=$(show Result))"
! journal | grep -q Sanitizer; ok $? "no sanitizer report in the journal"
journal | sed 's/^/# journal: /'
finish
