/* lockwait-decode.c - lock types, kernel symbols, callers and a run's
 * contended locks, from plain data (see lockwait-decode.h).
 *
 * The caller of a wait is found the way perf lock contention finds it
 * (perf 6.1, `perf lock contention -i` on what `perf lock record` saved):
 * skip the LW_CALLER_SKIP innermost frames whatever they are (the slow
 * path, the lock function, and one more: for an mmap_lock writer that is
 * the function taking it, so the caller named is the system call's entry),
 * then take the first frame that is not locking code.  The same rule, so
 * that both tools name the same callers.  Locking code is the kernel's scheduler text (mutex and
 * rwsem slow paths are __sched), its lock text (spinlocks), and the
 * tracepoint's own functions (__traceiter_contention_begin and, where the
 * stack starts in it, the perf/BPF glue: perf_trace_*, trace_call_bpf).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lockwait-decode.h"
#include "macro.h"

static const char *const type_metric[LW_NTYPES] = {
        [LW_SPINLOCK] = "spinlock",         [LW_RWLOCK] = "rwlock",
        [LW_MUTEX] = "mutex",               [LW_RWSEM_READ] = "rwsem_read",
        [LW_RWSEM_WRITE] = "rwsem_write",   [LW_PERCPU_RWSEM] = "percpu_rwsem",
        [LW_RTMUTEX] = "rtmutex",           [LW_OTHER] = "other",
};

const char *lw_type_metric_name(enum lw_type t)
{
        return (unsigned)t < LW_NTYPES ? type_metric[t] : "other";
}

/* perf's labels, keyed by the exact flags (LW_F_SPIN on a mutex means it
 * spun on the owner first; perf calls that "mutex" too) */
static const struct {
        uint32_t flags;
        const char *label;
} labels[] = {
        { LW_F_SPIN, "spinlock" },
        { LW_F_SPIN | LW_F_READ, "rwlock:R" },
        { LW_F_SPIN | LW_F_WRITE, "rwlock:W" },
        { LW_F_READ, "rwsem:R" },
        { LW_F_WRITE, "rwsem:W" },
        { LW_F_RT, "rt-mutex" },
        { LW_F_RT | LW_F_READ, "rwlock-rt:R" },
        { LW_F_RT | LW_F_WRITE, "rwlock-rt:W" },
        { LW_F_PERCPU | LW_F_READ, "pcpu-sem:R" },
        { LW_F_PERCPU | LW_F_WRITE, "pcpu-sem:W" },
        { LW_F_MUTEX, "mutex" },
        { LW_F_MUTEX | LW_F_SPIN, "mutex" },
        { 0, "semaphore" },
};

const char *lw_flags_label(uint32_t flags, char *buf, size_t size)
{
        for (size_t i = 0; i < ELEMENTSOF(labels); i++)
                if (labels[i].flags == flags)
                        return labels[i].label;
        snprintf(buf, size, "flags=0x%" PRIx32, flags);
        return buf;
}

/* ---- kernel symbols ---- */

struct ksym {
        uint64_t addr;
        uint32_t name;          /* offset in names */
        char type;              /* kallsyms' type letter: T text, D data, B bss, ... */
};

struct range {
        uint64_t start, end;
};

struct ksyms {
        struct ksym *v;
        size_t n;
        char *names;
        struct range lock[4];   /* locking code: sched text, lock text, tracepoint glue */
        size_t nlock;
};

