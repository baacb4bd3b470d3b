#!/bin/bash
# live-lockwait-refused.sh - BPF refused: scalemond without CAP_BPF and
# CAP_SYS_ADMIN (setpriv drops them from the bounding set, CAP_PERFMON
# stays), then with bpf() blocked by a seccomp filter (tests/workloads/wl-nobpf),
# each time the lock wait metrics are unavailable with the reason, said
# once in the log and by `scalemonctl status`, and everything else is
# still counted: lock_contentions on the mmap storm, context switches, CPU
# time.  Then without the kernel's BTF (in a mount namespace of its own,
# an empty file over /sys/kernel/btf/vmlinux: what a kernel built without
# CONFIG_DEBUG_INFO_BTF offers): the lock wait program needs none (the few
# field offsets it reads come from the BTF when there is one,
# daemon/kernel/kbtf.c), so lock wait is counted and its locks are named by
# address; the run-queue wait program needs it, and where it is the only
# source (no /proc/schedstat) runqueue_wait_ns is unavailable, said once.
. "${srcdir:-.}/tests/lib.sh"
need_root
command -v python3 >/dev/null || skip_all "python3 not installed"
command -v setpriv >/dev/null || skip_all "setpriv not installed (package util-linux)"
INTERVAL=200ms
LOCK_METRICS="lock_wait_ns lock_wait_max_ns lock_contentions_spinlock lock_contentions_rwlock lock_contentions_mutex
 lock_contentions_rwsem_read lock_contentions_rwsem_write lock_contentions_percpu_rwsem lock_contentions_rtmutex lock_wait_lost"

# refused HOW WANT-IN-REASON: start the daemon under HOW, check, stop it
refused() {
        local how=$1 want=$2 real=$SCALEMOND
        cat >"$TMP/wrap" <<EOW
#!/bin/bash
exec $how "$real" "\$@"
EOW
        chmod +x "$TMP/wrap"
        rm -f "$DB" "$DB-wal" "$DB-shm"; : >"$TMP/daemon.log"
        SCALEMOND=$TMP/wrap start_daemon
        local m why n
        n=0
        for m in $LOCK_METRICS; do
                why=$(ctl --format json metrics | jpy "[m.get('why') or 'available' for m in d['metrics'] if m['name'] == '$m'][0]")
                [[ "$why" == *"$want"* ]] && n=$((n + 1))
        done
        [ $n -eq 10 ]; ok $? "$how: the 10 lock wait metrics are unavailable, why: $why"
        [ "$(grep -c 'lock_wait.*unavailable\|lock_contentions_.*unavailable' "$TMP/daemon.log")" -eq 1 ]
        ok $? "  said once in the log: $(grep 'lock_wait_ns unavailable' "$TMP/daemon.log" | head -n 1 | cut -c1-160)"
        local line; line=$(ctl status | grep '^lock wait:')
        [[ "$line" == "lock wait: not counted: "*"$want"* ]]; ok $? "  and by scalemonctl status: $line"
        [ "$(ctl --format json status | jpy "d['lock_wait']['available']")" = false ]
        ok $? "  status --format json: lock_wait.available false"
        [ "$(ctl --format json metrics | jpy "[m['available'] for m in d['metrics'] if m['name'] == 'lock_contentions'][0]")" = true ]
        ok $? "  lock_contentions is still available"
        ctl run start "storm$3" >/dev/null && "$WL/wl-mmapstorm" 4 1 >/dev/null && ctl run stop "storm$3" >/dev/null
        ok $? "  a run of the storm"
        local j; j=$(ctl --format json report --since "storm$3" --until "storm$3")
        local lc cs; lc=$(echo "$j" | jpy "int(d['runs'][0]['metrics']['lock_contentions']['total'])")
        cs=$(echo "$j" | jpy "int(d['runs'][0]['metrics']['context_switches']['total'])")
        [ "$lc" -ge 50 ] && [ "$cs" -ge 50 ]
        ok $? "  counted as before: lock_contentions $lc, context_switches $cs"
        [ "$(echo "$j" | jpy "d['runs'][0]['locks']")" = "" ] && echo "$j" | jpy "d['runs'][0]['locks_why']" | grep -q 'without BPF'
        ok $? "  the run has no locks table, and says why: $(echo "$j" | jpy "d['runs'][0]['locks_why']")"
        [ "$(echo "$j" | jpy "d['runs'][0]['metrics']['lock_wait_ns']['total']")" = null ]
        ok $? "  lock_wait_ns is null (not 0) in the run's report"
        check "  daemon stops cleanly" -- stop_daemon
}

