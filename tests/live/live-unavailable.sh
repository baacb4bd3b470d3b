#!/bin/bash
# live-unavailable.sh - a metric the machine cannot give (here: cycles,
# no hardware PMU) is listed as unavailable with the reason; the daemon
# runs on with the rest.
. "${srcdir:-.}/tests/lib.sh"
need_root
start_daemon
json=$(ctl --format json metrics)
# (not one disabled by the configuration: page_faults by default)
missing=$(echo "$json" | jpy '[m["name"] for m in d["metrics"] if not m["available"] and not m.get("why", "").startswith("disabled")]' | head -n 1)
[ -n "$missing" ] || skip_all "every metric is available on this machine (it has a PMU and KVM)"
diag "unavailable here: $(echo "$json" | jpy '" ".join(m["name"] for m in d["metrics"] if not m["available"])')"
why=$(echo "$json" | jpy "[m.get('why', '') for m in d['metrics'] if m['name'] == '$missing'][0]")
[ -n "$why" ] && [ "$why" != None ]; ok $? "$missing has a reason in the JSON: $why"
csvwhy=$(ctl --format csv metrics | grep "^$missing,")
echo "$csvwhy" | grep -qF "$why"; ok $? "and in the CSV"
grep -q "$missing unavailable: " "$TMP/daemon.log"; ok $? "the daemon logged it once at start"
[ "$(grep -c "$missing unavailable" "$TMP/daemon.log")" = 1 ]; ok $? "only once"
err=$(ctl query "$missing" 2>&1); rc=$?
[ $rc = 1 ] && echo "$err" | grep -q "is not available: "; ok $? "query $missing: exit 1 and why ($err)"
wait_flushed "$(now_ns)"
ctl query context_switches --since -10s >/dev/null; ok $? "the other metrics are recorded"
kill -0 "$DAEMON_PID"; ok $? "daemon still running"
st=$(ctl status | grep metrics:)
echo "$st" | grep -q "unavailable"; ok $? "status counts it: $st"
check "daemon stops cleanly" -- stop_daemon
finish
