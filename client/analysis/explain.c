/* explain.c - why one run differs from its siblings.
 *
 * In short (doc/EXPLAIN.md has it whole): each counter's excess over the
 * siblings' range is measured in its own spread (from the siblings
 * alone) and costed, in seconds or events at a nominal price, as a share
 * of the run's CPU-seconds; above the floors (1.25x, 3 spreads, 1%) it is
 * a cause; families of counters are said once, largest first
 * (explain-causes.c), in plain words (explain-words.c).
 *
 * Siblings: the runs named with --against, or else the other finished
 * runs with exactly the run's tags (the group `report --group-by` would
 * put it in with every tag as a key).
 *
 * 1. Context: every context key whose value in the run is not the value
 *    of every sibling (THP, NUMA balancing, kernel, ...).
 *
 * 2. Counters: each counter's rate over the whole run (its stored totals,
 *    exact at the run's boundaries) against the siblings' range [min, max].
 *    Besides the machine's counters, where the runs had their own cgroup,
 *    the run's own (cpu.stat for user and system time, its tasks' PSI) and
 *    everything else's (interference): the machine's count minus the
 *    cgroup's for counts that add up over tasks, and the busy CPU time
 *    minus the cgroup's cpu.stat (cand_rate()); totals only, so they are
 *    not searched in time.
 *    excess = ln((x + e) / (max + e)) above the range, ln((x + e) / (min + e))
 *    below it, 0 inside; e is 1% of the larger rate (a counter at 0 in the
 *    siblings counts as at most ~100x) and at least three of the
 *    counter's quanta (1 count, or 1/100 s of CPU time) over the run.
 *    The spread is the SD of ln(rate) across the siblings (no other group
 *    of the database: the same runs give the same answer in any
 *    database), never below SPREAD_FLOOR (2%) nor below the counting
 *    noise of the excess (spread_of()).  score = excess / spread; the
 *    table ranks by |score|.  With a score (--score, or the run's first),
 *    each counter also gets its rate per unit of score and a consistency
 *    check: do the run and its siblings fall in the same order by the
 *    counter as by the score (or the reverse)?  "k of n" counts the runs
 *    whose two ranks agree; with 2-4 runs a hint, not a test.
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
 *    Departures that overlap (by a bin or more, whichever way each
 *    counter moved; transitively) are one phase, with the bounds of its
 *    strongest counter, at the true offsets of its first and last ticks
 *    (explain-time.c); each
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
#include "explain-internal.h"
#include "explain.h"
#include "selection.h"
#include "stats.h"

#define SPREAD_FLOOR    0.02            /* ln units: 2% */

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

int explain_cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