refused "setpriv --bounding-set -bpf,-sys_admin --" "needs CAP_BPF" 1
refused "$WL/wl-nobpf" "refused" 2
# nobtf: as above, without the kernel's BTF
nobtf() {
        local m n=0 why j
        cat >"$TMP/wrap" <<EOW
#!/bin/bash
exec $TMP/nobtf $TMP/empty "$SCALEMOND" "\$@"
EOW
        chmod +x "$TMP/wrap"
        rm -f "$DB" "$DB-wal" "$DB-shm" "$DB-head"; : >"$TMP/daemon.log"
        SCALEMOND=$TMP/wrap start_daemon
        for m in $LOCK_METRICS; do
                why=$(ctl --format json metrics | jpy "[m.get('why') or 'available' for m in d['metrics'] if m['name'] == '$m'][0]")
                [ "$why" = available ] && n=$((n + 1))
        done
        [ $n -eq 10 ]; ok $? "without BTF: the 10 lock wait metrics are available ($n; the last: $why)"
        why=$(ctl --format json metrics | jpy "[m.get('why') or 'available' for m in d['metrics'] if m['name'] == 'runqueue_wait_ns'][0]")
        if [ -e /proc/schedstat ]; then
                [ "$why" = available ]; ok $? "  runqueue_wait_ns from /proc/schedstat, no BPF needed: $why"
        else
                [[ "$why" == *"needs the kernel's BTF"* ]]; ok $? "  runqueue_wait_ns unavailable, why: $why"
        fi
        [ "$(grep -c 'runqueue_wait_ns unavailable' "$TMP/daemon.log")" -eq "$([ -e /proc/schedstat ] && echo 0 || echo 1)" ] &&
                ! grep -q 'lock_wait.*unavailable' "$TMP/daemon.log"
        ok $? "  the log says it once, and nothing of lock wait: $(grep 'runqueue_wait_ns' "$TMP/daemon.log" | cut -c1-100)"
        ctl run start storm3 >/dev/null && "$WL/wl-mmapstorm" 4 1 >/dev/null && ctl run stop storm3 >/dev/null
        ok $? "  a run of the storm"
        j=$(ctl --format json report --since storm3 --until storm3)
        local lc cs w; lc=$(echo "$j" | jpy "int(d['runs'][0]['metrics']['lock_contentions']['total'])")
        cs=$(echo "$j" | jpy "int(d['runs'][0]['metrics']['context_switches']['total'])")
        w=$(echo "$j" | jpy "int(d['runs'][0]['metrics']['lock_wait_ns']['total'])")
        [ "$lc" -ge 50 ] && [ "$cs" -ge 50 ] && [ "$w" -gt 0 ]
        ok $? "  counted: lock_contentions $lc, context_switches $cs, lock_wait_ns $w"
        # the storm's mmap_lock: named with the BTF (live-lockid.sh), by its
        # address without it
        echo "$j" | jpy "[l for l in d['runs'][0]['locks_by_lock'] if l['type'] == 'rwsem:W'][0]" > "$TMP/top"
        python3 -c 'import ast, sys; l = ast.literal_eval(open(sys.argv[1]).read()); sys.exit(not (l["lock"].startswith("0x") and l["name"] != "mmap_lock"))' "$TMP/top"
        ok $? "  the storm's rwsem named by address, not mmap_lock: $(cat "$TMP/top" | cut -c1-120)"
        check "  daemon stops cleanly" -- stop_daemon
}

if [ -r /sys/kernel/btf/vmlinux ] && command -v unshare >/dev/null; then
        : >"$TMP/empty"
        cat >"$TMP/nobtf" <<'EOW'
#!/bin/bash
# nobtf EMPTY COMMAND...: COMMAND where /sys/kernel/btf/vmlinux is EMPTY
exec unshare -m --propagation private /bin/bash -c 'mount --bind "$0" /sys/kernel/btf/vmlinux && exec "$@"' "$@"
EOW
        chmod +x "$TMP/nobtf"
        nobtf
else
        skip_one "this kernel has no BTF to hide (or no unshare)" -- "without the kernel's BTF: lock wait counted, run-queue wait said why"
fi
finish
