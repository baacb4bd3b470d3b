#!/bin/bash
# live-lockwait-reload.sh - the lock wait BPF program follows reloads: a
# reload that excludes the ten lock wait metrics unloads it, one that
# includes them again loads it anew.  The kernel is the judge: the BPF
# programs scalemond holds (prog_id in its /proc/PID/fdinfo, named by
# `bpftool prog show id`) are lw_begin and lw_end while the metrics are
# sampled; after the exclusion scalemond holds none and bpftool no longer
# finds the old ids (nothing of them is left in the kernel); after the
# inclusion new ones.  Meanwhile the mmap storm is counted: lock_contentions
# (a perf tracepoint, not BPF) in every phase, the BPF waits by type only
# while the program is loaded, and then as many as lock_contentions says
# (within 5%: the two count the same contention_begin events).
# Then a daemon without CAP_SYS_ADMIN (setpriv: as under the service, CAP_BPF
# is given up after start-up): the exclusion unloads the program the same,
# the inclusion cannot load it and says why, once in the log and in
# `scalemonctl status`, while everything else is counted; a restart loads it.
. "${srcdir:-.}/tests/lib.sh"
need_root
command -v bpftool >/dev/null || skip_all "bpftool not installed (package bpftool)"
command -v setpriv >/dev/null || skip_all "setpriv not installed (package util-linux)"
LOCK_METRICS="lock_wait_ns, lock_wait_max_ns, lock_contentions_spinlock, lock_contentions_rwlock, lock_contentions_mutex,
 lock_contentions_rwsem_read, lock_contentions_rwsem_write, lock_contentions_percpu_rwsem, lock_contentions_rtmutex,
 lock_wait_lost"
LOCK_METRICS=$(echo $LOCK_METRICS)
INTERVAL=