static int ksym_cmp(const void *a, const void *b)
{
        const struct ksym *x = a, *y = b;
        return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static uint64_t sym_addr(const struct ksyms *ks, const char *name)
{
        for (size_t i = 0; i < ks->n; i++)
                if (streq(ks->names + ks->v[i].name, name))
                        return ks->v[i].addr;
        return 0;
}

/* The extent of symbol name: up to the next higher address. */
static struct range sym_range(const struct ksyms *ks, const char *name)
{
        for (size_t i = 0; i < ks->n; i++)
                if (streq(ks->names + ks->v[i].name, name)) {
                        size_t j = i + 1;
                        while (j < ks->n && ks->v[j].addr == ks->v[i].addr)
                                j++;
                        return (struct range){ ks->v[i].addr, j < ks->n ? ks->v[j].addr : ks->v[i].addr + 1 };
                }
        return (struct range){ 0, 0 };
}

static void add_range(struct ksyms *ks, struct range r)
{
        if (r.start && r.end > r.start && ks->nlock < ELEMENTSOF(ks->lock))
                ks->lock[ks->nlock++] = r;
}

int ksyms_parse(const char *buf, size_t len, struct ksyms **ret)
{
        _cleanup_free_ struct ksym *v = NULL;
        _cleanup_free_ char *names = NULL;
        size_t n = 0, cap = 0, nlen = 0, ncap = 0;
        bool any = false;
        const char *p = buf, *end = buf + len;
        struct ksyms *ks;

        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t)(end - p)), *q, *name;
                const char *eol = nl ? nl : end;
                char *e;
                uint64_t addr;
                size_t l;

                addr = strtoull(p, &e, 16);
                q = e;
                if (q == p || q >= eol || *q != ' ' || q + 3 >= eol || q[2] != ' ')
                        goto next;
                name = q + 3;
                for (l = 0; name + l < eol && name[l] != ' ' && name[l] != '\t'; l++)
                        ;
                if (l == 0)
                        goto next;
                any |= addr != 0;
                if (n == cap) {
                        struct ksym *t = realloc(v, (cap = cap ? cap * 2 : 4096) * sizeof *v);
                        if (!t)
                                return -ENOMEM;
                        v = t;
                }
                if (nlen + l + 1 > ncap) {
                        char *t;
                        ncap = MAX(ncap * 2, nlen + l + 1 + 65536);
                        t = realloc(names, ncap);
                        if (!t)
                                return -ENOMEM;
                        names = t;
                }
                memcpy(names + nlen, name, l);
                names[nlen + l] = 0;
                v[n++] = (struct ksym){ .addr = addr, .name = (uint32_t)nlen, .type = q[1] };
                nlen += l + 1;
        next:
                p = nl ? nl + 1 : end;
        }
        if (n == 0)
                return -EINVAL;
        if (!any)
                return -ENODATA;
        qsort(v, n, sizeof *v, ksym_cmp);
        ks = calloc(1, sizeof *ks);
        if (!ks)
                return -ENOMEM;
        ks->v = TAKE_PTR(v);
        ks->n = n;
        ks->names = TAKE_PTR(names);
        add_range(ks, (struct range){ sym_addr(ks, "__sched_text_start"), sym_addr(ks, "__sched_text_end") });
        add_range(ks, (struct range){ sym_addr(ks, "__lock_text_start"), sym_addr(ks, "__lock_text_end") });
        add_range(ks, sym_range(ks, "__traceiter_contention_begin"));
        add_range(ks, sym_range(ks, "trace_contention_begin"));
        *ret = ks;
        return 0;
}

struct ksyms *ksyms_free(struct ksyms *ks)
{
        if (ks) {
                free(ks->v);
                free(ks->names);
                free(ks);
        }
        return NULL;
}

size_t ksyms_count(const struct ksyms *ks)
{
        return ks ? ks->n : 0;
}

const char *ksyms_find(const struct ksyms *ks, uint64_t addr, uint64_t *ret_off)
{
        size_t lo = 0, hi;

        if (!ks || ks->n == 0 || addr < ks->v[0].addr)
                return NULL;
        hi = ks->n;
        while (hi - lo > 1) {           /* the last symbol at or below addr */
                size_t mid = lo + (hi - lo) / 2;
                if (ks->v[mid].addr <= addr)
                        lo = mid;
                else
                        hi = mid;
        }
        *ret_off = addr - ks->v[lo].addr;
        return ks->names + ks->v[lo].name;
}

const char *ksyms_find_data(const struct ksyms *ks, uint64_t addr, uint64_t *ret_off)
{
        size_t lo = 0, hi;

        if (!ks || ks->n == 0 || addr < ks->v[0].addr || addr >= ks->v[ks->n - 1].addr)
                return NULL;
        hi = ks->n;
        while (hi - lo > 1) {
                size_t mid = lo + (hi - lo) / 2;
                if (ks->v[mid].addr <= addr)
                        lo = mid;
                else
                        hi = mid;
        }
        /* kallsyms has no sizes: a static lock lies at most 64 KiB into its
         * object.  Farther, addr is in a gap no symbol covers: between the
         * per-CPU symbols' small offsets and the kernel image (the heap,
         * vmalloc), or, on a kernel without CONFIG_KALLSYMS_ALL (text
         * symbols and a few data markers only), behind a marker such as
         * __start_init_stack, which is no lock's name */
        if (addr - ks->v[lo].addr >= (64 << 10))
                return NULL;
        /* among the symbols at that address, a data one */
        for (size_t i = lo + 1; i-- > 0 && ks->v[i].addr == ks->v[lo].addr;)
                if (ks->v[i].type && strchr("dDbBrR", ks->v[i].type)) {
                        *ret_off = addr - ks->v[i].addr;
                        return ks->names + ks->v[i].name;
                }
        return NULL;
}

