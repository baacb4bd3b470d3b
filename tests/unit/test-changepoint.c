/* test-changepoint.c - the change-point method (client/analysis/changepoint.c) on
 * synthetic series whose change points are known: steps, a burst, several
 * steps, pure noise (the false-positive rate over many seeds), and bad
 * input.  Noise is Gaussian from GSL's MT19937 with fixed seeds, so every
 * figure printed here is reproducible. */
#include "config.h"

#include <errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdbool.h>

#include "changepoint.h"
#include "tap.h"

static gsl_rng *rng;

static void noise(double *x, size_t n, double sd, unsigned long seed)
{
        gsl_rng_set(rng, seed);
        for (size_t i = 0; i < n; i++)
                x[i] += gsl_ran_gaussian(rng, sd);
}

static void fill(double *x, size_t n, double v)
{
        for (size_t i = 0; i < n; i++)
                x[i] = v;
}

/* Over seeds: how many series give exactly the change points want[]
 * (each within tol points). */
static int hits(double *x, size_t n, const size_t *want, size_t nwant, size_t tol, int seeds,
                void (*make)(double *, size_t), const struct cp_opts *o)
{
        int good = 0;
        for (int s = 1; s <= seeds; s++) {
                size_t *cp = NULL, ncp = 0;
                bool same;
                make(x, n);
                noise(x, n, 1.0, (unsigned long)s);
                if (cp_pelt(x, n, o, &cp, &ncp) < 0)
                        continue;
                same = ncp == nwant;
                for (size_t i = 0; same && i < ncp; i++)
                        same = (cp[i] > want[i] ? cp[i] - want[i] : want[i] - cp[i]) <= tol;
                good += same;
                free(cp);
        }
        return good;
}

static void make_step(double *x, size_t n)
{
        fill(x, n, 0);
        for (size_t i = 60; i < n; i++)
                x[i] = 3;               /* 3 sigma */
}

static void make_burst(double *x, size_t n)
{
        fill(x, n, 0);
        for (size_t i = 20; i < 40; i++)
                x[i] = 3;              /* 20 ticks, as a 2 s storm at 100 ms */
}

static void make_steps(double *x, size_t n)
{
        fill(x, n, 0);
        for (size_t i = 40; i < n; i++)
                x[i] = i < 80 ? 3 : -2;
}

static void make_flat(double *x, size_t n)
{
        fill(x, n, 5);
}

/* Share of pure-noise series of length n with at least one change point. */
static double false_positive_rate(size_t n, int seeds, double penalty)
{
        double *x = calloc(n, sizeof *x);
        struct cp_opts o = { .penalty = penalty };
        int fp = 0;

        for (int s = 1; s <= seeds; s++) {
                size_t *cp = NULL, ncp = 0;
                make_flat(x, n);
                noise(x, n, 1.0, 100000 + (unsigned long)s);
                if (cp_pelt(x, n, &o, &cp, &ncp) == 0 && ncp > 0)
                        fp++;
                free(cp);
        }
        free(x);
        return (double)fp / seeds;
}

