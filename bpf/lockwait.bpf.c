// SPDX-License-Identifier: GPL-2.0
/* lockwait.bpf.c - how long kernel locks are waited for, and where.
 *
 * Two tracepoint programs: lock:contention_begin notes when a wait began,
 * lock:contention_end adds its length to
 *   - the CPU's slot in cpu_stat (count by lock type, total, maximum), read
 *     by the daemon every tick through mmap(), and
 *   - the (stack, flags) entry of callers (count, total, max, min), read
 *     by the daemon at run boundaries.
 * Nothing is streamed to user space.  Every map is bounded; what a full
 * map cost is counted in the CPU's slot (lost_*), never dropped silently.
 *
 * Where the begin time is kept: a task that spins (a spinlock or rwlock,
 * LW_F_SPIN without LW_F_MUTEX) cannot sleep or move while it spins, so
 * its wait is kept in a per-CPU slot; a task that may sleep (mutex, rwsem,
 * ...) is kept by thread id in a hash.  So a spinlock waited for inside a
 * sleeping wait (an rwsem's wait_lock) is timed too.  A second begin while
 * a wait is already open in the same slot (a mutex that spins, then
 * sleeps, fires twice) is ignored and counted as nested.
 *
 * Lock identity: a key is (stack, flags, lock address, own slot).  When
 * a key is first met, the program recognises the address as the waiter's
 * mm->mmap_lock (or the spinlock inside it, its wait_lock) or
 * sighand->siglock, or as this CPU's runqueue lock, with field offsets
 * the daemon found in the kernel's BTF (daemon/kernel/kbtf.c) and set
 * before loading; a kernel without BTF or without those fields leaves
 * those locks named by address.  Each
 * CPU notes its runqueue lock's address in rq_lock_addr[] so that the
 * daemon also recognises another CPU's.  The runqueue is found through
 * the running task (current->se.cfs_rq->rq: its CPU's, with group
 * scheduling), not through the per-CPU symbol runqueues: a kernel without
 * CONFIG_KALLSYMS_ALL cannot resolve a data symbol for a BPF program, and
 * would refuse the whole program.
 *
 * No vmlinux.h: the two tracepoints' records are declared below by hand,
 * from their format files (/sys/kernel/tracing/events/lock/contention_
 * {begin,end}/format), so that building does not depend on the build
 * machine's running kernel.  The layout is the tracepoint ABI of every
 * kernel since 5.19, where these tracepoints appeared.  The few kernel
 * structure fields read are read at the offsets in lw_off (no CO-RE
 * relocation: libbpf then never loads the kernel's BTF, 5 MiB).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "lockwait-abi.h"

char LICENSE[] SEC("license") = "GPL";   /* bpf_get_stackid() is GPL-only */

/* common_type .. common_pid: 8 bytes, then the event's own fields */
struct tp_contention_begin {
        __u64 common;
        __u64 lock_addr;        /* offset 8, size 8 */
        __u32 flags;            /* offset 16, size 4: LW_F_* */
};

struct tp_contention_end {
        __u64 common;
        __u64 lock_addr;        /* offset 8, size 8 */
        __s32 ret;              /* offset 16, size 4 */
};

/* The kernel structures' field offsets, set by the daemon before loading
 * (lockwait-abi.h); -1: not in this kernel. */
const volatile struct lw_offsets lw_off = {
        .task_mm = -1, .task_sighand = -1, .task_se = -1, .se_cfs_rq = -1, .cfs_rq_rq = -1,
        .rq_lock = -1, .mm_mmap_lock = -1, .rwsem_wait_lock = -1, .sighand_siglock = -1,
};

/* The pointer at p + off, 0 if it cannot be read. */
static __always_inline __u64 read_ptr(__u64 p, __s32 off)
{
        __u64 v = 0;

        if (bpf_probe_read_kernel(&v, sizeof v, (const void *)(p + off)) < 0)
                return 0;
        return v;
}

