#!/bin/bash
# live-simulate.sh - scalemond --simulate-cpus N: the real sampler-to-store
# path for more CPUs than this machine has.  Simulated CPU c replays real
# CPU c % R (R CPUs online) with each counter multiplied by a fixed factor
# in [0.5, 1.5), 1 for c < R; CPU c is on node c / 64.
. "${srcdir:-.}/tests/lib.sh"
need_root
command -v sqlite3 >/dev/null || skip_all "sqlite3 command-line tool not installed"
R=$(getconf _NPROCESSORS_ONLN)

# bad values are refused with one line, before anything starts
for v in 0 8193 abc 12x; do
        "$SCALEMOND" --foreground --db "$TMP/bad.db" --socket "$TMP/bad.sock" --simulate-cpus "$v" >"$TMP/bad.out" 2>&1
        rc=$?
        [ $rc = 2 ] && [ "$(wc -l <"$TMP/bad.out")" = 1 ] && grep -q "1..8192" "$TMP/bad.out"
        ok $? "--simulate-cpus $v: exit 2 with one line ($rc: $(cat "$TMP/bad.out"))"
done
"$SCALEMOND" --help | grep -q -- "--simulate-cpus N for benchmarks and tests only"; ok $? "--help says what it is for"

N=64
start_daemon --simulate-cpus $N
grep -q "simulating $N CPUs on 1 nodes" "$TMP/daemon.log"; ok $? "the log says it simulates"
[ "$(sql 'SELECT count(*), count(DISTINCT node), min(cpu), max(cpu), sum(online) FROM cpu')" = "$N|1|0|$((N - 1))|$N" ]
ok $? "cpu table: $N CPUs online on 1 node ($(sql 'SELECT count(*), count(DISTINCT node) FROM cpu'))"
[ "$(sql 'SELECT ncpus, nnodes FROM host')" = "$N|1" ]; ok $? "host: $N CPUs, 1 node"
st=$(ctl --format json status)
[ "$(echo "$st" | jpy '(d["cpus"]["online"], d["cpus"]["total"], d["host"]["nodes"])')" = "($N, $N, 1)" ]
ok $? "status reports $N CPUs online, 1 node"

sleep 0.3
ctl run start sim1 >/dev/null; ok $? "run started"
# some work on every real CPU, so every counter moves
busy=
for _ in $(seq "$R"); do timeout 2 sh -c 'while :; do :; done' & busy="$busy $!"; done
"$WL/wl-pingpong" 20000 >/dev/null
sleep 1.5
wait $busy
ctl run stop sim1 >/dev/null; ok $? "run stopped"
wait_flushed "$(now_ns)"

locs() {        # locs METRIC,...: "count|min|max" of the CPUs with rows
        local in; in=$(echo "$1" | sed "s/[^,]*/'&'/g")
        sql "SELECT count(DISTINCT s.loc), min(s.loc), max(s.loc) FROM sample_all s JOIN metric m ON m.id = s.metric
             WHERE m.name IN ($in)"
}
[ "$(locs context_switches)" = "$N|0|$((N - 1))" ]; ok $? "context_switches rows for CPUs 0..$((N - 1)) ($(locs context_switches))"
t=$(locs cpu_user,cpu_nice,cpu_system,cpu_idle)
[ "$t" = "$N|0|$((N - 1))" ]; ok $? "cpu time rows for CPUs 0..$((N - 1)) ($t)"
t=$(sql "SELECT count(*) FROM tick"); diag "$t ticks written"

