#!/bin/bash
# systemd-watchdog.sh - scalemon.service's watchdog under a real systemd:
# `systemctl enable --now` after `make install`; with a short WatchdogSec=
# the event loop keeps feeding it; a stopped loop (SIGSTOP) gets the service
# aborted and restarted, and the run that was open is then reported as
# interrupted.
. "${srcdir:-.}/tests/lib.sh"
. "$srcdir/tests/systemd/systemd-harness.sh"
sd_need
command -v python3 >/dev/null || skip_all "python3 not installed"

WD=3    # WatchdogSec= in the test's drop-in, seconds
show() { sd systemctl show -P "$1" scalemon.service; }
journal() { sd journalctl -u scalemon.service --no-pager -o cat "$@"; }
journal_has() { journal "${@:2}" | grep -q -- "$1"; }
restarted() { local p; p=$(show MainPID); [ "$p" != 0 ] && [ "$p" != "$1" ] && [ "$(show ActiveState)" = active ]; }
run_status() { sd scalemonctl --format json runs | jpy "[r['status'] for r in d['runs'] if r['name'] == '$1'][0]"; }

t0=$(date +%s%N)
sd_boot
sd_install
sd mkdir -p /etc/systemd/system/scalemon.service.d
printf '[Service]\nWatchdogSec=%ss\nRestartSec=1s\nTimeoutAbortSec=5s\nLimitCORE=0\n' "$WD" |
        sd sh -c 'cat > /etc/systemd/system/scalemon.service.d/60-test-watchdog.conf'
printf 'interval = 200ms\n' | sd sh -c 'cat > /etc/scalemon/scalemon.conf'
sd systemctl daemon-reload

out=$(sd systemctl enable --now scalemon.service 2>&1); ok $? "systemctl enable --now scalemon ($(echo $out))"
[ "$(sd systemctl is-enabled scalemon.service)" = enabled ] && [ "$(sd systemctl is-active scalemon.service)" = active ]
ok $? "enabled and active"
[ "$(show WatchdogUSec)" = "${WD}s" ]; ok $? "WatchdogSec=${WD}s from the drop-in"
pid=$(show MainPID)

# Twice the watchdog time, sampling: the loop feeds it, nothing restarts.
sleep $((2 * WD))
[ "$(show MainPID)" = "$pid" ] && [ "$(show NRestarts)" = 0 ] && [ "$(show ActiveState)" = active ]
ok $? "the event loop feeds the watchdog: same process after $((2 * WD))s, no restart"

sd scalemonctl run start longrun >/dev/null; ok $? "a run is open"
sd kill -STOP "$pid"; ok $? "SIGSTOP the daemon's main process ($pid)"
sd_poll 30 restarted "$pid"; ok $? "systemd restarts it (new main process $(show MainPID))"
[ "$(show NRestarts)" = 1 ]; ok $? "NRestarts=1"
sd_poll 5 journal_has "Watchdog timeout"; ok $? "journal: $(journal | grep -m 1 'Watchdog timeout')"
! sd test -e "/proc/$pid"; ok $? "the stopped process is gone"
sd_poll 10 journal_has "run longrun .*closed as interrupted" RUN=longrun
ok $? "journal: $(journal RUN=longrun | tail -n 1)"
st=$(run_status longrun); [ "$st" = interrupted ]; ok $? "the run that was open is reported as interrupted ($st)"
out=$(sd scalemonctl status 2>&1)
echo "$out" | grep -q "running (pid $(show MainPID)): .*every 200ms"; ok $? "scalemonctl status: $(echo "$out" | head -n 1)"

sd systemctl disable --now scalemon.service 2>/dev/null; ok $? "systemctl disable --now scalemon"
[ "$(sd systemctl is-enabled scalemon.service)" = disabled ] && [ "$(show ActiveState)" = inactive ] &&
        [ "$(show Result)" = success ]
ok $? "disabled, inactive, stopped cleanly"

sd journalctl -u scalemon.service --no-pager -o short-monotonic | sed "s/^/# /"
diag "the whole test took $(( ($(date +%s%N) - t0) / 1000000 )) ms"
finish
