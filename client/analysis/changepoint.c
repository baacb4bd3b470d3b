/* changepoint.c - PELT for changes in mean, with a penalty from the
 * series' own noise: see changepoint.h for the model and the choices. */
#include "config.h"

#include <errno.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "changepoint.h"
#include "macro.h"

#define MAD_TO_SIGMA 0.6744897501960817         /* Phi^-1(3/4): MAD of a standard normal */
#define CP_DIRECT_MAX 1000                      /* longer series: blocks first (see cp_pelt) */

double cp_noise_sigma(const double *x, size_t n)
{
        _cleanup_free_ double *d = NULL;
        double med, mad, sd;

        if (!x || n < 3)
                return 0;
        d = malloc((n - 1) * sizeof *d);
        if (!d)
                return 0;
        for (size_t i = 0; i + 1 < n; i++)
                d[i] = x[i + 1] - x[i];
        sd = gsl_stats_sd(d, 1, n - 1);
        gsl_sort(d, 1, n - 1);
        med = gsl_stats_median_from_sorted_data(d, 1, n - 1);
        for (size_t i = 0; i + 1 < n; i++)
                d[i] = fabs(d[i] - med);
        gsl_sort(d, 1, n - 1);
        mad = gsl_stats_median_from_sorted_data(d, 1, n - 1);
        if (mad > 0)
                return mad / MAD_TO_SIGMA / M_SQRT2;
        return isfinite(sd) ? sd / M_SQRT2 : 0;
}

double cp_noise_sigma_sd(const double *x, size_t n)
{
        _cleanup_free_ double *d = NULL;
        double sd;

        if (!x || n < 3)
                return 0;
        d = malloc((n - 1) * sizeof *d);
        if (!d)
                return 0;
        for (size_t i = 0; i + 1 < n; i++)
                d[i] = x[i + 1] - x[i];
        sd = gsl_stats_sd(d, 1, n - 1);
        return isfinite(sd) ? sd / M_SQRT2 : 0;
}

double cp_default_penalty(size_t n)
{
        return n >= 2 ? 3 * log((double)n) : 0;
}

/* PELT proper on x[0..n) with sigma and beta known. */
static int pelt(const double *x, size_t n, double sigma, double beta, size_t minseg, size_t **ret, size_t *ret_n)
{
        _cleanup_free_ double *S = NULL, *Q = NULL, *F = NULL;
        _cleanup_free_ size_t *R = NULL, *last = NULL, *cps = NULL;
        size_t nr = 0, ncp = 0;
        double mean = 0, inv = 1 / (sigma * sigma);

        for (size_t i = 0; i < n; i++)
                mean += x[i] / (double)n;
        /* prefix sums of the centred series: cost(a, b) in O(1) */
        S = calloc(n + 1, sizeof *S);
        Q = calloc(n + 1, sizeof *Q);
        F = calloc(n + 1, sizeof *F);
        R = calloc(n + 1, sizeof *R);
        last = calloc(n + 1, sizeof *last);
        if (!S || !Q || !F || !R || !last)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                double v = x[i] - mean;
                S[i + 1] = S[i] + v;
                Q[i + 1] = Q[i] + v * v;
        }
#define COST(a, b) fmax(0.0, ((Q[b] - Q[a]) - (S[b] - S[a]) * (S[b] - S[a]) / (double)((b) - (a))) * inv)

        /* F[t]: least cost of x[0..t); F[0] = -beta so that a single
         * segment costs its cost alone.  R: the candidate last change
         * points, pruned when they cannot be optimal again (invariant:
         * F[tau] + cost(tau, t) <= F[t] for every tau kept, K = 0 since
         * splitting a segment never raises this cost). */
        F[0] = -beta;
        for (size_t t = 1; t <= n; t++) {
                double best = INFINITY;
                size_t arg = 0, k = 0;

                F[t] = INFINITY;
                if (t < minseg)
                        continue;
                /* tau = t - minseg becomes a candidate when it is itself
                 * the end of a valid segmentation */
                if (t - minseg == 0 || t - minseg >= minseg)
                        R[nr++] = t - minseg;
                for (size_t i = 0; i < nr; i++) {
                        double c = F[R[i]] + COST(R[i], t) + beta;
                        if (c < best) {
                                best = c;
                                arg = R[i];
                        }
                }
                F[t] = best;
                last[t] = arg;
                for (size_t i = 0; i < nr; i++)
                        if (F[R[i]] + COST(R[i], t) <= best)
                                R[k++] = R[i];
                nr = k;
        }
