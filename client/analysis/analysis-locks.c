/* analysis-locks.c - a run's contended kernel locks and its lock wait
 * share of CPU time, and locks compared between groups: typed results
 * (analysis.h), which locks.c formats.
 *
 * The locks come from run_lock and run_lock_object (schema/0006-locks.sql,
 * 0008-lock-objects.sql), written by scalemond when the run stopped: exact
 * counts and total waits between the run's start and stop, callers and
 * lock objects already named. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "macro.h"

int analysis_locks_load(struct store *st, struct analysis_run *r)
{
        int e = store_run_locks_get(st, r->info.id, &r->locks.v, &r->locks.n, &r->locks.lost);

        if (e < 0)
                return e;
        return store_run_lock_objects_get(st, r->info.id, &r->locks.obj, &r->locks.nobj);
}

void analysis_locks_free(struct analysis_locks *l)
{
        free(l->v);
        free(l->obj);
        memset(l, 0, sizeof *l);
}

static bool is_cpu_time(int m)
{
        for (int i = 0; i < ANALYSIS_CPU_TIMES; i++)
                if (analysis_cpu_time_metric[i] == m)
                        return true;
        return false;
}

bool analysis_lock_share(const struct analysis_run *r, enum total_level level, int loc, double *ret)
{
        double wait = 0, cpu = 0;
        bool have = false;

        if (level == LEVEL_SYSTEM) {
                if (!r->m[M_LOCK_WAIT_NS].have || r->cpu_total <= 0)
                        return false;
                *ret = r->m[M_LOCK_WAIT_NS].total / 1e9 / r->cpu_total;
                return true;
        }
        for (size_t i = 0; i < r->d.ntotals; i++) {
                const struct store_total *t = &r->d.totals[i];
                int m;
                if (t->level != level || t->loc != loc)
                        continue;
                m = metric_id_by_name(t->metric);
                if (m == M_LOCK_WAIT_NS) {
                        wait = t->value;
                        have = true;
                } else if (m >= 0 && is_cpu_time(m))
                        cpu += t->value;
        }
        if (!have || cpu <= 0)
                return false;
        *ret = wait / 1e9 / cpu;
        return true;
}

int analysis_lock_max_loc(const struct analysis_run *r, enum total_level level)
{
        int mx = -1;
        for (size_t i = 0; i < r->d.ntotals; i++)
                if (r->d.totals[i].level == level && r->d.totals[i].loc > mx &&
                    streq(r->d.totals[i].metric, metric_table[M_LOCK_WAIT_NS].name))
                        mx = r->d.totals[i].loc;
        return mx;
}

bool analysis_lock_counts(const struct analysis_run *r, struct lock_counts *ret)
{
        struct lock_counts c = { 0 };
        bool any = false;

        if (!r->m[M_LOCK_CONTENTIONS].have || !r->locks.lost.known)
                return false;
        for (int m = M_LOCK_CONTENTIONS_SPINLOCK; m <= M_LOCK_CONTENTIONS_RTMUTEX; m++)
                if (r->m[m].have) {
                        c.waits += r->m[m].total;
                        any = true;
                }
        if (!any)
                return false;
        c.begins = r->m[M_LOCK_CONTENTIONS].total;
        c.nested_known = r->locks.lost.nested >= 0;
        c.nested = c.nested_known ? (double)r->locks.lost.nested : 0;
        c.untimed = (double)r->locks.lost.untimed;
        c.edges = c.begins - c.waits - c.nested - c.untimed;
        *ret = c;
        return true;
}

static struct lock_change *find_change(struct lock_change *v, size_t n, const char *caller, const char *type)
{
        for (size_t i = 0; i < n; i++)
                if (streq(v[i].caller, caller) && streq(v[i].type, type))
                        return &v[i];
        return NULL;
}

static int change_cmp(const void *a, const void *b)
{
        const struct lock_change *x = a, *y = b;
        double dx = x->total_ns - x->baseline_total_ns, dy = y->total_ns - y->baseline_total_ns;
        return dx > dy ? -1 : dx < dy;
}

int analysis_lock_changes(const struct analysis_run *runs, const size_t *gidx, size_t gn, const size_t *bidx,
                          size_t bn, struct lock_change **ret, size_t *ret_n)
{
        struct lock_change *v = NULL, *c;
        size_t n = 0, cap = 0;

        for (int side = 0; side < 2; side++) {
                const size_t *idx = side ? bidx : gidx;
                size_t k = side ? bn : gn;
                for (size_t i = 0; i < k; i++) {
                        const struct analysis_locks *l = &runs[idx[i]].locks;
                        for (size_t j = 0; j < l->n; j++) {
                                c = find_change(v, n, l->v[j].caller, l->v[j].type);
                                if (!c) {
                                        if (n == cap) {
                                                struct lock_change *t = realloc(v, (cap = cap ? cap * 2 : 32) * sizeof *t);
                                                if (!t) {
                                                        free(v);
                                                        return -ENOMEM;
                                                }
                                                v = t;
                                        }
                                        c = &v[n++];
                                        memset(c, 0, sizeof *c);
                                        snprintf(c->caller, sizeof c->caller, "%s", l->v[j].caller);
                                        snprintf(c->type, sizeof c->type, "%s", l->v[j].type);
                                }
                                if (side)
                                        c->baseline_total_ns += (double)l->v[j].total_wait_ns / (double)bn;
                                else
                                        c->total_ns += (double)l->v[j].total_wait_ns / (double)gn;
                        }
                }
        }
        for (size_t i = 0; i < n; i++) {
                v[i].has_change = v[i].baseline_total_ns > 0;
                v[i].change_pct = v[i].has_change ? (v[i].total_ns / v[i].baseline_total_ns - 1) * 100 : 0;
        }
        if (n > 1)
                qsort(v, n, sizeof *v, change_cmp);
        *ret = v;
        *ret_n = n;
        return 0;
}
