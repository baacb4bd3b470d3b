/* explain.c - why one run differs from its siblings.
 *
 * Siblings: the runs named with --against, or else the other finished
 * runs with exactly the run's tags (the group `report --group-by` would
 * put it in with every tag as a key).
 *
 * 1. Context: every context key whose value in the run is not the value
 *    of every sibling (THP, NUMA balancing, kernel, ...), said first.
 *
 * 2. Counters: each counter's rate over the whole run (its stored totals,
 *    exact at the run's boundaries) against the siblings' range [min, max].
 *    excess = ln((x + e) / (max + e)) above the range, ln((x + e) / (min + e))
 *    below it, 0 inside; e is 1% of the largest of these rates (so a
 *    counter that is 0 in the siblings counts as at most ~100x) and at
 *    least three of the counter's quanta (1 count, or 1/100 s for CPU
 *    times) over the run's length.  The
 *    excess is measured in the counter's own spread: the pooled
 *    within-group standard deviation of ln(rate) over the stable groups of
 *    the database (runs with identical tags, at least two, every score with
 *    CV <= 5% and min/max >= 0.75, as report flags HIGH VARIANCE; the run's
 *    own group and groups holding a sibling left out):
 *        s^2 = sum_g sum_i (ln x_gi - mean_g)^2 / sum_g (n_g - 1),
 *    needing at least 2 degrees of freedom.  Without that, the SD of
 *    ln(rate) across the siblings (at least two); without that, the floor.
 *    The spread is never below SPREAD_FLOOR (2%), the resolution below
 *    which run-to-run differences are not worth a rank, nor below the
 *    counting noise of the excess: with a and b the counts (in quanta)
 *    of the run and of the range's edge over the run's length, and E the
 *    e above in quanta, sqrt(a / (a + E)^2 + b / (b + E)^2), the Poisson
 *    standard error of ln((a + E) / (b + E)): so a counter that
 *    is noisy from run to run needs a larger excess to rank high, and one
 *    that is perfectly steady does not win by a hair.  score = excess /
 *    spread; counters are ranked by |score|.  With a score (--score, or
 *    the run's first), each counter also gets its rate per unit of score
 *    and a consistency check over the run and its siblings: do they fall
 *    in the same order by the counter as by the score (reversed if the
 *    counter is higher in the lower-scoring run)?  "k of n" counts the
 *    runs whose two ranks agree.  With 2-4 runs this is a hint, not a test.
 *
 * 3. Time: per-tick rates of every counter, the runs aligned by time since
 *    their start in bins of the daemon's interval.  At each offset the
 *    run's excess over the siblings' band (as above, on that bin's rates,
 *    e = max(1% of the 95th percentile of all bins, three of the
 *    counter's quanta per tick)) forms a series y; its
 *    change points come from PELT (changepoint.c: noise from the SD of
 *    differences, floor SIGMA_FLOOR; penalty 3 ln n + 2 ln K for K
 *    counters searched; segments of at least three ticks).  A segment that is not the whole run and whose mean y is
 *    at least ln PHASE_RATIO (the run at least twice the highest sibling,
 *    or under half the lowest, on average there) is a departure.
 *    With several nodes, the same on a few counters' per-node series: the
 *    (cpu counter, node) pairs whose whole-run node rate lies outside the
 *    siblings' range there by two of the counter's spreads, the farthest
 *    NODE_PAIRS (a storm on one node of eight is under 2x machine-wide).
 *    Departures of different counters that overlap by at least half of the
 *    shorter are one phase, with the bounds of its strongest counter; each
 *    counter's ratio is the run's mean rate over the phase against the
 *    siblings' median at the same offsets (on its node, if found there).
 *    K, the number of series searched, adds 2 ln K to the penalty.  A run
 *    longer than MAX_BINS ticks is searched in bins of several.
 *
 * 4. Place: for a phase, its strongest cpu counter read per CPU in the
 *    run and each sibling over the phase's offsets; per CPU the run's
 *    count minus the siblings' median.  The CPUs that carry the
 *    difference are those with at least PLACE_FRACTION (1/4) of the
 *    largest CPU's difference; nodes alike, from the sums of their CPUs.  For the whole run, the same from the stored
 *    per-CPU totals of the top counter.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "analysis.h"
#include "changepoint.h"
#include "explain.h"
#include "selection.h"
#include "stats.h"
#include "store-series.h"

#define SPREAD_FLOOR    0.02            /* ln units: 2% */
#define SIGMA_FLOOR     0.05            /* per-tick ln-excess noise floor: 5% */
#define PHASE_RATIO     2.0
#define PHASE_MIN_TICKS 3
#define PLACE_FRACTION  0.25
#define STABLE_CV       0.05            /* report's HIGH VARIANCE limits */
#define STABLE_MINMAX   0.75
#define MAX_BINS        20000           /* a longer run is binned by several ticks */
#define NODE_COUNTERS   3               /* cpu counters read per node */
#define NODE_PAIRS      3               /* (counter, node) series searched */
#define NODE_MIN_SPREADS 2              /* a node's whole-run excess needed to search it */
#define MAX_NODES       64

