#!/bin/bash
# live-hotplug.sh - CPU hotplug while sampling: cpu1 goes offline (its
# counters stop, the event is recorded, the daemon runs on) and comes back
# (counters reopened, no delta for its first interval, samples resume).
. "${srcdir:-.}/tests/lib.sh"
need_root
command -v sqlite3 >/dev/null || skip_all "sqlite3 command-line tool not installed"
need_hotplug "${HOTPLUG_CPU:-1}"
restore() { echo 1 > "$ONLINE" 2>/dev/null; cleanup; }
trap restore EXIT

start_daemon
sleep 0.5
t_off=$(now_ns)
echo 0 > "$ONLINE"; ok $? "cpu$CPU taken offline"
sleep 1.5
t_on=$(now_ns)
echo 1 > "$ONLINE"; ok $? "cpu$CPU back online"
sleep 2
"$WL/wl-hop" 200 >/dev/null
t_end=$(now_ns)
wait_flushed "$t_end"

kill -0 "$DAEMON_PID"; ok $? "daemon kept running"
grep -q "cpu $CPU went offline, skipping it" "$TMP/daemon.log"; ok $? "offline logged"
grep -q "cpu $CPU came online, counting it again" "$TMP/daemon.log"; ok $? "online logged"
ev=$(sql "SELECT group_concat(kind, ' ') FROM (SELECT kind FROM event WHERE cpu = $CPU ORDER BY id)")
[ "$ev" = "cpu-offline cpu-online" ]; ok $? "events recorded: $ev"
t_evoff=$(sql "SELECT t FROM event WHERE cpu = $CPU AND kind = 'cpu-offline'")
t_evon=$(sql "SELECT t FROM event WHERE cpu = $CPU AND kind = 'cpu-online'")
n_off=$(sql "SELECT count(*) FROM samples_all WHERE loc = $CPU AND scope = 'cpu' AND t_ns >= $t_evoff AND t_ns + interval_s * 1e9 <= $t_evon")
[ "$n_off" = 0 ]; ok $? "no samples for cpu$CPU while it was offline ($n_off)"
n_on=$(sql "SELECT count(*) FROM samples_all WHERE loc = $CPU AND metric = 'context_switches' AND t_ns > $t_evon")
[ "$n_on" -gt 0 ]; ok $? "context_switches for cpu$CPU resume after it returns ($n_on samples)"
mg=$(total cpu_migrations "$t_on" "$t_end" --cpu "$CPU")
[ "$mg" -ge 50 ]; ok $? "migrations onto the returned CPU are counted ($mg)"
# the event is stamped with the end of the interval in which the CPU came
# back: that interval has nothing from its new counters (the later ones do:
# see the migrations above), nor from any other source of per-CPU values
# (/proc/stat, /proc/schedstat, BPF lock wait): a delta across the time it
# was offline is not that interval's
back=$(sql "SELECT id FROM tick WHERE t + dur = $t_evon")
first=$(sql "SELECT group_concat(m.name, ' ') FROM sample_all s JOIN metric m ON m.id = s.metric WHERE m.scope = 'cpu' AND s.loc = $CPU AND s.tick = $back")
[ -n "$back" ] && [ -z "$first" ]; ok $? "no delta from any source for the interval it came back in (tick $back)${first:+: $first}"
check "daemon stops cleanly" -- stop_daemon
finish