# exact totals: system = sum over CPUs = sum of the run's samples
rid=$(sql "SELECT id FROM run WHERE name = 'sim1'")
for m in context_switches cpu_migrations cpu_system; do
        sys=$(sql "SELECT value FROM run_totals WHERE run = 'sim1' AND metric = '$m' AND level = 'system'")
        cpus=$(sql "SELECT total(value) FROM run_totals WHERE run = 'sim1' AND metric = '$m' AND level = 'cpu'")
        node=$(sql "SELECT total(value) FROM run_totals WHERE run = 'sim1' AND metric = '$m' AND level = 'node'")
        ncpu=$(sql "SELECT count(*) FROM run_totals WHERE run = 'sim1' AND metric = '$m' AND level = 'cpu'")
        smp=$(sql "SELECT total(s.value) * m.scale FROM sample_all s JOIN metric m ON m.id = s.metric JOIN run r ON r.id = $rid
                   WHERE m.name = '$m' AND s.tick > r.start_tick AND s.tick <= r.end_tick")
        awk -v a="$sys" -v b="$cpus" -v c="$smp" -v n="$node" \
                'BEGIN { exit !(a > 0 && a == b && a == n && (a - c < 1e-9 && c - a < 1e-9)) }'
        ok $? "$m: system total $sys = sum of $ncpu CPUs $cpus = node $node = sum of the run's samples $smp"
done

# nothing absurd: each CPU's context switches per tick are those of the
# CPU it replays times a factor in [0.5, 1.5) (1 for its first copy)
cs="SELECT s.tick, s.loc, s.value FROM sample_all s JOIN metric m ON m.id = s.metric WHERE m.name = 'context_switches'"
q=$(sql "WITH cs AS ($cs) SELECT min(a.value * 1.0 / b.value), max(a.value * 1.0 / b.value), count(*),
                sum(a.loc < $R AND a.value != b.value)
         FROM cs a JOIN cs b ON b.tick = a.tick AND b.loc = a.loc % $R WHERE b.value >= 100")
diag "context_switches, simulated / replayed CPU per tick: min|max|pairs|first copies differing = $q"
echo "$q" | awk -F'|' '{ exit !($1 >= 0.49 && $2 <= 1.51 && $3 > 0 && $4 == 0) }'; ok $? "per-tick ratios within 0.5..1.5"
echo "$q" | awk -F'|' '{ exit !($1 < 0.8 && $2 > 1.2) }'; ok $? "CPUs differ from the one they replay"
# cpu time: no CPU has much more than 1.5 s of it per second, over the run
q=$(sql "SELECT max(v) / (SELECT (end - start) / 1e9 FROM run WHERE name = 'sim1') FROM
           (SELECT loc, sum(value) AS v FROM run_totals WHERE run = 'sim1' AND level = 'cpu' AND metric LIKE 'cpu\_%' ESCAPE '\'
            AND metric != 'cpu_migrations' GROUP BY loc)")
awk -v q="$q" 'BEGIN { exit !(q > 0.3 && q < 1.6) }'; ok $? "cpu time per CPU over the run within 0.3..1.6 s/s (max $q)"
# deltas never negative (monotonic raw values)
[ "$(sql 'SELECT count(*) FROM sample_all WHERE value < 0')" = 0 ]; ok $? "no negative delta"

check "daemon stops cleanly" -- stop_daemon
[ "$(sql 'PRAGMA integrity_check')" = ok ]; ok $? "integrity_check"

# 130 CPUs: nodes of 64, the last one partial
DB=$TMP/s130.db
N=130
start_daemon --simulate-cpus $N
sleep 1
check "daemon stops cleanly" -- stop_daemon
[ "$(sql 'SELECT count(*), count(DISTINCT node), max(node) FROM cpu')" = "$N|3|2" ]
ok $? "$N CPUs on 3 nodes ($(sql 'SELECT count(*), count(DISTINCT node), max(node) FROM cpu'))"
[ "$(sql 'SELECT group_concat(node) FROM cpu WHERE cpu IN (0, 63, 64, 127, 128, 129) ORDER BY cpu')" = "0,0,1,1,2,2" ]
ok $? "CPU c on node c / 64"
[ "$(sql 'SELECT nnodes FROM host')" = 3 ]; ok $? "host: 3 nodes"
[ "$(locs context_switches)" = "$N|0|$((N - 1))" ]; ok $? "context_switches rows for CPUs 0..$((N - 1))"
if [ "$(sql "SELECT available FROM metric WHERE name = 'numa_hit'")" = 1 ]; then
        [ "$(locs numa_hit)" = "3|0|2" ]; ok $? "numa_hit rows for nodes 0..2 ($(locs numa_hit))"
else
        echo "ok $((tap_n += 1)) # SKIP numa_hit unavailable here"
fi
finish
