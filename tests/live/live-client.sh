#!/bin/bash
# live-client.sh - scalemonctl status/metrics/query against a live daemon:
# the three output formats carry the same numbers, per-CPU and per-node
# series add up to the system-wide one, and every error has its message
# and exit status.
. "${srcdir:-.}/tests/lib.sh"
need_root
command -v sqlite3 >/dev/null || skip_all "sqlite3 command-line tool not installed"
start_daemon
t0=$(now_ns)
"$WL/wl-pingpong" 5000 >/dev/null
sleep 1
t1=$(now_ns)
wait_flushed "$t1"
S=$(ns_to_when $((t0 - 200000000))); U=$(ns_to_when "$t1")

sum_csv() { awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "value") c = i; next } { s += $c } END { printf "%.0f\n", s }'; }
j=$(ctl --format json query context_switches --since "$S" --until "$U" | jpy 'int(sum(p["value"] for p in d["points"]))')
c=$(ctl --format csv query context_switches --since "$S" --until "$U" | sum_csv)
t=$(ctl query context_switches --since "$S" --until "$U" | awk 'NR > 2 { s += $4 } END { printf "%.0f\n", s }')
diag "context_switches: json $j, csv $c, table $t"
[ "$j" = "$c" ] && [ "$c" = "$t" ] && [ "$j" -gt 10000 ]; ok $? "json, csv and table carry the same total"
pc=$(ctl --format csv query context_switches --per cpu --since "$S" --until "$U" | sum_csv)
[ "$pc" = "$c" ]; ok $? "per-CPU series add up to the system-wide one ($pc)"
pn=$(ctl --format csv query context_switches --node 0 --since "$S" --until "$U" | sum_csv)
[ "$pn" = "$c" ]; ok $? "node 0 holds every CPU on a one-node machine ($pn)"
st=$(ctl --format csv query context_switches --step 1s --since "$S" --until "$U" | sum_csv)
[ "$st" = "$c" ]; ok $? "--step 1s loses no counts ($st)"
npts=$(ctl --format json query context_switches --step 1s --since "$S" --until "$U" | jpy 'len(d["points"])')
[ "$npts" -le 4 ]; ok $? "--step 1s merges 100ms ticks ($npts points)"
keys=$(ctl --format json query context_switches --per cpu --since "$S" --until "$U" | jpy 'sorted(d["points"][0].keys())' | tr '\n' ' ')
[ "$keys" = "cpu interval_s per_s time value " ]; ok $? "JSON point keys: $keys"
tm=$(ctl --format json query context_switches --since "$S" --until "$U" | jpy 'd["points"][0]["time"]')
echo "$tm" | grep -Eq '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$'; ok $? "RFC 3339 times ($tm)"
us=$(ctl --format json query cpu_user --since "$S" --until "$U" | jpy 'sum(p["value"] for p in d["points"])')
awk -v u="$us" 'BEGIN { exit !(u >= 0 && u < 5) }'; ok $? "cpu_user in seconds ($us s over ~1.5 s)"
nh=$(ctl --format json query numa_hit --node 0 --since "$S" --until "$U" | jpy 'len(d["points"])')
[ "$nh" -gt 0 ]; ok $? "node metric by node"

sj=$(ctl --format json status)
echo "$sj" | jpy 'd["daemon"]["running"] and d["cpus"]["online"] >= 1 and d["interval_s"] == 0.1 and d["samples"]["intervals"] > 0' |
        grep -q true; ok $? "status JSON: running, CPUs, interval, samples"
ctl status | grep -q "^interval:  100ms"; ok $? "status table shows the interval"
ctl --format csv status | head -1 | grep -q "daemon.running"; ok $? "status CSV flattens nested keys"
n=$(ctl --format json metrics | jpy 'len(d["metrics"])')
[ "$n" -ge 36 ]; ok $? "metrics lists the catalogue ($n)"

err() {         # err WANT-EXIT WANT-TEXT -- ARGS...
        local want=$1 text=$2; shift 3
        local out; out=$("$@" 2>&1 >/dev/null); local rc=$?
        [ "$rc" = "$want" ] && echo "$out" | grep -qF -- "$text" && [ "$(echo "$out" | wc -l)" = 1 ]
        ok $? "exit $want, '$text': $*" ; [ "$rc" = "$want" ] || diag "got exit $rc: $out"
}
err 2 "unknown verb 'frobnicate'" -- ctl frobnicate
err 2 "no verb given" -- ctl
err 2 "unknown metric 'nope' (scalemonctl metrics lists them)" -- ctl query nope
err 2 "query needs a METRIC" -- ctl query
err 2 "--since '12:00': not a time; use a run name, an RFC 3339 time" -- ctl query context_switches --since 12:00
# (not --since yesterday: that word is a time)
err 1 "no run named 'lastweek' (see scalemonctl runs)" -- ctl query context_switches --since lastweek
err 2 "--until '2026-13-01': not a time" -- ctl query context_switches --until 2026-13-01
err 2 "--step '1 sec': not a duration" -- ctl query context_switches --step "1 sec"
err 2 "--until is not after --since" -- ctl query context_switches --since -1m --until -2m
err 2 "--cpu: numa_hit is a node metric, not per CPU" -- ctl query numa_hit --cpu 0
err 2 "--node: thp_split_pmd is a system-wide metric, not per node" -- ctl query thp_split_pmd --node 0
err 2 "--cpu 99: this host has CPUs 0.." -- ctl query context_switches --cpu 99
err 2 "--node 7: no such node" -- ctl query context_switches --node 7
err 2 "--per 'socket': use system, node or cpu" -- ctl query context_switches --per socket
err 2 "use only one of --cpu, --node and --per" -- ctl query context_switches --cpu 0 --node 0
err 2 "--format 'xml': use table, json or csv" -- ctl --format xml status
err 2 "status takes no arguments" -- ctl status extra
err 1 "no samples between" -- ctl query context_switches --since 2001-01-01 --until 2001-01-02
err 1 "no database at /nonexistent/x.db" -- "$SCALEMONCTL" --db /nonexistent/x.db status
SCALEMON_DB=$DB "$SCALEMONCTL" status >/dev/null; ok $? "SCALEMON_DB picks the database"
check "daemon stops cleanly" -- stop_daemon
finish