/* What a tracepoint program returns: 0 would also suppress the event for
 * every perf user of the tracepoint (perf_trace_run_bpf_submit()), among
 * them scalemond's own lock_contentions counter and perf lock record. */
#define KEEP 1

/* One open wait. */
struct wait_begin {
        __u64 ts;               /* bpf_ktime_get_ns() at the begin */
        __u64 lock;             /* lock address: the end must match it */
        __u32 flags;
        __s32 stackid;
};

/* Set by the daemon before loading. */
const volatile __u32 max_cpus = 1;      /* entries of cpu_stat */

/* The daemon's epoch: it bumps it at every run boundary, after reading
 * callers; a caller entry first touched in a new epoch restarts max/min. */
__u64 epoch = 0;

/* Number of cgroups in own_cg: 0 spares the lookup. */
__u32 own_n = 0;

/* Each CPU's runqueue lock address, noted by the CPU itself. */
__u64 rq_lock_addr[LW_RQ_CPUS] = {};

struct {
        __uint(type, BPF_MAP_TYPE_ARRAY);
        __uint(map_flags, BPF_F_MMAPABLE);
        __type(key, __u32);
        __type(value, struct lw_cpu);
        __uint(max_entries, 1);         /* resized to max_cpus by the daemon */
} cpu_stat SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __type(key, __u32);             /* thread id */
        __type(value, struct wait_begin);
        __uint(max_entries, 16384);
} task_wait SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
        __type(key, __u32);
        __type(value, struct wait_begin);
        __uint(max_entries, 1);
} spin_wait SEC(".maps");

/* Kernel stacks, each kept once under an id of ours: stack_ids finds a
 * stack's id, stacks[id] is the stack for the daemon.  A hash map on the
 * whole stack never confuses two stacks; the kernel's stack-trace map
 * keeps one stack per hash bucket and turns away the second stack of a
 * bucket, whose waits would then have no caller. */
struct lw_stack {
        __u64 ip[LW_STACK_DEPTH];
};

struct {
        __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
        __type(key, __u32);
        __type(value, struct lw_stack);
        __uint(max_entries, 1);
} stack_buf SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __type(key, struct lw_stack);
        __type(value, __u32);
        __uint(max_entries, LW_STACKS);
} stack_ids SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_ARRAY);
        __type(key, __u32);
        __type(value, struct lw_stack);
        __uint(max_entries, LW_STACKS);
} stacks SEC(".maps");

/* The next stack id to give. */
__u32 next_stack = 0;

struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __type(key, struct lw_caller_key);
        __type(value, struct lw_caller_val);
        __uint(max_entries, 16384);     /* (caller, lock) pairs; the daemon may resize */
} callers SEC(".maps");

/* The cgroups whose tasks' waits are the benchmark's own: cgroup v2 id
 * (bpf_get_current_cgroup_id()) to slot, written by the daemon. */
struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __type(key, __u64);
        __type(value, __u32);
        __uint(max_entries, LW_OWN_MAX);
} own_cg SEC(".maps");

static __always_inline struct lw_cpu *this_cpu(void)
{
        __u32 cpu = bpf_get_smp_processor_id();

        if (cpu >= max_cpus)
                return 0;
        return bpf_map_lookup_elem(&cpu_stat, &cpu);
}

/* This CPU's runqueue lock address, noted once. */
static __always_inline void note_rq_lock(void)
{
        __u32 cpu = bpf_get_smp_processor_id();
        __u64 cfs, rq;

        if (cpu >= LW_RQ_CPUS || rq_lock_addr[cpu] || lw_off.task_se < 0 || lw_off.se_cfs_rq < 0 ||
            lw_off.cfs_rq_rq < 0 || lw_off.rq_lock < 0)
                return;
        cfs = read_ptr(bpf_get_current_task(), lw_off.task_se + lw_off.se_cfs_rq);
        rq = cfs ? read_ptr(cfs, lw_off.cfs_rq_rq) : 0;
        if (rq)
                rq_lock_addr[cpu] = rq + lw_off.rq_lock;
}

