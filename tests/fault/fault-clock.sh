#!/bin/bash
# fault-clock.sh - the wall clock jumps back an hour, then forward by more
# than two hours, while runs are open.  Tick lengths and run durations are
# measured on CLOCK_MONOTONIC and must not notice; tick times follow the
# wall clock as it was set; run totals stay exact.
#
# FAKE: this machine's clock is never changed.  The jump is made through
# the test seam SCALEMON_TEST_REALTIME_OFFSET_FILE (lib/timeutil.c): a file
# holding a signed offset in ns that scalemond and scalemonctl add to
# CLOCK_REALTIME.  This test's own clock (date +%s%N) is not shifted: it is
# the independent measure of elapsed time.
. "${srcdir:-.}/tests/lib.sh"
need_root
need_seam SCALEMON_TEST_REALTIME_OFFSET_FILE "$SCALEMOND" "$SCALEMONCTL"
command -v sqlite3 >/dev/null || skip_all "sqlite3 command-line tool not installed"

H=3600000000000                 # 1 h in ns
BACK=$((-H))                    # phase B: the clock set back an hour
FWD=$((H + 600000000000))       # phase C: then forward to an hour and ten minutes ahead
OFF=$TMP/realtime-offset
export SCALEMON_TEST_REALTIME_OFFSET_FILE=$OFF
# replace, not rewrite: the seam re-reads the file when its inode changes
setoff() { echo "$1" > "$OFF.new" && mv "$OFF.new" "$OFF"; }
setoff 0

N=3000                          # pipe round trips per phase
INTERVAL=100ms
t0=$(now_ns)
start_daemon
sleep 0.3

# phase A: true time
a0=$(now_ns)
ctl run start both >/dev/null; ok $? "run 'both' started"
ctl run start back >/dev/null; ok $? "run 'back' started"
a1=$(now_ns)
"$WL/wl-pingpong" $N >/dev/null
sleep 1

# phase B: an hour earlier
j1a=$(now_ns); setoff $BACK; j1b=$(now_ns)
"$WL/wl-pingpong" $N >/dev/null
sleep 1.2
qb=$(ctl --format json query context_switches --since -1m)
ok $? "query --since -1m after the clock went back"
b0=$(now_ns)
ctl run stop back --score x=1 >/dev/null; ok $? "run 'back' stopped (the clock went back during it)"
ctl run start fwd >/dev/null; ok $? "run 'fwd' started"
b1=$(now_ns)
sleep 0.5

# phase C: an hour and ten minutes later than true time
j2a=$(now_ns); setoff $FWD; j2b=$(now_ns)
"$WL/wl-pingpong" $N >/dev/null
sleep 1.2
c0=$(now_ns)
ctl run stop fwd --score x=2 >/dev/null; ok $? "run 'fwd' stopped (the clock went forward during it)"
ctl run stop both --score x=3 >/dev/null; ok $? "run 'both' stopped"
c1=$(now_ns)
qc=$(ctl --format json query context_switches --since -1m)
ok $? "query --since -1m after the clock went forward"
t_end=$(now_ns)
kill -0 "$DAEMON_PID"; ok $? "daemon kept running"

# --- ticks: lengths on the monotonic clock, times on the wall clock ---
iv=$(interval_ns)
read -r nt mind maxd < <(sql "SELECT count(*), min(dur), max(dur) FROM tick" | tr '|' ' ')
diag "$nt ticks, dur min ${mind}ns max ${maxd}ns (interval ${iv}ns)"
[ "$mind" -gt 0 ]; ok $? "no tick has a negative or zero length (min $mind ns)"
# a snapshot cuts a tick short, a busy machine makes one longer: anything
# near the jumps (1 h, 2 h 10 min) would be far above 2 s
[ "$maxd" -lt 2000000000 ]; ok $? "no tick is as long as a clock jump (max $maxd ns)"
sumd=$(sql "SELECT sum(dur) FROM tick")
[ "$sumd" -le $((t_end - t0)) ]; ok $? "the ticks' lengths add up to no more than the time the test took ($sumd <= $((t_end - t0)) ns)"

# every tick starts on the wall clock as it was set at that moment: phase A
# true time, B an hour earlier, C 70 minutes later (a tick that starts while
# the offset changes may be in either neighbour)
inA="t BETWEEN $t0 AND $j1b"
inB="t BETWEEN $((j1a + BACK)) AND $((j2b + BACK))"
inC="t BETWEEN $((j2a + FWD)) AND $((t_end + FWD))"
read -r nA nB nC nX < <(sql "SELECT sum($inA), sum($inB), sum($inC), sum(NOT ($inA OR $inB OR $inC)) FROM tick" | tr '|' ' ')
diag "ticks by wall-clock phase: A $nA, B $nB, C $nC, elsewhere $nX"
[ "$nX" = 0 ]; ok $? "every tick time follows the wall clock as set ($nX elsewhere)"
[ "$nA" -ge 5 ] && [ "$nB" -ge 5 ] && [ "$nC" -ge 5 ]; ok $? "ticks in each of the three phases ($nA, $nB, $nC)"
# the stored times of 'back' are wall-clock times: it ended before it started
wb=$(sql "SELECT end - start FROM run WHERE name = 'back'")
[ "$wb" -lt $((BACK + 60000000000)) ]; ok $? "run 'back' stored end - start is the wall clock's ($wb ns)"