double explain_median(double *v, size_t n)
{
        if (n == 0)
                return NAN;
        qsort(v, n, sizeof *v, explain_cmp_double);
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double explain_select_kth(double *v, size_t n, size_t k)
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

static void ex_free(struct ex *e)
{
        if (!e->borrowed)
                analysis_unload(e->all, e->nall);
        for (size_t i = 0; e->full && i <= e->nsib; i++)
                run_detail_free(&e->full[i]);
        free(e->full);
        free(e->sib);
}

const struct analysis_run *ex_run(const struct ex *e, size_t k)
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

/* A counter: the machine's metric m, or everything else's part of it. */
struct cand {
        int m;
        enum explain_part part;
};

/* Rate per second and total of counter c in run r; false: r has none. */
static bool cand_rate(const struct analysis_run *r, struct cand c, double *per_s, double *total)
{
        struct analysis_own_cpu oc;
        double v;

        switch (c.part) {
        case EXPLAIN_MACHINE:
                if (!r->m[c.m].have)
                        return false;
                *per_s = r->m[c.m].per_s;
                *total = r->m[c.m].total;
                return true;
        case EXPLAIN_OTHERS:
                if (!analysis_own_others(r, c.m, &v))
                        return false;
                break;
        case EXPLAIN_OWN:
                if (!r->m[c.m].has_own)
                        return false;
                v = r->m[c.m].own_total;
                break;
        case EXPLAIN_OTHERS_CPU:
                if (!analysis_own_cpu(r, &oc))
                        return false;
                v = oc.others_s;
                break;
        default:
                return false;
        }
        if (!(r->dur > 0))
                return false;
        *total = v;
        *per_s = v / r->dur;
        return true;
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
                double tot;
                if (isnan(sc) || !cand_rate(r, (struct cand){ (int)c->metric, c->part }, &x[n], &tot))
                        continue;
                y[n] = sc;
                if (k > 0)
                        med[nm++] = sc;
                n++;
        }
        if (n < 2 || nm == 0)
                return;
        /* the direction the run shows: above the range with a score below
         * the siblings' median is "more of it, lower score" */
        c->direction = ((c->excess >= 0) == (rs < explain_median(med, nm))) ? -1 : 1;
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

static void name_counter(struct explain_run_counter *c)
{
        const char *n = metric_table[c->metric].name;

        switch (c->part) {
        case EXPLAIN_MACHINE:
                snprintf(c->name, sizeof c->name, "%s", n);
                snprintf(c->key, sizeof c->key, "%s", n);
                break;
        case EXPLAIN_OWN:
                snprintf(c->name, sizeof c->name, "the benchmark's %s", n);
                snprintf(c->key, sizeof c->key, "own:%s", n);
                break;
        case EXPLAIN_OTHERS:
                snprintf(c->name, sizeof c->name, "everything else: %s", n);
                snprintf(c->key, sizeof c->key, "everything_else:%s", n);
                break;
        default:
                snprintf(c->name, sizeof c->name, "everything else: cpu time");
                snprintf(c->key, sizeof c->key, "everything_else:cpu_time");
        }
}

/* Counter c's spread in ln units: the SD of ln(rate + eps) over the
 * siblings' rates sibl[0..ns), at least SPREAD_FLOOR and at least the
 * counting noise (quantum q: 1 count, or 0.01 s of CPU time) of the run's
 * count against the range's edge [lo, hi] over dur seconds. */
static double spread_of(struct explain_run_counter *c, const double *sibl, size_t ns, double eps, double q, double dur,
                        double lo, double hi)
{
        double sp = 0, T, a, b, E, se;

        c->spread_from = "floor";
        if (ns >= 2) {
                double mean = 0, ss = 0;
                for (size_t i = 0; i < ns; i++)
                        mean += log(sibl[i] + eps) / (double)ns;
                for (size_t i = 0; i < ns; i++)
                        ss += (log(sibl[i] + eps) - mean) * (log(sibl[i] + eps) - mean);
                sp = sqrt(ss / (double)(ns - 1));
                c->spread_from = "siblings";
        }
        if (!(sp >= SPREAD_FLOOR)) {
                sp = SPREAD_FLOOR;
                c->spread_from = "floor";
        }
        /* counting noise: over the run's length the run counts a quanta
         * and the edge of the range it is compared with b; as Poisson
         * counts, ln((a + E) / (b + E)) has a standard error of
         * sqrt(a / (a + E)^2 + b / (b + E)^2) (E: eps in quanta) */
        T = fmax(dur, 1e-3) / q;
        a = c->run_rate * T;
        b = (c->run_rate >= hi ? hi : lo) * T;
        E = eps * T;
        se = sqrt(a / ((a + E) * (a + E)) + b / ((b + E) * (b + E)));
        if (se > sp) {
                sp = se;
                c->spread_from = "counting noise";
        }
        return sp;
}

static int do_counters(struct ex *e, struct explain_run_result *res)
{
        size_t nfrom[2] = { 0 };

        res->cpu_s = ex_run(e, 0)->cpu_total;
        /* the machine's counters; then, where the run and a sibling had
         * their own cgroup, everything else's (interference: another
         * process's CPU time or context switches slow a run down as
         * surely as its own locks do) */
        res->counters = calloc(3 * _M_MAX + 1, sizeof *res->counters);
        if (!res->counters)
                return -ENOMEM;
        for (int ci = 0; ci < 3 * _M_MAX + 1; ci++) {
                struct cand cd = ci < _M_MAX       ? (struct cand){ ci, EXPLAIN_MACHINE }
                                 : ci < 2 * _M_MAX ? (struct cand){ ci - _M_MAX, EXPLAIN_OTHERS }
                                 : ci < 3 * _M_MAX ? (struct cand){ ci - 2 * _M_MAX, EXPLAIN_OWN }
                                                   : (struct cand){ M_CPU_USER, EXPLAIN_OTHERS_CPU };
                const struct analysis_run *run = ex_run(e, 0);
                int m = cd.m;
                struct explain_run_counter *c = &res->counters[res->ncounters];
                double lo = INFINITY, hi = -INFINITY, plo = INFINITY, phi = -INFINITY, eps, sp, run_ps, run_tot;
                double sibl[EXPLAIN_MAX_AGAINST];
                size_t ns = 0, nps = 0;
                bool nonzero, procstat;

                /* the machine's user and system time, where the run had
                 * its own cgroup, are the benchmark's (its cpu.stat, exact)
                 * and everything else's (EXPLAIN_OTHERS_CPU) */
                if (cd.part == EXPLAIN_MACHINE && (m == M_CPU_USER || m == M_CPU_SYSTEM) && run->m[m].has_own)
                        cd.part = EXPLAIN_OWN;
                else if (cd.part == EXPLAIN_OWN && (metric_table[m].source != SRC_PSI || !run->m[m].has_own))
                        continue;       /* the run's own: its CPU time (above) and its tasks' stalls */

                /* a maximum per tick (lock_wait_max_ns) is no count: not a
                 * rate, heavy-tailed; neither ranked nor searched in time */
                procstat = cd.part == EXPLAIN_OTHERS_CPU || metric_table[m].source == SRC_PROCSTAT;
                if (metric_table[m].max || !cand_rate(run, cd, &run_ps, &run_tot))
                        continue;
                /* scalemond's own CPU time is what measuring costs, taken
                 * out of everything else's (analysis_own_cpu): no cause */
                if (m == M_SCALEMOND_CPU)
                        continue;
                /* everything else's context switches would count the idle
                 * task's (context_switches counts every switch); the
                 * voluntary and involuntary ones leave pid 0 out */
                if (cd.part == EXPLAIN_OTHERS && m == M_CONTEXT_SWITCHES)
                        continue;
                nonzero = run_ps != 0;
                for (size_t k = 1; k <= e->nsib; k++) {
                        const struct analysis_run *s = ex_run(e, k);
                        double sc = score_of(s, e->score), x, tot;
                        if (!cand_rate(s, cd, &x, &tot))
                                continue;
                        lo = fmin(lo, x);
                        hi = fmax(hi, x);
                        sibl[ns++] = x;
                        nonzero |= x != 0;
                        if (!isnan(sc) && sc != 0) {
                                plo = fmin(plo, tot / sc);
                                phi = fmax(phi, tot / sc);
                                nps++;
                        }
                }
                if (ns == 0 || !nonzero)
                        continue;
                memset(c, 0, sizeof *c);
                c->metric = (enum metric_id)m;
                c->part = cd.part;
                name_counter(c);
                c->run_rate = run_ps;
                c->sib_min = lo;
                c->sib_max = hi;
                if (nps && !isnan(res->run_score) && res->run_score != 0) {
                        c->has_per_score = true;
                        c->run_per_score = run_tot / res->run_score;
                        c->sib_ps_min = plo;
                        c->sib_ps_max = phi;
                }
                /* 1% of the largest, and at least three of the counter's
                 * quanta over the run, so that 0 against 2 counts is not
                 * a ratio of 100 */
                eps = fmax(0.01 * fmax(c->run_rate, hi), 3 * (procstat ? 0.01 : 1) / fmax(run->dur, 1e-3));
                c->excess = c->run_rate > hi   ? log((c->run_rate + eps) / (hi + eps))
                            : c->run_rate < lo ? log((c->run_rate + eps) / (lo + eps))
                                               : 0;
                sp = spread_of(c, sibl, ns, eps, procstat ? 0.01 : 1, run->dur, lo, hi);
                nfrom[ns >= 2 ? 0 : 1]++;
                c->spread = sp;
                c->score = c->excess / sp;
                consistency(e, c);
                explain_cost(run, c, run->dur, res->cpu_s, c->excess > 0 ? hi : lo);
                res->ncounters++;
        }
        qsort(res->counters, res->ncounters, sizeof *res->counters, cmp_counter);
        res->spread_note = nfrom[0] ? "spreads from the siblings themselves"
                                    : "one sibling: spreads at the 2% floor";
        return 0;
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
        free(r->causes);
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
                r = explain_whole_run_place(&e, &res);
        if (r >= 0)
                r = explain_time(&e, &res);
        if (r >= 0 && !res.causes)
                r = explain_causes(&e, &res);   /* no time analysis: no phases */
        if (r >= 0) {
                struct analysis_own_cpu oc;
                if (analysis_own_cpu(ex_run(&e, 0), &oc))
                        analysis_own_cpu_words(&oc, res.others_words, sizeof res.others_words);
                explain_causes_words(&res);
        }
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
