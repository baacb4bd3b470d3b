/* store-locks.h - the contended kernel locks of runs (schema/0006-locks.sql)
 * and the per-CPU maxima of "max" metrics over a run's ticks. */
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
};

struct store_lock_lost {
        bool known;             /* false: the run has no lock rows (no BPF then) */
        int64_t untimed, unattributed, unattributed_ns;
};

/* Write run id's locks and what was lost, in one transaction. */
int store_run_locks_put(struct store *s, int64_t run, const struct store_lock *v, size_t n,
                        const struct store_lock_lost *lost);
/* Read them back, largest total wait first. */
int store_run_locks_get(struct store *s, int64_t run, struct store_lock **ret, size_t *ret_n,
                        struct store_lock_lost *ret_lost);

/* Per-CPU maximum of metric's stored values over ticks in (after_tick,
 * upto_tick], in the catalogue unit: out[cpu] for cpu < nout (0 where
 * nothing was stored). */
int store_cpu_max(struct store *s, int metric, int64_t after_tick, int64_t upto_tick, double *out, int nout);

#endif
