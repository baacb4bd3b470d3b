/* lockwait-decode.h - the parts of lock wait accounting that need neither
 * the kernel nor libbpf: lock types from tracepoint flags, kernel symbols
 * from /proc/kallsyms text, the caller of a wait from its stack, and a
 * run's contended locks from two snapshots of the per-caller map.  Unit
 * tested on fixtures (tests/unit/test-lockwait.c). */
#ifndef SCALEMON_LOCKWAIT_DECODE_H
#define SCALEMON_LOCKWAIT_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lockwait-abi.h"   /* bpf/lockwait-abi.h: map layouts, LW_F_*, enum lw_type */

/* "spinlock", "rwlock", ..., as in the metric names lock_contentions_<name>. */
const char *lw_type_metric_name(enum lw_type t);
/* The type column of the locks table, as perf lock contention prints it:
 * "spinlock", "rwlock:R", "rwsem:W", "pcpu-sem:R", "rt-mutex", "mutex"...
 * Unknown flags: "flags=0x%x" in buf. */
const char *lw_flags_label(uint32_t flags, char *buf, size_t size);

/* ---- kernel symbols ---- */
struct ksyms;
/* Parse /proc/kallsyms text ("ADDR TYPE NAME [MODULE]" lines).  Returns
 * -ENODATA if every address is 0 (hidden: kptr_restrict, or no CAP_SYSLOG). */
int ksyms_parse(const char *buf, size_t len, struct ksyms **ret);
struct ksyms *ksyms_free(struct ksyms *ks);
/* The symbol containing addr: its name and addr's offset in it; NULL if
 * addr is below the first symbol. */
const char *ksyms_find(const struct ksyms *ks, uint64_t addr, uint64_t *ret_off);
/* A static lock's name: the data symbol (kallsyms type d, D, b, B, r or R)
 * at or below addr, less than 64 KiB below it and with a symbol above it
 * (a heap, vmalloc or per-CPU object is no symbol's); NULL otherwise. */
const char *ksyms_find_data(const struct ksyms *ks, uint64_t addr, uint64_t *ret_off);
/* Is addr in the locking code, which perf lock contention skips too: the
 * scheduler text (mutex, rwsem slow paths), the lock text (spinlocks), the
 * tracepoint's own functions. */
bool ksyms_is_lock_function(const struct ksyms *ks, uint64_t addr);
size_t ksyms_count(const struct ksyms *ks);

/* The caller of a wait from its stack (innermost first, 0-terminated or n
 * long): "function+0xoff" of the first frame outside the locking code,
 * after the LW_CALLER_SKIP innermost ones (as perf lock contention does).
 * "[unknown]" when no stack was kept, "[locking code]" when every frame is
 * in it. */
#define LW_CALLER_SKIP 3
void lw_caller_name(const struct ksyms *ks, const uint64_t *ips, size_t n, char *buf, size_t size);

/* Without kallsyms' addresses (no CAP_SYSLOG: under scalemon.service), a
 * symbolizer names each address (lockwait.c asks the kernel through a BPF
 * program's "%pB"), and locking code is told by name: the functions of the
 * kernel's lock and scheduler text that a contended wait passes through
 * (_raw_spin_lock*, *_slowpath, mutex_lock*, down_write*, schedule*, ...)
 * and the tracepoint's glue. */
typedef int (*lw_sym_fn)(void *userdata, uint64_t addr, char *name, size_t size, uint64_t *ret_off);
bool lw_is_lock_name(const char *name);
void lw_caller_name_by(lw_sym_fn sym, void *userdata, const uint64_t *ips, size_t n, char *buf, size_t size);
/* "function+0xoff/0xsize [module]", as %pB prints it: name and offset;
 * -EINVAL if it is not that (an address the kernel could not name). */
int lw_parse_symbol(const char *s, char *name, size_t size, uint64_t *ret_off);

/* ---- per-caller snapshots and runs ---- */

