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
 * No vmlinux.h: the two tracepoints' records are declared below by hand,
 * from their format files (/sys/kernel/tracing/events/lock/contention_
 * {begin,end}/format), so that building does not depend on the build
 * machine's running kernel.  The layout is the tracepoint ABI of every
 * kernel since 5.19, where these tracepoints appeared.
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

struct {
        __uint(type, BPF_MAP_TYPE_STACK_TRACE);
        __uint(key_size, sizeof(__u32));
        __uint(value_size, LW_STACK_DEPTH * sizeof(__u64));
        __uint(max_entries, 4096);
} stacks SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __type(key, struct lw_caller_key);
        __type(value, struct lw_caller_val);
        __uint(max_entries, 4096);
} callers SEC(".maps");

static __always_inline struct lw_cpu *this_cpu(void)
{
        __u32 cpu = bpf_get_smp_processor_id();

        if (cpu >= max_cpus)
                return 0;
        return bpf_map_lookup_elem(&cpu_stat, &cpu);
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
        w.stackid = bpf_get_stackid(ctx, &stacks, 0);
        w.ts = bpf_ktime_get_ns();
        if (slot)
                *slot = w;
        else if (bpf_map_update_elem(&task_wait, &tid, &w, BPF_NOEXIST) < 0)
                c->lost_task++;                 /* full: this wait is not timed */
        return KEEP;
}

static __always_inline void add_caller(struct lw_cpu *c, const struct wait_begin *w, __u64 d)
{
        struct lw_caller_key k = { .stackid = w->stackid, .flags = w->flags };
        struct lw_caller_val *v, nv = { .count = 1, .total_ns = d, .max_ns = d, .min_ns = d, .epoch = epoch };
        __u64 old;

        if (w->stackid < 0)
                c->lost_stack++;                /* counted under stackid -1 */
        v = bpf_map_lookup_elem(&callers, &k);
        if (!v) {
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
