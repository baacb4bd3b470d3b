#!/bin/bash
# live-selfcpu.sh - scalemond_cpu, the daemon's own CPU time (sampler-
# self.c), against the kernel's other account of it: the daemon's
# /proc/PID/stat utime + stime over the same window, while a run exec of
# stress-ng keeps the machine busy and a client asks the daemon for its
# totals in a loop (so that the daemon's own time is many clock ticks, not
# one).  Then report's CPU time split on that run: everything else =
# busy - the benchmark's - scalemond's, the last being the run's stored
# scalemond_cpu, and explain says the same words.
. "${srcdir:-.}/tests/lib.sh"
INTERVAL=20ms
need_root
command -v sqlite3 >/dev/null || skip_all "sqlite3 command-line tool not installed"
command -v stress-ng >/dev/null || skip_all "stress-ng not installed"
CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
[ -n "$CG2" ] || skip_all "no cgroup2 mount: run exec has no cgroup of its own here"
HZ=$(getconf CLK_TCK)
# utime + stime (fields 14 and 15; the command in field 2 may hold spaces)
stat_ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'; }

start_daemon
sleep 0.5
( while :; do ctl --format json status >/dev/null 2>&1; done ) & LOAD=$!
T0=$(now_ns); S0=$(stat_ticks "$DAEMON_PID")
ctl run exec self-cpu --tag test=selfcpu -- stress-ng --cpu 2 --timeout 3 -q >"$TMP/out" 2>"$TMP/err"
rc=$?
S1=$(stat_ticks "$DAEMON_PID"); T1=$(now_ns)
kill "$LOAD"; wait "$LOAD" 2>/dev/null
ok $rc "run exec of stress-ng --cpu 2 for 3 s, a client asking the daemon meanwhile"
grep -q unavailable "$TMP/err" && skip_all "no own counters here: $(grep unavailable "$TMP/err" | head -1)"
wait_flushed "$T1" || bail "the window's ticks were not written"

# the ticks wholly inside the window; what the daemon did in the part of
# a tick at either end is in /proc's count and not in theirs: at most the
# value of the tick that holds that end
q="FROM sample s JOIN metric m ON m.id = s.metric JOIN tick t ON t.id = s.tick WHERE m.name = 'scalemond_cpu'"
read -r rec n < <(sql "SELECT coalesce(sum(s.value), 0), count(*) $q AND t.t >= $T0 AND t.t + t.dur <= $T1" | tr '|' ' ')
ends=$(sql "SELECT coalesce(sum(s.value), 0) $q AND ((t.t < $T0 AND t.t + t.dur > $T0) OR (t.t < $T1 AND t.t + t.dur > $T1))")
kern=$(( (S1 - S0) * 1000000000 / HZ ))
diag "window $(( (T1 - T0) / 1000000 )) ms: scalemond_cpu $rec ns over $n ticks (the two end ticks $ends ns), /proc/$DAEMON_PID/stat $kern ns (HZ $HZ)"
[ "$n" -ge 100 ]; ok $? "scalemond_cpu recorded every tick of the window ($n)"
[ "$kern" -ge $(( 10 * 1000000000 / HZ )) ]; ok $? "the daemon's own time is at least 10 clock ticks ($kern ns)"
# /proc counts whole clock ticks in utime and in stime, at each end: two
# ticks; and the two end ticks' part
tol=$(( 2 * 1000000000 / HZ + ends ))
d=$(( rec - kern )); [ $d -lt 0 ] && d=$(( -d ))
[ $d -le $tol ]; ok $? "scalemond_cpu agrees with /proc/PID/stat utime+stime ($rec vs $kern ns, within $tol)"

# report: everything else = busy - the benchmark's - scalemond's
line=$(ctl report --since self-cpu --until self-cpu | grep -m1 'cpu time busy:')
diag "report: $line"
stored=$(ctl --format json report --since self-cpu --until self-cpu | jpy 'd["runs"][0]["metrics"]["scalemond_cpu"]["total"]')
python3 - "$line" "$stored" <<'PY'
import re, sys
m = re.search(r"busy: ([0-9.]+) CPU-s, the benchmark ([0-9.]+) .*everything else ([0-9.]+) CPU-s "
              r"\(scalemond's own ([0-9.]+) CPU-s taken out\)", sys.argv[1])
if not m:
    print("# no split with scalemond's own in:", sys.argv[1]); sys.exit(1)
busy, own, rest, self_ = map(float, m.groups())
stored = float(sys.argv[2])
ok = abs(rest - (busy - own - self_)) <= 0.015 and abs(self_ - stored) <= 0.005 and self_ > 0
print("# busy %.2f - benchmark %.2f - scalemond %.2f = %.2f; report says %.2f; stored scalemond_cpu %.4f"
      % (busy, own, self_, busy - own - self_, rest, stored))
sys.exit(0 if ok else 1)
PY
ok $? "report: everything else = busy - the benchmark's - scalemond's own, which is the run's scalemond_cpu"
# a sibling with the same tags, for explain
ctl run exec self-cpu-2 --tag test=selfcpu -- stress-ng --cpu 2 --timeout 1 -q >/dev/null 2>&1
ok $? "a sibling run"
ctl explain self-cpu >"$TMP/explain" 2>&1
words=$(echo "$line" | sed 's/^ *//')
tr -s ' \n' '  ' < "$TMP/explain" | grep -qF "$words"
ok $? "explain says the same split in the same words" || sed 's/^/# explain: /' "$TMP/explain" | head -20
finish