#undef COST

        /* back from n along last[] */
        for (size_t t = last[n]; t > 0; t = last[t])
                ncp++;
        *ret = NULL;
        *ret_n = 0;
        if (ncp == 0)
                return 0;
        cps = malloc(ncp * sizeof *cps);
        if (!cps)
                return -ENOMEM;
        {
                size_t i = ncp;
                for (size_t t = last[n]; t > 0; t = last[t])
                        cps[--i] = t;
        }
        *ret = TAKE_PTR(cps);
        *ret_n = ncp;
        return 0;
}

/* Sum of squared deviations from the mean of x[a..b). */
static double sse(const double *x, size_t a, size_t b)
{
        double m = 0, s = 0;
        for (size_t i = a; i < b; i++)
                m += x[i] / (double)(b - a);
        for (size_t i = a; i < b; i++)
                s += (x[i] - m) * (x[i] - m);
        return s;
}

int cp_pelt(const double *x, size_t n, const struct cp_opts *o, size_t **ret, size_t *ret_n)
{
        _cleanup_free_ double *c = NULL;
        size_t minseg = o && o->min_seg ? o->min_seg : 1, f, nc, *cps = NULL, ncp = 0;
        double sigma, beta;
        int r;

        *ret = NULL;
        *ret_n = 0;
        if (n > 0 && !x)
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if (!isfinite(x[i]))
                        return -EINVAL;
        sigma = o && o->sigma > 0 ? o->sigma : cp_noise_sigma(x, n);
        if (o && o->sigma_min > 0 && sigma < o->sigma_min)
                sigma = o->sigma_min;
        if (n < 2 * minseg || !(sigma > 0))
                return 0;
        beta = o && o->penalty > 0 ? o->penalty : cp_default_penalty(n);
        if (n <= CP_DIRECT_MAX)
                return pelt(x, n, sigma, beta, minseg, ret, ret_n);

        /* Long series: PELT is quadratic where there is no change to prune
         * at, so it runs on the means of blocks of f points (n / f <=
         * CP_DIRECT_MAX; sigma / sqrt(f) for a mean of f; the penalty of
         * the full length, which is what the segmentation is paid for),
         * and each change point found is then placed at full resolution:
         * the split of the span between its neighbours, within a block
         * either side, of least squared error. */
        f = (n + CP_DIRECT_MAX - 1) / CP_DIRECT_MAX;
        nc = n / f;
        c = calloc(nc, sizeof *c);
        if (!c)
                return -ENOMEM;
        for (size_t i = 0; i < nc; i++) {
                for (size_t k = 0; k < f; k++)
                        c[i] += x[i * f + k] / (double)f;
        }
        r = pelt(c, nc, sigma / sqrt((double)f), beta, (minseg + f - 1) / f, &cps, &ncp);
        if (r < 0)
                return r;
        for (size_t i = 0; i < ncp; i++) {
                size_t lo = i ? cps[i - 1] : 0, hi = i + 1 < ncp ? cps[i + 1] * f : n, best = cps[i] * f;
                size_t from = cps[i] * f > f ? cps[i] * f - f : 1, to = cps[i] * f + f;
                double bc = INFINITY;
                if (from < lo + minseg)
                        from = lo + minseg;
                if (to + minseg > hi)
                        to = hi - minseg;
                for (size_t t = from; t <= to; t++) {
                        double v = sse(x, lo, t) + sse(x, t, hi);
                        if (v < bc) {
                                bc = v;
                                best = t;
                        }
                }
                cps[i] = best;          /* full resolution from here on */
        }
        *ret = cps;
        *ret_n = ncp;
        return 0;
}