/* What lock is, seen from the waiter (the current task). */
static __always_inline __u32 lock_kind(__u64 lock)
{
        __u64 t = bpf_get_current_task();
        __u32 cpu = bpf_get_smp_processor_id();
        __u64 p;

        if (cpu < LW_RQ_CPUS && lock == rq_lock_addr[cpu])
                return LW_KIND_RQ;
        if (lw_off.task_mm >= 0 && lw_off.mm_mmap_lock >= 0) {
                p = read_ptr(t, lw_off.task_mm);
                if (p)
                        p += lw_off.mm_mmap_lock;
                if (p && lock == p)
                        return LW_KIND_MMAP;
                if (p && lw_off.rwsem_wait_lock >= 0 && lock == p + lw_off.rwsem_wait_lock)
                        return LW_KIND_MMAP_WAIT;
        }
        if (lw_off.task_sighand >= 0 && lw_off.sighand_siglock >= 0) {
                p = read_ptr(t, lw_off.task_sighand);
                if (p && lock == p + lw_off.sighand_siglock)
                        return LW_KIND_SIGLOCK;
        }
        return LW_KIND_OTHER;
}

/* The id of the current kernel stack; -1 if it could not be kept (the
 * maps are full). */
static __always_inline __s32 stack_id(void *ctx)
{
        __u32 zero = 0, n, *id;
        struct lw_stack *buf = bpf_map_lookup_elem(&stack_buf, &zero);

        if (!buf || bpf_get_stack(ctx, buf, sizeof *buf, 0) <= 0)
                return -1;                      /* the rest of buf is zeroed */
        id = bpf_map_lookup_elem(&stack_ids, buf);
        if (id)
                return (__s32)*id;
        n = __sync_fetch_and_add(&next_stack, 1);
        if (n >= LW_STACKS || bpf_map_update_elem(&stacks, &n, buf, BPF_ANY) < 0)
                return -1;
        if (bpf_map_update_elem(&stack_ids, buf, &n, BPF_NOEXIST) == 0)
                return (__s32)n;
        id = bpf_map_lookup_elem(&stack_ids, buf);      /* another CPU gave it an id first */
        return id ? (__s32)*id : -1;
}

static __always_inline int spins(__u32 flags)
{
        return (flags & (LW_F_SPIN | LW_F_MUTEX)) == LW_F_SPIN;
}

SEC("tracepoint/lock/contention_begin")
int lw_begin(struct tp_contention_begin *ctx)
{
        struct wait_begin w = { .lock = ctx->lock_addr, .flags = ctx->flags }, *slot = 0;
        struct lw_cpu *c = this_cpu();
        __u32 zero = 0, tid = (__u32)bpf_get_current_pid_tgid();
        int spin = spins(w.flags);

        if (!c)
                return KEEP;
        note_rq_lock();
        if (spin) {
                slot = bpf_map_lookup_elem(&spin_wait, &zero);
                if (!slot)
                        return KEEP;
                if (slot->lock) {               /* already spinning on this CPU */
                        c->nested++;
                        return KEEP;
                }
        } else if (bpf_map_lookup_elem(&task_wait, &tid)) {
                c->nested++;                    /* already waiting (a mutex spun, now sleeps) */
                return KEEP;
        }
        /* the stack at the begin, cut to LW_STACK_DEPTH frames */
        w.stackid = stack_id(ctx);
        w.ts = bpf_ktime_get_ns();
        if (slot)
                *slot = w;
        else if (bpf_map_update_elem(&task_wait, &tid, &w, BPF_NOEXIST) < 0)
                c->lost_task++;                 /* full: this wait is not timed */
        return KEEP;
}

