#!/bin/bash
# live-switches.sh - voluntary and involuntary context switches
# (sched:sched_switch counted per CPU, filtered on prev_state), the
# machine's and a run's own, against the kernel's per-task counts
# (voluntary_ctxt_switches / nonvoluntary_ctxt_switches, summed over the
# command's tasks by wait4's rusage, which run exec stores):
#  - a pipe ping-pong blocks on every round trip (voluntary), unless the
#    partner it wakes preempts it first (involuntary): 2N in all;
#  - two CPU hogs pinned on one CPU preempt each other: involuntary, on
#    that CPU.
# The machine's counts must hold every task's, as /proc/*/task/*/status
# summed them inside the run (another ping-pong runs outside it).
. "${srcdir:-.}/tests/lib.sh"
need_root
command -v sqlite3 >/dev/null || skip_all "sqlite3 command-line tool not installed"
command -v taskset >/dev/null || skip_all "taskset (util-linux) not installed"
[ "$(nproc)" -ge 2 ] || skip_all "needs two CPUs (a hog pair pinned on one, the rest elsewhere)"
N=30000

start_daemon
why=$(ctl --format json metrics | jpy "[m.get('why') or 'available' for m in d['metrics'] if m['name'] == 'involuntary_switches'][0]")
[ "$why" = available ] || skip_all "involuntary_switches unavailable here: $why"
sleep 0.3

# every task's voluntary_ctxt_switches, summed from /proc (tasks that exit
# between two readings take theirs with them: the sum of the differences
# is at most what the machine did between them)
cat >"$TMP/procsum.sh" <<'EOS'
cat /proc/[0-9]*/task/[0-9]*/status 2>/dev/null | awk '$1 == "voluntary_ctxt_switches:" { v += $2 }
        $1 == "nonvoluntary_ctxt_switches:" { n += $2 } END { print v + 0, n + 0 }'
EOS
setsid "$WL/wl-pingpong" 100000000 >/dev/null & OUT=$!
sleep 0.2
ctl run exec sw-pp -- sh -c "sh '$TMP/procsum.sh' >'$TMP/before'; '$WL/wl-pingpong' $N; sh '$TMP/procsum.sh' >'$TMP/after'" \
        >/dev/null 2>"$TMP/err"
ok $? "run exec of a ping-pong, another one outside ($(head -1 "$TMP/err"))"
kill -- -$OUT; wait $OUT 2>/dev/null
read -r pv0 pi0 <"$TMP/before"; read -r pv1 pi1 <"$TMP/after"
j=$(ctl --format json report --since sw-pp --until sw-pp)
rv=$(echo "$j" | jpy 'd["runs"][0]["voluntary_switches"]')
ri=$(echo "$j" | jpy 'd["runs"][0]["involuntary_switches"]')
ov=$(echo "$j" | jpy 'round(d["runs"][0]["metrics"]["voluntary_switches"]["own_total"])')
oi=$(echo "$j" | jpy 'round(d["runs"][0]["metrics"]["involuntary_switches"]["own_total"])')
mv=$(echo "$j" | jpy 'round(d["runs"][0]["metrics"]["voluntary_switches"]["total"])')
mi=$(echo "$j" | jpy 'round(d["runs"][0]["metrics"]["involuntary_switches"]["total"])')
mc=$(echo "$j" | jpy 'round(d["runs"][0]["metrics"]["context_switches"]["total"])')
diag "ping-pong: its tasks' own counts (wait4) $rv voluntary, $ri involuntary; the run's cgroup $ov, $oi; the machine $mv, $mi (context switches $mc); every task in /proc, within the run: $((pv1 - pv0)), $((pi1 - pi0))"
[ $((rv + ri)) -ge $((2 * N)) ] && [ "$rv" -ge $((N / 2)) ]
ok $? "the ping-pong's tasks switched at least 2N times ($rv + $ri), many of them voluntarily"
python3 -c "import sys; sys.exit(0 if abs($ov - $rv) <= 0.05 * $rv else 1)"
ok $? "the run's own voluntary switches within 5% of its tasks' voluntary_ctxt_switches ($ov vs $rv)"
python3 -c "import sys; sys.exit(0 if abs($oi - $ri) <= 0.05 * $rv else 1)"
ok $? "and its involuntary ones match nonvoluntary_ctxt_switches, within 5% of all its switches ($oi vs $ri)"
# the machine's counts hold every task's, as /proc summed them inside the
# run (the outside ping-pong's too; the inside one had exited by the
# second reading: its tasks' are wait4's), and leave out only the idle
# task's
pv=$((pv1 - pv0 + rv)); pi=$((pi1 - pi0 + ri))
python3 -c "import sys; sys.exit(0 if $mv >= $pv and $mi >= $pi and $mv + $mi <= $mc else 1)"
ok $? "the machine's voluntary and involuntary switches hold every task's in /proc and the run's ($mv >= $pv, $mi >= $pi), and add up to at most context_switches ($mc)"

# two hogs on CPU 1: each runs until preempted by the other
ctl run exec sw-hog -- taskset -c 1 sh -c 'sh -c "while :; do :; done" & a=$!; sh -c "while :; do :; done" & b=$!
        sleep 2; kill $a $b; wait' >/dev/null 2>"$TMP/err"
ok $? "run exec of two CPU hogs pinned on CPU 1 ($(head -1 "$TMP/err"))"
j=$(ctl --format json report --per cpu --since sw-hog --until sw-hog)
rv=$(echo "$j" | jpy 'd["runs"][0]["voluntary_switches"]')
ri=$(echo "$j" | jpy 'd["runs"][0]["involuntary_switches"]')
oi=$(echo "$j" | jpy 'round(d["runs"][0]["metrics"]["involuntary_switches"]["own_total"])')
ov=$(echo "$j" | jpy 'round(d["runs"][0]["metrics"]["voluntary_switches"]["own_total"])')
c1=$(echo "$j" | jpy 'round([c["total"] for c in d["runs"][0]["metrics"]["involuntary_switches"]["per_cpu"] if c["cpu"] == 1][0])')
c0=$(echo "$j" | jpy 'round([c["total"] for c in d["runs"][0]["metrics"]["involuntary_switches"]["per_cpu"] if c["cpu"] == 0][0])')
diag "hogs: the tasks' own counts (wait4) $rv voluntary, $ri involuntary; the run's cgroup $ov, $oi; the machine's involuntary on CPU 1 $c1, on CPU 0 $c0"
[ "$ri" -ge 100 ] && [ "$ri" -gt "$rv" ]; ok $? "the hogs were preempted ($ri involuntary, $rv voluntary)"
python3 -c "import sys; sys.exit(0 if abs($oi - $ri) <= 0.05 * $ri else 1)"
ok $? "the run's own involuntary switches within 5% of its tasks' nonvoluntary_ctxt_switches ($oi vs $ri)"
python3 -c "import sys; sys.exit(0 if abs($ov - $rv) <= max(0.05 * $rv, 10) else 1)"
ok $? "and its voluntary ones match voluntary_ctxt_switches ($ov vs $rv)"
# (the run's own count also holds the switch that moved taskset to CPU 1
# from where it started: CI saw 500 on CPU 1 against 501, and 3 on CPU 0)
[ $((c0 + c1)) -ge "$oi" ] && [ $((10 * c1)) -ge $((9 * oi)) ]
ok $? "the machine's involuntary switches hold the hogs' ($c0 + $c1 >= $oi), at least 90% of them on CPU 1 ($c1)"
check "daemon stops cleanly" -- stop_daemon
finish