static int fail(char **ret_err, int r, const char *fmt, ...) _printf_(3, 4);
static int fail(char **ret_err, int r, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        if (ret_err && vasprintf(ret_err, fmt, ap) < 0)
                *ret_err = NULL;
        va_end(ap);
        return r;
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

static double median_of(double *v, size_t n)
{
        if (n == 0)
                return NAN;
        qsort(v, n, sizeof *v, cmp_double);
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The k-th smallest of v[0..n) (Hoare's selection; v is reordered). */
static double select_kth(double *v, size_t n, size_t k)
{
        size_t lo = 0, hi = n - 1;

        while (lo < hi) {
                double pivot = v[lo + (hi - lo) / 2];
                size_t i = lo, j = hi;
                while (i <= j) {
                        while (v[i] < pivot)
                                i++;
                        while (v[j] > pivot)
                                j--;
                        if (i <= j) {
                                double t = v[i];
                                v[i] = v[j];
                                v[j] = t;
                                i++;
                                if (j == 0)
                                        break;
                                j--;
                        }
                }
                if (k <= j)
                        hi = j;
                else if (k >= i)
                        lo = i;
                else
                        break;
        }
        return v[k];
}

static bool same_tags(const struct run_detail *a, const struct run_detail *b)
{
        if (a->ntags != b->ntags)
                return false;
        for (size_t i = 0; i < a->ntags; i++)   /* sorted by key */
                if (!streq(a->tags[i].key, b->tags[i].key) || !streq(a->tags[i].value, b->tags[i].value))
                        return false;
        return true;
}

/* ---- loading ---- */

struct ex {
        struct store *s;
        struct analysis_run *all;               /* every finished run: tags, scores, context, system totals */
        size_t nall;
        size_t run;                     /* index in all */
        size_t *sib;                    /* indexes in all */
        size_t nsib;
        struct run_detail *full;        /* [0] the run, [1 + k] sibling k: every total */
        const char *score;
        size_t keep;                    /* series to keep for plot */
        bool borrowed;                  /* all is the caller's */
};

static void ex_free(struct ex *e)
{
        if (!e->borrowed)
                analysis_unload(e->all, e->nall);
        for (size_t i = 0; e->full && i <= e->nsib; i++)
                run_detail_free(&e->full[i]);
        free(e->full);
        free(e->sib);
}

static const struct analysis_run *ex_run(const struct ex *e, size_t k)    /* 0: the run, 1 + j: sibling j */
{
        return &e->all[k == 0 ? e->run : e->sib[k - 1]];
}

static double score_of(const struct analysis_run *r, const char *key)
{
        const struct store_score *sc = key ? analysis_find_score(&r->d, key) : NULL;
        return sc ? sc->value : NAN;
}

static int ex_load(struct ex *e, const char *name, const struct explain_run_opts *o, char **ret_err)
{
        size_t n, k = 0;
        int r;

        if (o->runs) {
                /* report's runs, loaded: borrowed */
                e->all = (struct analysis_run *)o->runs;
                e->nall = n = o->nruns;
                e->borrowed = true;
        } else {
                struct run_filter f = { .since = 0, .until = INT64_MAX };
                struct run_info *infos = NULL;
                n = 0;
                r = store_runs_list(e->s, &f, &infos, &n);
                if (r < 0)
                        return fail(ret_err, r, "cannot list runs: %s", store_errmsg(e->s));
                e->all = calloc(n + 1, sizeof *e->all);
                if (!e->all) {
                        run_infos_free(infos, n);
                        return -ENOMEM;
                }
                for (size_t i = 0; i < n; i++)
                        e->all[i].info = infos[i];
                free(infos);
                e->nall = n;
                for (size_t i = 0; i < n; i++) {
                        r = store_run_detail_parts(e->s, e->all[i].info.id,
                                                   RUN_TAGS | RUN_SCORES | RUN_CONTEXT | RUN_SYSTEM_TOTALS, &e->all[i].d);
                        if (r < 0)
                                return fail(ret_err, r, "cannot read run %s: %s", e->all[i].info.name,
                                            store_errmsg(e->s));
                        analysis_compute(&e->all[i]);
                }
        }
        e->run = SIZE_MAX;
        for (size_t i = 0; i < n; i++)
                if (streq(e->all[i].info.name, name))
                        e->run = i;
        if (e->run == SIZE_MAX)
                return fail(ret_err, -ENOENT, "no run named '%s' (see scalemonctl runs)", name);
        if (streq(e->all[e->run].info.status, "running"))
                return fail(ret_err, -EBUSY, "run '%s' is still running: explain it once it has stopped", name);

        e->sib = calloc(n + 1, sizeof *e->sib);
        if (!e->sib)
                return -ENOMEM;
        if (o->nagainst) {
                for (size_t a = 0; a < o->nagainst; a++) {
                        size_t i;
                        if (streq(o->against[a], name))
                                return fail(ret_err, -EINVAL, "--against names '%s' itself: name the runs to compare it with",
                                            name);
                        for (i = 0; i < n && !streq(e->all[i].info.name, o->against[a]); i++)
                                ;
                        if (i == n)
                                return fail(ret_err, -ENOENT, "--against: no run named '%s' (see scalemonctl runs)",
                                            o->against[a]);
                        if (streq(e->all[i].info.status, "running"))
                                return fail(ret_err, -EBUSY, "--against: run '%s' is still running", o->against[a]);
                        for (k = 0; k < e->nsib && e->sib[k] != i; k++)
                                ;
                        if (k == e->nsib)
                                e->sib[e->nsib++] = i;
                }
        } else {
                const struct run_detail *d = &e->all[e->run].d;
                char tags[512];
                for (size_t i = 0; d->ntags && i < n; i++)
                        if (i != e->run && !streq(e->all[i].info.status, "running") && same_tags(d, &e->all[i].d) &&
                            e->nsib < EXPLAIN_MAX_AGAINST)      /* a big group: its first runs */
                                e->sib[e->nsib++] = i;
                if (e->nsib == 0) {
                        format_kvs(tags, sizeof tags, d->tags, d->ntags);
                        if (d->ntags == 0)
                                return fail(ret_err, -ENODATA,
                                            "run '%s' has no tags, so no group: name the runs to compare it with, "
                                            "--against RUN[,RUN...]", name);
                        return fail(ret_err, -ENODATA,
                                    "run '%s' has no siblings: no other finished run has its tags (%s); name the "
                                    "runs to compare it with, --against RUN[,RUN...]", name, tags);
                }
        }

        /* the score: given, or the run's first */
        e->score = o->score;
        if (!e->score && e->all[e->run].d.nscores)
                e->score = e->all[e->run].d.scores[0].key;

        /* every total (per CPU and node too) of the run and its siblings */
        e->full = calloc(e->nsib + 1, sizeof *e->full);
        if (!e->full)
                return -ENOMEM;
        for (size_t j = 0; j <= e->nsib; j++) {
                r = store_run_detail_parts(e->s, ex_run(e, j)->info.id, RUN_TOTALS, &e->full[j]);
                if (r < 0)
                        return fail(ret_err, r, "cannot read run %s: %s", ex_run(e, j)->info.name, store_errmsg(e->s));
        }
        return 0;
}

/* ---- 1. context ---- */

static int do_context(struct ex *e, struct explain_run_result *res)
{
        const struct run_detail *rd = &ex_run(e, 0)->d;
        /* keys of the run, then keys only siblings have */
        for (size_t j = 0; j <= e->nsib; j++) {
                const struct run_detail *d = &ex_run(e, j)->d;
                for (size_t c = 0; c < d->ncontext; c++) {
                        const char *key = d->context[c].key, *rv = analysis_context_value(rd, key);
                        bool differs = false, seen = false;
                        struct explain_run_ctx *x;

                        if (streq(key, "metrics_unavailable"))
                                continue;       /* said per counter */
                        for (size_t i = 0; i < res->nctx; i++)
                                seen |= streq(res->ctx[i].key, key);
                        if (seen || (j > 0 && rv))
                                continue;
                        for (size_t k = 1; k <= e->nsib && !differs; k++) {
                                const char *v = analysis_context_value(&ex_run(e, k)->d, key);
                                differs = !v || !rv || !streq(v, rv);
                        }
                        if (!differs)
                                continue;
                        x = realloc(res->ctx, (res->nctx + 1) * sizeof *x);
                        if (!x)
                                return -ENOMEM;
                        res->ctx = x;
                        x = &res->ctx[res->nctx++];
                        x->key = strdup(key);
                        x->run = rv ? strdup(rv) : NULL;
                        x->sib = calloc(e->nsib + 1, sizeof *x->sib);
                        if (!x->key || !x->sib)
                                return -ENOMEM;
                        for (size_t k = 1; k <= e->nsib; k++) {
                                const char *v = analysis_context_value(&ex_run(e, k)->d, key);
                                x->sib[k - 1] = v ? strdup(v) : NULL;
                        }
                }
        }
        return 0;
}

/* ---- 2. counters ---- */

/* Pooled within-group SD of ln(rate) of metric m over the stable groups;
 * groups[] holds each run's group number (-1: not in a stable group). */
static bool pooled_spread(const struct ex *e, const int *group, int ngroups, int m, double *ret)
{
        double ss = 0;
        size_t df = 0;

        for (int g = 0; g < ngroups; g++) {
                double sum = 0, mx = 0, mean;
                size_t n = 0;
                for (size_t i = 0; i < e->nall; i++)
                        if (group[i] == g && e->all[i].m[m].have)
                                mx = fmax(mx, e->all[i].m[m].per_s);
                if (!(mx > 0))
                        continue;
                for (size_t i = 0; i < e->nall; i++)
                        if (group[i] == g && e->all[i].m[m].have) {
                                sum += log(e->all[i].m[m].per_s + 0.01 * mx);
                                n++;
                        }
                if (n < 2)
                        continue;
                mean = sum / (double)n;
                for (size_t i = 0; i < e->nall; i++)
                        if (group[i] == g && e->all[i].m[m].have) {
                                double d = log(e->all[i].m[m].per_s + 0.01 * mx) - mean;
                                ss += d * d;
                        }
                df += n - 1;
        }
        if (df < 2)
                return false;
        *ret = sqrt(ss / (double)df);
        return true;
}

/* Group the runs by identical tags; a group is stable when it has two or
 * more runs, scores, and every score within report's variance limits.
 * Left out: the run's group and any group with a sibling in it. */
static int stable_groups(const struct ex *e, int *group, int *ret_n)
{
        int ng = 0;
        int *lead = calloc(e->nall + 1, sizeof *lead);  /* run index that leads group g */
        if (!lead)
                return -ENOMEM;
        for (size_t i = 0; i < e->nall; i++) {
                int g;
                group[i] = -1;
                if (streq(e->all[i].info.status, "running") || e->all[i].d.ntags == 0)
                        continue;
                for (g = 0; g < ng && !same_tags(&e->all[lead[g]].d, &e->all[i].d); g++)
                        ;
                if (g == ng)
                        lead[ng++] = (int)i;
                group[i] = g;
        }
        for (int g = 0; g < ng; g++) {
                bool ok = true;
                size_t n = 0;
                const struct analysis_run *l = &e->all[lead[g]];
                for (size_t i = 0; i < e->nall; i++)
                        if (group[i] == g) {
                                n++;
                                for (size_t k = 0; k <= e->nsib; k++)
                                        ok &= ex_run(e, k) != &e->all[i];
                        }
                ok &= n >= 2 && l->d.nscores > 0;
                for (size_t s = 0; ok && s < l->d.nscores; s++) {
                        double *v = calloc(n, sizeof *v);
                        struct summary sm;
                        size_t k = 0;
                        if (!v) {
                                free(lead);
                                return -ENOMEM;
                        }
                        for (size_t i = 0; i < e->nall; i++)
                                if (group[i] == g && !isnan(score_of(&e->all[i], l->d.scores[s].key)))
                                        v[k++] = score_of(&e->all[i], l->d.scores[s].key);
                        if (k < 2 || stats_summary(v, k, &sm) < 0 || (sm.has_cv && sm.cv > STABLE_CV) ||
                            (sm.max > 0 && sm.min / sm.max < STABLE_MINMAX))
                                ok = false;
                        free(v);
                }
                if (!ok)
                        for (size_t i = 0; i < e->nall; i++)
                                if (group[i] == g)
                                        group[i] = -1 - g - 1;  /* not stable: < -1, keeps numbering */
        }
        for (size_t i = 0; i < e->nall; i++)
                if (group[i] < 0)
                        group[i] = -1;
        free(lead);
        *ret_n = ng;
        return 0;
}

/* Ranks (1 = smallest; ties share the mean rank) of x[0..n). */
static void ranks(const double *x, size_t n, double *rk)
{
        for (size_t i = 0; i < n; i++) {
                size_t less = 0, eq = 0;
                for (size_t j = 0; j < n; j++) {
                        less += x[j] < x[i];
                        eq += x[j] == x[i];
                }
                rk[i] = (double)less + ((double)eq + 1) / 2;
        }
}

static void consistency(const struct ex *e, struct explain_run_counter *c)
{
        double x[EXPLAIN_MAX_AGAINST + 1], y[EXPLAIN_MAX_AGAINST + 1], rx[EXPLAIN_MAX_AGAINST + 1],
                ry[EXPLAIN_MAX_AGAINST + 1], med[EXPLAIN_MAX_AGAINST + 1], rs;
        size_t n = 0, nm = 0;

        c->consistent = -1;
        rs = score_of(ex_run(e, 0), e->score);
        if (isnan(rs))
                return;
        for (size_t k = 0; k <= e->nsib && n <= EXPLAIN_MAX_AGAINST; k++) {
                const struct analysis_run *r = ex_run(e, k);
                double sc = score_of(r, e->score);
                if (isnan(sc) || !r->m[c->metric].have)
                        continue;
                x[n] = r->m[c->metric].per_s;
                y[n] = sc;
                if (k > 0)
                        med[nm++] = sc;
                n++;
        }
        if (n < 2 || nm == 0)
                return;
        /* the direction the run shows: above the range with a score below
         * the siblings' median is "more of it, lower score" */
        c->direction = ((c->excess >= 0) == (rs < median_of(med, nm))) ? -1 : 1;
        ranks(x, n, rx);
        ranks(y, n, ry);
        c->agree = 0;
        for (size_t i = 0; i < n; i++)
                c->agree += c->direction < 0 ? rx[i] == (double)n + 1 - ry[i] : rx[i] == ry[i];
        c->nruns = n;
        c->consistent = c->agree == n;
}

static int cmp_counter(const void *a, const void *b)
{
        const struct explain_run_counter *x = a, *y = b;
        if (fabs(x->score) != fabs(y->score))
                return fabs(x->score) > fabs(y->score) ? -1 : 1;
        if (fabs(x->excess) != fabs(y->excess))
                return fabs(x->excess) > fabs(y->excess) ? -1 : 1;
        return (int)x->metric - (int)y->metric;
}

static int do_counters(struct ex *e, struct explain_run_result *res)
{
        _cleanup_free_ int *group = calloc(e->nall + 1, sizeof *group);
        int ng = 0, r;
        size_t nfrom[3] = { 0 };

        if (!group)
                return -ENOMEM;
        r = stable_groups(e, group, &ng);
        if (r < 0)
                return r;
        res->counters = calloc(_M_MAX, sizeof *res->counters);
        if (!res->counters)
                return -ENOMEM;
        for (int m = 0; m < _M_MAX; m++) {
                const struct analysis_run *run = ex_run(e, 0);
                struct explain_run_counter *c = &res->counters[res->ncounters];
                double lo = INFINITY, hi = -INFINITY, plo = INFINITY, phi = -INFINITY, top, eps, sp;
                double sibl[EXPLAIN_MAX_AGAINST];
                size_t ns = 0, nps = 0;
                bool nonzero = run->m[m].have && run->m[m].per_s != 0;

                if (!run->m[m].have)
                        continue;
                for (size_t k = 1; k <= e->nsib; k++) {
                        const struct analysis_run *s = ex_run(e, k);
                        double sc = score_of(s, e->score);
                        if (!s->m[m].have)
                                continue;
                        lo = fmin(lo, s->m[m].per_s);
                        hi = fmax(hi, s->m[m].per_s);
                        sibl[ns++] = s->m[m].per_s;
                        nonzero |= s->m[m].per_s != 0;
                        if (!isnan(sc) && sc != 0) {
                                plo = fmin(plo, s->m[m].total / sc);
                                phi = fmax(phi, s->m[m].total / sc);
                                nps++;
                        }
                }
                if (ns == 0 || !nonzero)
                        continue;
                memset(c, 0, sizeof *c);
                c->metric = (enum metric_id)m;
                c->run_rate = run->m[m].per_s;
                c->sib_min = lo;
                c->sib_max = hi;
                if (nps && !isnan(res->run_score) && res->run_score != 0) {
                        c->has_per_score = true;
                        c->run_per_score = run->m[m].total / res->run_score;
                        c->sib_ps_min = plo;
                        c->sib_ps_max = phi;
                }
                top = fmax(c->run_rate, hi);
                /* 1% of the largest, and at least three of the counter's
                 * quanta over the run, so that 0 against 2 counts is not
                 * a ratio of 100 */
                eps = fmax(0.01 * top, 3 * (metric_table[m].source == SRC_PROCSTAT ? 0.01 : 1) /
                                               fmax(run->dur, 1e-3));
                c->excess = c->run_rate > hi   ? log((c->run_rate + eps) / (hi + eps))
                            : c->run_rate < lo ? log((c->run_rate + eps) / (lo + eps))
                                               : 0;
                if (pooled_spread(e, group, ng, m, &sp)) {
                        c->spread_from = "stable groups";
                        nfrom[0]++;
                } else if (ns >= 2) {
                        double mean = 0, ss = 0;
                        for (size_t i = 0; i < ns; i++)
                                mean += log(sibl[i] + eps) / (double)ns;
                        for (size_t i = 0; i < ns; i++)
                                ss += (log(sibl[i] + eps) - mean) * (log(sibl[i] + eps) - mean);
                        sp = sqrt(ss / (double)(ns - 1));
                        c->spread_from = "siblings";
                        nfrom[1]++;
                } else {
                        sp = 0;
                        c->spread_from = "floor";
                        nfrom[2]++;
                }
                if (!(sp >= SPREAD_FLOOR)) {
                        sp = SPREAD_FLOOR;
                        if (!streq(c->spread_from, "stable groups"))
                                c->spread_from = "floor";
                }
                /* counting noise: over the run's length the run counts
                 * a quanta and the edge of the range it is compared with
                 * b; as Poisson counts, ln((a + E) / (b + E)) has a
                 * standard error of sqrt(a / (a + E)^2 + b / (b + E)^2)
                 * (E: eps in quanta) */
                {
                        double q = metric_table[m].source == SRC_PROCSTAT ? 0.01 : 1, T = fmax(run->dur, 1e-3) / q,
                               a = c->run_rate * T, b = (c->run_rate >= hi ? hi : lo) * T, E = eps * T,
                               se = sqrt(a / ((a + E) * (a + E)) + b / ((b + E) * (b + E)));
                        if (se > sp) {
                                sp = se;
                                c->spread_from = "counting noise";
                        }
                }
                c->spread = sp;
                c->score = c->excess / sp;
                consistency(e, c);
                res->ncounters++;
        }
        qsort(res->counters, res->ncounters, sizeof *res->counters, cmp_counter);
        res->spread_note = nfrom[0] ? "spreads from the stable groups of the database"
                           : nfrom[1] ? "no stable groups with these counters: spreads from the siblings themselves"
                                      : "no stable groups and too few siblings: spreads at the 2% floor";
        return 0;
}

/* ---- 4. place ---- */

/* The locations whose difference is at least PLACE_FRACTION of the
 * largest one (a storm on 64 CPUs names the 64; one hot CPU, that one),
 * ascending in *ret; none if no difference is positive. */
static int carriers(const double *d, size_t n, int **ret, size_t *ret_n)
{
        int *out = calloc(n + 1, sizeof *out);
        double max = 0;
        size_t k = 0;

        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                max = fmax(max, d[i]);
        for (size_t i = 0; max > 0 && i < n; i++)
                if (d[i] >= PLACE_FRACTION * max)
                        out[k++] = (int)i;
        *ret = out;
        *ret_n = k;
        return 0;
}

/* CPU differences d[0..ncpu) (run minus siblings' median, sign set so
 * that positive is "more like the run's departure") into CPUs and nodes. */
static int place_from(struct store *s, const double *d, int ncpu, int **cpus, size_t *ncpus, int **nodes,
                      size_t *nnodes)
{
        _cleanup_free_ int *node = NULL;
        _cleanup_free_ double *nd = NULL;
        int nn = 0, maxnode = -1, r;

        r = carriers(d, (size_t)ncpu, cpus, ncpus);
        if (r < 0)
                return r;
        if (store_topology_get(s, &node, NULL, &nn) < 0)
                nn = 0;
        for (int c = 0; c < nn && c < ncpu; c++)
                maxnode = node[c] > maxnode ? node[c] : maxnode;
        nd = calloc((size_t)maxnode + 2, sizeof *nd);
        if (!nd)
                return -ENOMEM;
        for (int c = 0; c < nn && c < ncpu; c++)
                if (node[c] >= 0)
                        nd[node[c]] += d[c];
        if (maxnode < 0) {
                *nodes = calloc(1, sizeof **nodes);
                *nnodes = 0;
                return *nodes ? 0 : -ENOMEM;
        }
        return carriers(nd, (size_t)maxnode + 1, nodes, nnodes);
}

static int whole_run_place(struct ex *e, struct explain_run_result *res)
{
        _cleanup_free_ double *d = NULL, *sibv = NULL;
        int m = -1, ncpu = 0;
        double sign;

        res->place_metric = -1;
        for (size_t i = 0; i < res->ncounters && m < 0; i++)
                if (metric_table[res->counters[i].metric].scope == SCOPE_CPU && res->counters[i].excess != 0)
                        m = (int)res->counters[i].metric;
        if (m < 0)
                return 0;
        sign = 1;
        for (size_t i = 0; i < res->ncounters; i++)
                if ((int)res->counters[i].metric == m)
                        sign = res->counters[i].excess > 0 ? 1 : -1;
        for (size_t k = 0; k <= e->nsib; k++)
                for (size_t t = 0; t < e->full[k].ntotals; t++)
                        if (e->full[k].totals[t].level == LEVEL_CPU && e->full[k].totals[t].loc >= ncpu &&
                            streq(e->full[k].totals[t].metric, metric_table[m].name))
                                ncpu = e->full[k].totals[t].loc + 1;
        if (ncpu == 0)
                return 0;
        d = calloc((size_t)ncpu, sizeof *d);
        sibv = calloc((size_t)ncpu * (e->nsib + 1), sizeof *sibv);
        if (!d || !sibv)
                return -ENOMEM;
        /* per-second rates per CPU: run in d, siblings in sibv[c * nsib + j] */
        for (size_t k = 0; k <= e->nsib; k++) {
                double dur = ex_run(e, k)->dur;
                for (size_t t = 0; t < e->full[k].ntotals; t++) {
                        const struct store_total *tt = &e->full[k].totals[t];
                        if (tt->level != LEVEL_CPU || tt->loc >= ncpu || !streq(tt->metric, metric_table[m].name))
                                continue;
                        if (k == 0)
                                d[tt->loc] = dur > 0 ? tt->value / dur : 0;
                        else
                                sibv[(size_t)tt->loc * e->nsib + k - 1] = dur > 0 ? tt->value / dur : 0;
                }
        }
        for (int c = 0; c < ncpu; c++)
                d[c] = sign * (d[c] - median_of(sibv + (size_t)c * e->nsib, e->nsib));
        res->place_metric = m;
        return place_from(e->s, d, ncpu, &res->cpus, &res->ncpus, &res->nodes, &res->nnodes);
}

/* ---- 3. time ---- */

/* The series of metric m from a run's binned tick values, as rates per
 * second (NAN: no tick, or one not counted). */
static void bin_series(const struct store_tick_values *tv, int m, size_t nbins, double *out)
{
        const double *v = tv->v + (size_t)m * tv->n;
        const uint8_t *nc = tv->nc + (size_t)m * tv->n;

        for (size_t b = 0; b < nbins; b++)
                out[b] = b < tv->n && tv->dur[b] > 0 && !nc[b] ? v[b] / ((double)tv->dur[b] / 1e9) : NAN;
}

struct window {
        int metric, node;       /* node -1: the machine */
        size_t a, b;            /* bins [a, b) */
        double mu;              /* mean ln excess */
        bool used;
};

/* One counter's binned rates in each run: s[0] the run, s[1..] the
 * siblings with series; NAN where a bin has no tick or one not counted. */
struct sset {
        const double *s[EXPLAIN_MAX_AGAINST + 1];
        size_t nruns, nbins;
        double eps;             /* e of the excess: set by find_windows() */
};

/* Machine-wide rates of every counter: v[(slot * nruns + j) * nbins + t]. */
struct bins {
        double *v;
        size_t nbins, nruns;
        int slot[_M_MAX];       /* metric -> slot, -1 */
        double eps[_M_MAX];
};

static const double *bins_of(const struct bins *B, int m, size_t j)
{
        return B->v + ((size_t)B->slot[m] * B->nruns + j) * B->nbins;
}

/* Per-node rates of a few cpu counters: v[((i * nnodes + k) * nruns + j) * nbins + t]. */
struct nodebins {
        double *v;
        int metric[NODE_COUNTERS];
        size_t nmetric;
        int nnodes;
        int pair_metric[NODE_PAIRS], pair_node[NODE_PAIRS];     /* the series searched */
        size_t npairs;
        double eps[NODE_COUNTERS * MAX_NODES];
};

static void sset_machine(const struct bins *B, int m, struct sset *S)
{
        S->nruns = B->nruns;
        S->nbins = B->nbins;
        S->eps = B->eps[m];
        for (size_t j = 0; j < B->nruns; j++)
                S->s[j] = bins_of(B, m, j);
}

static void sset_node(const struct nodebins *N, const struct bins *B, size_t i, int k, struct sset *S)
{
        S->nruns = B->nruns;
        S->nbins = B->nbins;
        S->eps = N->eps[i * (size_t)N->nnodes + (size_t)k];
        for (size_t j = 0; j < B->nruns; j++)
                S->s[j] = N->v + (((i * (size_t)N->nnodes + (size_t)k) * B->nruns + j) * B->nbins);
}

/* The run's mean rate over [a, b) against the siblings' median there. */
static double sset_ratio(const struct sset *S, size_t a, size_t b)
{
        double sr = 0, sm = 0, tmp[EXPLAIN_MAX_AGAINST];
        for (size_t t = a; t < b && t < S->nbins; t++) {
                size_t k = 0;
                if (isnan(S->s[0][t]))
                        continue;
                for (size_t j = 1; j < S->nruns; j++)
                        if (!isnan(S->s[j][t]))
                                tmp[k++] = S->s[j][t];
                if (k == 0)
                        continue;
                sr += S->s[0][t];
                sm += median_of(tmp, k);
        }
        return (sr + S->eps * (double)(b - a)) / (sm + S->eps * (double)(b - a));
}

/* The departures of one series set (method 3 above), appended to *w;
 * sets S->eps.  y and all: scratch of nbins and nbins * nruns. */
static int find_windows(struct sset *S, int m, int node, double tick_s, double extra_penalty, double *y, double *all,
                        struct window **w, size_t *nw)
{
        struct cp_opts co = { .sigma_min = SIGMA_FLOOR, .min_seg = PHASE_MIN_TICKS };
        size_t nall = 0, *cp = NULL, ncp = 0, len = S->nbins;
        double eps;
        int r;

        /* offsets covered by the run and a sibling: up to the last one */
        while (len > 0) {
                bool any = false;
                for (size_t j = 1; j < S->nruns; j++)
                        any |= !isnan(S->s[j][len - 1]);
                if (any && !isnan(S->s[0][len - 1]))
                        break;
                len--;
        }
        for (size_t t = 0; t < len; t++)
                for (size_t j = 0; j < S->nruns; j++)
                        if (!isnan(S->s[j][t]))
                                all[nall++] = S->s[j][t];
        eps = fmax(nall ? 0.01 * select_kth(all, nall, (size_t)(0.95 * (double)(nall - 1))) : 0,
                   3 * (metric_table[m].source == SRC_PROCSTAT ? 0.01 : 1) / tick_s);
        S->eps = eps;
        if (!(eps > 0) || len < 2 * PHASE_MIN_TICKS)
                return 0;       /* zero everywhere */
        for (size_t t = 0; t < len; t++) {
                double lo = INFINITY, hi = -INFINITY, x = S->s[0][t];
                size_t k = 0;
                for (size_t j = 1; j < S->nruns; j++)
                        if (!isnan(S->s[j][t])) {
                                lo = fmin(lo, S->s[j][t]);
                                hi = fmax(hi, S->s[j][t]);
                                k++;
                        }
                if (k == 0 || isnan(x)) {
                        y[t] = t ? y[t - 1] : 0;        /* a gap: carry the last level */
                        continue;
                }
                y[t] = x > hi ? log((x + eps) / (hi + eps)) : x < lo ? log((x + eps) / (lo + eps)) : 0;
        }
        /* y is 0 wherever the run is inside the band, so the MAD of its
         * differences measures those zeros; the SD of the differences
         * counts the excursions that are the noise to beat (and a real
         * change's two edges, which only makes the test more
         * conservative).  The penalty pays for the K series searched:
         * 2 ln K more per change keeps the chance of a phase in pure
         * noise across all of them about that of one alone (the tail of
         * the gain falls as exp(-penalty / 2)). */
        co.sigma = cp_noise_sigma_sd(y, len);
        co.penalty = cp_default_penalty(len) + extra_penalty;
        r = cp_pelt(y, len, &co, &cp, &ncp);
        if (r < 0)
                return r;
        for (size_t sg = 0; sg <= ncp && ncp > 0; sg++) {
                size_t a = sg == 0 ? 0 : cp[sg - 1], b = sg == ncp ? len : cp[sg];
                double mu = 0;
                struct window *nwp;
                for (size_t t = a; t < b; t++)
                        mu += y[t] / (double)(b - a);
                if (fabs(mu) < log(PHASE_RATIO))
                        continue;
                /* a departure right after one of the same sign (a storm
                 * that ramps up in two levels) is the same departure */
                if (*nw > 0 && (*w)[*nw - 1].metric == m && (*w)[*nw - 1].node == node && (*w)[*nw - 1].b == a &&
                    ((*w)[*nw - 1].mu > 0) == (mu > 0)) {
                        struct window *pw = &(*w)[*nw - 1];
                        pw->mu = (pw->mu * (double)(pw->b - pw->a) + mu * (double)(b - a)) / (double)(b - pw->a);
                        pw->b = b;
                        continue;
                }
                nwp = realloc(*w, (*nw + 1) * sizeof **w);
                if (!nwp) {
                        free(cp);
                        return -ENOMEM;
                }
                *w = nwp;
                (*w)[(*nw)++] = (struct window){ .metric = m, .node = node, .a = a, .b = b, .mu = mu };
        }
        free(cp);
        return 0;
}

static int cmp_window(const void *a, const void *b)
{
        const struct window *x = a, *y = b;
        return fabs(x->mu) > fabs(y->mu) ? -1 : fabs(x->mu) < fabs(y->mu);
}

static int cmp_phase(const void *a, const void *b)
{
        const struct explain_run_phase *x = a, *y = b;
        return x->start_s < y->start_s ? -1 : x->start_s > y->start_s;
}

static int phase_place(struct ex *e, struct explain_run_phase *p, int m, double sign, int64_t iv, size_t a, size_t b)
{
        _cleanup_free_ double *d = NULL, *sibv = NULL, *sum = NULL, *dur = NULL;
        int ncpu = 0, r;

        {
                _cleanup_free_ int *node = NULL;
                if (store_topology_get(e->s, &node, NULL, &ncpu) < 0 || ncpu <= 0)
                        return 0;
        }
        d = calloc((size_t)ncpu, sizeof *d);
        sibv = calloc((size_t)ncpu * (e->nsib + 1), sizeof *sibv);
        sum = calloc((size_t)ncpu, sizeof *sum);
        dur = calloc((size_t)ncpu, sizeof *dur);
        if (!d || !sibv || !sum || !dur)
                return -ENOMEM;
        for (size_t k = 0; k <= e->nsib; k++) {
                const struct analysis_run *rr = ex_run(e, k);
                if (rr->info.start_tick == 0)
                        continue;
                r = store_cpu_sums(e->s, metric_table[m].name, ncpu, rr->info.start + (int64_t)a * iv,
                                   rr->info.start + (int64_t)b * iv, sum, dur);
                if (r < 0)
                        return r;
                for (int c = 0; c < ncpu; c++) {
                        double rate = dur[c] > 0 ? sum[c] / dur[c] : 0;
                        if (k == 0)
                                d[c] = rate;
                        else
                                sibv[(size_t)c * e->nsib + k - 1] = rate;
                }
        }
        for (int c = 0; c < ncpu; c++)
                d[c] = sign * (d[c] - median_of(sibv + (size_t)c * e->nsib, e->nsib));
        p->place_metric = m;
        return place_from(e->s, d, ncpu, &p->cpus, &p->ncpus, &p->nodes, &p->nnodes);
}

/* The top counters' series for plot explain, averaged into at most
 * EXPLAIN_SERIES_POINTS points, in units of the siblings' mean rate. */
static int keep_series(const struct ex *e, struct explain_run_result *res, const struct bins *B)
{
        size_t f = (B->nbins + EXPLAIN_SERIES_POINTS - 1) / EXPLAIN_SERIES_POINTS;

        for (size_t ci = 0; ci < res->ncounters && res->nseries < e->keep && res->nseries < EXPLAIN_KEEP_MAX; ci++) {
                int m = (int)res->counters[ci].metric;
                struct explain_run_series *sr = &res->series[res->nseries];
                double mean = 0;
                size_t nm = 0, np = (B->nbins + f - 1) / f;

                for (size_t j = 1; j < B->nruns; j++)
                        for (size_t t = 0; t < B->nbins; t++)
                                if (!isnan(bins_of(B, m, j)[t])) {
                                        mean += bins_of(B, m, j)[t];
                                        nm++;
                                }
                if (nm == 0 || !(mean > 0))
                        continue;
                mean /= (double)nm;
                sr->metric = (enum metric_id)m;
                sr->x = calloc(np, sizeof *sr->x);
                sr->run = calloc(np, sizeof *sr->run);
                sr->lo = calloc(np, sizeof *sr->lo);
                sr->hi = calloc(np, sizeof *sr->hi);
                res->nseries++;
                if (!sr->x || !sr->run || !sr->lo || !sr->hi)
                        return -ENOMEM;
                for (size_t q = 0; q < np; q++) {
                        double rv = 0, lo = 0, hi = 0;
                        size_t kr = 0, kb = 0;
                        for (size_t t = q * f; t < (q + 1) * f && t < B->nbins; t++) {
                                double l = INFINITY, h = -INFINITY;
                                if (!isnan(bins_of(B, m, 0)[t])) {
                                        rv += bins_of(B, m, 0)[t];
                                        kr++;
                                }
                                for (size_t j = 1; j < B->nruns; j++)
                                        if (!isnan(bins_of(B, m, j)[t])) {
                                                l = fmin(l, bins_of(B, m, j)[t]);
                                                h = fmax(h, bins_of(B, m, j)[t]);
                                        }
                                if (isfinite(l)) {
                                        lo += l;
                                        hi += h;
                                        kb++;
                                }
                        }
                        if (kr == 0 && kb == 0)
                                continue;
                        sr->x[sr->n] = (double)(q * f) * res->tick_s;
                        sr->run[sr->n] = kr ? rv / (double)kr / mean : NAN;
                        sr->lo[sr->n] = kb ? lo / (double)kb / mean : NAN;
                        sr->hi[sr->n] = kb ? hi / (double)kb / mean : NAN;
                        sr->n++;
                }
        }
        return 0;
}

/* The (cpu counter, node) pairs whose series are searched too: those
 * where the run's rate on the node over the whole run (its stored node
 * totals) lies outside the siblings' range there by at least
 * NODE_MIN_SPREADS of the counter's spread, the farthest NODE_PAIRS of
 * them; and the counters to read per node for them. */
static void node_pairs(const struct ex *e, const struct explain_run_result *res, struct nodebins *N)
{
        struct {
                int m, k;
                double x;
        } best[NODE_PAIRS];
        size_t nb = 0;

        for (size_t ci = 0; ci < res->ncounters; ci++) {
                int m = (int)res->counters[ci].metric;
                if (metric_table[m].scope != SCOPE_CPU)
                        continue;
                for (int k = 0; k < N->nnodes; k++) {
                        double rate[EXPLAIN_MAX_AGAINST + 1], lo = INFINITY, hi = -INFINITY, eps, x;
                        for (size_t j = 0; j <= e->nsib; j++) {
                                rate[j] = NAN;
                                for (size_t t = 0; t < e->full[j].ntotals; t++) {
                                        const struct store_total *tt = &e->full[j].totals[t];
                                        if (tt->level == LEVEL_NODE && tt->loc == k && streq(tt->metric, metric_table[m].name))
                                                rate[j] = ex_run(e, j)->dur > 0 ? tt->value / ex_run(e, j)->dur : NAN;
                                }
                                if (j > 0 && !isnan(rate[j])) {
                                        lo = fmin(lo, rate[j]);
                                        hi = fmax(hi, rate[j]);
                                }
                        }
                        if (isnan(rate[0]) || !isfinite(lo))
                                continue;
                        eps = fmax(0.01 * fmax(rate[0], hi), 1e-12);
                        x = rate[0] > hi ? log((rate[0] + eps) / (hi + eps)) : rate[0] < lo ? log((rate[0] + eps) / (lo + eps)) : 0;
                        if (fabs(x) < NODE_MIN_SPREADS * res->counters[ci].spread)
                                continue;       /* inside, or within the counter's run-to-run noise */
                        /* keep the farthest NODE_PAIRS */
                        if (nb < NODE_PAIRS)
                                best[nb++] = (typeof(best[0])){ m, k, fabs(x) };
                        else {
                                size_t w = 0;
                                for (size_t i = 1; i < nb; i++)
                                        if (best[i].x < best[w].x)
                                                w = i;
                                if (fabs(x) > best[w].x)
                                        best[w] = (typeof(best[0])){ m, k, fabs(x) };
                        }
                }
        }
        for (size_t i = 0; i < nb; i++) {
                bool have = false;
                N->pair_metric[N->npairs] = best[i].m;
                N->pair_node[N->npairs++] = best[i].k;
                for (size_t q = 0; q < N->nmetric; q++)
                        have |= N->metric[q] == best[i].m;
                if (!have && N->nmetric < NODE_COUNTERS)
                        N->metric[N->nmetric++] = best[i].m;
        }
}

static int do_time(struct ex *e, struct explain_run_result *res)
{
        const struct analysis_run *run = ex_run(e, 0);
        struct store_tick_values tv[EXPLAIN_MAX_AGAINST + 1];
        size_t nw = 0, nbins, nruns = 1, sibidx[EXPLAIN_MAX_AGAINST + 1], nsearch;
        struct bins B = { 0 };
        struct nodebins N = { 0 };
        _cleanup_free_ double *y = NULL, *all = NULL;
        _cleanup_free_ int *node_of = NULL;
        struct window *w = NULL;
        int64_t iv = 0;
        int ncpu = 0, r = 0;

        memset(tv, 0, sizeof tv);
        if (run->info.start_tick == 0 || run->info.imported) {
                snprintf(res->phases_why, sizeof res->phases_why,
                         "no per-tick samples for this run here (imported runs carry their totals only)");
                return 0;
        }
        sibidx[0] = 0;
        for (size_t k = 1; k <= e->nsib; k++)
                if (ex_run(e, k)->info.start_tick != 0 && !ex_run(e, k)->info.imported)
                        sibidx[nruns++] = k;
        if (nruns == 1) {
                snprintf(res->phases_why, sizeof res->phases_why,
                         "no per-tick samples for its siblings here (imported runs carry their totals only)");
                return 0;
        }
        /* the bins: the daemon's interval, or a multiple of it where a
         * run has longer ticks on average (one recorded at 1 s and one at
         * 100 ms compare second by second); a run's first and last ticks
         * are short (its start and stop snapshots) */
        if (store_meta_get_int(e->s, "interval_ns", &iv) < 0 || iv <= 0) {
                snprintf(res->phases_why, sizeof res->phases_why, "the database does not record the sampling interval");
                return 0;
        }
        {
                int64_t k = 1;
                for (size_t j = 0; j < nruns; j++) {
                        const struct analysis_run *rr = ex_run(e, sibidx[j]);
                        int64_t nt = rr->info.end_tick - rr->info.start_tick;
                        if (nt > 0 && rr->info.end > rr->info.start) {
                                int64_t q = ((rr->info.end - rr->info.start) / nt + iv / 2) / iv;
                                k = q > k ? q : k;
                        }
                }
                iv *= k;
        }
        /* a long run in bins of several ticks: at most MAX_BINS */
        nbins = (size_t)((run->info.end - run->info.start + iv - 1) / iv);
        if (nbins > MAX_BINS) {
                iv *= (int64_t)((nbins + MAX_BINS - 1) / MAX_BINS);
                nbins = (size_t)((run->info.end - run->info.start + iv - 1) / iv);
        }
        if (nbins < 2 * PHASE_MIN_TICKS) {
                snprintf(res->phases_why, sizeof res->phases_why, "the run is too short for phases (%zu ticks)", nbins);
                return 0;
        }
        res->tick_s = (double)iv / 1e9;
        res->have_series = true;

        /* every counter's series of each run, from one pass over its ticks */
        B.nbins = nbins;
        B.nruns = nruns;
        for (int m = 0; m < _M_MAX; m++)
                B.slot[m] = -1;
        for (size_t ci = 0; ci < res->ncounters; ci++)
                B.slot[res->counters[ci].metric] = (int)ci;
        B.v = calloc(res->ncounters * nruns * nbins + 1, sizeof *B.v);
        y = calloc(nbins + 1, sizeof *y);
        all = calloc(nbins * nruns + 1, sizeof *all);
        if (!B.v || !y || !all) {
                r = -ENOMEM;
                goto out;
        }
        for (size_t j = 0; j < nruns; j++) {
                const struct analysis_run *rr = ex_run(e, sibidx[j]);
                r = store_tick_values(e->s, rr->info.start, rr->info.end, iv, &tv[j]);
                if (r < 0)
                        goto out;
        }
        for (size_t ci = 0; ci < res->ncounters; ci++)
                for (size_t j = 0; j < nruns; j++)
                        bin_series(&tv[j], (int)res->counters[ci].metric, nbins,
                                   B.v + ((size_t)B.slot[res->counters[ci].metric] * nruns + j) * nbins);

        /* with several nodes, the strongest cpu counters per node too: a
         * storm on one node of eight is under 2x machine-wide */
        if (store_topology_get(e->s, &node_of, NULL, &ncpu) >= 0)
                for (int c = 0; c < ncpu; c++)
                        N.nnodes = node_of[c] + 1 > N.nnodes ? node_of[c] + 1 : N.nnodes;
        if (N.nnodes > 1 && N.nnodes <= MAX_NODES) {
                node_pairs(e, res, &N);
                N.v = calloc(N.nmetric * (size_t)N.nnodes * nruns * nbins + 1, sizeof *N.v);
                if (!N.v) {
                        r = -ENOMEM;
                        goto out;
                }
                for (size_t j = 0; j < nruns && N.nmetric; j++) {
                        const struct analysis_run *rr = ex_run(e, sibidx[j]);
                        struct store_node_values nv;
                        r = store_node_values(e->s, N.metric, N.nmetric, rr->info.start, rr->info.end, iv, node_of, ncpu,
                                              N.nnodes, &nv);
                        if (r < 0)
                                goto out;
                        for (size_t i = 0; i < N.nmetric; i++)
                                for (int k = 0; k < N.nnodes; k++)
                                        for (size_t t = 0; t < nbins; t++) {
                                                size_t q = (i * (size_t)N.nnodes + (size_t)k) * nv.n + t;
                                                N.v[((i * (size_t)N.nnodes + (size_t)k) * nruns + j) * nbins + t] =
                                                        t < nv.n && nv.dur[t] > 0 && !nv.nc[q]
                                                                ? nv.v[q] / ((double)nv.dur[t] / 1e9)
                                                                : NAN;
                                        }
                        store_node_values_free(&nv);
                }
        } else
                N.nnodes = 0;

        /* the departures: machine-wide for every counter, per node for a few */
        nsearch = res->ncounters + N.npairs;
        for (size_t ci = 0; ci < res->ncounters; ci++) {
                struct sset S;
                int m = (int)res->counters[ci].metric;
                sset_machine(&B, m, &S);
                r = find_windows(&S, m, -1, res->tick_s, 2 * log((double)nsearch), y, all, &w, &nw);
                B.eps[m] = S.eps;
                if (r < 0)
                        goto out;
        }
        for (size_t p = 0; p < N.npairs; p++) {
                struct sset S;
                size_t i = 0;
                int k = N.pair_node[p];
                while (N.metric[i] != N.pair_metric[p])
                        i++;
                sset_node(&N, &B, i, k, &S);
                r = find_windows(&S, N.metric[i], k, res->tick_s, 2 * log((double)nsearch), y, all, &w, &nw);
                N.eps[i * (size_t)N.nnodes + (size_t)k] = S.eps;
                if (r < 0)
                        goto out;
        }

        r = keep_series(e, res, &B);
        if (r < 0)
                goto out;

        /* windows into phases: strongest first, others join when they
         * overlap it by half of the shorter; a counter once per phase */
        if (nw)
                qsort(w, nw, sizeof *w, cmp_window);
        for (size_t i = 0; i < nw; i++) {
                struct explain_run_phase *p;
                size_t a = w[i].a, b = w[i].b;
                int place_m = -1;
                double place_sign = 1;

                if (w[i].used)
                        continue;
                p = realloc(res->phases, (res->nphases + 1) * sizeof *p);
                if (!p) {
                        r = -ENOMEM;
                        goto out;
                }
                res->phases = p;
                p = &res->phases[res->nphases++];
                memset(p, 0, sizeof *p);
                p->place_metric = -1;
                p->start_s = (double)a * res->tick_s;
                p->dur_s = (double)(b - a) * res->tick_s;
                for (size_t j = i; j < nw; j++) {
                        size_t lo = w[j].a > a ? w[j].a : a, hi = w[j].b < b ? w[j].b : b,
                               shorter = (w[j].b - w[j].a) < (b - a) ? (w[j].b - w[j].a) : (b - a);
                        bool dup = false;
                        struct sset S;
                        if (w[j].used || hi <= lo || 2 * (hi - lo) < shorter)
                                continue;
                        w[j].used = true;
                        for (size_t q = 0; q < p->nm; q++)
                                dup |= (int)p->m[q].metric == w[j].metric;
                        if (dup || p->nm == EXPLAIN_PHASE_METRICS)
                                continue;
                        if (w[j].node < 0)
                                sset_machine(&B, w[j].metric, &S);
                        else {
                                size_t ni = 0;
                                while (N.metric[ni] != w[j].metric)
                                        ni++;
                                sset_node(&N, &B, ni, w[j].node, &S);
                        }
                        p->m[p->nm].metric = (enum metric_id)w[j].metric;
                        p->m[p->nm].node = w[j].node;
                        p->m[p->nm].ratio = sset_ratio(&S, a, b);
                        if (place_m < 0 && metric_table[w[j].metric].scope == SCOPE_CPU) {
                                place_m = w[j].metric;
                                place_sign = p->m[p->nm].ratio >= 1 ? 1 : -1;
                        }
                        p->nm++;
                }
                if (place_m >= 0) {
                        r = phase_place(e, p, place_m, place_sign, iv, a, b);
                        if (r < 0)
                                goto out;
                }
        }
        if (res->nphases > 1)
                qsort(res->phases, res->nphases, sizeof *res->phases, cmp_phase);
out:
        for (size_t j = 0; j < nruns; j++)
                store_tick_values_free(&tv[j]);
        free(B.v);
        free(N.v);
        free(w);
        return r < 0 ? r : 0;
}

/* ---- the whole ---- */

void explain_run_free(struct explain_run_result *r)
{
        if (!r)
                return;
        free(r->run);
        for (size_t i = 0; i < r->nsib; i++)
                free(r->siblings[i]);
        free(r->siblings);
        free(r->score_key);
        for (size_t i = 0; i < r->nctx; i++) {
                free(r->ctx[i].key);
                free(r->ctx[i].run);
                for (size_t k = 0; r->ctx[i].sib && k < r->nsib; k++)
                        free(r->ctx[i].sib[k]);
                free(r->ctx[i].sib);
        }
        free(r->ctx);
        free(r->counters);
        for (size_t i = 0; i < r->nphases; i++) {
                free(r->phases[i].cpus);
                free(r->phases[i].nodes);
        }
        free(r->phases);
        free(r->cpus);
        free(r->nodes);
        free(r->summary);
        for (size_t i = 0; i < r->nseries; i++) {
                free(r->series[i].x);
                free(r->series[i].run);
                free(r->series[i].lo);
                free(r->series[i].hi);
        }
        memset(r, 0, sizeof *r);
}

int explain_run_compute(struct store *s, const char *run, const struct explain_run_opts *o, struct explain_run_result *ret,
                    char **ret_err)
{
        struct explain_run_result res = { .place_metric = -1 };
        struct ex e = { .s = s, .keep = o->keep_series };
        int r;

        if (ret_err)
                *ret_err = NULL;
        if (o->nagainst > EXPLAIN_MAX_AGAINST)
                return fail(ret_err, -EINVAL, "--against: at most %d runs", EXPLAIN_MAX_AGAINST);
        r = ex_load(&e, run, o, ret_err);
        if (r < 0)
                goto out;
        res.run = strdup(run);
        res.run_dur_s = ex_run(&e, 0)->dur;
        res.run_score = score_of(ex_run(&e, 0), e.score);
        res.score_key = e.score ? strdup(e.score) : NULL;
        res.siblings_given = o->nagainst > 0;
        res.nsib = e.nsib;
        res.siblings = calloc(e.nsib + 1, sizeof *res.siblings);
        if (!res.run || !res.siblings || (e.score && !res.score_key)) {
                r = -ENOMEM;
                goto out;
        }
        for (size_t k = 0; k < e.nsib; k++)
                if (!(res.siblings[k] = strdup(ex_run(&e, k + 1)->info.name))) {
                        r = -ENOMEM;
                        goto out;
                }
        r = do_context(&e, &res);
        if (r >= 0)
                r = do_counters(&e, &res);
        if (r >= 0)
                r = whole_run_place(&e, &res);
        if (r >= 0)
                r = do_time(&e, &res);
        if (r >= 0)
                r = explain_run_summary(&res, &res.summary);
        if (r < 0 && ret_err && !*ret_err)
                fail(ret_err, r, "%s", r == -ENOMEM ? "out of memory" : store_errmsg(s));
out:
        ex_free(&e);
        if (r < 0) {
                explain_run_free(&res);
                return r;
        }
        *ret = res;
        return 0;
}


int explain_run_lowest(struct store *s, const struct analysis_run *runs, size_t nruns, const size_t *idx, size_t n,
                       const char *score_key, struct explain_run_result *ret, char **ret_err)
{
        struct explain_run_opts o = { .score = score_key, .runs = runs, .nruns = nruns };
        size_t lo = SIZE_MAX, with = 0;
        double best = 0;

        for (size_t i = 0; i < n; i++) {
                const struct store_score *sc = score_key ? analysis_find_score(&runs[idx[i]].d, score_key) : NULL;
                if (!sc)
                        continue;
                with++;
                if (lo == SIZE_MAX || sc->value < best) {
                        lo = i;
                        best = sc->value;
                }
        }
        if (with < 2)
                return fail(ret_err, -ENODATA, "fewer than two runs with %s", score_key ? score_key : "a score");
        for (size_t i = 0; i < n && o.nagainst < EXPLAIN_MAX_AGAINST; i++)
                if (i != lo)
                        o.against[o.nagainst++] = runs[idx[i]].info.name;
        return explain_run_compute(s, runs[idx[lo]].info.name, &o, ret, ret_err);
}