static __always_inline void add_caller(struct lw_cpu *c, const struct wait_begin *w, __u64 d)
{
        struct lw_caller_key k = { .stackid = w->stackid, .flags = w->flags, .lock = w->lock };
        struct lw_caller_val *v, nv = { .count = 1, .total_ns = d, .max_ns = d, .min_ns = d, .epoch = epoch };
        __u64 old, cg;
        __u32 *own;

        if (w->stackid < 0)
                c->lost_stack++;                /* counted under stackid -1 */
        if (own_n) {
                cg = bpf_get_current_cgroup_id();
                own = bpf_map_lookup_elem(&own_cg, &cg);
                if (own)
                        k.own = *own;
        }
        v = bpf_map_lookup_elem(&callers, &k);
        if (!v) {
                nv.kind = lock_kind(w->lock);
                if (bpf_map_update_elem(&callers, &k, &nv, BPF_NOEXIST) == 0)
                        return;
                v = bpf_map_lookup_elem(&callers, &k);  /* another CPU inserted it */
                if (!v) {
                        c->lost_caller++;       /* full */
                        c->lost_caller_ns += d;
                        return;
                }
        }
        __sync_fetch_and_add(&v->count, 1);
        __sync_fetch_and_add(&v->total_ns, d);
        if (v->epoch != nv.epoch) {             /* first wait of this epoch */
                v->epoch = nv.epoch;
                v->max_ns = d;
                v->min_ns = d;
                return;
        }
        /* other CPUs update the same entry: compare and swap, a few tries */
        for (int i = 0; i < 4; i++) {
                old = v->max_ns;
                if (d <= old || __sync_val_compare_and_swap(&v->max_ns, old, d) == old)
                        break;
        }
        for (int i = 0; i < 4; i++) {
                old = v->min_ns;
                if (d >= old || __sync_val_compare_and_swap(&v->min_ns, old, d) == old)
                        break;
        }
}

SEC("tracepoint/lock/contention_end")
int lw_end(struct tp_contention_end *ctx)
{
        struct lw_cpu *c = this_cpu();
        struct wait_begin w, *slot;
        __u32 zero = 0, tid = 0;
        int from_task = 0;
        __u64 d;

        if (!c)
                return KEEP;
        /* a spinning wait on this CPU first: while it is open, this CPU
         * cannot be ending a sleeping one */
        slot = bpf_map_lookup_elem(&spin_wait, &zero);
        if (slot && slot->lock) {
                if (slot->lock != ctx->lock_addr)
                        return KEEP;
        } else {
                tid = (__u32)bpf_get_current_pid_tgid();
                slot = bpf_map_lookup_elem(&task_wait, &tid);
                if (!slot || slot->lock != ctx->lock_addr)
                        return KEEP;       /* began before we were loaded, or ignored as nested */
                from_task = 1;
        }
        w = *slot;
        if (from_task)
                bpf_map_delete_elem(&task_wait, &tid);
        else
                slot->lock = 0;
        d = bpf_ktime_get_ns() - w.ts;

        c->count[lw_flags_type(w.flags)]++;
        c->wait_ns += d;
        if (d > c->max_ns)
                c->max_ns = d;
        add_caller(c, &w, d);
        return KEEP;
}

/* ---- naming callers without /proc/kallsyms' addresses ----
 * Under scalemon.service the daemon has no CAP_SYSLOG, so /proc/kallsyms
 * shows every address as 0.  The kernel still names an address for a BPF
 * program: "%pB" prints "function+0xoff/0xsize [module]" (no address).
 * The daemon writes sym_addr, runs this program (BPF_PROG_TEST_RUN, no
 * capability needed once loaded) and reads sym_name. */
__u64 sym_addr = 0;
char sym_name[160] = "";

SEC("syscall")
int lw_symbolize(void *ctx)
{
        __u64 args[1] = { sym_addr };

        bpf_snprintf(sym_name, sizeof(sym_name), "%pB", args, sizeof(args));
        return 0;
}
