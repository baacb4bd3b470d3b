#!/bin/bash
# live-cgroup.sh - the run's own counters.  A pipe ping-pong runs inside
# `run exec` (in the run's own cgroup) under perf stat, which counts that
# command's context switches per process (the independent truth), while a
# second ping-pong runs outside the run: the run's own context switches
# must be within 5% of perf stat's, and the machine's total must hold
# both.  Then a benchmark started some other way (run start --cgroup), a
# bad --cgroup, and run exec where no cgroup can be made (the cgroup2
# mount read-only in a mount namespace): the run still runs, and says once
# why it has no counters of its own.
. "${srcdir:-.}/tests/lib.sh"
need_root
command -v sqlite3 >/dev/null || skip_all "sqlite3 command-line tool not installed"
command -v perf >/dev/null || skip_all "perf (linux-perf) not installed"
CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
[ -n "$CG2" ] || skip_all "no cgroup2 mount"
N=50000

start_daemon
sleep 0.3
setsid "$WL/wl-pingpong" 100000000 >/dev/null & OUT=$!     # its own group: both processes stop with it
sleep 0.2
ctl run exec cg-pp -- perf stat -x, -e context-switches -o "$TMP/perfstat" -- "$WL/wl-pingpong" $N >"$TMP/out" 2>"$TMP/err"
ok $? "run exec of a ping-pong under perf stat, with another ping-pong outside"
kill -- -$OUT; wait $OUT 2>/dev/null
! grep -q "unavailable" "$TMP/err"; ok $? "no word of unavailable own counters: $(head -1 "$TMP/err")"
ps=$(awk -F, '$3 == "context-switches" { print $1 }' "$TMP/perfstat")
j=$(ctl --format json report --since cg-pp --until cg-pp)
own=$(echo "$j" | jpy 'round(d["runs"][0]["metrics"]["context_switches"]["own_total"])')
tot=$(echo "$j" | jpy 'round(d["runs"][0]["metrics"]["context_switches"]["total"])')
share=$(echo "$j" | jpy 'd["runs"][0]["metrics"]["context_switches"]["own_share"]')
dur=$(echo "$j" | jpy 'd["runs"][0]["duration_s"]')
diag "context switches: run's own $own, perf stat on the command $ps, machine $tot (share $share) over ${dur}s"
[ "$ps" -ge $((2 * N)) ]; ok $? "perf stat saw at least 2N switches ($ps >= $((2 * N)))"
python3 -c "import sys; sys.exit(0 if abs($own - $ps) <= 0.05 * $ps else 1)"
ok $? "the run's own context switches within 5% of perf stat's ($own vs $ps)"
# the outside ping-pong switches about as often as the inside one: the
# machine's total holds both, well above the run's own
python3 -c "import sys; sys.exit(0 if $tot >= 1.5 * $own else 1)"
ok $? "the machine's total holds both ping-pongs ($tot >= 1.5 x $own)"
python3 -c "import sys; sys.exit(0 if 0 < $share < 0.67 else 1)"
ok $? "own_share is the run's part of it ($share)"
vol=$(echo "$j" | jpy 'd["runs"][0]["voluntary_switches"]')
inv=$(echo "$j" | jpy 'd["runs"][0]["involuntary_switches"]')
diag "run exec's wait4: $vol voluntary, $inv involuntary"
python3 -c "import sys; sys.exit(0 if abs($vol + $inv - $ps) <= 0.05 * $ps else 1)"
ok $? "the tasks' voluntary + involuntary switches within 5% of perf stat's ($vol + $inv vs $ps)"
n=$(sql "SELECT count(*) FROM run_totals WHERE run = 'cg-pp' AND level = 'cgroup'")
[ "$n" -ge 5 ]; ok $? "own totals stored at level 'cgroup' ($n rows)"
ps_sum=$(sql "SELECT CAST(sum(o.value) AS INTEGER) FROM run_own_sample o JOIN run r ON r.id = o.run
              JOIN metric m ON m.id = o.metric WHERE r.name = 'cg-pp' AND m.name = 'context_switches'")
nt=$(sql "SELECT count(DISTINCT o.tick) FROM run_own_sample o JOIN run r ON r.id = o.run WHERE r.name = 'cg-pp'")
out_of_run=$(sql "SELECT count(*) FROM run_own_sample o JOIN run r ON r.id = o.run
                  WHERE r.name = 'cg-pp' AND (o.tick <= r.start_tick OR o.tick > r.end_tick)")
diag "per tick: $nt ticks, context switches summed $ps_sum (run total $own)"
python3 -c "import sys; sys.exit(0 if 0.99 * $own <= ${ps_sum:-0} <= $own else 1)"
ok $? "the run's own per-tick rows sum to its own total, within 1% (${ps_sum:-none} vs $own)"
[ "$nt" -ge 2 ] && [ "$out_of_run" = 0 ]; ok $? "they lie in the run's ticks ($nt ticks, $out_of_run outside)"
us=$(echo "$j" | jpy 'd["runs"][0]["metrics"]["cpu_system"]["own_total"] + d["runs"][0]["metrics"]["cpu_user"]["own_total"]')
python3 -c "import sys; sys.exit(0 if $us > 0 else 1)"; ok $? "the cgroup's cpu.stat gave its CPU time (${us}s)"
ctl report --since cg-pp --until cg-pp | grep -q "context switches .*, of which the benchmark"
ok $? "report says which share of the context switches was the benchmark's"
# the cgroup's exact CPU time may pass /proc/stat's tick-sampled busy time:
# never the benchmark above the machine without saying so
line=$(ctl report --since cg-pp --until cg-pp | grep "^  cpu time busy:")
python3 - "$line" <<'EOP'
import re, sys
m = re.match(r"  cpu time busy: ([0-9.]+) CPU-s, the benchmark ([0-9.]+) \(user [0-9.]+, system [0-9.]+\), everything else (.*)", sys.argv[1])
busy, own, rest = float(m.group(1)), float(m.group(2)), m.group(3)
ok = rest.startswith("not measurable (the benchmark's cgroup counts its run time exactly, ") if own > busy \
        else re.fullmatch(r"[0-9.]+ CPU-s \(scalemond's own [0-9.]+ CPU-s taken out\)", rest) is not None
sys.exit(0 if ok else 1)
EOP
ok $? "the CPU time split: the benchmark above the machine's busy time only with why ($line)"
# export and import: a run carries its own totals (level cgroup) and its
# tasks' switch counts; the report from another database says the same
ctl export --since cg-pp --until cg-pp >"$TMP/cg.json" &&
        "$SCALEMONCTL" --db "$TMP/imp.db" import "$TMP/cg.json" >/dev/null
ok $? "export of the run, import into another database"
ctl report --since cg-pp --until cg-pp >"$TMP/rep-here.txt"
"$SCALEMONCTL" --db "$TMP/imp.db" report --since cg-pp --until cg-pp >"$TMP/rep-imp.txt"
diff "$TMP/rep-here.txt" "$TMP/rep-imp.txt" | sed 's/^/# /'
grep "of which the benchmark" "$TMP/rep-here.txt" >"$TMP/own-here.txt"
grep "of which the benchmark" "$TMP/rep-imp.txt" >"$TMP/own-imp.txt"
[ -s "$TMP/own-here.txt" ] && cmp -s "$TMP/own-here.txt" "$TMP/own-imp.txt" &&
        [ "$(grep "cpu time" "$TMP/rep-here.txt")" = "$(grep "cpu time" "$TMP/rep-imp.txt")" ]
ok $? "after import, the report's own shares and CPU time split are the same ($(wc -l <"$TMP/own-imp.txt") lines)"
own_json() {
        jpy '[(k, m.get("own_total"), m.get("own_share")) for k, m in sorted(d["runs"][0]["metrics"].items())] + [d["runs"][0]["voluntary_switches"], d["runs"][0]["involuntary_switches"]]'
}
[ "$(ctl --format json report --since cg-pp --until cg-pp | own_json)" = \
  "$("$SCALEMONCTL" --db "$TMP/imp.db" --format json report --since cg-pp --until cg-pp | own_json)" ]
ok $? "and in JSON every own_total, own_share and the tasks' switch counts"
[ ! -d "$CG2/scalemon/cg-pp" ]; ok $? "the run's cgroup is removed at its end"

# a benchmark started some other way, in a cgroup of its own
mkdir -p "$CG2/scalemon-test-$$"
check "run start --cgroup an existing cgroup" -- ctl run start cg-named --cgroup "$CG2/scalemon-test-$$"
sh -c "echo \$\$ > '$CG2/scalemon-test-$$/cgroup.procs'; exec perf stat -x, -e context-switches -o '$TMP/perfstat2' -- '$WL/wl-pingpong' $N" >/dev/null
check "run stop" -- ctl run stop cg-named
own2=$(ctl --format json report --since cg-named --until cg-named | jpy 'round(d["runs"][0]["metrics"]["context_switches"]["own_total"])')
ps2=$(awk -F, '$3 == "context-switches" { print $1 }' "$TMP/perfstat2")
python3 -c "import sys; sys.exit(0 if abs($own2 - ${ps2:-0}) <= 0.05 * ${ps2:-0} else 1)"
ok $? "its own context switches within 5% of perf stat's on the command ($own2 vs ${ps2:-none})"
[ -d "$CG2/scalemon-test-$$" ]; ok $? "a cgroup the user named is left in place"
rmdir "$CG2/scalemon-test-$$"
ctl run start cg-bad --cgroup /tmp >/dev/null 2>"$TMP/err"; rc=$?
[ $rc = 1 ] && [ "$(wc -l <"$TMP/err")" = 1 ]; ok $? "--cgroup /tmp refused in one line: $(cat "$TMP/err")"
! ctl runs 2>/dev/null | grep -q cg-bad; ok $? "and no run was made"
if [ -d /run/systemd/system ]; then
        skip_one "systemd runs here" -- "--unit without systemd"
else
        ctl run start cg-unit --unit nothing.service >/dev/null 2>"$TMP/err"; rc=$?
        [ $rc = 1 ] && [ "$(wc -l <"$TMP/err")" = 1 ] && ! ctl runs 2>/dev/null | grep -q cg-unit
        ok $? "--unit without systemd: one line, exit 1, no run: $(cat "$TMP/err")"
fi
check "daemon stops cleanly" -- stop_daemon

# no cgroup can be made: cgroup2 read-only in this namespace only (a bind
# remount changes this mount, not the superblock others see)
unshare -m bash -c "mount -o remount,bind,ro '$CG2' || exit 77
        '$SCALEMOND' --foreground --db '$TMP/ro.db' --socket '$TMP/ro.sock' >'$TMP/ro.log' 2>&1 & d=\$!
        for i in \$(seq 100); do grep -q started: '$TMP/ro.log' && break; sleep 0.05; done
        '$SCALEMONCTL' --db '$TMP/ro.db' --socket '$TMP/ro.sock' run exec cg-ro -- '$WL/wl-pingpong' 1000 \
                >'$TMP/ro.out' 2>'$TMP/ro.err'; echo \$? >'$TMP/ro.rc'
        kill \$d; wait \$d"
rc=$?
if [ $rc = 77 ]; then
        skip_one "cannot remount cgroup2 read-only in a mount namespace" -- "run exec without a cgroup"
else
        [ "$(cat "$TMP/ro.rc")" = 0 ] && grep -q round_trips=1000 "$TMP/ro.out"
        ok $? "read-only cgroup2: the run still runs (exit $(cat "$TMP/ro.rc"))"
        [ "$(grep -c 'own counters are unavailable' "$TMP/ro.err")" = 1 ] && grep -q "Read-only file system" "$TMP/ro.err"
        ok $? "and says once why: $(cat "$TMP/ro.err")"
        st=$(sqlite3 -readonly "$TMP/ro.db" "SELECT status FROM run WHERE name = 'cg-ro'")
        [ "$st" = done ]; ok $? "the run is recorded ($st)"
fi
finish
