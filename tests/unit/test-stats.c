/* test-stats.c - the statistics against values computed independently.
 *
 * Expected values below were computed with SciPy 1.10.1 / NumPy 1.24.2
 * (Debian 12's python3-scipy): scipy.stats.ttest_ind(a, b, equal_var=False)
 * for Welch's test, scipy.stats.spearmanr(x, y) for Spearman's rho (SciPy
 * also uses the t approximation for its p-value), numpy.std(ddof=1).
 * The USL fit is checked on exact synthetic data from known parameters.
 */
#include "config.h"

#include <errno.h>
#include <math.h>

#include "stats.h"
#include "tap.h"

static void welch(const double *a, size_t na, const double *b, size_t nb, double want_t, double want_p, const char *name)
{
        double p, t, df;
        int r = stats_welch(a, na, b, nb, &p, &t, &df);
        ok(r == 0, "%s: computed", name);
        is_near(t, want_t, 1e-9 * fabs(want_t) + 1e-12, "  t");
        is_near(p, want_p, 1e-9 * want_p + 1e-15, "  p-value");
}

static void spearman(const double *x, const double *y, size_t n, double want_rho, double want_p, const char *name)
{
        double rho, p;
        int r = stats_spearman(x, y, n, &rho, &p);
        ok(r == 0, "%s: computed", name);
        is_near(rho, want_rho, 1e-12, "  rho");
        is_near(p, want_p, 1e-9 * want_p + 1e-15, "  p-value");
}

static void usl_recovers(double lambda, double sigma, double kappa, const char *name)
{
        double n[16], x[16];
        struct usl u;
        size_t k = 0;

        for (int i = 1; i <= 48; i += (i < 4 ? 1 : 4)) {
                n[k] = i;
                x[k] = lambda * i / (1 + sigma * (i - 1) + kappa * i * (i - 1));
                k++;
        }
        ok(stats_usl_fit(n, x, k, &u) == 0, "%s: fit converges on %zu points", name, k);
        is_near(u.lambda, lambda, lambda * 0.01, "  lambda within 1%");
        is_near(u.sigma, sigma, sigma * 0.01 + 1e-9, "  sigma within 1%");
        is_near(u.kappa, kappa, kappa * 0.01 + 1e-9, "  kappa within 1%");
        ok(u.r2 > 0.999999, "  r2 = %.9f", u.r2);
        if (kappa > 0)
                is_near(u.peak_n, sqrt((1 - sigma) / kappa), 0.01 * sqrt((1 - sigma) / kappa), "  peak N");
}

int main(void)
{
        struct summary s;
        double d[] = { 3, 1, 4, 1, 5, 9, 2, 6 };

        ok(stats_summary(d, 8, &s) == 0, "summary");
        is_near(s.mean, 3.875, 1e-12, "  mean");
        is_near(s.median, 3.5, 1e-12, "  median (even n)");
        is_near(s.stddev, 2.748376143938713, 1e-12, "  stddev (n-1)");
        is_near(s.cv, 0.7092583597261195, 1e-12, "  cv");
        ok(s.min == 1 && s.max == 9 && d[0] == 3, "  min, max; input untouched");
        ok(stats_summary(d, 1, &s) == 0 && s.median == 3 && !s.has_stddev && !s.has_cv, "one value: no stddev");
        is_int(stats_summary(d, 0, &s), -EINVAL, "no values refused");

        {
                double a[] = { 179.2, 178.1, 180.3 }, b[] = { 21.0, 43.0, 32.5 };
                welch(a, 3, b, 3, 23.028997841957523, 0.0017028454685446553, "Welch: config 1 vs 2 at 80-way");
        }
        {
                double a[] = { 146.1, 145.2, 146.9 }, b[] = { 147.0, 144.8, 146.3 };
                welch(a, 3, b, 3, 0.04096159602591474, 0.9694269421366646, "Welch: no difference");
        }
        {
                double a[] = { 10.2, 11.1, 9.8, 10.5, 10.9 }, b[] = { 11.5, 12.0, 11.2 };
                welch(a, 5, b, 3, -3.224273419903231, 0.021202530367750914, "Welch: unequal sizes");
        }
        {
                double a[] = { 5, 5, 5 }, b[] = { 5, 5, 5 }, p, t, df;
                ok(stats_welch(a, 3, b, 3, &p, &t, &df) == -EDOM && p == 1, "Welch: zero variance, equal means: p = 1");
                ok(stats_welch(a, 1, b, 3, &p, &t, &df) == -EINVAL, "Welch: one run is too few");
        }
        {
                double x[] = { 10, 20, 20, 30, 40, 50 }, y[] = { 3, 1, 4, 1, 5, 9 };
                spearman(x, y, 6, 0.6029411764705883, 0.20518426877671458, "Spearman with ties");
        }
        {
                double x[] = { 1, 2, 3, 4, 5, 6, 7, 8 }, y[] = { 2.1, 3.9, 6.2, 7.8, 10.1, 9.5, 14.2, 15.9 };
                spearman(x, y, 8, 0.9761904761904763, 3.3143960262001043e-05, "Spearman, one swap");
        }
        {
                double x[] = { 21, 43, 32.5, 30, 25, 40 }, y[] = { 5200, 1500, 3300, 3600, 4600, 2100 };
                spearman(x, y, 6, -1.0, 0.0, "Spearman, perfectly inverse");
        }
        {
                double x[] = { 1, 2, 3 }, y[] = { 4, 4, 4 }, rho, p;
                ok(stats_spearman(x, y, 3, &rho, &p) == -EDOM, "Spearman: a constant is refused");
                ok(stats_spearman(x, x, 2, &rho, &p) == -EDOM, "Spearman: n < 3 refused");
        }

        usl_recovers(1000, 0.05, 0.0005, "USL contention and coherency");
        usl_recovers(42.5, 0.2, 0.002, "USL heavy contention");
        usl_recovers(7, 0.01, 0.00001, "USL almost linear");
        {
                double n[] = { 1, 2, 4, 8 }, x[] = { 10, 20, 40, 80 };
                struct usl u;
                ok(stats_usl_fit(n, x, 4, &u) == 0 && fabs(u.lambda - 10) < 1e-6 && u.sigma < 1e-9 && u.kappa < 1e-12 &&
                   isinf(u.peak_n), "USL on linear scaling: sigma = kappa = 0, no peak");
                ok(stats_usl_fit(n, x, 2, &u) == -EDOM, "USL needs 3 distinct N");
        }
        return tap_done();
}
