#!/bin/bash
# live-exporter-restart.sh - the counters a real Prometheus scrapes from
# scalemon-exporter across the two things that restart counters: CPU
# hotplug (the kernel's perf counters of cpu1 are closed and opened anew,
# its /proc/stat line disappears and comes back) and a restart of
# scalemond between two scrapes (every total starts again from 0).  A
# pipe ping-pong runs all along, on both CPUs.
#
# Over the window from a scrape T1 to a scrape T2, with cpu1 offline for
# 2 s and scalemond restarted in between:
#  - Prometheus' rate() equals `scalemonctl query`'s rate (the deltas of
#    the ticks the two scrapes' counters end at, L1 and L2, summed and
#    divided by L2 - L1), per CPU and in total, within 5%.  The part
#    Prometheus cannot see (what the old daemon counted after its last
#    scrape) is said; without it the two agree within 1%;
#  - across hotplug no series resets (resets() is 0 from T1 to the last
#    scrape before the restart), across the restart every one does;
#  - the OpenMetrics created time (NAME_created, which Prometheus keeps
#    as a series of its own) is each daemon's start, as the test timed
#    it, the same for every counter, and moves on with the restart: the
#    spec's "Created MUST be set to the timestamp of the reset".
. "$srcdir/tests/lib.sh"
need_root
command -v prometheus >/dev/null || skip_all "no prometheus binary (Debian package prometheus)"
command -v curl >/dev/null || skip_all "no curl"
need_hotplug 1
restore() { touch "$TMP/stop" 2>/dev/null; echo 1 >"$ONLINE" 2>/dev/null; cleanup; }
trap restore EXIT

start_timed() {        # start_timed VAR: start the daemon, VAR=[before, after] in s
        local a b
        a=$(date +%s.%N); start_daemon; b=$(date +%s.%N)
        eval "$1=\"$a $b\""
}
start_timed START1
start_exporter
start_prometheus "127.0.0.1:$EPORT"
ok 0 "Prometheus scrapes the exporter (scalemon_up 1)"

last_scrape() { q 'timestamp(scalemon_up)' | jpy 'd["data"]["result"][0]["value"][1]'; }
next_scrape() {         # until a scrape newer than $1 is stored; prints its time
        local t i
        for i in $(seq 250); do
                t=$(last_scrape)
                python3 -c "import sys; sys.exit(0 if $t > $1 else 1)" && { echo "$t"; return 0; }
                sleep 0.02
        done
        return 1
}
at() { q "$1" "$2" | jpy 'd["data"]["result"][0]["value"][1]'; }     # at EXPR TIME: one value

( while [ ! -e "$TMP/stop" ]; do "$WL/wl-pingpong" 2000 >/dev/null; sleep 0.02; done ) &
LOAD=$!
T1=$(next_scrape "$(last_scrape)") || bail "no scrape"
T1=$(next_scrape "$T1") || bail "no scrape"
sleep 6
echo 0 >"$ONLINE"; ok $? "cpu$CPU taken offline"
sleep 2
echo 1 >"$ONLINE"; ok $? "cpu$CPU back online"
# seen at the next tick: give a loaded machine 3 s
for _ in $(seq 30); do grep -q "cpu $CPU came online" "$TMP/daemon.log" && break; sleep 0.1; done
grep -q "cpu $CPU went offline" "$TMP/daemon.log" && grep -q "cpu $CPU came online" "$TMP/daemon.log"
ok $? "  scalemond saw it go and come back"
sleep 3
# stop right after a scrape: what the old daemon counts after its last
# scrape is lost to Prometheus (as to any scraper), so keep it short.
# Prometheus scrapes a target every second at the same offset: T1 + k.
sleep "$(python3 -c "import time; t = time.time(); k = int(t - $T1) + 1; print('%.3f' % ($T1 + k + 0.15 - t))")"
TSTOP=$(date +%s.%N)
stop_daemon
sleep 1
start_timed START2
sleep 7
T2=$(next_scrape "$(last_scrape)") || bail "no scrape after the restart"
T2=$(next_scrape "$T2") || bail "no scrape after the restart"
touch "$TMP/stop"; wait "$LOAD"

W_MS=$(python3 -c "print(round(($T2 - $T1) * 1000) + 1)")
L1=$(at scalemon_last_sample_timestamp_seconds "$T1")
S2=$(at scalemon_start_time_seconds "$T2")
# the last scrape before the restart (TB may not be: the stop took a moment)
LB=$(q "scalemon_last_sample_timestamp_seconds[${W_MS}ms]" "$T2" |
     jpy "max(float(v) for t, v in d['data']['result'][0]['values'] if float(t) < $S2)")
L2=$(at scalemon_last_sample_timestamp_seconds "$T2")
TB=$(q "scalemon_last_sample_timestamp_seconds[${W_MS}ms]" "$T2" |
     jpy "max(float(t) for t, v in d['data']['result'][0]['values'] if float(t) < $S2)")
S1=$(at scalemon_start_time_seconds "$TB")
diag "scrapes T1 $T1, TB $TB (the last before the restart), T2 $T2; counters end at $L1, $LB, $L2; starts $S1, $S2"
diag "the old daemon stopped $(python3 -c "print('%.3f' % ($TSTOP - $TB))") s after its last scrape"
wait_flushed "$(python3 -c "print(int($L2 * 1e9))")" || bail "the database lags"
half=$(python3 -c "print($(interval_ns) / 2e9)")
when() { python3 -c "print('@%.3f' % ($1 - $half))"; }
qsum() {        # qsum METRIC SINCE UNTIL [ARGS]: query's values summed
        local m=$1 a=$2 b=$3; shift 3
        ctl --format csv query "$m" --since "$a" --until "$b" "$@" |
                awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "value") c = i; next } { s += $c } END { printf "%.6f\n", s }'
}