int main(void)
{
        double x[1000], sig;
        size_t *cp = NULL, ncp = 99;
        int good;

        rng = gsl_rng_alloc(gsl_rng_mt19937);

        /* the noise estimate ignores a mean change */
        make_step(x, 120);
        noise(x, 120, 2.0, 7);
        sig = cp_noise_sigma(x, 120);
        ok(sig > 1.7 && sig < 2.3, "sigma from MAD of differences on a step series of sd 2: %.3f", sig);
        make_flat(x, 50);
        is_near(cp_noise_sigma(x, 50), 0, 0, "sigma of a constant series is 0");
        fill(x, 50, 1);
        x[25] = 9;
        sig = cp_noise_sigma(x, 50);
        ok(sig > 0, "a flat series with one spike: MAD 0, falls back to the SD of differences (%.3f)", sig);
        is_near(cp_default_penalty(60), 3 * log(60), 1e-12, "default penalty 3 ln n");

        /* a step of 3 sigma at 60 of 120 */
        {
                const size_t want[] = { 60 };
                good = hits(x, 120, want, 1, 2, 500, make_step, NULL);
                ok(good >= 490, "step at 60 (3 sigma, n=120): exactly one change within 2 points in %d of 500 seeds", good);
        }
        {
                const size_t want[] = { 60 };
                good = hits(x, 120, want, 1, 0, 500, make_step, NULL);
                ok(good >= 400, "  and at exactly 60 in %d of 500", good);
        }
        /* a burst: 2.5 sigma for 20 points of 60 */
        {
                const size_t want[] = { 20, 40 };
                good = hits(x, 60, want, 2, 1, 500, make_burst, NULL);
                ok(good >= 450, "burst 20..39 (3 sigma, n=60): two changes within 1 point in %d of 500 seeds", good);
        }
        /* two steps, up then down below the start */
        {
                const size_t want[] = { 40, 80 };
                good = hits(x, 120, want, 2, 2, 500, make_steps, NULL);
                ok(good >= 480, "steps at 40 and 80 (+3, -5 sigma): both within 2 points in %d of 500 seeds", good);
        }
        /* minimum segment: a one-point spike cannot be a segment of its own */
        {
                struct cp_opts o = { .min_seg = 3, .sigma = 1 };
                fill(x, 60, 0);
                x[30] = 50;
                int rc = cp_pelt(x, 60, &o, &cp, &ncp);
                ok(rc == 0, "spike with min_seg 3: computed");
                good = 1;
                for (size_t i = 0; i < ncp; i++) {
                        good &= i == 0 || cp[i] - cp[i - 1] >= 3;
                        good &= cp[i] >= 3 && cp[i] <= 57;
                }
                ok(good, "  every segment at least 3 points long (%zu change points)", ncp);
                free(cp);
                cp = NULL;
        }

        /* pure noise: the false-positive rate of the default penalty */
        {
                double fp60 = false_positive_rate(60, 2000, 0), fp600 = false_positive_rate(600, 1000, 0),
                       fp6000 = false_positive_rate(6000, 200, 0), bic60 = false_positive_rate(60, 2000, 2 * log(60));
                printf("# pure noise, share of series with a change point: n=60 %.2f%%, n=600 %.2f%%, n=6000 %.2f%% "
                       "(3 ln n); with the plain BIC's 2 ln n at n=60: %.2f%%\n",
                       fp60 * 100, fp600 * 100, fp6000 * 100, bic60 * 100);
                ok(fp60 <= 0.05, "false positives on noise, n=60, 2000 seeds: %.2f%% <= 5%%", fp60 * 100);
                ok(fp600 <= 0.02, "false positives on noise, n=600, 1000 seeds: %.2f%% <= 2%%", fp600 * 100);
                ok(fp6000 <= 0.03, "false positives on noise, n=6000, 200 seeds: %.2f%% <= 3%%", fp6000 * 100);
                ok(bic60 > fp60, "the plain BIC penalty lets more through (%.2f%%)", bic60 * 100);
        }

        /* nothing to find */
        make_flat(x, 100);
        ok(cp_pelt(x, 100, NULL, &cp, &ncp) == 0 && ncp == 0 && !cp, "constant series: no change point");
        ok(cp_pelt(x, 1, NULL, &cp, &ncp) == 0 && ncp == 0, "one point: none");
        ok(cp_pelt(x, 0, NULL, &cp, &ncp) == 0 && ncp == 0, "empty: none");
        x[10] = NAN;
        ok(cp_pelt(x, 100, NULL, &cp, &ncp) == -EINVAL, "a NaN: -EINVAL");
        ok(cp_pelt(NULL, 5, NULL, &cp, &ncp) == -EINVAL, "NULL series: -EINVAL");

        /* a long series (10 minutes at 100 ms) with one step, and a 3 sigma
         * burst of 20 points (2 s at 100 ms) in it */
        {
                static double y[6000];
                fill(y, 6000, 0);
                for (size_t i = 2500; i < 6000; i++)
                        y[i] = 1.5;
                noise(y, 6000, 1.0, 42);
                int rc = cp_pelt(y, 6000, NULL, &cp, &ncp);
                ok(rc == 0 && ncp == 1 && cp[0] >= 2495 && cp[0] <= 2505,
                   "n=6000 (blocks of 6, refined), a 1.5 sigma step at 2500: found at %zu (%zu change points)",
                   ncp ? cp[0] : 0, ncp);
                free(cp);
                cp = NULL;
                fill(y, 6000, 0);
                for (size_t i = 3000; i < 3020; i++)
                        y[i] = 3;
                noise(y, 6000, 1.0, 43);
                rc = cp_pelt(y, 6000, &(struct cp_opts){ .min_seg = 2 }, &cp, &ncp);
                ok(rc == 0 && ncp == 2 && cp[0] >= 2999 && cp[0] <= 3001 && cp[1] >= 3019 && cp[1] <= 3021,
                   "n=6000, a 20-point 3 sigma burst at 3000: found at %zu..%zu (%zu change points)", ncp ? cp[0] : 0,
                   ncp > 1 ? cp[1] : 0, ncp);
                free(cp);
        }
        gsl_rng_free(rng);
        printf("1..%d\n", tap_n);
        return tap_failed ? 1 : 0;
}
