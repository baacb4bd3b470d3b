/* runlocks.c - a run's lock wait at its stop (see runlocks.h). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "macro.h"
#include "metric.h"
#include "runlocks.h"
#include "store-locks.h"

int runlocks_stop(struct lockwait_run *run, struct lw_result *ret)
{
        return lockwait_run_stop(run, ret);
}

int runlocks_own_total(const struct lw_result *res, struct store_total **rows, size_t *n)
{
        struct store_total *t;

        if (!res->has_own)
                return 0;
        t = realloc(*rows, (*n + 1) * sizeof *t);
        if (!t)
                return -ENOMEM;
        *rows = t;
        t[*n] = (struct store_total){ .level = LEVEL_CGROUP, .loc = 0, .value = (double)res->own_total_ns };
        snprintf(t[*n].metric, sizeof t[*n].metric, "%s", metric_table[M_LOCK_WAIT_NS].name);
        (*n)++;
        return 0;
}

static void copy_row(struct store_lock *d, const struct lw_row *r, bool own)
{
        snprintf(d->caller, sizeof d->caller, "%s", r->caller);
        snprintf(d->type, sizeof d->type, "%s", r->type);
        d->contended = (int64_t)r->contended;
        d->total_wait_ns = (int64_t)r->total_ns;
        d->max_wait_ns = (int64_t)r->max_ns;
        d->min_wait_ns = (int64_t)r->min_ns;
        d->locks = (int64_t)r->locks;
        d->has_own = own;
        d->own_contended = (int64_t)r->own_contended;
        d->own_total_wait_ns = (int64_t)r->own_total_ns;
}

static void copy_lock(struct store_lock_obj *d, const struct lw_lock_row *r, bool own)
{
        snprintf(d->lock, sizeof d->lock, "0x%016" PRIx64, r->addr);
        snprintf(d->name, sizeof d->name, "%s", r->name);
        snprintf(d->type, sizeof d->type, "%s", r->type);
        d->contended = (int64_t)r->contended;
        d->total_wait_ns = (int64_t)r->total_ns;
        d->max_wait_ns = (int64_t)r->max_ns;
        d->callers = (int64_t)r->callers;
        d->has_own = own;
        d->own_contended = (int64_t)r->own_contended;
        d->own_total_wait_ns = (int64_t)r->own_total_ns;
}

int runlocks_put(struct store *st, int64_t id, const struct lw_result *res)
{
        _cleanup_free_ struct store_lock *v = NULL;
        _cleanup_free_ struct store_lock_obj *o = NULL;
        struct store_lock_lost lost;

        if (res->n && !(v = calloc(res->n, sizeof *v)))
                return -ENOMEM;
        if (res->nlocks && !(o = calloc(res->nlocks, sizeof *o)))
                return -ENOMEM;
        for (size_t i = 0; i < res->n; i++)
                copy_row(&v[i], &res->rows[i], res->has_own);
        for (size_t i = 0; i < res->nlocks; i++)
                copy_lock(&o[i], &res->locks[i], res->has_own);
        lost = (struct store_lock_lost){ .known = true, .untimed = (int64_t)res->lost.untimed,
                                         .unattributed = (int64_t)res->lost.unattributed,
                                         .unattributed_ns = (int64_t)res->lost.unattributed_ns,
                                         .nested = (int64_t)res->lost.nested };
        return store_run_locks_put(st, id, v, res->n, o, res->nlocks, &lost);
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