# the created times: each daemon's start, as timed here; every counter's the same
for k in 1 2; do
        eval "set -- \$START$k"; a=$1 b=$2
        t=$([ $k = 1 ] && echo "$TB" || echo "$T2")
        s=$([ $k = 1 ] && echo "$S1" || echo "$S2")
        res=$(q '{__name__=~"scalemon_.*_created"}' "$t")
        n=$(echo "$res" | jpy 'len(d["data"]["result"])')
        vals=$(echo "$res" | jpy 'sorted(set(r["value"][1] for r in d["data"]["result"]))')
        ntot=$(q 'count({__name__=~"scalemon_.*_total"})' "$t" | jpy 'd["data"]["result"][0]["value"][1]')
        python3 -c "import sys; v = [float(x) for x in '''$vals'''.split()]; sys.exit(0 if len(v) == 1 and $a <= v[0] <= $b + 0.001 and abs(v[0] - $s) < 1e-6 else 1)"
        ok $? "daemon $k: the $n created series ($ntot totals) all say $vals, its start (timed between $a and $b)"
        [ "$n" = "$ntot" ]; ok $? "daemon $k: every counter has its created time ($n of $ntot)"
done
python3 -c "import sys; sys.exit(0 if $S2 > $S1 + 1 else 1)"
ok $? "the created time moved on with the restart ($S1 -> $S2)"

# resets, from the raw samples Prometheus stored (a value lower than the
# one before it), series by series: none within either daemon's life
# (cpu1's hotplug is in the first), and at the restart every series whose
# total was above 0 starts again below it
q "{__name__=~\"scalemon_.*_total\"}[${W_MS}ms]" "$T2" | python3 -c '
import json, sys
s2 = float(sys.argv[1])
res = json.load(sys.stdin)["data"]["result"]
within = moved = 0
at_restart = [0, 0]
for r in res:
    old = [float(v) for t, v in r["values"] if float(t) < s2]
    new = [float(v) for t, v in r["values"] if float(t) > s2]
    within += any(b < a for a, b in zip(old, old[1:])) + any(b < a for a, b in zip(new, new[1:]))
    moved += any(b != a for a, b in zip(old, old[1:]))
    if old and new and old[-1] > 0:
        at_restart[0] += 1
        at_restart[1] += new[0] < old[-1]
        if not new[0] < old[-1]:
            print("# not reset:", r["metric"], old[-1], "->", new[0], file=sys.stderr)
print(len(res), within, moved, at_restart[0], at_restart[1])' "$S2" >"$TMP/resets" 2>"$TMP/notreset"
sed 's/^# /# at the restart, /' "$TMP/notreset"
read -r nall nwithin nmoved nabove nreset <"$TMP/resets"
[ "$nwithin" = 0 ] && [ "$nmoved" -gt 20 ]
ok $? "no counter reset within a daemon's life, cpu$CPU's hotplug included ($nwithin of $nall series; $nmoved moved)"
[ "$nreset" = "$nabove" ] && [ "$nabove" -gt 20 ]
ok $? "at the restart every counter above 0 starts again below it ($nreset of $nabove)"

# rate() over the window against query's rate
cmp_rate() {    # cmp_rate METRIC SELECTOR [QUERY-ARGS]
        local m=$1 sel=$2; shift 2
        local fam p v vin lost dev
        fam=$(case $m in cpu_*) echo "scalemon_${m}_seconds_total" ;; *) echo "scalemon_${m}_total" ;; esac)
        p=$(q "sum(rate(${fam}${sel}[${W_MS}ms]))" "$T2" | jpy 'float(d["data"]["result"][0]["value"][1])')
        v=$(qsum "$m" "$(when "$L1")" "$(when "$L2")" "$@")
        # what Prometheus could see: the old daemon's ticks to its last scrape, the new one's
        vin=$(python3 -c "print($(qsum "$m" "$(when "$L1")" "$(when "$LB")" "$@") + $(qsum "$m" "@$S2" "$(when "$L2")" "$@"))")
        # rate() is increase() over the window W it was given; query's
        # rate is its sum over the span of the ticks it sums, L2 - L1
        read -r rq dev lost devin < <(python3 -c "
rq = $v / ($L2 - $L1); p = $p
print('%.3f %.2f %.2f %.2f' % (rq, abs(p - rq) / max(rq, 1e-9) * 100, ($v - $vin) / max($v, 1e-9) * 100,
                               abs(p * $W_MS / 1000 - $vin) / max($vin, 1e-9) * 100))")
        python3 -c "import sys; sys.exit(0 if $dev <= 5 else 1)"
        ok $? "$m$sel${*:+ ($*)}: rate() $p/s, query $rq/s over ${W_MS} ms ($dev%)"
        python3 -c "import sys; sys.exit(0 if $devin <= 1 else 1)"
        ok $? "  without the $lost% counted after the last scrape before the restart: within 1% ($devin%)"
}
cmp_rate context_switches ""
for c in 0 $CPU; do
        cmp_rate context_switches "{cpu=\"$c\"}" --cpu "$c"
done
cmp_rate cpu_system ""
cmp_rate cpu_idle "{cpu=\"$CPU\"}" --cpu "$CPU"

sed 's/^/# exporter: /' "$TMP/exporter.log"
finish
