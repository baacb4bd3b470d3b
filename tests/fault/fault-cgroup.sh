#!/bin/bash
# fault-cgroup.sh - the run's own cgroup under abuse, at 100 ms.  Someone
# else moves the command out of its run's cgroup and removes the
# directory mid-run; someone else freezes it for a second (cgroup.freeze)
# and thaws it: each run ends with its command, done, with a mark that
# says what happened and when, logged once, and no warning about a
# cgroup left behind.  Then 1,000 `run exec` in a row: every one done,
# no cgroup directory and no scope left, no descriptor leaked by the
# daemon, its ticks on time.
. "${srcdir:-.}/tests/lib.sh"
need_root
CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
[ -n "$CG2" ] || skip_all "no cgroup2 mount"
N=${CGROUP_RUNS:-1000}
INTERVAL=100ms
start_daemon
sleep 0.3
[ -d "$CG2/scalemon" ] || ctl run exec probe -- true >/dev/null
[ -d "$CG2/scalemon" ] || skip_all "scalemond makes no run cgroup under $CG2 here"
subdirs() { find "$CG2/scalemon" -mindepth 1 -maxdepth 1 -type d | wc -l; }
scopes() {
        [ -d /run/systemd/system ] || { echo 0; return; }
        systemctl list-units --all --plain --no-legend 'scalemon-run-*.scope' 2>/dev/null | wc -l
}
# (a cgroup file's size is 0 whatever it holds: read it)
has_procs() { [ -n "$(cat "$CG2/scalemon/$1/cgroup.procs" 2>/dev/null)" ]; }
marks() { ctl --format json report --since "$1" --until "$1" | jpy '"|".join(m["text"] for m in d["runs"][0]["marks"])'; }

# --- removed by someone else mid-run ---
ctl run exec cg-rm -- sleep 1.5 >/dev/null 2>"$TMP/rm.err" & EX=$!
for _ in $(seq 100); do has_procs cg-rm && break; sleep 0.01; done
sleep 0.3
for p in $(cat "$CG2/scalemon/cg-rm/cgroup.procs"); do echo "$p" > "$CG2/cgroup.procs"; done
rmdir "$CG2/scalemon/cg-rm"; ok $? "the command moved out and its run's cgroup removed, mid-run"
wait $EX; ok $? "run exec ends with its command"
st=$(ctl --format json runs --since cg-rm --until cg-rm | jpy 'd["runs"][0]["status"]')
m=$(marks cg-rm)
[ "$st" = done ] && echo "$m" | grep -q "^its cgroup $CG2/scalemon/cg-rm was removed by someone else: its own counters stop here$"
ok $? "the run is done, and its mark says why its own counters stop: $m"
n=$(grep -c "run cg-rm: its cgroup .* was removed" "$TMP/daemon.log")
! grep -q "run cg-rm: its cgroup stays" "$TMP/daemon.log" && [ "$n" = 1 ]; ok $? "logged once ($n), no warning of a cgroup left"

# --- frozen by someone else for a second ---
ctl run exec cg-fz -- sleep 1 >/dev/null 2>&1 & EX=$!
for _ in $(seq 100); do has_procs cg-fz && break; sleep 0.01; done
echo 1 > "$CG2/scalemon/cg-fz/cgroup.freeze"; ok $? "its cgroup frozen mid-run"
sleep 1
echo 0 > "$CG2/scalemon/cg-fz/cgroup.freeze"
wait $EX; ok $? "thawed, the command ends"
st=$(ctl --format json runs --since cg-fz --until cg-fz | jpy 'd["runs"][0]["status"]')
m=$(marks cg-fz)
gap=$(ctl --format json report --since cg-fz --until cg-fz | jpy '"%.3f" % (d["runs"][0]["marks"][1]["offset_s"] - d["runs"][0]["marks"][0]["offset_s"])')
[ "$st" = done ] && [ "$m" = "its cgroup $CG2/scalemon/cg-fz was frozen by someone else (cgroup.freeze)|its cgroup $CG2/scalemon/cg-fz was thawed" ] &&
        awk -v g="$gap" 'BEGIN { exit !(g >= 0.9 && g <= 1.3) }'
ok $? "done, its marks say when: frozen, then thawed ${gap} s later (1 s): $m"
[ "$(subdirs)" = 0 ]; ok $? "no cgroup directory left ($(subdirs))"

# --- N run exec in a row ---
fd0=$(ls /proc/"$DAEMON_PID"/fd | wc -l)
t0=$(now_ns) fails=0
for i in $(seq "$N"); do
        ctl run exec "cg-$i" -- true >/dev/null 2>>"$TMP/many.err" || fails=$((fails + 1))
done
t1=$(now_ns)
diag "$N run exec in $(( (t1 - t0) / 1000000 )) ms"
fd1=$(ls /proc/"$DAEMON_PID"/fd | wc -l)
[ "$fails" = 0 ]; ok $? "$N run exec in a row, $fails failed"
done_n=$(ctl --format json runs --since "$(ns_to_when "$t0")" | jpy 'sum(1 for r in d["runs"] if r["name"].startswith("cg-") and r["status"] == "done")')
[ "$done_n" = "$N" ]; ok $? "$done_n runs done"
[ "$(subdirs)" = 0 ] && [ "$(scopes)" = 0 ]; ok $? "no cgroup directory ($(subdirs)) and no scope ($(scopes)) left"
[ "$fd1" -le "$fd0" ]; ok $? "no descriptor leaked by scalemond: $fd0 before, $fd1 after"
late=$(ctl --format json status | jpy 'd["daemon"]["retention"]["tick_late_max_us"]')
if grep -q '^SAN_CFLAGS = .*-fsanitize=address' "$top_builddir/Makefile" 2>/dev/null; then
        skip_one "tick lateness is judged in the plain build" -- "ticks on time (latest ${late} us late)"
else
        [ "$late" -lt 100000 ]; ok $? "ticks on time: the latest ran ${late} us late (interval 100 ms)"
fi
! grep -q "its cgroup stays" "$TMP/daemon.log"; ok $? "no cgroup left behind said in the log"
finish
