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
 * tp_btf: the kernel passes the tracepoint's arguments directly (no
 * record is built), and the task_struct fields are relocated against the
 * running kernel's BTF (CO-RE), so no vmlinux.h is needed at build time.
 * Idle tasks (pid 0) are not counted.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#include "runqwait-abi.h"

char LICENSE[] SEC("license") = "GPL";   /* bpf_task_storage_get() is GPL-only */

struct sched_info {
        unsigned long long run_delay;
} __attribute__((preserve_access_index));

struct task_struct {
        int pid;
        unsigned long long start_time;  /* CLOCK_MONOTONIC ns */
        struct sched_info sched_info;
} __attribute__((preserve_access_index));

/* Set by the daemon before loading. */
const volatile __u32 max_cpus = 1;
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

/* sched_switch(bool preempt, struct task_struct *prev, struct task_struct
 * *next, unsigned int prev_state) */
SEC("tp_btf/sched_switch")
int rq_switch(unsigned long long *ctx)
{
        struct task_struct *prev = (struct task_struct *)ctx[1];
        __u32 cpu = bpf_get_smp_processor_id();
        struct rq_cpu *slot;
        struct seen *s;
        __u64 now, delta;

        if (!prev || prev->pid == 0)
                return 0;
        s = bpf_task_storage_get(&last, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
        if (!s)
                return 0;
        now = prev->sched_info.run_delay;
        if (s->known)
                delta = now - s->run_delay;
        else
                delta = prev->start_time >= attach_ns && attach_ns ? now : 0;
        s->run_delay = now;
        s->known = 1;
        if (delta && cpu < max_cpus && (slot = bpf_map_lookup_elem(&rq_stat, &cpu))) {
                slot->wait_ns += delta;
                slot->waits++;
        }
        return 0;
}
