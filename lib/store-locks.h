/* store-locks.h - the contended kernel locks of runs (schema/0006-locks.sql,
 * 0008-lock-objects.sql: by caller and by lock object) and the per-CPU maxima of "max" metrics over a run's ticks. */
#ifndef SCALEMON_STORE_LOCKS_H
#define SCALEMON_STORE_LOCKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

struct store_lock {
        char caller[128];       /* "function+0xoff" */
        char type[24];          /* "rwsem:W", ... */
        int64_t contended;
        int64_t total_wait_ns, max_wait_ns, min_wait_ns;
        int64_t locks;          /* distinct lock objects; 0: unknown */
        bool has_own;           /* the run had its own cgroup: */
        int64_t own_contended, own_total_wait_ns;       /* its tasks' share */
};

/* One lock object of a run (run_lock_object). */
struct store_lock_obj {
        char lock[24];          /* "0xffff888104a1c0e8" */
        char name[96];          /* "mmap_lock", "jiffies_lock", ... or "" */
        char type[24];
        int64_t contended, total_wait_ns, max_wait_ns;
        int64_t callers;        /* distinct callers */
        bool has_own;
        int64_t own_contended, own_total_wait_ns;
};

struct store_lock_lost {
        bool known;             /* false: the run has no lock rows (no BPF then) */
        int64_t untimed, unattributed, unattributed_ns;
        int64_t nested;         /* second begins of one wait; -1: not recorded (before schema 0008) */
};

/* Write run id's locks by caller (v), by lock object (o) and what was
 * lost, in one transaction. */
int store_run_locks_put(struct store *s, int64_t run, const struct store_lock *v, size_t n,
                        const struct store_lock_obj *o, size_t no, const struct store_lock_lost *lost);
/* Its lock objects, largest total wait first (none for a run from before
 * schema 0008). */
int store_run_lock_objects_get(struct store *s, int64_t run, struct store_lock_obj **ret, size_t *ret_n);
/* Read them back, largest total wait first. */
int store_run_locks_get(struct store *s, int64_t run, struct store_lock **ret, size_t *ret_n,
                        struct store_lock_lost *ret_lost);

/* Per-CPU maximum of metric's stored values over ticks in (after_tick,
 * upto_tick], in the catalogue unit: out[cpu] for cpu < nout (0 where
 * nothing was stored). */
int store_cpu_max(struct store *s, int metric, int64_t after_tick, int64_t upto_tick, double *out, int nout);

#endif
