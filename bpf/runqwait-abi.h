/* runqwait-abi.h - what bpf/runqwait.bpf.c and daemon/kernel/runqwait.c share:
 * the layout of the per-CPU slot the daemon maps and reads every tick.
 * Fixed-width types only: included by the BPF program and the daemon. */
#ifndef SCALEMON_BPF_RUNQWAIT_ABI_H
#define SCALEMON_BPF_RUNQWAIT_ABI_H

#include <linux/types.h>

/* One CPU's running totals, written only by that CPU (at sched_switch,
 * with its run queue locked), read by the daemon through mmap(). */
struct rq_cpu {
        __u64 wait_ns;          /* run_delay gained by the tasks that left this CPU */
        __u64 waits;            /* how many of those had waited */
        __u64 pad[6];           /* one cache line a CPU */
};

/* Byte offsets of the task_struct fields the program reads, found by the
 * daemon in the kernel's BTF (daemon/kernel/kbtf.c); -1: not there. */
struct rq_offsets {
        __s32 pid;              /* task_struct.pid */
        __s32 start_time;       /* task_struct.start_time */
        __s32 run_delay;        /* task_struct.sched_info + sched_info.run_delay */
};

#endif
