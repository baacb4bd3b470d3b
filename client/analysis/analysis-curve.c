/* analysis-curve.c - a scalability curve across runs (curve, plot curve).
 *
 * For each numeric value N of the tag (threads, vCPUs, ways): the mean
 * score with its min and max; the throughput X, which is the score where
 * higher is better, and work per second where lower is better (a time:
 * 1/time when every run does the same work, N/time when the work grows
 * with N; nothing is assumed without being told); the speedup X(N) /
 * X(N0) over the smallest N present, and the efficiency speedup * N0 / N
 * (N0 is 1 when the runs include N=1; no speedup with one N); and each
 * metric's rate per unit of throughput.  The Universal Scalability Law
 * X(N) = lambda N / (1 + sigma (N-1) + kappa N (N-1)) is fitted to the
 * mean throughputs: sigma is contention, kappa coherency, and
 * sqrt((1 - sigma) / kappa) the N of peak throughput.  It is a result only
 * with CURVE_USL_MIN_N distinct N and r2 >= CURVE_USL_MIN_R2; below that
 * the fit says nothing (flat or noisy points fit any sigma).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "macro.h"

static int cmp_point(const void *a, const void *b)
{
        double x = ((const struct curve_point *)a)->n, y = ((const struct curve_point *)b)->n;
        return x < y ? -1 : x > y;
}

bool analysis_recorded_lower(const struct analysis_run *runs, size_t n, const char *key)
{
        size_t kl = strlen(key);

        for (size_t i = 0; i < n; i++) {
                const char *v = analysis_tag_value(&runs[i].d, ANALYSIS_LOWER_TAG);
                for (const char *p = v; p && *p;) {
                        size_t l = strcspn(p, ",");
                        if (l == kl && strncmp(p, key, kl) == 0)
                                return true;
                        p += l + (p[l] == ',');
                }
        }
        return false;
}

/* The run's throughput: the score, or work per second. */
static double throughput(const struct curve_opts *co, double n, double score)
{
        if (!co->lower_is_better)
                return score;
        if (score <= 0)
                return NAN;
        return co->work == CURVE_WORK_PER_N ? n / score : 1 / score;
}

/* A run's point: with the score and a numeric tag by, in the series. */
static bool run_point(const struct analysis_run *r, const char *by, const char *series_by, const char *value,
                      const char *score, const struct store_score **ret_s, double *ret_n)
{
        const char *sv = series_by ? analysis_tag_value(&r->d, series_by) : NULL;

        *ret_s = analysis_find_score(&r->d, score);
        if (!*ret_s || !analysis_numeric_tag(r, by, ret_n))
                return false;
        return !series_by || (sv && streq(sv, value));
}

/* Run r's counters per unit of its throughput x into the point: each
 * rate (a maximum has none), and the busy CPU time (every CPU time but
 * idle and iowait), where every run of the point recorded it. */
static void point_add_counters(struct curve_point *pt, const struct analysis_run *r, double x)
{
        double busy = r->cpu_total - r->cpu_time[3] - r->cpu_time[4];  /* idle, iowait */

        for (int m = 0; m < _M_MAX; m++)
                if (r->m[m].have && x != 0 && !metric_table[m].max) {
                        pt->per_score[m] += r->m[m].per_s / x;
                        pt->has_per_score[m] = true;
                }
        if (pt->nruns == 1)
                pt->has_busy_per_score = true;
        if (r->cpu_total > 0 && r->dur > 0 && x != 0)
                pt->busy_per_score += busy / r->dur / x;
        else
                pt->has_busy_per_score = false;
}

/* The tags the point's runs differ in, the curve's own two aside. */
static int point_pools(const struct analysis_run *runs, size_t n, const char *by, const char *series_by,
                       const char *score, const struct curve_opts *co, const struct curve_series *cs,
                       struct curve_point *pt)
{
        _cleanup_free_ size_t *idx = calloc(n + 1, sizeof *idx);
        const char *keys[2] = { by, series_by };
        size_t k = 0;

        if (!idx)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const struct store_score *s;
                double nv;
                if (run_point(&runs[i], by, series_by, cs->value, score, &s, &nv) && nv == pt->n &&
                    isfinite(throughput(co, nv, s->value)))
                        idx[k++] = i;
        }
        return analysis_pools(runs, idx, k, keys, 2, &pt->pools);
}

