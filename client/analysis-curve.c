/* analysis-curve.c - a scalability curve across runs (curve, plot curve).
 *
 * For each numeric value N of the tag (threads, vCPUs, ways): the mean
 * score with its min and max, the speedup over the smallest N (scaled by
 * that N, so a curve starting at 4 threads still reads as speedup over
 * one), the parallel efficiency, and each metric's rate per unit of score.
 * The Universal Scalability Law X(N) = lambda N / (1 + sigma (N-1) +
 * kappa N (N-1)) is fitted to the mean scores: sigma is contention, kappa
 * coherency, and sqrt((1 - sigma) / kappa) the N of peak throughput.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "macro.h"

static int cmp_point(const void *a, const void *b)
{
        double x = ((const struct curve_point *)a)->n, y = ((const struct curve_point *)b)->n;
        return x < y ? -1 : x > y;
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

/* The points of one series (runs whose series tag is value, or all). */
static int series_fill(const struct analysis_run *runs, size_t n, const char *by, const char *series_by,
                       const char *score, struct curve_series *cs)
{
        struct curve_point *pts = calloc(n + 1, sizeof *pts);
        _cleanup_free_ double *xn = NULL, *xx = NULL;
        size_t np = 0;

        if (!pts)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const struct store_score *s;
                double nv;
                size_t k;
                if (!run_point(&runs[i], by, series_by, cs->value, score, &s, &nv))
                        continue;
                for (k = 0; k < np && pts[k].n != nv; k++)
                        ;
                if (k == np) {
                        pts[np].n = nv;
                        pts[np].min = INFINITY;
                        pts[np].max = -INFINITY;
                        np++;
                }
                pts[k].nruns++;
                pts[k].mean += s->value;
                pts[k].min = fmin(pts[k].min, s->value);
                pts[k].max = fmax(pts[k].max, s->value);
                for (int m = 0; m < _M_MAX; m++)
                        if (runs[i].m[m].have && s->value != 0) {
                                pts[k].per_score[m] += runs[i].m[m].per_s / s->value;
                                pts[k].has_per_score[m] = true;
                        }
        }
        for (size_t k = 0; k < np; k++) {
                pts[k].mean /= (double)pts[k].nruns;
                for (int m = 0; m < _M_MAX; m++)
                        pts[k].per_score[m] /= (double)pts[k].nruns;
        }
        qsort(pts, np, sizeof *pts, cmp_point);
        for (size_t k = 0; k < np; k++) {
                pts[k].speedup = pts[k].mean / pts[0].mean * pts[0].n;
                pts[k].efficiency = pts[k].speedup / pts[k].n;
        }
        cs->pts = pts;
        cs->npts = np;

        xn = calloc(np + 1, sizeof *xn);
        xx = calloc(np + 1, sizeof *xx);
        if (!xn || !xx)
                return -ENOMEM;
        for (size_t k = 0; k < np; k++) {
                xn[k] = pts[k].n;
                xx[k] = pts[k].mean;
        }
        cs->has_usl = stats_usl_fit(xn, xx, np, &cs->usl) == 0;
        return 0;
}

int analysis_curve(const struct analysis_run *runs, size_t n, const char *by, const char *series_by,
                   const char *score, struct curve_result **ret)
{
        struct curve_result *cr = calloc(1, sizeof *cr);

        if (!cr || !(cr->series = calloc(n + 1, sizeof *cr->series)))
                goto oom;
        cr->by = by;
        cr->series_by = series_by;
        cr->score = score;
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
                if (series_fill(runs, n, by, series_by, score, &cr->series[j]) < 0)
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
        for (size_t j = 0; cr->series && j < cr->nseries; j++)
                free(cr->series[j].pts);
        free(cr->series);
        free(cr);
        return NULL;
}
