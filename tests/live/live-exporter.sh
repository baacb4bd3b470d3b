#!/bin/bash
# live-exporter.sh - a real Prometheus scrapes scalemon-exporter, which asks
# a real scalemond: after a known workload, Prometheus' increase() of
# scalemon_context_switches_total agrees with `scalemonctl query
# context_switches` over the same interval, per CPU and in total, within
# 5%, and both see at least the 2N switches of N pipe round trips; the
# run appears in scalemon_run_info with its tags and score; promtool
# accepts the 0.0.4 exposition and Prometheus ingests the OpenMetrics one
# (the metadata it keeps says "info", which only OpenMetrics can say).
#
# The same interval on both sides.  Each scrape's counters are scalemond's
# totals at the end of its last interval, and the scrape says when that
# was (scalemon_last_sample_timestamp_seconds).  Take two scrapes, S1
# before the workload and S2 after it, at their own timestamps T1 and T2
# (read from the raw samples Prometheus stored).  increase(x[W]) evaluated
# at T2 with W = T2 - T1 + 1ms covers exactly the samples of S1 and S2
# (extrapolated by 1ms in 10s, 0.01%).  The counters grew, between them,
# by the deltas of the ticks from L1 to L2 (the last-sample times S1 and
# S2 carry), that is of the ticks that start in [L1, L2): what
# `scalemonctl query --since @L1-iv/2 --until @L2-iv/2` sums (ticks are
# selected by their start, every interval iv; the half-interval margins
# absorb the float seconds and the daemon's conversion of the last
# sample's monotonic time to wall-clock time, good to a millisecond).
. "$srcdir/tests/lib.sh"
need_root
command -v prometheus >/dev/null || skip_all "no prometheus binary (Debian package prometheus)"
command -v curl >/dev/null || skip_all "no curl"
N=${N:-40000}

start_daemon
start_exporter
start_prometheus "127.0.0.1:$EPORT"
ok 0 "Prometheus scrapes the exporter (scalemon_up 1)"

# The raw samples (value, timestamp) of the last RANGE seconds.
raw() { q "$1[$2s]" | jpy 'd["data"]["result"][0]["values"]'; }
last_scrape() {         # the newest scrape's timestamp
        q 'timestamp(scalemon_up)' | jpy 'd["data"]["result"][0]["value"][1]'
}
wait_scrapes() {        # wait_scrapes K: until K more scrapes happened
        local t0; t0=$(last_scrape)
        for i in $(seq 100); do
                [ "$(q "count_over_time(scalemon_up[30s]) and timestamp(scalemon_up) > $t0" |
                     jpy 'len(d["data"]["result"])')" = 1 ] &&
                [ "$(python3 -c "print(1 if $(last_scrape) - $t0 >= $1 - 0.5 else 0)")" = 1 ] && return 0
                sleep 0.2
        done
        return 1
}

wait_scrapes 2
T1=$(last_scrape)
ctl run start pp --tag suite=pingpong --tag 'note=say "hi" \ twice' >/dev/null || bail "run start"
"$WL/wl-pingpong" "$N" >/dev/null
ctl run stop pp --score round_trips="$N" >/dev/null || bail "run stop"
sleep 0.3
wait_scrapes 2 || bail "no scrapes after the workload"
T2=$(last_scrape)
L1=$(q 'scalemon_last_sample_timestamp_seconds' "$T1" | jpy 'd["data"]["result"][0]["value"][1]')
L2=$(q 'scalemon_last_sample_timestamp_seconds' "$T2" | jpy 'd["data"]["result"][0]["value"][1]')
W_MS=$(python3 -c "print(round(($T2 - $T1) * 1000) + 1)")
diag "scrapes at $T1 and $T2 ($W_MS ms apart); their counters end at $L1 and $L2"

wait_flushed "$(python3 -c "print(int($L2 * 1e9))")" || bail "the database lags"
half=$(python3 -c "print($(interval_ns) / 2e9)")
since=$(python3 -c "print('@%.3f' % ($L1 - $half))")
until=$(python3 -c "print('@%.3f' % ($L2 - $half))")
query_total() { ctl --format csv query context_switches --since "$since" --until "$until" "$@" |
        awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "value") c = i; next } { s += $c } END { printf "%.0f\n", s }'; }

