#!/bin/bash
# live-kvm.sh - kvm_exits against a real guest: a tiny KVM VM whose vCPU
# writes to an I/O port N times, each write an exit to the host.
. "${srcdir:-.}/tests/lib.sh"
need_root
[ -e /dev/kvm ] || skip_all "no /dev/kvm"
start_daemon
avail=$(ctl --format json metrics | jpy "[m['available'] for m in d['metrics'] if m['name'] == 'kvm_exits'][0]")
[ "$avail" = true ] || skip_all "kvm_exits unavailable here: $(ctl metrics | grep '^kvm_exits')"
N=20000
t0=$(now_ns); out=$("$WL/wl-kvm" $N); rc=$?; t1=$(now_ns)
[ $rc = 77 ] && skip_all "/dev/kvm cannot run a guest here"
ok $rc "guest ran: $out"
wait_flushed "$t1"
ex=$(total kvm_exits "$t0" "$t1")
diag "kvm_exits over the window: $ex for $N I/O exits"
if [ "$ex" = 0 ] && ! [ -d /sys/module/kvm_intel ] && ! [ -d /sys/module/kvm_amd ]; then
        mods=$(ls -d /sys/module/kvm* 2>/dev/null | xargs -n1 basename | tr '\n' ' ')
        echo "ok $((tap_n += 1)) # SKIP the hypervisor module here (${mods% }) runs guests without firing kvm:kvm_exit (kvm_intel and kvm_amd fire it): nothing to count"
else
        [ "$ex" -ge $N ]; ok $? "kvm_exits >= N ($ex >= $N)"
fi
check "daemon stops cleanly" -- stop_daemon
finish
