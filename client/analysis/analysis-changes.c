/* analysis-changes.c - a group's counters, and how they changed against
 * its baseline group (report --group-by --baseline).
 *
 * A count is a rate per second: each run's total over its duration, the
 * group's mean of those, compared by Welch's t-test of the per-run rates.
 * A maximum (lock_wait_max_ns: the longest single wait) is no rate and no
 * sum: a group's is the largest of its runs' maxima, compared with the
 * baseline's largest as it is, never tested (a t-test of maxima says
 * nothing about a mean).  Rates below a floor on both sides are listed
 * apart (analysis_negligible_floor).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "analysis.h"
#include "macro.h"

double analysis_negligible_floor(int metric)
{
        const char *u = metric_table[metric].unit;

        /* a time: 1% of one CPU, in the metric's own unit */
        if (streq(u, "s"))
                return ANALYSIS_NEGLIGIBLE_CPU_S;
        if (streq(u, "us"))
                return ANALYSIS_NEGLIGIBLE_CPU_S * 1e6;
        if (streq(u, "ns"))
                return ANALYSIS_NEGLIGIBLE_CPU_S * 1e9;
        return ANALYSIS_NEGLIGIBLE_PER_S;
}

void analysis_group_metrics(const struct analysis_run *runs, struct group *g, double *x, double *w)
{
        for (int m = 0; m < _M_MAX; m++) {
                struct group_metric *gm = &g->metrics[m];
                size_t k = 0, kc = 0;
                for (size_t i = 0; i < g->n; i++) {
                        const struct analysis_run *r = &runs[g->idx[i]];
                        if (!r->m[m].have)
                                continue;
                        gm->max = k == 0 ? r->m[m].total : fmax(gm->max, r->m[m].total);
                        x[k++] = r->m[m].per_s;
                        if (r->cpu_total > 0)
                                w[kc++] = r->m[m].total / r->cpu_total;
                }
                if (k == 0)
                        continue;
                gm->have = true;
                gm->is_max = metric_table[m].max;
                if (gm->is_max)
                        continue;
                stats_summary(x, k, &gm->per_s);
                gm->has_per_cpu_s = kc == k && stats_summary(w, kc, &gm->per_cpu_s) == 0;
        }
}

/* Within a rank: the tested ones by |t|, a change that is large against
 * its noise first; the untested ones by |change|, "new" first. */
static double change_sort(const struct metric_change *c)
{
        if (c->has_p)
                return fabs(c->t);
        return c->has_change ? fabs(c->change_pct) : 1e300;
}

static int cmp_change(const void *a, const void *b)
{
        const struct metric_change *x = a, *y = b;
        double sx = change_sort(x), sy = change_sort(y);
        if (x->rank != y->rank)
                return x->rank < y->rank ? -1 : 1;
        if (sx != sy)
                return sx > sy ? -1 : 1;
        return x->metric < y->metric ? -1 : x->metric > y->metric;
}

/* The values of m in the runs idx[0..n) that have it: rates, or for a
 * maximum the runs' maxima; their count, and their sum into *sum (a
 * maximum: their largest). */
static size_t values(const struct analysis_run *runs, const size_t *idx, size_t n, int m, double *out, double *sum)
{
        size_t k = 0;

        *sum = 0;
        for (size_t i = 0; i < n; i++) {
                const struct mstat *s = &runs[idx[i]].m[m];
                if (!s->have)
                        continue;
                out[k] = metric_table[m].max ? s->total : s->per_s;
                *sum = metric_table[m].max ? (k ? fmax(*sum, out[k]) : out[k]) : *sum + out[k];
                k++;
        }
        return k;
}

static void rank_rate(struct metric_change *c, const double *x, size_t nx, const double *y, size_t ny,
                      const struct group_opts *go)
{
        double floor = analysis_negligible_floor(c->metric), df;

        if (fabs(c->per_s) < floor && fabs(c->baseline_per_s) < floor)
                c->rank = CHANGE_NEGLIGIBLE;
        else if (nx < 2 || ny < 2)
                c->rank = CHANGE_UNTESTED;
        else {
                /* both sides constant: p 0 or 1, and t infinite or 0 */
                if (stats_welch(x, nx, y, ny, &c->p_value, &c->t, &df) < 0)
                        c->t = c->p_value == 0 ? INFINITY : 0;
                c->has_p = true;
                c->rank = c->p_value < go->alpha ? CHANGE_SIGNIFICANT : CHANGE_NOT_SIGNIFICANT;
        }
}

int analysis_metric_changes(const struct analysis_run *runs, struct group *g, const struct group *b,
                            const struct group_opts *go)
{
        _cleanup_free_ double *x = calloc(g->n + 1, sizeof *x), *y = calloc(b->n + 1, sizeof *y);

        if (!x || !y)
                return -ENOMEM;
        for (int m = 0; m < _M_MAX; m++) {
                struct metric_change *c = &g->changes[g->nchanges];
                double sx, sy;
                size_t nx = values(runs, g->idx, g->n, m, x, &sx), ny = values(runs, b->idx, b->n, m, y, &sy);

                if (!nx || !ny || (sx == 0 && sy == 0))
                        continue;
                g->nchanges++;
                *c = (struct metric_change){ .metric = m };
                if (metric_table[m].max) {
                        c->max = sx;
                        c->baseline_max = sy;
                        c->has_change = analysis_pct_change(sy, sx, &c->change_pct);
                        c->rank = CHANGE_MAXIMUM;
                        continue;
                }
                c->per_s = sx / (double)nx;
                c->baseline_per_s = sy / (double)ny;
                c->has_change = analysis_pct_change(c->baseline_per_s, c->per_s, &c->change_pct);
                rank_rate(c, x, nx, y, ny, go);
        }
        qsort(g->changes, g->nchanges, sizeof *g->changes, cmp_change);
        return 0;
}