prom=$(q "increase(scalemon_context_switches_total[${W_MS}ms])" "$T2")
ncpus=$(echo "$prom" | jpy 'len(d["data"]["result"])')
ok $(( ncpus > 0 ? 0 : 1 )) "Prometheus has increase() for $ncpus CPUs"
sum_p=0 sum_q=0 worst=0
for cpu in $(seq 0 $((ncpus - 1))); do
        p=$(echo "$prom" | jpy "[float(r['value'][1]) for r in d['data']['result'] if r['metric']['cpu'] == '$cpu'][0]")
        v=$(query_total --cpu "$cpu")
        dev=$(python3 -c "p, v = $p, $v; print('%.2f' % (abs(p - v) / max(v, 1) * 100))")
        diag "cpu $cpu: Prometheus increase $p, scalemonctl query $v ($dev%)"
        python3 -c "import sys; p, v = $p, $v; sys.exit(0 if abs(p - v) <= 0.05 * max(v, 1) else 1)"
        ok $? "cpu $cpu: increase() agrees with query within 5% ($p vs $v, $dev%)"
        sum_p=$(python3 -c "print($sum_p + $p)")
        sum_q=$((sum_q + v))
done
v=$(query_total)
dev=$(python3 -c "print('%.3f' % (abs($sum_p - $v) / max($v, 1) * 100))")
python3 -c "import sys; sys.exit(0 if abs($sum_p - $v) <= 0.05 * max($v, 1) else 1)"
ok $? "total: increase() $sum_p agrees with query $v within 5% ($dev%)"
ok $(( sum_q == v ? 0 : 1 )) "the per-CPU queries add up to the total ($sum_q = $v)"
python3 -c "import sys; sys.exit(0 if $sum_p >= 2 * $N and $v >= 2 * $N else 1)"
ok $? "both count at least the 2N = $((2 * N)) switches of $N round trips ($sum_p, $v)"
echo "AGREEMENT total prometheus=$sum_p query=$v deviation=$dev%"

info=$(q 'scalemon_run_info{run="pp"}')
check "scalemon_run_info has the run with its tags (quotes and backslash included)" -- \
        test "$(echo "$info" | jpy '[(r["suite"], r["note"], r["status"]) for r in [d["data"]["result"][0]["metric"]]][0]')" \
        = "('pingpong', 'say \"hi\" \\\\ twice', 'done')"
score=$(q 'scalemon_run_score{run="pp",score="round_trips"}' | jpy 'd["data"]["result"][0]["value"][1]')
check "scalemon_run_score has the run's score ($score)" -- test "$score" = "$N"
dur=$(q 'scalemon_run_end_timestamp_seconds{run="pp"} - scalemon_run_start_timestamp_seconds{run="pp"}' |
      jpy 'float(d["data"]["result"][0]["value"][1])')
want=$(ctl --format json runs | jpy '[r["duration_s"] for r in d["runs"] if r["name"] == "pp"][0]')
check "the run's start and end timestamps span its duration ($dur s, runs says $want s)" -- \
        python3 -c "import sys; sys.exit(0 if abs($dur - $want) < 0.01 else 1)"

# Which format Prometheus read: the info type exists only in OpenMetrics.
meta=$(curl -sf "$API/metadata?metric=scalemon_run" | jpy 'd["data"]["scalemon_run"][0]["type"]' 2>/dev/null)
check "Prometheus ingested the OpenMetrics exposition (metadata type of scalemon_run: $meta)" -- test "$meta" = info
health=$(curl -sf "$API/targets" | jpy 'd["data"]["activeTargets"][0]["lastError"]')
check "the target has no scrape error ('$health')" -- test -z "$health"