bool ksyms_is_lock_function(const struct ksyms *ks, uint64_t addr)
{
        uint64_t off;
        const char *name;

        for (size_t i = 0; ks && i < ks->nlock; i++)
                if (addr >= ks->lock[i].start && addr < ks->lock[i].end)
                        return true;
        /* the glue between the tracepoint and the program, where the
         * stack starts */
        name = ksyms_find(ks, addr, &off);
        return name && (startswith(name, "perf_trace_") || streq(name, "trace_call_bpf") ||
                        startswith(name, "bpf_trace_run") || startswith(name, "__bpf_trace_"));
}

void lw_caller_name(const struct ksyms *ks, const uint64_t *ips, size_t n, char *buf, size_t size)
{
        if (!ips || n == 0 || ips[0] == 0) {
                snprintf(buf, size, "[unknown]");
                return;
        }
        for (size_t i = LW_CALLER_SKIP; i < n && ips[i]; i++) {
                uint64_t off = 0;
                const char *name;

                if (ksyms_is_lock_function(ks, ips[i]))
                        continue;
                name = ksyms_find(ks, ips[i], &off);
                if (name)
                        snprintf(buf, size, "%s+0x%" PRIx64, name, off);
                else
                        snprintf(buf, size, "0x%" PRIx64, ips[i]);
                return;
        }
        snprintf(buf, size, "[locking code]");
}

static const char *const lock_prefixes[] = {
        /* lock text: spinlocks and rwlocks */
        "_raw_spin_", "_raw_read_", "_raw_write_", "queued_spin_lock_slowpath", "__pv_queued_spin_lock_slowpath",
        "queued_read_lock_slowpath", "queued_write_lock_slowpath", "native_queued_spin_lock_slowpath",
        /* scheduler text: sleeping locks and the scheduler */
        "mutex_lock", "__mutex_lock", "mutex_spin_on_owner", "down_read", "down_write", "__down_read",
        "__down_write", "down_killable", "down_interruptible", "down_timeout", "__down", "rwsem_down_",
        "rwsem_optimistic_spin", "rwsem_spin_on_owner", "percpu_down_", "__percpu_down_", "rt_mutex_",
        "__rt_mutex", "rt_spin_lock", "rtlock_", "schedule", "__schedule", "preempt_schedule", "io_schedule",
        /* the tracepoint and its glue */
        "__traceiter_contention_", "trace_contention_", "perf_trace_", "trace_call_bpf", "bpf_trace_run",
        "__bpf_trace_",
};

bool lw_is_lock_name(const char *name)
{
        for (size_t i = 0; i < ELEMENTSOF(lock_prefixes); i++)
                if (startswith(name, lock_prefixes[i]))
                        return true;
        return false;
}

int lw_parse_symbol(const char *s, char *name, size_t size, uint64_t *ret_off)
{
        const char *plus = strchr(s, '+'), *p;
        char *end;
        uint64_t off;

        if (!plus || plus == s || (size_t)(plus - s) >= size || !startswith(plus + 1, "0x"))
                return -EINVAL;
        for (p = s; p < plus; p++)
                if (*p == ' ' || *p == '/')
                        return -EINVAL;
        off = strtoull(plus + 3, &end, 16);
        if (end == plus + 3 || (*end && *end != '/' && *end != ' '))
                return -EINVAL;
        memcpy(name, s, (size_t)(plus - s));
        name[plus - s] = 0;
        *ret_off = off;
        return 0;
}

void lw_caller_name_by(lw_sym_fn sym, void *userdata, const uint64_t *ips, size_t n, char *buf, size_t size)
{
        if (!ips || n == 0 || ips[0] == 0) {
                snprintf(buf, size, "[unknown]");
                return;
        }
        for (size_t i = LW_CALLER_SKIP; i < n && ips[i]; i++) {
                char name[128];
                uint64_t off = 0;

                if (!sym || sym(userdata, ips[i], name, sizeof name, &off) < 0) {
                        snprintf(buf, size, "0x%" PRIx64, ips[i]);
                        return;
                }
                if (lw_is_lock_name(name))
                        continue;
                snprintf(buf, size, "%s+0x%" PRIx64, name, off);
                return;
        }
        snprintf(buf, size, "[locking code]");
}