# --- run durations: positive, equal to the monotonic time elapsed ---
rj=$(ctl --format json runs)
rp=$(ctl --format json report)
check_dur() {   # check_dur RUN LO_NS HI_NS: duration_s within [LO, HI] (+-2ms)
        local run=$1 lo=$2 hi=$3 dj dr
        dj=$(echo "$rj" | jpy "[r['duration_s'] for r in d['runs'] if r['name'] == '$run'][0]")
        dr=$(echo "$rp" | jpy "[r['duration_s'] for r in d['runs'] if r['name'] == '$run'][0]")
        diag "$run: duration_s runs $dj, report $dr; measured by the test between $lo and $hi ns"
        awk -v d="$dj" -v lo="$lo" -v hi="$hi" 'BEGIN { exit !(d > 0 && d * 1e9 >= lo - 2e6 && d * 1e9 <= hi + 2e6) }'
        ok $? "runs: $run lasted the monotonic time elapsed ($dj s)"
        awk -v d="$dr" -v e="$dj" 'BEGIN { exit !(d == e) }'
        ok $? "report: $run has the same duration ($dr s)"
}
check_dur back $((b0 - a1)) $((b1 - a0))
check_dur fwd $((c0 - b1)) $((c1 - b0))
check_dur both $((c0 - a1)) $((c1 - a0))
ctl runs | grep -q -- '-[0-9.]*s\b'; ok $((! $?)) "the runs table shows no negative duration"

# --- totals: exact whatever the clock did ---
for run in back fwd both; do
        rid=$(sql "SELECT id FROM run WHERE name = '$run'")
        for m in context_switches cpu_idle cpu_system; do
                sys=$(sql "SELECT value FROM run_totals WHERE run = '$run' AND metric = '$m' AND level = 'system'")
                cpus=$(sql "SELECT total(value) FROM run_totals WHERE run = '$run' AND metric = '$m' AND level = 'cpu'")
                smp=$(sql "SELECT total(s.value) * m.scale FROM sample_all s JOIN metric m ON m.id = s.metric JOIN run r ON r.id = $rid
                           WHERE m.name = '$m' AND s.tick > r.start_tick AND s.tick <= r.end_tick")
                awk -v a="$sys" -v b="$cpus" -v c="$smp" 'BEGIN { d = a - b; e = a - c; exit !(a != "" && d < 1e-9 && d > -1e-9 && e < 1e-9 && e > -1e-9) }'
                ok $? "$run $m: system total $sys = sum of CPUs $cpus = sum of its samples $smp"
        done
done
cs=$(sql "SELECT value FROM run_totals WHERE run = 'both' AND metric = 'context_switches' AND level = 'system'")
[ "${cs%.*}" -ge $((3 * 2 * N)) ]; ok $? "run 'both' counted the three workloads' context switches ($cs >= $((6 * N)))"

# --- WHEN after the jumps: relative to the clock as set now ---
# after going back, -1m selects phase B's ticks only (phase A's lie an hour
# in the future, after --until now); after going forward, phase C's only
nb=$(echo "$qb" | jpy "len(d['points'])")
bad=$(echo "$qb" | python3 -c '
import json, sys, datetime
d = json.load(sys.stdin); lo, hi = int(sys.argv[1]), int(sys.argv[2])
ts = [int(datetime.datetime.strptime(p["time"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc).timestamp() * 1e9) for p in d["points"]]
print(sum(1 for t in ts if not lo - 1e9 <= t <= hi + 1e9))' $((j1a + BACK)) $((b1 + BACK)))
[ "$nb" -gt 0 ] && [ "$bad" = 0 ]; ok $? "query --since -1m after going back: $nb points, all from after the jump ($bad not)"
nc=$(echo "$qc" | jpy "len(d['points'])")
bad=$(echo "$qc" | python3 -c '
import json, sys, datetime
d = json.load(sys.stdin); lo, hi = int(sys.argv[1]), int(sys.argv[2])
ts = [int(datetime.datetime.strptime(p["time"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc).timestamp() * 1e9) for p in d["points"]]
print(sum(1 for t in ts if not lo - 1e9 <= t <= hi + 1e9))' $((j2a + FWD)) $((t_end + FWD)))
nCnow=$(sql "SELECT count(*) FROM tick WHERE $inC")
diag "query --since -1m after going forward: $nc points; $nCnow ticks in phase C at the end"
[ "$nc" -gt 0 ] && [ "$bad" = 0 ] && [ "$nc" -le "$nCnow" ]; ok $? "query --since -1m after going forward: $nc points, all from after the jump ($bad not)"

check "daemon stops cleanly" -- stop_daemon
finish
