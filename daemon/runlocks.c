/* runlocks.c - a run's lock wait at its stop (see runlocks.h). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "macro.h"
#include "metric.h"
#include "runlocks.h"
#include "store-locks.h"

int runlocks_store(struct store *st, int64_t id, struct lockwait_run *run)
{
        _cleanup_free_ struct lw_row *rows = NULL;
        _cleanup_free_ struct store_lock *v = NULL;
        struct store_lock_lost lost;
        struct lw_lost l;
        size_t n = 0;
        int r;

        r = lockwait_run_stop(run, &rows, &n, &l);
        if (r < 0)
                return r;
        if (n) {
                v = calloc(n, sizeof *v);
                if (!v)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++) {
                snprintf(v[i].caller, sizeof v[i].caller, "%s", rows[i].caller);
                snprintf(v[i].type, sizeof v[i].type, "%s", rows[i].type);
                v[i].contended = (int64_t)rows[i].contended;
                v[i].total_wait_ns = (int64_t)rows[i].total_ns;
                v[i].max_wait_ns = (int64_t)rows[i].max_ns;
                v[i].min_wait_ns = (int64_t)rows[i].min_ns;
        }
        lost = (struct store_lock_lost){ .known = true, .untimed = (int64_t)l.untimed,
                                         .unattributed = (int64_t)l.unattributed,
                                         .unattributed_ns = (int64_t)l.unattributed_ns };
        return store_run_locks_put(st, id, v, n, &lost);
}

int runlocks_max_values(struct store *st, int64_t after_tick, int64_t upto_tick, double *vals, int nloc)
{
        for (int m = 0; m < _M_MAX; m++) {
                int r;
                if (!metric_table[m].max || metric_table[m].scope != SCOPE_CPU)
                        continue;
                r = store_cpu_max(st, m, after_tick, upto_tick, &vals[m * nloc], nloc);
                if (r < 0)
                        return r;
        }
        return 0;
}
