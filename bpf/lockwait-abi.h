/* lockwait-abi.h - what bpf/lockwait.bpf.c and daemon/kernel/lockwait.c share: the
 * layout of the BPF maps' keys and values, and the tracepoint's flag bits.
 *
 * Included by the BPF program (clang -target bpf) and by the daemon, so it
 * uses only the fixed-width __u32/__u64 of <linux/types.h>.
 */
#ifndef SCALEMON_BPF_LOCKWAIT_ABI_H
#define SCALEMON_BPF_LOCKWAIT_ABI_H

#include <linux/types.h>

/* lock:contention_begin's flags, as include/trace/events/lock.h defines
 * them (LCB_F_*) and as the tracepoint's own format file prints them:
 * /sys/kernel/tracing/events/lock/contention_begin/format. */
#define LW_F_SPIN   (1U << 0)
#define LW_F_READ   (1U << 1)
#define LW_F_WRITE  (1U << 2)
#define LW_F_RT     (1U << 3)
#define LW_F_PERCPU (1U << 4)
#define LW_F_MUTEX  (1U << 5)

/* Lock types as scalemon counts them, one lock_contentions_<type> metric
 * each (daemon/kernel/lockwait-decode.c maps flags to these). */
enum lw_type {
        LW_SPINLOCK,
        LW_RWLOCK,
        LW_MUTEX,
        LW_RWSEM_READ,
        LW_RWSEM_WRITE,
        LW_PERCPU_RWSEM,
        LW_RTMUTEX,
        LW_OTHER,       /* flags no kernel we know sets (a semaphore: 0) */
        LW_NTYPES,
};

/* The lock type counted, from the flags: the program counts with it, the
 * daemon's unit tests check it.  Only these combinations occur:
 *   SPIN spinlock, SPIN|READ and SPIN|WRITE rwlock, READ rwsem:R, WRITE
 *   rwsem:W, PERCPU|READ and PERCPU|WRITE percpu-rwsem, RT rt_mutex (and
 *   RT|READ, RT|WRITE: rwlocks on PREEMPT_RT), MUTEX a sleeping mutex and
 *   MUTEX|SPIN one spinning on its owner first. */
static inline __u32 lw_flags_type(__u32 flags)
{
        if (flags & LW_F_MUTEX)
                return LW_MUTEX;
        if (flags & LW_F_RT)
                return LW_RTMUTEX;
        if (flags & LW_F_PERCPU)
                return LW_PERCPU_RWSEM;
        if (flags & LW_F_SPIN)
                return (flags & (LW_F_READ | LW_F_WRITE)) ? LW_RWLOCK : LW_SPINLOCK;
        if (flags & LW_F_READ)
                return LW_RWSEM_READ;
        if (flags & LW_F_WRITE)
                return LW_RWSEM_WRITE;
        return LW_OTHER;
}

/* Per-CPU totals since the program was loaded, one slot per CPU in an
 * mmap()ed array: the CPU that sees a wait end writes its own slot, the
 * daemon reads every slot each tick without a system call.  128 bytes, so
 * that two CPUs never write the same cache line. */
struct lw_cpu {
        __u64 count[LW_NTYPES];  /* waits that ended here, by type */
        __u64 wait_ns;           /* their total length */
        __u64 max_ns;            /* longest since the daemon last took it (it swaps in 0) */
        __u64 lost_task;         /* waits not timed: the per-task map was full */
        __u64 lost_caller;       /* timed waits not in the per-caller map: it was full */
        __u64 lost_caller_ns;    /*   and their total length */
        __u64 lost_stack;        /* timed waits whose stack could not be kept (stack map) */
        __u64 nested;            /* begins ignored: the task (or CPU, for spinning) already waited */
        __u64 pad[1];
};

/* Per-caller map key: the kernel stack (an id in the stack map, cut to
 * LW_STACK_DEPTH frames), the tracepoint flags, the lock's address, and
 * whose wait it was (own: 0 for any task, k for a task in the cgroup the
 * daemon registered as own slot k).  The daemon turns the stack into
 * "function+0xoff" of the first frame outside the locking code and the
 * address into a lock's name. */
struct lw_caller_key {
        __s32 stackid;           /* -1: the stack could not be kept */
        __u32 flags;
        __u64 lock;              /* the lock's address, as the tracepoint gives it */
        __u32 own;               /* 0, or the own_cg slot of the waiter's cgroup */
        __u32 pad;
};

/* What a lock's address is, recognised by the program when it first
 * meets a key (the waiter is the current task then). */
enum lw_kind {
        LW_KIND_OTHER,           /* named from kallsyms if static, else the address */
        LW_KIND_MMAP,            /* the waiter's current->mm->mmap_lock */
        LW_KIND_SIGLOCK,         /* the waiter's current->sighand->siglock */
        LW_KIND_RQ,              /* a CPU's runqueue lock (rq_lock_addr[]) */
        LW_KIND_MMAP_WAIT,       /* the spinlock inside the waiter's mmap_lock (its wait_lock) */
};

struct lw_caller_val {
        __u64 count;
        __u64 total_ns;
        __u64 max_ns;            /* of the waits since epoch began */
        __u64 min_ns;
        __u64 epoch;             /* the daemon's epoch when max/min were last reset */
        __u32 kind;              /* enum lw_kind */
        __u32 pad;
};

/* How many cgroups can be own at once (concurrent runs with a cgroup). */
#define LW_OWN_MAX 64
/* How many CPUs' runqueue lock addresses the program notes. */
#define LW_RQ_CPUS 1024

#define LW_STACK_DEPTH 8
/* How many distinct kernel stacks the program keeps. */
#define LW_STACKS 4096

/* Byte offsets of the kernel fields the program reads, found by the
 * daemon in the kernel's BTF (daemon/kernel/kbtf.c); -1: not there. */
struct lw_offsets {
        __s32 task_mm;          /* task_struct.mm */
        __s32 task_sighand;     /* task_struct.sighand */
        __s32 task_se;          /* task_struct.se */
        __s32 se_cfs_rq;        /* sched_entity.cfs_rq (CONFIG_FAIR_GROUP_SCHED) */
        __s32 cfs_rq_rq;        /* cfs_rq.rq */
        __s32 rq_lock;          /* rq.__lock */
        __s32 mm_mmap_lock;     /* mm_struct.mmap_lock */
        __s32 rwsem_wait_lock;  /* rw_semaphore.wait_lock */
        __s32 sighand_siglock;  /* sighand_struct.siglock */
};

#endif