struct lw_entry {
        struct lw_caller_key key;
        struct lw_caller_val val;
};

/* One reading of the per-caller map and of the per-CPU lost counters. */
struct lw_snap {
        struct lw_entry *e;     /* sorted by key (lw_snap_sort) */
        size_t n;
        uint64_t epoch;         /* the epoch in force while it was read */
        uint64_t lost_task, lost_caller, lost_caller_ns;   /* summed over CPUs */
        uint64_t nested;        /* begins ignored: a wait was already open (summed over CPUs) */
};
void lw_snap_sort(struct lw_snap *s);
void lw_snap_clear(struct lw_snap *s);

/* A run's view: counts and totals at its start, max and min folded in at
 * every boundary since. */
struct lw_acc {
        struct lw_snap start;
        struct lw_entry *mm;    /* key, val.max_ns/min_ns folded; val.count = seen */
        size_t nmm, capmm;
};
/* Fold boundary snapshot s into acc: every entry touched in s's epoch
 * (val.epoch == s->epoch) had its max/min restarted at the previous
 * boundary, which is no earlier than the run's start. */
int lw_acc_fold(struct lw_acc *acc, const struct lw_snap *s);
void lw_acc_clear(struct lw_acc *acc);

/* One row of a run's locks table, merged by (caller, type). */
struct lw_row {
        char caller[128];
        char type[24];
        uint64_t contended, total_ns, max_ns, min_ns;
        uint64_t locks;                         /* distinct lock objects waited for */
        uint64_t own_contended, own_total_ns;   /* of those, the run's own cgroup's tasks' */
};
/* One row of the "by lock" table, merged by lock address. */
struct lw_lock_row {
        uint64_t addr;
        char name[96];          /* "mmap_lock", "rq_lock", "siglock", "jiffies_lock", "pgd_lock+0x8" or "" */
        char type[24];          /* the type of most of its wait */
        uint64_t contended, total_ns, max_ns, min_ns;
        uint64_t callers;       /* distinct callers (rows of the by-caller table) */
        uint64_t own_contended, own_total_ns;
};
struct lw_lost {
        uint64_t untimed;       /* waits not timed: the per-task map was full */
        uint64_t unattributed;  /* timed waits missing from the table: the per-caller map was full */
        uint64_t unattributed_ns;
        uint64_t nested;        /* second begins of one wait (a mutex that spun, then slept) */
};
/* A run's contended locks, both ways. */
struct lw_result {
        struct lw_row *rows;
        size_t n;
        struct lw_lock_row *locks;
        size_t nlocks;
        struct lw_lost lost;
        bool has_own;                           /* the run had an own slot */
        uint64_t own_contended, own_total_ns;   /* its own tasks' waits, over every row */
};
void lw_result_clear(struct lw_result *r);

/* The caller of stack id stackid (-1: not kept) as lw_caller_name()
 * gives it: lockwait.c reads the stack map and keeps what it named (a
 * stack id always means the same stack), the tests use a fixture. */
typedef void (*lw_caller_fn)(void *userdata, int32_t stackid, char *buf, size_t size);
/* A lock's name from its address and what the program recognised it as
 * (enum lw_kind): "" when it has none. */
typedef void (*lw_lock_fn)(void *userdata, uint64_t addr, uint32_t kind, char *buf, size_t size);
/* The kind's name ("mmap_lock", "siglock", "rq_lock", "mmap_lock.wait_lock"), NULL for LW_KIND_OTHER. */
const char *lw_kind_name(uint32_t kind);

/* The run's rows: end - acc->start for counts and totals, acc's folded
 * max/min, callers named by caller() and locks by lock(), merged, largest
 * total first.  own: the run's own slot (0: none); entries of that slot
 * are its own tasks' waits. */
int lw_run_rows(const struct lw_acc *acc, const struct lw_snap *end, lw_caller_fn caller, lw_lock_fn lock,
                void *userdata, uint32_t own, struct lw_result *ret);

#endif
