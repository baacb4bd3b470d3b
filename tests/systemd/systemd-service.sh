#!/bin/bash
# systemd-service.sh - scalemon.service under a real systemd: `make install`
# into a container booted by tests/systemd/systemd-harness.sh, then start it (status
# line, journal, capabilities, the control socket's owner and mode, clients
# as root, as a member of group scalemon and as anyone else (who cannot
# connect), a run of a workload), reload it with a new interval
# and with a broken configuration, stop it, check systemd-analyze security,
# and `make uninstall`.
. "${srcdir:-.}/tests/lib.sh"
. "$srcdir/tests/systemd/systemd-harness.sh"
sd_need
command -v sqlite3 >/dev/null || skip_all "sqlite3 command-line tool not installed"
command -v python3 >/dev/null || skip_all "python3 not installed"

CONF=/etc/scalemon/scalemon.conf
# the test reads new ticks from the database within seconds: its
# configurations commit every second (the default, 10m, is fault-commit's)
DBC=/var/lib/scalemon/scalemon.db
show() { sd systemctl show -P "$1" scalemon.service; }
status_text_is() { [[ "$(show StatusText)" == *"$1" ]]; }
journal() { sd journalctl -u scalemon.service --no-pager -o cat "$@"; }
journal_has() { journal "${@:2}" | grep -q -- "$1"; }
csql() { sd sqlite3 -readonly -batch -noheader "$DBC" "$@"; }
as_tester() { sd setpriv --reuid=tester --regid=users --init-groups "$@"; }
as_nobody() { sd setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
ticks_since() { [ "$(csql "SELECT count(*) FROM tick WHERE t >= $1")" -ge "$2" ]; }

t0=$(date +%s%N)
sd_boot

# --- make install ---
sd_install
installed=$(sd_installed_files)
diag "installed: $(echo $installed)"
unit=$(show FragmentPath)
[ -n "$unit" ] && echo "$installed" | grep -qx "$(sd readlink -f "$unit")" && sd grep -q '^ExecStart=/.*/scalemond$' "$unit"
ok $? "make install put the unit where systemd loads it ($unit)"
echo "$installed" | grep -q '/sysusers.d/scalemon.conf$' && echo "$installed" | grep -q '/tmpfiles.d/scalemon.conf$'
ok $? "and the sysusers.d and tmpfiles.d snippets"
sd getent passwd scalemon >/dev/null && sd getent group scalemon >/dev/null
ok $? "user and group scalemon exist (systemd-sysusers)"
[ "$(sd stat -c '%U:%G %a' /var/lib/scalemon)" = "scalemon:scalemon 750" ]
ok $? "/var/lib/scalemon is scalemon:scalemon 0750 (systemd-tmpfiles)"

# --- start ---
printf '# written by systemd-service.sh\ncommit_interval = 1s\ninterval = 500ms\n' | sd sh -c "cat > $CONF"
sd systemctl start scalemon.service; ok $? "systemctl start scalemon"
[ "$(sd systemctl is-active scalemon.service)" = active ]; ok $? "is-active: active"
pid=$(show MainPID)
st=$(show StatusText)
[[ "$st" =~ ^sampling\ [0-9]+\ CPUs?,\ [0-9]+\ metrics,\ [0-9]+\ unavailable,\ every\ 500ms$ ]]
ok $? "StatusText is the status line: $st"
sd_poll 10 journal_has "started: sampling .* every 500ms, database $DBC"
ok $? "journal: $(journal | grep 'started:' | head -n 1)"
journal -o json | grep '"started: ' | head -n 1 | jpy 'd["PRIORITY"] == "6" and d["SYSLOG_IDENTIFIER"] == "scalemond"' |
        grep -qx true
ok $? "the start-up line is an entry of its own, PRIORITY=6, SYSLOG_IDENTIFIER=scalemond"
if [[ "$st" == *", 0 unavailable,"* ]]; then
        echo "ok $((tap_n += 1)) # SKIP every metric is available here: no METRIC= line to look for"
else
        m=$(journal -o json | grep '"METRIC"' | head -n 1 | jpy 'd["METRIC"]')
        [ -n "$m" ] && journal METRIC="$m" | grep -q "^$m unavailable: "
        ok $? "unavailable metrics are logged with METRIC= ($(journal METRIC="$m" | head -n 1))"
fi

# --- privileges while running ---
ps=$(sd cat "/proc/$pid/status")
cap() { echo "$ps" | awk -v k="$1:" '$1 == k { print $2 }'; }
uid=$(sd id -u scalemon)
[ "$(echo "$ps" | awk '$1 == "Uid:" { print $2 $3 $4 $5 }')" = "$uid$uid$uid$uid" ]
ok $? "runs as user scalemon (uid $uid)"
diag "CapInh $(cap CapInh) CapPrm $(cap CapPrm) CapEff $(cap CapEff) CapBnd $(cap CapBnd) CapAmb $(cap CapAmb)"
[ "$(cap CapEff)" = 0000004000000000 ] && [ "$(cap CapPrm)" = 0000004000000000 ]
ok $? "effective and permitted capabilities: CAP_PERFMON only"
[ "$(cap CapAmb)" = 0000004000000000 ] && [ "$(cap CapInh)" = 0000004000000000 ]
ok $? "CAP_DAC_READ_SEARCH and CAP_BPF dropped from the ambient and inheritable sets too"
[ "$(cap CapBnd)" = 000000c000000004 ]
ok $? "bounding set: CAP_PERFMON, CAP_DAC_READ_SEARCH and CAP_BPF (39)"
[ "$(cap NoNewPrivs)" = 1 ] && [ "$(cap Seccomp)" = 2 ]; ok $? "no_new_privs, seccomp filter"
why=$(sd scalemonctl --format json metrics | jpy "[m.get('why') or 'available' for m in d['metrics'] if m['name'] == 'lock_contentions'][0]")
if [[ "$why" == *"not found"* ]]; then
        echo "ok $((tap_n += 1)) # SKIP this kernel has no lock:contention_begin ($why)"
else
        [ "$why" = available ]; ok $? "tracepoint ids were read through tracefs at start: lock_contentions $why"
fi

# --- clients ---
out=$(sd scalemonctl status 2>&1)
echo "$out" | grep -q "running (pid $pid): .*every 500ms"; ok $? "scalemonctl status as root: $(echo "$out" | head -n 1)"
sd useradd --no-create-home --no-user-group --gid users --groups scalemon tester
out=$(as_tester scalemonctl status 2>&1)
echo "$out" | grep -q "running (pid $pid)"; ok $? "as a member of group scalemon: $(echo "$out" | head -n 1)"
[ "$(sd stat -c '%U:%G %a' /run/scalemon/control.sock)" = "scalemon:scalemon 660" ]
ok $? "the control socket is scalemon:scalemon 0660 ($(sd stat -c '%U:%G %a' /run/scalemon/control.sock))"
! journal_has "cannot give the control socket"; ok $? "no notice about the socket's group in the journal $(journal | grep 'control socket')"
denied="^scalemonctl: permission denied on /run/scalemon/control.sock: only root, scalemond's user and members of group scalemon may use it (ask to be added to the group)\$"
out=$(as_nobody scalemonctl status 2>&1); rc=$?
[ $rc = 1 ] && [ "$(echo "$out" | wc -l)" = 1 ] && echo "$out" | grep -q "$denied"
ok $? "anyone else may neither connect nor read the database: status exits $rc, one line: $out"
out=$(as_nobody scalemonctl run start intruder 2>&1); rc=$?
[ $rc = 1 ] && [ "$(echo "$out" | wc -l)" = 1 ] && echo "$out" | grep -q "$denied"
ok $? "nor start a run: exit $rc, the same line"
out=$(sd scalemonctl run exec smoke --tag where=systemd -- "$top_builddir/tests/workloads/wl-pingpong" 2000 2>&1)
ok $? "scalemonctl run exec of a workload ($out)"
rep=$(sd scalemonctl --format json report --since smoke 2>"$TMP/report.err")
sed 's/^/# report: /' "$TMP/report.err"
echo "$rep" | jpy '[(r["name"], r["status"], r["tags"]) for r in d["runs"]]' | grep -qx "('smoke', 'done', {'where': 'systemd'})"
ok $? "the run is in the report"
cs=$(echo "$rep" | jpy 'd["runs"][0]["metrics"]["context_switches"]["total"]')
[ "${cs%.*}" -ge 4000 ]; ok $? "with the workload's context switches ($cs >= 2 x 2000)"
sd_poll 5 journal_has "run smoke stopped: done" RUN=smoke
ok $? "journal: RUN=smoke selects the run's lines ($(journal RUN=smoke | tr '\n' ';'))"

# --- run exec's own cgroup is a transient scope (sd-bus StartTransientUnit) ---
out=$(sd scalemonctl run exec scope-probe -- sh -c 'cat /proc/self/cgroup; systemctl status --no-pager $$ | head -n 1' 2>&1)
ok $? "run exec where systemd runs: $(echo "$out" | tr '\n' ';')"
echo "$out" | grep -Eq '^0::/.*/scalemon-run-scope-probe-[0-9]+\.scope$' &&
        echo "$out" | grep -Eq 'scalemon-run-scope-probe-[0-9]+\.scope - scalemon run scope-probe'
ok $? "the command is in a transient scope scalemon-run-NAME-PID.scope, and systemctl status names it"
! echo "$out" | grep -q "unavailable\|no transient scope"; ok $? "no word of unavailable own counters"
sd_poll 5 journal_has "run scope-probe: counting its cgroup /.*/scalemon-run-scope-probe-[0-9]*\.scope" RUN=scope-probe
ok $? "scalemond counts the scope: $(journal RUN=scope-probe | grep counting)"
scope_gone() { [ -z "$(sd systemctl list-units --all --no-legend 'scalemon-run-*')" ]; }
sd_poll 5 scope_gone; ok $? "the scope is gone after the run: $(sd systemctl list-units --all --no-legend 'scalemon-run-*')"
# a user systemd will not make a scope for: one line says so, the run goes on
out=$(as_tester scalemonctl run exec scope-user -- "$top_builddir/tests/workloads/wl-pingpong" 1000 2>&1); rc=$?
diag "as a member of group scalemon: $(echo "$out" | tr '\n' ';')"
[ $rc = 0 ] && echo "$out" | grep -q round_trips=1000 && [ "$(echo "$out" | grep -c 'scalemonctl:')" = 1 ] &&
        echo "$out" | grep -q "its own counters are unavailable: no transient scope (StartTransientUnit .*), and "
ok $? "run exec as a user systemd makes no scope for: the run runs, and one line says why (no scope, and no cgroup of scalemond's either)"
N=50000
# another ping-pong, outside the run, in a process group of its own
sd sh -c "setsid '$top_builddir/tests/workloads/wl-pingpong' 100000000 >/dev/null & echo \$! >/tmp/outside.pid"
sleep 0.2
# every task's switches in the container, summed from /proc before and after
# (within the run; a task that exits in between takes its count along)
procsum='cat /proc/[0-9]*/task/[0-9]*/status 2>/dev/null |
        awk '"'"'$1 ~ /^(non)?voluntary_ctxt_switches:$/ { n += $2 } END { print n + 0 }'"'"
out=$(sd scalemonctl run exec scope-pp -- sh -c "$procsum >/tmp/before;
        perf stat -x, -e context-switches -o /tmp/perfstat -- '$top_builddir/tests/workloads/wl-pingpong' $N; $procsum >/tmp/after" 2>&1)
ok $? "run exec of a ping-pong under perf stat, another ping-pong outside ($out)"
sd sh -c 'kill -- -$(cat /tmp/outside.pid)'
ps=$(sd cat /tmp/perfstat | awk -F, '$3 == "context-switches" { print $1 }')
rep=$(sd scalemonctl --format json report --since scope-pp --until scope-pp 2>"$TMP/report.err")
own=$(echo "$rep" | jpy 'round(d["runs"][0]["metrics"]["context_switches"]["own_total"])')
tot=$(echo "$rep" | jpy 'round(d["runs"][0]["metrics"]["context_switches"]["total"])')
diag "scope: context switches: run's own $own, perf stat on the command $ps, machine $tot"
python3 -c "import sys; sys.exit(0 if $ps >= 2 * $N and abs($own - $ps) <= 0.05 * $ps else 1)"
ok $? "the run's own context switches (its scope's) within 5% of perf stat's ($own vs $ps)"
rus=$(echo "$rep" | jpy 'd["runs"][0]["voluntary_switches"] + d["runs"][0]["involuntary_switches"]')
inside=$(( $(sd cat /tmp/after) - $(sd cat /tmp/before) + rus ))
diag "the container's tasks in /proc within the run, and the command's (wait4): $inside"
python3 -c "import sys; sys.exit(0 if $tot >= $inside > $own else 1)"
ok $? "the machine's total holds the outside ping-pong's too ($tot >= $inside, the container's tasks and the command's, > $own)"
us=$(echo "$rep" | jpy 'd["runs"][0]["metrics"]["cpu_user"]["own_total"] + d["runs"][0]["metrics"]["cpu_system"]["own_total"]')
python3 -c "import sys; sys.exit(0 if $us > 0 else 1)"; ok $? "the scope's cpu.stat was read at the run's stop (${us}s)"

# --- lock wait (BPF) in the service: loaded with CAP_BPF, dropped since;
# callers named by the kernel (no CAP_SYSLOG: kallsyms hides addresses) ---
lw=$(sd scalemonctl --format json metrics | jpy "[m.get('why') or 'available' for m in d['metrics'] if m['name'] == 'lock_wait_ns'][0]")
[ "$lw" = available ]; ok $? "lock_wait_ns is available in the service: $lw"
out=$(sd scalemonctl run exec lockstorm -- "$top_builddir/tests/workloads/wl-mmapstorm" 4 2 2>&1)
ok $? "a run of the mmap storm ($out)"
rep=$(sd scalemonctl --format json report --since lockstorm --until lockstorm 2>"$TMP/report.err")
sed 's/^/# report: /' "$TMP/report.err"
top=$(echo "$rep" | jpy "[(l['type'], l['caller']) for l in d['runs'][0]['locks'][:3]]")
diag "top locks: $top"
# the storm takes mmap_lock to write (mmap, mprotect, munmap) and, in its
# page faults, to read: one rwsem:R caller may lead, but the write side
# holds most of the run's lock wait (as tests/live/live-lockwait.sh checks)
w=$(echo "$rep" | jpy "sum(l['total_wait_ns'] for l in d['runs'][0]['locks'] if l['type'] == 'rwsem:W')")
all=$(echo "$rep" | jpy "sum(l['total_wait_ns'] for l in d['runs'][0]['locks'])")
python3 -c "import sys; sys.exit(0 if 0 < 2 * $w > $all else 1)"
ok $? "rwsem:W (the mmap_lock, to write) holds most of its lock wait ($w of $all ns)"
echo "$rep" | jpy "d['runs'][0]['locks'][0]['caller']" | grep -Eq '^[A-Za-z_][A-Za-z0-9_.]*\+0x[0-9a-f]+$'
ok $? "on a named caller, though kallsyms hides its addresses from the service"
share=$(echo "$rep" | jpy "d['runs'][0]['lock_wait_share']['system']")
python3 -c "import sys; sys.exit(0 if float('$share') > 0.01 else 1)"
ok $? "lock wait share of CPU time: $share"

# --- reload with a new interval, a run open across it ---
as_tester scalemonctl run start campaign >/dev/null; ok $? "a member of group scalemon opens a run"
t_campaign=$(date +%s%N)
sd_poll 10 ticks_since "$t_campaign" 3
t_reload=$(date +%s%N)
printf '# written by systemd-service.sh\ncommit_interval = 1s\ninterval = 200ms\n' | sd sh -c "cat > $CONF"
sd systemctl reload scalemon.service; ok $? "systemctl reload scalemon"
sd_poll 10 status_text_is "every 200ms"; ok $? "StatusText has the new interval: $(show StatusText)"
[ "$(show MainPID)" = "$pid" ] && [ "$(sd systemctl is-active scalemon.service)" = active ]
ok $? "same process, still active"
sd_poll 10 journal_has "configuration reloaded: .* every 200ms"; ok $? "journal: $(journal | grep 'configuration reloaded')"
iv=$(sd scalemonctl --format json status | jpy 'd["interval_s"]')
[ "$iv" = 0.2 ]; ok $? "scalemonctl status: interval ${iv}s"
sd_poll 10 ticks_since $((t_reload + 300000000)) 7
median() {      # median length in ns of the ticks that start where $1 says
        csql "SELECT dur FROM tick WHERE $1 ORDER BY dur LIMIT 1 OFFSET (SELECT count(*) / 2 FROM tick WHERE $1)"
}
before=$(median "t >= $t_campaign AND t < $t_reload")
after=$(median "t >= $t_reload + 300000000")
diag "median tick before the reload ${before} ns, after ${after} ns"
[ "${before:-0}" -gt 400000000 ] && [ "${before:-0}" -lt 600000000 ] &&
        [ "${after:-0}" -gt 150000000 ] && [ "${after:-0}" -lt 300000000 ]
ok $? "new samples are ~200ms apart, the earlier ones ~500ms"
gaps=$(csql "SELECT count(*) FROM tick a JOIN tick b ON b.id = a.id + 1 WHERE b.t - (a.t + a.dur) > 5000000")
[ "$gaps" = 0 ]; ok $? "no gap between intervals across the reload"
sd scalemonctl --format json status | jpy '[r["name"] for r in d["open_runs"]]' | grep -qx campaign
ok $? "the open run survived the reload"

# --- a broken configuration on reload is refused ---
# line 4, after the comment, commit_interval and interval
printf 'metrics = context_switches, no_such_metric\n' | sd sh -c "cat >> $CONF"
sd systemctl reload scalemon.service; ok $? "systemctl reload with a broken configuration"
sd_poll 10 journal_has "reload refused, keeping the running configuration: $CONF:4: "
ok $? "journal names file:line: $(journal | grep 'reload refused')"
[ "$(sd systemctl is-active scalemon.service)" = active ] && [ "$(show MainPID)" = "$pid" ]
ok $? "still active, same process"
status_text_is "every 200ms" && [ "$(csql "SELECT value FROM meta WHERE key = 'interval_ns'")" = 200000000 ]
ok $? "the old configuration stays in force: $(show StatusText)"
out=$(as_tester scalemonctl run stop campaign 2>&1); ok $? "the run across both reloads stops: $out"
[ "$(sd scalemonctl --format json runs | jpy '[r["status"] for r in d["runs"] if r["name"] == "campaign"][0]')" = done ]
ok $? "and is done"

# --- systemd-analyze security ---
sec=$(sd systemd-analyze security --no-pager scalemon.service 2>&1)
level=$(echo "$sec" | sed -n 's/.*Overall exposure level for scalemon.service: \([0-9.]*\).*/\1/p')
echo "$sec" | grep '✗' | sed 's/  */ /g; s/^/# exposed: /'
python3 -c "import sys; sys.exit(0 if float('${level:-99}') <= 1.0 else 1)"
ok $? "systemd-analyze security: overall exposure ${level:-unknown} (at most 1.0)"

# --- another control group, one the user scalemon is in ---
sd mkdir -p /run/systemd/system/scalemon.service.d
printf '[Service]\nSupplementaryGroups=users\n' | sd sh -c 'cat > /run/systemd/system/scalemon.service.d/group.conf'
printf '# written by systemd-service.sh\ncommit_interval = 1s\ninterval = 200ms\ncontrol_group = users\n' | sd sh -c "cat > $CONF"
sd systemctl daemon-reload && sd systemctl restart scalemon.service; ok $? "restart with control_group = users"
sock_is() { [ "$(sd stat -c '%U:%G %a' /run/scalemon/control.sock 2>/dev/null)" = "$1" ]; }
sd_poll 10 sock_is "scalemon:users 660"
ok $? "the socket is given to group users: $(sd stat -c '%U:%G %a' /run/scalemon/control.sock)"
! journal_has "cannot give the control socket"; ok $? "no notice: chown(2) passes the system call filter"
out=$(sd setpriv --reuid=nobody --regid=nogroup --groups=users scalemonctl run start by-users 2>&1) &&
        sd scalemonctl run stop by-users >/dev/null
ok $? "nobody with supplementary group users starts a run ($out)"
out=$(as_nobody scalemonctl run start intruder 2>&1); rc=$?
[ $rc = 1 ] && echo "$out" | grep -q "members of group users may use it"; ok $? "without it: exit $rc, $out"
sd rm -r /run/systemd/system/scalemon.service.d && sd systemctl daemon-reload

# --- stop ---
sd systemctl stop scalemon.service; ok $? "systemctl stop scalemon"
[ "$(sd systemctl is-active scalemon.service)" = inactive ]; ok $? "is-active: inactive"
[ "$(show Result)" = success ] && [ "$(show ExecMainStatus)" = 0 ] && journal_has "^stopped$"
ok $? "clean exit: Result=$(show Result), exit status $(show ExecMainStatus), \"stopped\" logged"
! journal | grep -q "Sanitizer"; ok $? "no sanitizer report in the journal"
[ "$(csql 'PRAGMA integrity_check')" = ok ]; ok $? "database passes integrity_check"
[ -z "$(csql "SELECT value FROM meta WHERE key = 'daemon_pid'")" ]; ok $? "and says no daemon holds it"
! sd test -e /run/scalemon/control.sock; ok $? "control socket removed"
out=$(sd scalemonctl status 2>&1)
echo "$out" | grep -q "not running"; ok $? "scalemonctl status: $(echo "$out" | head -n 1)"

# --- make uninstall ---
sd make -C "$top_builddir" uninstall >"$TMP/uninstall.log" 2>&1; ok $? "make uninstall"
left=
for f in $installed; do sd test -e "$f" && left="$left $f"; done
[ -n "$installed" ] && [ -z "$left" ]; ok $? "removes every file make install put${left:+; left:$left}"
sd systemctl daemon-reload
! sd systemctl cat scalemon.service >/dev/null 2>&1; ok $? "systemd no longer knows scalemon.service"

diag "the whole test took $(( ($(date +%s%N) - t0) / 1000000 )) ms"
finish