# The guide's PromQL examples (doc/GUIDE.md, "Many machines"):
# Prometheus parses and evaluates each
# (with run r42 made the test's run pp); the first is the context switches
# per CPU during the run, over a window from the scrape before the run (T1)
# to the first scrape after it (T2): it counts at least what the run itself
# did (scalemonctl report).
own=$(ctl --format json report --since pp --until pp | jpy 'd["runs"][0]["metrics"]["context_switches"]["total"]')
n=0
while IFS= read -r -d '' block; do
        n=$((n + 1))
        block=${block//r42/pp}
        if [ $n = 1 ]; then     # the window: E = T2, its length from T1 (rounded up)
                block=${block//1764590000/$T2}
                block=${block//61s/$(python3 -c "import math; print(math.ceil($T2 - $T1 + 0.001))")s}
        fi
        res=$(curl -s "$API/query" --data-urlencode "query=$block")
        st=$(echo "$res" | jpy 'd["status"]')
        check "the guide's PromQL example $n is accepted ($st$( [ "$st" = success ] || echo ": $res"))" -- test "$st" = success
        if [ $n = 1 ]; then
                v=$(echo "$res" | jpy 'sum(float(r["value"][1]) for r in d["data"]["result"])')
                python3 -c "import sys; sys.exit(0 if $v >= 2 * $N and $v >= 0.95 * $own else 1)"
                ok $? "the guide's query finds the run's window: $v switches, the run's own $own, 2N $((2 * N))"
        fi
done < <(python3 -c '
import re, sys
for b in re.findall(r"```promql\n(.*?)```", open(sys.argv[1]).read(), re.S):
    sys.stdout.write(b.strip() + "\0")' "$srcdir/doc/GUIDE.md")
ok $(( n >= 4 ? 0 : 1 )) "doc/GUIDE.md has $n PromQL examples"

curl -sf "http://127.0.0.1:$EPORT/metrics" >"$TMP/metrics.txt"
check "promtool check metrics accepts the 0.0.4 exposition" -- sh -c "promtool check metrics <'$TMP/metrics.txt' >'$TMP/promtool.out' 2>&1"
sed 's/^/# promtool: /' "$TMP/promtool.out"
ct=$(curl -sf -o "$TMP/om.txt" -w '%{content_type}' -H 'Accept: application/openmetrics-text; version=1.0.0' \
        "http://127.0.0.1:$EPORT/metrics")
check "OpenMetrics when asked, with its content type ($ct)" -- \
        test "$ct" = "application/openmetrics-text; version=1.0.0; charset=utf-8"
check "the OpenMetrics text ends with # EOF" -- test "$(tail -n 1 "$TMP/om.txt")" = "# EOF"
code=$(curl -s -o "$TMP/404.txt" -w '%{http_code}' "http://127.0.0.1:$EPORT/nothing")
check "another path gets 404 and says what is served ($code)" -- sh -c "[ $code = 404 ] && grep -q /metrics '$TMP/404.txt'"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$EPORT/metrics")
check "POST /metrics gets 405 ($code)" -- test "$code" = 405

# A daemon restart: counters start again from 0, scalemon_start_time_seconds moves.
st1=$(q scalemon_start_time_seconds | jpy 'd["data"]["result"][0]["value"][1]')
stop_daemon
sleep 1.5
down=$(curl -sf "http://127.0.0.1:$EPORT/metrics" | awk '$1 == "scalemon_up" { print $2 }')
check "scalemon_up 0 while scalemond is down" -- test "$down" = 0
check "the exporter said once that scalemond is unreachable" -- \
        test "$(grep -c 'scalemond: cannot reach' "$TMP/exporter.log")" = 1
start_daemon
wait_scrapes 3 || true
st2=$(q scalemon_start_time_seconds | jpy 'd["data"]["result"][0]["value"][1]')
check "after a restart scalemon_start_time_seconds moves on ($st1 -> $st2)" -- \
        python3 -c "import sys; sys.exit(0 if $st2 > $st1 else 1)"
r=$(q 'sum(resets(scalemon_context_switches_total[2m]))' | jpy 'float(d["data"]["result"][0]["value"][1])')
rate=$(q 'sum(rate(scalemon_context_switches_total[30s]))' | jpy 'float(d["data"]["result"][0]["value"][1])')
check "Prometheus sees the restart as a counter reset ($r), and rate() stays positive ($rate)" -- \
        python3 -c "import sys; sys.exit(0 if $r >= 1 and $rate > 0 else 1)"
check "the exporter said that scalemond works again" -- grep -q 'scalemond: works again' "$TMP/exporter.log"

sed 's/^/# exporter: /' "$TMP/exporter.log"
kill "$PROM_PID"; wait "$PROM_PID" 2>/dev/null; PROM_PID=
kill "$EXP_PID"; wait "$EXP_PID"; rc=$?; EXP_PID=
check "the exporter stops cleanly on SIGTERM" -- test "$rc" = 0
finish
