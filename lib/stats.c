/* stats.c - summaries, Welch's t-test, Spearman's rho and the Universal
 * Scalability Law fit, with GSL doing the numerical work (distributions,
 * ranks, nonlinear least squares). */
#include "config.h"

#include <errno.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

int stats_summary(const double *x, size_t n, struct summary *ret)
{
        double *s;

        if (n == 0)
                return -EINVAL;
        s = malloc(n * sizeof *s);
        if (!s)
                return -ENOMEM;
        memcpy(s, x, n * sizeof *s);
        gsl_sort(s, 1, n);
        memset(ret, 0, sizeof *ret);
        ret->n = n;
        ret->mean = gsl_stats_mean(s, 1, n);
        ret->median = gsl_stats_median_from_sorted_data(s, 1, n);
        ret->min = s[0];
        ret->max = s[n - 1];
        if (n >= 2) {
                ret->stddev = gsl_stats_sd_m(s, 1, n, ret->mean);
                ret->has_stddev = true;
                if (ret->mean != 0) {
                        ret->cv = ret->stddev / fabs(ret->mean);
                        ret->has_cv = true;
                }
        }
        free(s);
        return 0;
}

int stats_welch(const double *a, size_t na, const double *b, size_t nb, double *ret_p, double *ret_t,
                double *ret_df)
{
        double ma, mb, va, vb, se2, t, df;

        if (na < 2 || nb < 2)
                return -EINVAL;
        ma = gsl_stats_mean(a, 1, na);
        mb = gsl_stats_mean(b, 1, nb);
        va = gsl_stats_variance_m(a, 1, na, ma);
        vb = gsl_stats_variance_m(b, 1, nb, mb);
        se2 = va / (double)na + vb / (double)nb;
        if (se2 == 0) {
                *ret_p = ma == mb ? 1 : 0;
                *ret_t = ma == mb ? 0 : (ma > mb ? INFINITY : -INFINITY);
                *ret_df = (double)(na + nb - 2);
                return -EDOM;
        }
        t = (ma - mb) / sqrt(se2);
        df = se2 * se2 / ((va / (double)na) * (va / (double)na) / (double)(na - 1) +
                          (vb / (double)nb) * (vb / (double)nb) / (double)(nb - 1));
        *ret_t = t;
        *ret_df = df;
        *ret_p = 2 * gsl_cdf_tdist_Q(fabs(t), df);
        if (*ret_p > 1)
                *ret_p = 1;
        return 0;
}

int stats_spearman(const double *x, const double *y, size_t n, double *ret_rho, double *ret_p)
{
        double *work, rho, t;

        if (n < 3)
                return -EDOM;
        if (gsl_stats_variance(x, 1, n) == 0 || gsl_stats_variance(y, 1, n) == 0)
                return -EDOM;
        work = malloc(2 * n * sizeof *work);
        if (!work)
                return -ENOMEM;
        rho = gsl_stats_spearman(x, 1, y, 1, n, work);
        free(work);
        if (!isfinite(rho))
                return -EDOM;
        *ret_rho = rho;
        if (fabs(rho) >= 1)
                *ret_p = 0;
        else {
                t = rho * sqrt((double)(n - 2) / (1 - rho * rho));
                *ret_p = 2 * gsl_cdf_tdist_Q(fabs(t), (double)(n - 2));
        }
        return 0;
}

double stats_usl_eval(const struct usl *u, double n)
{
        return u->lambda * n / (1 + u->sigma * (n - 1) + u->kappa * n * (n - 1));
}

struct usl_data {
        const double *n, *x;
        size_t count;
};

/* Parameters are fitted as lambda, s, k with sigma = s^2, kappa = k^2:
 * non-negative by construction. */
static int usl_f(const gsl_vector *p, void *data, gsl_vector *f)
{
        const struct usl_data *d = data;
        double l = gsl_vector_get(p, 0), s = gsl_vector_get(p, 1), k = gsl_vector_get(p, 2);

        for (size_t i = 0; i < d->count; i++) {
                double n = d->n[i];
                gsl_vector_set(f, i, l * n / (1 + s * s * (n - 1) + k * k * n * (n - 1)) - d->x[i]);
        }
        return GSL_SUCCESS;
}

static int usl_df(const gsl_vector *p, void *data, gsl_matrix *J)
{
        const struct usl_data *d = data;
        double l = gsl_vector_get(p, 0), s = gsl_vector_get(p, 1), k = gsl_vector_get(p, 2);

        for (size_t i = 0; i < d->count; i++) {
                double n = d->n[i], den = 1 + s * s * (n - 1) + k * k * n * (n - 1);
                gsl_matrix_set(J, i, 0, n / den);
                gsl_matrix_set(J, i, 1, -l * n * 2 * s * (n - 1) / (den * den));
                gsl_matrix_set(J, i, 2, -l * n * 2 * k * n * (n - 1) / (den * den));
        }
        return GSL_SUCCESS;
}

/* First guess: with lambda from the smallest N, N/C(N) - 1 = (sigma +
 * kappa) (N-1) + kappa (N-1)^2 where C(N) = X(N) / lambda, a linear least
 * squares problem in (sigma + kappa, kappa). */