progs() {       # the lw_* BPF programs the daemon holds: "ID NAME" lines
        local f id
        for f in /proc/"$DAEMON_PID"/fdinfo/*; do
                awk '$1 == "prog_id:" { print $2 }' "$f" 2>/dev/null
        done | sort -un | while read -r id; do
                bpftool prog show id "$id" 2>/dev/null | awk -v id="$id" 'NR == 1 { for (i = 1; i < NF; i++) if ($i == "name") print id, $(i + 1) }'
        done | grep ' lw_'
}
names() { progs | awk '{ print $2 }' | sort | tr '\n' ' '; }
reload_with() { printf 'interval = 100ms\n%s' "$1" >"$TMP/live.conf"; ctl reload >/dev/null; }
storm() {       # storm NAME: the mmap storm as a run; prints "LOCK_CONTENTIONS BPF_WAITS"
        ctl run start "$1" >/dev/null && "$WL/wl-mmapstorm" 4 1 >/dev/null && ctl run stop "$1" >/dev/null || return 1
        ctl --format json report --since "$1" --until "$1" | jpy "' '.join(str(x) for x in [int(d['runs'][0]['metrics']['lock_contentions']['total']),
                sum(int(v['total']) for k, v in d['runs'][0]['metrics'].items() if k.startswith('lock_contentions_') and v['total'] is not None)])"
}

# --- root: unloaded and loaded again ---
printf 'interval = 100ms\n' >"$TMP/live.conf"
start_daemon --config "$TMP/live.conf"
before=$(progs | awk '{ print $1 }')
[ "$(names)" = "lw_begin lw_end lw_symbolize " ]; ok $? "loaded at start: $(names)(ids $(echo $before))"
read -r lc bw < <(storm s1); diag "storm with the program: lock_contentions $lc, BPF waits by type $bw"

ctl run start across >/dev/null || bail "run start across"
reload_with "exclude = $LOCK_METRICS"$'\n'; ok $? "reload excluding the ten lock wait metrics (a run open across it)"
[ -z "$(progs)" ]; ok $? "scalemond holds no lock wait program ($(names))"
gone=0; for id in $before; do bpftool prog show id "$id" >/dev/null 2>&1 || gone=$((gone + 1)); done
[ "$gone" = "$(echo $before | wc -w)" ]; ok $? "the kernel has none of them left ($gone of $(echo $before | wc -w) ids gone)"
[ "$(grep -c 'lock wait: BPF program unloaded' "$TMP/daemon.log")" = 1 ]; ok $? "said once in the log"
ctl run stop across >/dev/null; ok $? "the run open across the unload stops"
lw_why=$(ctl --format json report --since across --until across | jpy "d['runs'][0].get('locks_why')")
st=$(ctl --format json runs --since across --until across | jpy "d['runs'][0]['status']")
[ "$st" = done ] && [ -n "$lw_why" ] && [ "$lw_why" != None ]
ok $? "  done, and its locks table says why it is missing: $lw_why"
read -r lc2 bw2 < <(storm s2)
[ "${lc2:-0}" -ge 50 ] && [ "$bw2" = 0 ]
ok $? "  the storm still counted by lock_contentions ($lc2), no BPF waits ($bw2)"

reload_with ""; ok $? "reload including them again"
after=$(progs | awk '{ print $1 }')
[ "$(names)" = "lw_begin lw_end lw_symbolize " ] && [ -z "$(comm -12 <(echo "$before" | sort) <(echo "$after" | sort))" ]
ok $? "loaded anew: $(names)(ids $(echo $after))"
read -r lc3 bw3 < <(storm s3)
python3 -c "import sys; a, b = $lc3, $bw3; sys.exit(0 if a >= 50 and abs(a - b) <= 0.05 * a else 1)"
ok $? "  the storm's BPF waits by type match lock_contentions within 5% ($bw3 vs $lc3)"
check "daemon stops cleanly" -- stop_daemon

# --- without CAP_SYS_ADMIN: CAP_BPF is given up after start-up ---
cat >"$TMP/wrap" <<EOW
#!/bin/bash
exec setpriv --bounding-set -sys_admin -- "$SCALEMOND" "\$@"
EOW
chmod +x "$TMP/wrap"
: >"$TMP/daemon.log"
printf 'interval = 100ms\n' >"$TMP/live.conf"
SCALEMOND=$TMP/wrap start_daemon --config "$TMP/live.conf"
[ "$(names)" = "lw_begin lw_end lw_symbolize " ]; ok $? "without CAP_SYS_ADMIN: loaded at start ($(names))"
bpf_eff=$(python3 -c "print(int('$(awk '$1 == "CapEff:" { print $2 }' /proc/"$DAEMON_PID"/status)', 16) >> 39 & 1)")
[ "$bpf_eff" = 0 ]; ok $? "  and CAP_BPF given up since (effective: $bpf_eff)"
reload_with "exclude = $LOCK_METRICS"$'\n'
[ -z "$(progs)" ]; ok $? "  reload excluding them unloads it ($(names))"
reload_with ""
why=$(ctl --format json metrics | jpy "[m.get('why') for m in d['metrics'] if m['name'] == 'lock_wait_ns'][0]")
[[ "$why" == *"gave up CAP_BPF"*"restart"* ]] && [ -z "$(progs)" ]
ok $? "  reload including them cannot load it, and says why: $why"
[ "$(grep -c 'lock_wait_ns unavailable: .*gave up CAP_BPF' "$TMP/daemon.log")" = 1 ] &&
        [ "$(grep -c 'lock_wait.*unavailable\|lock_contentions_.*unavailable' "$TMP/daemon.log")" = 1 ]
ok $? "  said once in the log"
line=$(ctl status | grep '^lock wait:')
[[ "$line" == "lock wait: not counted: "*"gave up CAP_BPF"* ]]; ok $? "  and by scalemonctl status: $line"
read -r lc4 bw4 < <(storm s4)
cs=$(ctl --format json report --since s4 --until s4 | jpy "int(d['runs'][0]['metrics']['context_switches']['total'])")
[ "${lc4:-0}" -ge 50 ] && [ "$bw4" = 0 ] && [ "$cs" -ge 50 ]
ok $? "  everything else counted: lock_contentions $lc4, context_switches $cs (BPF waits $bw4)"
stop_daemon
SCALEMOND=$TMP/wrap start_daemon --config "$TMP/live.conf"
[ "$(names)" = "lw_begin lw_end lw_symbolize " ] && [ -z "$(ctl status | grep '^lock wait: not counted')" ]
ok $? "  a restart loads it ($(names))"
check "daemon stops cleanly" -- stop_daemon
finish
