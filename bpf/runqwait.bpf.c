// SPDX-License-Identifier: GPL-2.0
/* runqwait.bpf.c - how long runnable tasks waited for a CPU, per CPU, for
 * kernels without /proc/schedstat (no CONFIG_SCHEDSTATS), where the
 * scheduler does not keep that sum per CPU.
 *
 * It still keeps it per task (CONFIG_SCHED_INFO: task_struct.sched_info.
 * run_delay, which /proc/PID/schedstat shows, added to when the task
 * arrives on a CPU).  So one program, on sched_switch, is enough: when a
 * task leaves a CPU, what its run_delay gained since it last left one is
 * the wait that ended when it arrived here, and is added to this CPU's
 * slot.  No clock is read and sched_wakeup is not traced: one run per
 * switch, and the sum is the scheduler's own, exactly.
 *
 * The task's last run_delay is kept in its local storage (freed with the
 * task; nothing to fill up).  A task seen for the first time counts all of
 * its run_delay if it started after the program was attached (attach_ns,
 * set by the daemon), else none (its waits before the daemon came).  A
 * task's last wait is counted when it leaves the CPU, so a wait shows up
 * in the tick in which that run ended: at most one run late.
 *
 * A raw tracepoint: the kernel passes the tracepoint's arguments directly
 * (no record is built).  The task's fields are read at offsets the daemon
 * found in the kernel's BTF (daemon/kernel/kbtf.c) and set before loading,
 * so libbpf has no relocation to do and never loads the kernel's BTF (5
 * MiB, most of the daemon's start-up); the task's storage is reached
 * through bpf_get_current_task_btf(): at sched_switch the task leaving
 * the CPU is still the current one.  Idle tasks (pid 0) are not counted.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "runqwait-abi.h"

char LICENSE[] SEC("license") = "GPL";   /* bpf_task_storage_get() is GPL-only */

/* Set by the daemon before loading. */
const volatile __u32 max_cpus = 1;
const volatile struct rq_offsets rq_off = { .pid = -1, .start_time = -1, .run_delay = -1 };
/* Set by the daemon just before attaching: tasks started after it are
 * counted from their birth. */
__u64 attach_ns = 0;

struct {
        __uint(type, BPF_MAP_TYPE_ARRAY);
        __uint(map_flags, BPF_F_MMAPABLE);
        __type(key, __u32);
        __type(value, struct rq_cpu);
        __uint(max_entries, 1);         /* resized to max_cpus by the daemon */
} rq_stat SEC(".maps");

struct seen {
        __u64 run_delay;                /* at the task's last switch out */
        __u64 known;                    /* 0: the storage was just made */
};

struct {
        __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
        __uint(map_flags, BPF_F_NO_PREALLOC);
        __type(key, int);
        __type(value, struct seen);
} last SEC(".maps");

/* The __u64 at p + off, 0 if it cannot be read. */
static __always_inline __u64 read_u64(__u64 p, __s32 off)
{
        __u64 v = 0;

        if (bpf_probe_read_kernel(&v, sizeof v, (const void *)(p + off)) < 0)
                return 0;
        return v;
}

/* sched_switch(bool preempt, struct task_struct *prev, struct task_struct
 * *next, unsigned int prev_state) */
SEC("raw_tp/sched_switch")
int rq_switch(struct bpf_raw_tracepoint_args *ctx)
{
        __u64 prev = ctx->args[1];
        __u32 cpu = bpf_get_smp_processor_id();
        struct rq_cpu *slot;
        struct seen *s;
        __u64 now, delta;
        int pid = 0;

        if (!prev || rq_off.pid < 0 || rq_off.start_time < 0 || rq_off.run_delay < 0 ||
            bpf_probe_read_kernel(&pid, sizeof pid, (const void *)(prev + rq_off.pid)) < 0 || pid == 0)
                return 0;
        s = bpf_task_storage_get(&last, bpf_get_current_task_btf(), 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
        if (!s)
                return 0;
        now = read_u64(prev, rq_off.run_delay);
        if (s->known)
                delta = now - s->run_delay;
        else
                delta = read_u64(prev, rq_off.start_time) >= attach_ns && attach_ns ? now : 0;
        s->run_delay = now;
        s->known = 1;
        if (delta && cpu < max_cpus && (slot = bpf_map_lookup_elem(&rq_stat, &cpu))) {
                slot->wait_ns += delta;
                slot->waits++;
        }
        return 0;
}