static void usl_guess(const double *n, const double *x, size_t count, double *l, double *s, double *k)
{
        size_t imin = 0;
        gsl_matrix *A = gsl_matrix_alloc(count, 2);
        gsl_vector *y = gsl_vector_alloc(count), *c = gsl_vector_alloc(2);
        gsl_matrix *cov = gsl_matrix_alloc(2, 2);
        gsl_multifit_linear_workspace *w = gsl_multifit_linear_alloc(count, 2);
        double chisq, a, b;

        for (size_t i = 1; i < count; i++)
                if (n[i] < n[imin])
                        imin = i;
        *l = x[imin] / n[imin];
        *s = 0.01;
        *k = 0.0001;
        if (!A || !y || !c || !cov || !w || *l <= 0)
                goto out;
        for (size_t i = 0; i < count; i++) {
                double m = n[i] - 1, cap = x[i] / *l;
                gsl_matrix_set(A, i, 0, m);
                gsl_matrix_set(A, i, 1, m * m);
                gsl_vector_set(y, i, cap > 0 ? n[i] / cap - 1 : 0);
        }
        if (gsl_multifit_linear(A, y, c, cov, &chisq, w) == GSL_SUCCESS) {
                a = gsl_vector_get(c, 0);
                b = gsl_vector_get(c, 1);
                if (b > 0)
                        *k = b;
                if (a - b > 0)
                        *s = a - b;
        }
out:
        gsl_matrix_free(A);
        gsl_vector_free(y);
        gsl_vector_free(c);
        gsl_matrix_free(cov);
        if (w)
                gsl_multifit_linear_free(w);
}

int stats_usl_fit(const double *n, const double *x, size_t count, struct usl *ret)
{
        const gsl_multifit_nlinear_type *T = gsl_multifit_nlinear_trust;
        gsl_multifit_nlinear_parameters params = gsl_multifit_nlinear_default_parameters();
        gsl_multifit_nlinear_workspace *w;
        gsl_multifit_nlinear_fdf fdf;
        struct usl_data d = { n, x, count };
        gsl_vector *p0;
        gsl_error_handler_t *old;
        double l, s, k, ss_res = 0, ss_tot = 0, mean = 0;
        size_t distinct = 0;
        int info, r;

        for (size_t i = 0; i < count; i++) {
                bool seen = false;
                for (size_t j = 0; j < i; j++)
                        seen |= n[j] == n[i];
                distinct += !seen;
                if (!(n[i] >= 1) || !isfinite(x[i]) || x[i] <= 0)
                        return -EDOM;
        }
        if (distinct < 3)
                return -EDOM;

        usl_guess(n, x, count, &l, &s, &k);
        fdf = (gsl_multifit_nlinear_fdf){ .f = usl_f, .df = usl_df, .n = count, .p = 3, .params = &d };
        params.trs = gsl_multifit_nlinear_trs_lm;
        w = gsl_multifit_nlinear_alloc(T, &params, count, 3);
        p0 = gsl_vector_alloc(3);
        if (!w || !p0) {
                if (w)
                        gsl_multifit_nlinear_free(w);
                gsl_vector_free(p0);
                return -ENOMEM;
        }
        gsl_vector_set(p0, 0, l);
        gsl_vector_set(p0, 1, sqrt(s));
        gsl_vector_set(p0, 2, sqrt(k));
        old = gsl_set_error_handler_off();
        gsl_multifit_nlinear_init(p0, &fdf, w);
        r = gsl_multifit_nlinear_driver(500, 1e-14, 1e-14, 1e-14, NULL, NULL, &info, w);
        gsl_set_error_handler(old);
        if (r == GSL_SUCCESS || r == GSL_EMAXITER || r == GSL_ENOPROG) {
                gsl_vector *p = gsl_multifit_nlinear_position(w);
                ret->lambda = gsl_vector_get(p, 0);
                ret->sigma = gsl_vector_get(p, 1) * gsl_vector_get(p, 1);
                ret->kappa = gsl_vector_get(p, 2) * gsl_vector_get(p, 2);
                r = 0;
        } else
                r = -EDOM;
        gsl_multifit_nlinear_free(w);
        gsl_vector_free(p0);
        if (r < 0)
                return r;

        /* what cannot change X by a billionth over the N measured is 0 */
        {
                double nmax = 1;
                for (size_t i = 0; i < count; i++)
                        nmax = fmax(nmax, n[i]);
                if (ret->sigma * nmax < 1e-9)
                        ret->sigma = 0;
                if (ret->kappa * nmax * nmax < 1e-9)
                        ret->kappa = 0;
        }
        ret->peak_n = ret->kappa > 0 ? sqrt((1 - ret->sigma) / ret->kappa) : INFINITY;
        if (ret->sigma >= 1)
                ret->peak_n = 1;
        for (size_t i = 0; i < count; i++)
                mean += x[i] / (double)count;
        for (size_t i = 0; i < count; i++) {
                double e = stats_usl_eval(ret, n[i]) - x[i];
                ss_res += e * e;
                ss_tot += (x[i] - mean) * (x[i] - mean);
        }
        ret->r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : 1;
        return 0;
}
