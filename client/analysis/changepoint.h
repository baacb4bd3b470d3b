/* changepoint.h - change points in the mean of a series: PELT with a
 * penalty from the series' own noise.
 *
 * The model: x[i] = mu_j + e_i inside segment j, e_i independent with a
 * common standard deviation sigma.  The cost of a segment is its sum of
 * squared deviations from its own mean divided by sigma^2 (twice the
 * negative Gaussian log-likelihood), and each change point costs a
 * penalty beta.  PELT (Killick, Fearnhead and Eckley 2012) finds the
 * segmentation of least total cost exactly, in about linear time.
 *
 * sigma, when not given, is estimated from the first differences, which a
 * change in the mean touches at one place only: the median absolute
 * deviation of x[i+1] - x[i] from their median, divided by
 * 0.6745 * sqrt(2) (a difference of two independent errors has variance
 * 2 sigma^2; MAD / 0.6745 estimates a Gaussian's sigma).
 *
 * beta, when not given, is 3 ln n: the per-change penalty of the modified
 * BIC of Zhang and Siegmund (2007) for a change in mean, as the R package
 * changepoint sets it ("MBIC"), without its segment-length term.  On pure
 * Gaussian noise with sigma estimated as below, the plain BIC's 2 ln n
 * finds a change in 16% of series of 60 points; 3 ln n in 3.3% of them,
 * 0.2% at 600 points, none of 200 at 6000 (tests/unit/test-changepoint.c
 * measures it).  No other threshold is involved.
 *
 * PELT's pruning does little where there is no change, and it is then
 * quadratic; a series longer than 1000 points is first segmented as means
 * of blocks (at most 1000 of them, with their sigma), and each change
 * point found is then moved to the split of least squared error within a
 * block either side, at full resolution.
 */
#ifndef SCALEMON_CHANGEPOINT_H
#define SCALEMON_CHANGEPOINT_H

#include <stddef.h>

struct cp_opts {
        double sigma;           /* noise standard deviation; <= 0: cp_noise_sigma() */
        double sigma_min;       /* floor on sigma (a resolution below which changes do not matter); >= 0 */
        double penalty;         /* per change point, in units of sigma^2; <= 0: cp_default_penalty(n) */
        size_t min_seg;         /* shortest segment, in points; 0 means 1 */
};

/* Robust noise estimate from first differences (see above); 0 if n < 3
 * or the differences' MAD is 0 and so is their standard deviation.  When
 * the MAD is 0 but the differences are not all equal (a series flat but
 * for rare spikes), their standard deviation / sqrt(2) is used. */
double cp_noise_sigma(const double *x, size_t n);

/* The plain estimate: the standard deviation of the first differences
 * divided by sqrt(2); for series where most differences are 0 by
 * construction (a series clipped to 0 in a band), whose MAD is no guide. */
double cp_noise_sigma_sd(const double *x, size_t n);

/* 3 ln n (n >= 2), else 0. */
double cp_default_penalty(size_t n);

/* The change points of x[0..n): indices i where a new segment starts
 * (0 < i < n), ascending, in *ret (malloc'd, NULL when none) and *ret_n.
 * A series with sigma 0 (constant, or too short) has none.
 * -EINVAL: x is NULL with n > 0, or a value is not finite; -ENOMEM. */
int cp_pelt(const double *x, size_t n, const struct cp_opts *o, size_t **ret, size_t *ret_n);

#endif