/* The points of one series (runs whose series tag is value, or all). */
static int series_fill(const struct analysis_run *runs, size_t n, const char *by, const char *series_by,
                       const char *score, const struct curve_opts *co, struct curve_series *cs)
{
        struct curve_point *pts = calloc(n + 1, sizeof *pts);
        _cleanup_free_ double *xn = NULL, *xx = NULL;
        size_t np = 0;

        if (!pts)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const struct store_score *s;
                double nv, x;
                size_t k;
                if (!run_point(&runs[i], by, series_by, cs->value, score, &s, &nv))
                        continue;
                x = throughput(co, nv, s->value);
                if (!isfinite(x))
                        continue;       /* a time of 0 */
                for (k = 0; k < np && pts[k].n != nv; k++)
                        ;
                if (k == np) {
                        pts[np].n = nv;
                        pts[np].min = INFINITY;
                        pts[np].max = -INFINITY;
                        pts[np].xmin = INFINITY;
                        pts[np].xmax = -INFINITY;
                        np++;
                }
                pts[k].nruns++;
                pts[k].mean += s->value;
                pts[k].min = fmin(pts[k].min, s->value);
                pts[k].max = fmax(pts[k].max, s->value);
                pts[k].x += x;
                pts[k].xmin = fmin(pts[k].xmin, x);
                pts[k].xmax = fmax(pts[k].xmax, x);
                point_add_counters(&pts[k], &runs[i], x);
        }
        for (size_t k = 0; k < np; k++) {
                pts[k].mean /= (double)pts[k].nruns;
                pts[k].x /= (double)pts[k].nruns;
                for (int m = 0; m < _M_MAX; m++)
                        pts[k].per_score[m] /= (double)pts[k].nruns;
                pts[k].busy_per_score /= (double)pts[k].nruns;
        }
        qsort(pts, np, sizeof *pts, cmp_point);
        for (size_t k = 0; k < np; k++)
                if (point_pools(runs, n, by, series_by, score, co, cs, &pts[k]) < 0) {
                        cs->pts = pts;
                        cs->npts = np;
                        return -ENOMEM;
                }
        cs->has_speedup = np >= 2 && pts[0].x != 0;
        cs->base_n = np ? pts[0].n : 0;
        for (size_t k = 0; cs->has_speedup && k < np; k++) {
                pts[k].speedup = pts[k].x / pts[0].x;
                pts[k].efficiency = pts[k].speedup * pts[0].n / pts[k].n;
        }
        cs->pts = pts;
        cs->npts = np;

        xn = calloc(np + 1, sizeof *xn);
        xx = calloc(np + 1, sizeof *xx);
        if (!xn || !xx)
                return -ENOMEM;
        for (size_t k = 0; k < np; k++) {
                xn[k] = pts[k].n;
                xx[k] = pts[k].x;
        }
        cs->has_usl = stats_usl_fit(xn, xx, np, &cs->usl) == 0;
        if (np < CURVE_USL_MIN_N)
                snprintf(cs->usl_why, sizeof cs->usl_why, "%zu distinct value%s of N: the USL needs at least %d", np,
                         np == 1 ? "" : "s", CURVE_USL_MIN_N);
        else if (!cs->has_usl)
                snprintf(cs->usl_why, sizeof cs->usl_why, "the fit did not converge");
        else if (!(cs->usl.r2 >= CURVE_USL_MIN_R2))
                snprintf(cs->usl_why, sizeof cs->usl_why,
                         "r2 %.2f is below %.2f: the points are flat or noisy, and any sigma fits them",
                         cs->usl.r2, CURVE_USL_MIN_R2);
        else
                cs->usl_ok = true;
        return 0;
}

int analysis_curve(const struct analysis_run *runs, size_t n, const char *by, const char *series_by,
                   const char *score, const struct curve_opts *co, struct curve_result **ret)
{
        struct curve_result *cr;

        if (co->lower_is_better && co->work == CURVE_WORK_UNKNOWN)
                return -EDOM;
        cr = calloc(1, sizeof *cr);
        if (!cr || !(cr->series = calloc(n + 1, sizeof *cr->series)))
                goto oom;
        cr->by = by;
        cr->series_by = series_by;
        cr->score = score;
        cr->opts = *co;
        if (series_by)
                for (size_t i = 0; i < n; i++) {
                        const char *sv = analysis_tag_value(&runs[i].d, series_by);
                        bool seen = false;
                        if (!sv)
                                continue;
                        for (size_t j = 0; j < cr->nseries && !seen; j++)
                                seen = streq(cr->series[j].value, sv);
                        if (!seen)
                                cr->series[cr->nseries++].value = sv;
                }
        else
                cr->nseries = 1;
        for (size_t j = 0; j < cr->nseries; j++)
                if (series_fill(runs, n, by, series_by, score, co, &cr->series[j]) < 0)
                        goto oom;
        *ret = cr;
        return 0;
oom:
        curve_result_free(cr);
        return -ENOMEM;
}

struct curve_result *curve_result_free(struct curve_result *cr)
{
        if (!cr)
                return NULL;
        for (size_t j = 0; cr->series && j < cr->nseries; j++) {
                for (size_t k = 0; k < cr->series[j].npts; k++)
                        pools_free(&cr->series[j].pts[k].pools);
                free(cr->series[j].pts);
        }
        free(cr->series);
        free(cr);
        return NULL;
}
