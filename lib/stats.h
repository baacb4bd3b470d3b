/* stats.h - the statistics reports use, on top of GSL. */
#ifndef SCALEMON_STATS_H
#define SCALEMON_STATS_H

#include <stdbool.h>
#include <stddef.h>

struct summary {
        size_t n;
        double mean, median, stddev, cv, min, max;   /* stddev with n-1; cv = stddev / |mean| */
        bool has_stddev;                             /* n >= 2 */
        bool has_cv;                                 /* n >= 2 and mean != 0 */
};
/* Summary of x[0..n) (n >= 1); x is not changed. */
int stats_summary(const double *x, size_t n, struct summary *ret);

/* Welch's unequal-variance t-test of the means of a and b: two-sided
 * p-value, t and Welch-Satterthwaite degrees of freedom.  Needs n >= 2 on
 * each side; -EDOM if both variances are 0 (then p is 0 if the means
 * differ, 1 if not, in *ret_p). */
int stats_welch(const double *a, size_t na, const double *b, size_t nb, double *ret_p, double *ret_t,
                double *ret_df);

/* Spearman's rank correlation of x and y (ties get mean ranks) and its
 * two-sided p-value from the t approximation with n-2 degrees of
 * freedom.  -EDOM if either is constant or n < 3. */
int stats_spearman(const double *x, const double *y, size_t n, double *ret_rho, double *ret_p);

/* Universal Scalability Law: X(N) = lambda N / (1 + sigma (N-1) + kappa N (N-1)). */
struct usl {
        double lambda, sigma, kappa;
        double peak_n;          /* N of the highest X; INFINITY if kappa == 0 */
        double r2;              /* of the fit, on X */
};
/* Fit by nonlinear least squares (from a linearised first guess); needs
 * at least 3 distinct N.  sigma and kappa are kept >= 0. */
int stats_usl_fit(const double *n, const double *x, size_t count, struct usl *ret);
double stats_usl_eval(const struct usl *u, double n);

#endif
