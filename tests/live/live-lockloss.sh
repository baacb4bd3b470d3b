#!/bin/bash
# live-lockloss.sh - a storm with more distinct (caller, lock) pairs than
# the BPF per-caller map holds: what did not fit is counted and shown,
# never dropped silently.  The map is made small (the test seam
# SCALEMON_TEST_LOCK_MAP_ENTRIES=4: a storm of thousands of distinct lock
# objects cannot be made in seconds) and the mmap storm run under run
# exec: its mmap_lock, the wait_lock inside it, both runqueue locks and
# their callers are well over 4 (caller, lock) pairs.
# Checks: the run's locks_lost counts unattributed waits; the report's
# LOST line says so; the waits in the tables plus the unattributed ones
# are every timed wait (the per-CPU lock_wait_ns and counts by type, which
# no map limits), within 1% (read moments apart); and the tables hold at
# most the map's 4 keys.
. "${srcdir:-.}/tests/lib.sh"
need_root
need_seam SCALEMON_TEST_LOCK_MAP_ENTRIES "$SCALEMOND"
command -v python3 >/dev/null || skip_all "python3 not installed"
INTERVAL=1s
export SCALEMON_TEST_LOCK_MAP_ENTRIES=4
start_daemon
why=$(ctl --format json metrics | jpy "[m.get('why') or 'available' for m in d['metrics'] if m['name'] == 'lock_wait_ns'][0]")
[ "$why" = available ] || skip_all "lock_wait_ns unavailable here: $why"

ctl run exec --name storm -- "$WL/wl-mmapstorm" 2 2 >"$TMP/storm.out"
ok $? "storm ran: $(cat "$TMP/storm.out")"
ctl --format json report --since storm --until storm >"$TMP/storm.json"
ctl report --since storm --until storm --locks lock | sed -n '/contended locks/,/^$/p' | sed 's/^/# /'
python3 - "$TMP/storm.json" >"$TMP/sum.txt" <<'EOP'
import json, sys
r = json.load(open(sys.argv[1]))['runs'][0]
lost = r['locks_lost']
cpu_ns = r['metrics']['lock_wait_ns']['total']
cpu_n = sum(r['metrics'][m]['total'] for m in r['metrics']
            if m.startswith('lock_contentions_') and r['metrics'][m]['total'] is not None)
print(lost['unattributed'], lost['unattributed_wait_ns'],
      sum(l['total_wait_ns'] for l in r['locks']) + lost['unattributed_wait_ns'], int(cpu_ns),
      sum(l['contended'] for l in r['locks']) + lost['unattributed'], int(cpu_n),
      sum(l['contended'] for l in r['locks_by_lock']) + lost['unattributed'], len(r['locks_by_lock']))
EOP
read -r un un_ns tab_ns cpu_ns tab_n cpu_n lock_n nlocks <"$TMP/sum.txt"
diag "unattributed $un waits ($un_ns ns); tables + unattributed: $tab_n waits, $tab_ns ns; per CPU: $cpu_n waits, $cpu_ns ns"
[ "${un:-0}" -gt 0 ]; ok $? "waits that did not fit the map are counted ($un)"
ctl report --since storm --until storm | grep -q "^  LOST: .* waits (.*) not in this table (per-caller map full)"
ok $? "and the report says so in its LOST line"
within1() { python3 -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(0 if b > 0 and abs(a - b) <= 0.01 * b else 1)" "$1" "$2"; }
within1 "$tab_ns" "$cpu_ns"; ok $? "table wait + unattributed = every timed wait ($tab_ns vs $cpu_ns ns)"
within1 "$tab_n" "$cpu_n"; ok $? "and the counts ($tab_n vs $cpu_n)"
[ "$lock_n" = "$tab_n" ]; ok $? "the by-lock table holds the same waits as the by-caller one ($lock_n)"
[ "${nlocks:-9}" -le 4 ]; ok $? "at most the map's 4 keys in the tables ($nlocks locks)"
check "scalemond stops cleanly" -- stop_daemon
finish
