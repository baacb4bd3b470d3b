/* test-analysis.c - scalemonctl's analysis in-process, without a daemon or
 * root: the seed fixtures (tests/fixtures/seeds, built by gen-seeds.py from
 * the published numbers in ../shared/seeds) are imported into a temporary
 * database, and the typed results of analysis_groups() and
 * analysis_curve() are checked against the seeds' own numbers, worked out
 * here by hand (means, standard deviations, Welch's t with GSL's t
 * distribution, ratios of the published times), not against the
 * program's output.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "analysis.h"
#include "exchange.h"
#include "macro.h"
#include "output.h"
#include "store.h"
#include "tap.h"

static char dir[] = "/tmp/scalemon-test-analysis.XXXXXX";
static const char *fixture_dir = "tests/fixtures/seeds";

/* The fixture imported into its own database, and its runs loaded. */
static struct store *load(const char *name, enum analysis_totals keep, struct analysis_run **ret, size_t *ret_n)
{
        const char *srcdir = getenv("srcdir") ? getenv("srcdir") : ".";
        char path[4096], db[4096];
        struct run_filter f = { .since = INT64_MIN, .until = INT64_MAX };
        struct run_info *infos = NULL;
        struct store *st = NULL;
        char *err = NULL;
        struct exchange_counts c = { 0 };
        size_t nruns = 0, n = 0, failed;
        int fd, r;

        snprintf(path, sizeof path, "%s/%s/%s.json", srcdir, fixture_dir, name);
        snprintf(db, sizeof db, "%s/%s.db", dir, name);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
                fprintf(stderr, "cannot open %s: %m (set srcdir to the source tree)\n", path);
                exit(77);
        }
        r = store_open(db, STORE_WRITE, &st, &err);
        if (r == 0)
                r = exchange_import_fd(st, fd, &c, &err);
        nruns = c.imported;
        close(fd);
        ok(r == 0, "%s: imported %zu runs%s%s", name, nruns, err ? ": " : "", err ? err : "");
        free(err);
        if (r < 0)
                exit(tap_done());
        r = store_runs_list(st, &f, &infos, &n);
        ok(r == 0 && n == nruns, "%s: %zu runs listed", name, n);
        r = analysis_load(st, infos, n, keep, ret, &failed);
        ok(r == 0, "%s: loaded for analysis", name);
        if (r < 0)
                exit(tap_done());
        *ret_n = n;
        return st;
}

static const struct group *find_group(const struct group_result *gr, const char *v0, const char *v1)
{
        for (size_t k = 0; k < gr->ngroups; k++)
                if (streq(gr->groups[k].val[0], v0) && streq(gr->groups[k].val[1], v1))
                        return &gr->groups[k];
        return NULL;
}

/* Welch's two-sided p-value, by hand with GSL's t distribution. */
static double welch_p(const double *a, size_t na, const double *b, size_t nb)
{
        double ma = 0, mb = 0, va = 0, vb = 0, sa, sb, t, df;

        for (size_t i = 0; i < na; i++)
                ma += a[i] / (double)na;
        for (size_t i = 0; i < nb; i++)
                mb += b[i] / (double)nb;
        for (size_t i = 0; i < na; i++)
                va += (a[i] - ma) * (a[i] - ma) / (double)(na - 1);
        for (size_t i = 0; i < nb; i++)
                vb += (b[i] - mb) * (b[i] - mb) / (double)(nb - 1);
        sa = va / (double)na;
        sb = vb / (double)nb;
        t = (ma - mb) / sqrt(sa + sb);
        df = (sa + sb) * (sa + sb) / (sa * sa / (double)(na - 1) + sb * sb / (double)(nb - 1));
        return 2 * gsl_cdf_tdist_Q(fabs(t), df);
}

/* Seed 000, AIM7 high-systime: config 2 at 80 ways scored 21300, 43000
 * and 32100 jobs/min ("~21K-43K <- high variation!"). */
static void aim7(void)
{
        static const double c1w80[] = { 145600, 146400, 146100 }, c2w80[] = { 21300, 43000, 32100 },
                            c1w20[] = { 178400, 179600, 179100 }, c2w20[] = { 178700, 180900, 179500 };
        struct group_opts go = GROUP_OPTS_DEFAULT;
        struct analysis_run *runs = NULL;
        struct group_result *gr = NULL;
        struct context_differs cd;
        struct store *st;
        const struct group *g, *b;
        const struct group_score *gs;
        const struct score_verdict *v;
        const char *score = NULL;
        char why[256];
        double mean = (21300 + 43000 + 32100) / 3.0, sd = 0, p;
        size_t n;
        int r;

        st = load("aim7", ANALYSIS_TOTALS_NODE, &runs, &n);
        is_int(n, 18, "aim7: 2 configs x 3 ways x 3 runs");
        r = analysis_pick_score(runs, n, NULL, NULL, &score, why, sizeof why);
        ok(r == 0 && score && streq(score, "jobs_per_min"), "aim7: the one score is jobs_per_min");

        go.by[go.nby++] = strdup("config");
        go.by[go.nby++] = strdup("ways");
        go.baseline[0] = (struct store_kv){ .key = strdup("config"), .value = strdup("1") };
        go.nbaseline = 1;
        go.explain = true;
        r = analysis_groups(runs, n, &go, &gr);
        ok(r == 0 && gr, "aim7: grouped by config,ways against config=1");
        if (r < 0)
                goto out;
        is_int(gr->ngroups, 6, "aim7: six groups");

        g = find_group(gr, "2", "80");
        ok(g != NULL, "config=2 ways=80 is a group");
        if (!g)
                goto out;
        gs = group_find_score(g, "jobs_per_min");
        ok(gs != NULL, "  with jobs_per_min");
        if (!gs)
                goto out;
        for (int i = 0; i < 3; i++)
                sd += (c2w80[i] - mean) * (c2w80[i] - mean) / 2;
        sd = sqrt(sd);
        is_int(gs->s.n, 3, "  n 3");
        is_near(gs->s.mean, mean, 1e-9, "  mean of 21300, 43000, 32100");
        is_near(gs->s.median, 32100, 0, "  median 32100");
        is_near(gs->s.stddev, sd, 1e-6, "  stddev (n-1) 10850.0");
        is_near(gs->s.cv, sd / mean, 1e-12, "  cv 33.8%");
        is_near(gs->s.min, 21300, 0, "  min");
        is_near(gs->s.max, 43000, 0, "  max");
        ok(g->high_variance, "  HIGH VARIANCE (cv %.3f > 0.05, min/max %.3f < 0.75)", sd / mean, 21300 / 43000.0);
        ok(g->has_baseline && !g->is_baseline, "  has a baseline");
        b = &gr->groups[g->baseline];
        ok(streq(b->val[0], "1") && streq(b->val[1], "80"), "  which is config=1 ways=80");
        v = group_find_verdict(g, "jobs_per_min");
        p = welch_p(c2w80, 3, c1w80, 3);
        ok(v && v->has_p, "  has a p-value");
        if (v) {
                is_near(v->p_value, p, 1e-9, "  Welch's p-value, as by hand");
                is_str(v->verdict, p < 0.05 ? "regression" : "no significant change", "  verdict: regression");
                is_near(v->change_pct, (mean - (145600 + 146400 + 146100) / 3.0) / ((145600 + 146400 + 146100) / 3.0) * 100,
                        1e-9, "  change of the mean, %");
        }
        ok(g->nchanges > 0 && g->changes[0].metric == metric_id_by_name("lock_contentions"),
           "  the counter built to move with the score moved most");
        ok(g->nexplain == 1 && g->explain[0].nrows == 0 && strstr(g->explain[0].note, "too few"),
           "  explain inside the group: n=3 is too few (%s)", g->nexplain ? g->explain[0].note : "");

        for (int i = 0; i < 3; i++) {
                static const char *const ways[] = { "20", "40", "80" };
                const struct group *c1 = find_group(gr, "1", ways[i]);
                ok(c1 && !c1->high_variance && c1->is_baseline, "config=1 ways=%s: a baseline, not HIGH VARIANCE", ways[i]);
        }
        g = find_group(gr, "2", "20");
        v = g ? group_find_verdict(g, "jobs_per_min") : NULL;
        p = welch_p(c2w20, 3, c1w20, 3);
        ok(v && v->has_p && fabs(v->p_value - p) < 1e-9 && p >= 0.05 && streq(v->verdict, "no significant change"),
           "config=2 ways=20: no significant change (p=%.3f by hand)", p);
        g = find_group(gr, "2", "40");
        ok(g && !g->high_variance, "config=2 ways=40 (133100..134800): not HIGH VARIANCE");

        ok(gr->has_all && gr->nall == 1, "explain across all runs: one score");
        if (gr->nall == 1) {
                is_int(gr->all[0].n, 18, "  over 18 runs");
                is_str(gr->all[0].rows[0].name, "lock_contentions/s", "  lock_contentions/s first");
                ok(gr->all[0].rows[0].rho < -0.99, "  and against the score (rho %.3f)", gr->all[0].rows[0].rho);
        }
        gr = group_result_free(gr);

        /* thresholds: the caller's */
        go.cv_limit = 0.5;
        go.minmax_limit = 0.3;
        go.explain = false;
        r = analysis_groups(runs, n, &go, &gr);
        g = r == 0 ? find_group(gr, "2", "80") : NULL;
        ok(g && !g->high_variance, "cv limit 50%%, min/max 0.3: config=2 ways=80 no longer flagged");
        ok(g && g->nexplain == 0 && !gr->has_all, "no --explain: no rankings");
        gr = group_result_free(gr);

        ok(analysis_context_differs(runs, n, &cd) == 0, "context that differs");
        {
                bool kernel = false;
                for (size_t k = 0; k < cd.nkeys; k++)
                        if (streq(cd.keys[k].key, "kernel"))
                                kernel = cd.keys[k].value[0] && cd.keys[k].value[17] &&
                                         !streq(cd.keys[k].value[0], cd.keys[k].value[17]);
                ok(kernel, "  the kernel differs between config 1 and 2");
        }
        context_differs_free(&cd);
out:
        group_result_free(gr);
        group_opts_free(&go);
        analysis_unload(runs, n);
        store_close(st);
}

static const struct curve_point *point(const struct curve_series *s, double n)
{
        for (size_t k = 0; k < s->npts; k++)
                if (s->pts[k].n == n)
                        return &s->pts[k];
        return NULL;
}

/* Seed 001, TCG "make -j N": the baseline's speedup flattens from 8 vCPUs
 * (about 7.2 there, 9.5 at 28); cputlb-no-bql climbs to about 13.8. */
static void speedup(void)
{
        static const struct curve_opts hib = { 0 };
        struct analysis_run *runs = NULL;
        struct curve_result *cr = NULL;
        const struct curve_series *base = NULL, *nobql = NULL;
        const struct curve_point *pt;
        const char *score = NULL;
        struct store *st;
        char why[256];
        size_t n;
        int r;

        st = load("speedup", ANALYSIS_TOTALS_SYSTEM, &runs, &n);
        is_int(n, 72, "speedup: 3 series x 8 N x 3 runs");
        r = analysis_pick_score(runs, n, "variant", NULL, &score, why, sizeof why);
        ok(r == -ENOENT && strstr(why, "numeric tag variant"), "a non-numeric --by: %s", why);
        r = analysis_pick_score(runs, n, "vcpus", NULL, &score, why, sizeof why);
        ok(r == 0 && streq(score, "builds_per_hour"), "score builds_per_hour");
        r = analysis_curve(runs, n, "vcpus", "variant", "builds_per_hour", &hib, &cr);
        ok(r == 0, "curve by vcpus, one series per variant");
        if (r < 0)
                goto out;
        is_int(cr->nseries, 3, "three series");
        for (size_t j = 0; j < cr->nseries; j++) {
                is_int(cr->series[j].npts, 8, "  eight points");
                if (streq(cr->series[j].value, "baseline"))
                        base = &cr->series[j];
                else if (streq(cr->series[j].value, "cputlb-no-bql"))
                        nobql = &cr->series[j];
        }
        ok(base && nobql, "baseline and cputlb-no-bql series");
        if (!base || !nobql)
                goto out;
        /* 100 builds/hour on one vCPU, runs at -1%, 0, +1% */
        pt = point(base, 8);
        ok(pt != NULL, "baseline at 8 vCPUs");
        if (pt) {
                is_int(pt->nruns, 3, "  3 runs");
                is_near(pt->mean, 720, 1e-6, "  mean 720");
                is_near(pt->min, 712.8, 1e-6, "  min 712.8");
                is_near(pt->max, 727.2, 1e-6, "  max 727.2");
                is_near(pt->speedup, 7.2, 1e-9, "  speedup 7.2");
                is_near(pt->efficiency, 0.9, 1e-9, "  efficiency 0.9");
        }
        pt = point(base, 28);
        ok(pt && fabs(pt->speedup - 9.5) < 1e-9 && pt->efficiency < 0.35, "baseline at 28: speedup 9.5, efficiency %.2f",
           pt ? pt->efficiency : 0);
        pt = point(nobql, 28);
        ok(pt && fabs(pt->speedup - 13.8) < 1e-9, "cputlb-no-bql at 28: speedup 13.8");
        ok(base->has_usl && nobql->has_usl, "USL fitted to both");
        ok(base->usl.r2 > 0.99, "  the baseline's fits (r2 %.4f)", base->usl.r2);
        ok(base->usl.sigma > nobql->usl.sigma, "  the series that flattens has the larger contention (sigma %.4f > %.4f)",
           base->usl.sigma, nobql->usl.sigma);
        ok(isfinite(base->usl.peak_n) && base->usl.peak_n > 12 && base->usl.peak_n < 40,
           "  the baseline peaks where the chart flattens (N=%.1f)", base->usl.peak_n);
        ok(base->pts[7].per_score[metric_id_by_name("lock_contentions")] >
                   20 * base->pts[0].per_score[metric_id_by_name("lock_contentions")],
           "  lock contentions per build grow with N");
        cr = curve_result_free(cr);

        r = analysis_curve(runs, n, "vcpus", NULL, "builds_per_hour", &hib, &cr);
        ok(r == 0 && cr->nseries == 1 && !cr->series[0].value && cr->series[0].npts == 8,
           "without --series: one curve over all runs");
out:
        curve_result_free(cr);
        analysis_unload(runs, n);
        store_close(st);
}

static double hms(double m, double s)
{
        return m * 60 + s;
}

/* Seed 003, thp_pthread: sys 6m14.220s with THP off, 143m13.764s with it
 * on at 128 cores; 8m52.908s and 337m10.072s at 256. */
static void thp(void)
{
        struct group_opts go = GROUP_OPTS_DEFAULT;
        struct analysis_run *runs = NULL;
        struct group_result *gr = NULL;
        const struct group *g;
        const struct score_verdict *v;
        struct store *st;
        size_t n;
        int r;

        st = load("thp", ANALYSIS_TOTALS_NODE, &runs, &n);
        go.by[go.nby++] = strdup("thp");
        go.by[go.nby++] = strdup("cores");
        go.baseline[0] = (struct store_kv){ .key = strdup("thp"), .value = strdup("off") };
        go.nbaseline = 1;
        go.lower_better[go.nlower_better++] = strdup("seconds");
        r = analysis_groups(runs, n, &go, &gr);
        ok(r == 0, "thp: grouped by thp,cores against thp=off");
        if (r < 0)
                goto out;
        is_int(gr->ngroups, 4, "four groups");
        g = find_group(gr, "on", "128");
        ok(g && g->has_baseline && g->times[RUN_TIME_SYS].have, "thp=on cores=128 against thp=off, with run times");
        if (!g)
                goto out;
        is_near(g->times[RUN_TIME_SYS].ratio, hms(143, 13.764) / hms(6, 14.220), 1e-4,
                "  sys time 143m13.764s / 6m14.220s = 22.96x");
        is_near(g->times[RUN_TIME_WALL].ratio, hms(1, 36.906) / hms(0, 57.797), 1e-4,
                "  real time 1m36.906s / 0m57.797s = 1.68x");
        v = group_find_verdict(g, "seconds");
        ok(v && streq(v->verdict, "regression"), "  slower with THP on, and lower is better: a regression");
        {
                bool fault_new = false, split_new = false;
                for (size_t i = 0; i < g->nchanges; i++) {
                        fault_new |= g->changes[i].metric == metric_id_by_name("thp_fault_alloc") && !g->changes[i].has_change;
                        split_new |= g->changes[i].metric == metric_id_by_name("thp_split_page") && !g->changes[i].has_change;
                }
                ok(fault_new && split_new, "  thp_fault_alloc and thp_split_page appear only with THP on");
                /* "new" does not rank first by itself;
                 * these are ranked as significant changes, by Welch's t */
                fault_new = split_new = false;
                for (size_t i = 0; i < g->nchanges; i++) {
                        fault_new |= g->changes[i].metric == metric_id_by_name("thp_fault_alloc") &&
                                     g->changes[i].rank == CHANGE_SIGNIFICANT;
                        split_new |= g->changes[i].metric == metric_id_by_name("thp_split_page") &&
                                     g->changes[i].rank == CHANGE_SIGNIFICANT;
                }
                ok(fault_new && split_new, "  and are significant changes (Welch's t on the per-run rates)");
        }
        g = find_group(gr, "on", "256");
        ok(g && fabs(g->times[RUN_TIME_SYS].ratio - hms(337, 10.072) / hms(8, 52.908)) < 1e-4,
           "thp=on cores=256: sys time 337m10.072s / 8m52.908s = 37.96x");
        g = find_group(gr, "off", "256");
        ok(g && g->is_baseline && !g->has_baseline, "thp=off cores=256 is a baseline");
out:
        group_result_free(gr);
        group_opts_free(&go);
        analysis_unload(runs, n);
        store_close(st);
}

/* The runs with tag bench=b, as indexes. */
static size_t bench_idx(const struct analysis_run *runs, size_t n, const char *b, size_t *idx)
{
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
                const char *v = analysis_tag_value(&runs[i].d, "bench");
                if (v && streq(v, b))
                        idx[k++] = i;
        }
        return k;
}

static const struct analysis_run *run_named(const struct analysis_run *runs, size_t n, const char *name)
{
        for (size_t i = 0; i < n; i++)
                if (streq(runs[i].info.name, name))
                        return &runs[i];
        return NULL;
}

/* Spearman's rho without ties, by hand: 1 - 6 sum d^2 / (n (n^2 - 1)). */
static double spearman_noties(const double *x, const double *y, size_t n)
{
        double d2 = 0;
        for (size_t i = 0; i < n; i++) {
                size_t rx = 0, ry = 0;
                for (size_t j = 0; j < n; j++) {
                        rx += x[j] < x[i];
                        ry += y[j] < y[i];
                }
                d2 += ((double)rx - (double)ry) * ((double)rx - (double)ry);
        }
        return 1 - 6 * d2 / ((double)n * ((double)n * (double)n - 1));
}

/* tests/fixtures/study.json (gen-study.py): what a first real study met. */
static void study(void)
{
        /* messaging: seconds at -g 1, 2, 4, 8, each x 0.99, 1.00, 1.01 */
        static const double gn[] = { 1, 2, 4, 8 }, sec[] = { 0.10, 0.16, 0.32, 0.63 }, f[] = { 0.99, 1.00, 1.01 };
        struct curve_opts co = { .lower_is_better = true };
        struct group_opts go = GROUP_OPTS_DEFAULT;
        struct analysis_run *runs = NULL;
        struct curve_result *cr = NULL;
        struct group_result *gr = NULL;
        struct explain_result e;
        const struct curve_point *pt;
        const struct group *g = NULL;
        size_t n, idx[64], ni;
        double x1 = 0, x8 = 0, t1 = 0, t8 = 0;
        char buf[32];
        struct store *st;
        int r;

        fixture_dir = "tests/fixtures";
        st = load("study", ANALYSIS_TOTALS_SYSTEM, &runs, &n);

        /* 1: a time where lower is better */
        ok(analysis_recorded_lower(runs, n, "seconds"), "1: seconds is recorded lower-is-better (tag lower_is_better)");
        ok(!analysis_recorded_lower(runs, n, "second") && !analysis_recorded_lower(runs, n, "ops_per_s"),
           "1: and only seconds");
        r = analysis_curve(runs, n, "groups", NULL, "seconds", &co, &cr);
        ok(r == -EDOM && !cr, "1: lower is better and no work model: no curve (-EDOM), not a speedup of the time");
        for (int k = 0; k < 3; k++) {
                x1 += 1 / (sec[0] * f[k]) / 3;
                x8 += 8 / (sec[3] * f[k]) / 3;
                t1 += sec[0] * f[k] / 3;
                t8 += sec[3] * f[k] / 3;
        }
        co.work = CURVE_WORK_PER_N;
        r = analysis_curve(runs, n, "groups", NULL, "seconds", &co, &cr);
        ok(r == 0 && cr->series[0].npts == 4, "1: --work per-n: four points");
        if (r == 0) {
                pt = point(&cr->series[0], 8);
                ok(pt && fabs(pt->x - x8) < 1e-9, "1: throughput at N=8 is the mean of 8/seconds (%.4f)", x8);
                ok(pt && fabs(pt->mean - t8) < 1e-12, "1: the mean score is still the time (%.4f s)", t8);
                ok(pt && fabs(pt->speedup - x8 / x1) < 1e-9 && pt->speedup < 1.5,
                   "1: speedup at 8 = %.3f (throughput flat), not 6.30", x8 / x1);
                ok(pt && fabs(pt->efficiency - x8 / x1 / 8) < 1e-9, "1: efficiency %.1f%%", x8 / x1 / 8 * 100);
                pt = point(&cr->series[0], 2);
                /* (100,000/s) / (2 / t) per run, averaged: 50,000 x mean(t) */
                ok(pt && pt->has_per_score[metric_id_by_name("context_switches")] &&
                           fabs(pt->per_score[metric_id_by_name("context_switches")] - 50000 * sec[1]) < 1e-6,
                   "1: context_switches per unit of throughput at N=2: 50,000 x 0.16 = 8000");
        }
        cr = curve_result_free(cr);
        co.work = CURVE_WORK_FIXED;
        r = analysis_curve(runs, n, "groups", NULL, "seconds", &co, &cr);
        pt = r == 0 ? point(&cr->series[0], 8) : NULL;
        {
                double y1 = 0, y8 = 0;
                for (int k = 0; k < 3; k++) {
                        y1 += 1 / (sec[0] * f[k]) / 3;
                        y8 += 1 / (sec[3] * f[k]) / 3;
                }
                ok(pt && fabs(pt->speedup - y8 / y1) < 1e-9, "1: --work fixed: speedup at 8 = mean(1/t8)/mean(1/t1) = %.3f",
                   y8 / y1);
        }
        cr = curve_result_free(cr);
        (void)gn;
        (void)t1;

        /* 2: a fit that means nothing, and one N */
        co = (struct curve_opts){ 0 };
        r = analysis_curve(runs, n, "threads", "bench", "ops_per_s", &co, &cr);
        ok(r == 0, "2: one series per bench");
        for (size_t j = 0; r == 0 && j < cr->nseries; j++) {
                const struct curve_series *cs = &cr->series[j];
                if (!streq(cs->value, "flat") && !streq(cs->value, "futex"))
                        continue;       /* no ops_per_s by threads there */
                if (streq(cs->value, "flat")) {
                        ok(cs->has_usl && cs->usl.r2 < CURVE_USL_MIN_R2 && !cs->usl_ok,
                           "2: flat: the fit converged with r2 %.3f < %.2f, and is not a result", cs->usl.r2,
                           CURVE_USL_MIN_R2);
                        ok(strstr(cs->usl_why, "r2 0.09 is below 0.90") != NULL, "2: why: %s", cs->usl_why);
                        ok(cs->has_speedup && cs->base_n == 1 && fabs(cs->pts[1].speedup - 1.4) < 1e-9,
                           "2: flat: speedup over N=1 (1400/1000)");
                } else {
                        ok(cs->npts == 1 && !cs->has_speedup && !cs->usl_ok,
                           "2: futex: one N: no speedup, no USL (not SPEEDUP 4.00 EFFICIENCY 100%%)");
                        ok(strstr(cs->usl_why, "1 distinct value of N") != NULL, "2: why: %s", cs->usl_why);
                }
        }
        cr = curve_result_free(cr);

        /* 3: the baseline's counters ranked by Welch's t, tiny rates apart */
        go.by[go.nby++] = strdup("config");
        go.baseline[0] = (struct store_kv){ .key = strdup("config"), .value = strdup("base") };
        go.nbaseline = 1;
        r = analysis_groups(runs, n, &go, &gr);
        for (size_t k = 0; r == 0 && k < gr->ngroups; k++)
                if (streq(gr->groups[k].val[0], "patched"))
                        g = &gr->groups[k];
        ok(g && g->has_baseline && g->nchanges > 0, "3: config=patched against config=base");
        if (g) {
                static const double cb[] = { 10000, 10100, 9900 }, cp[] = { 16100, 16200, 16000 },
                                    mb[] = { 20, 25, 22 }, mp[] = { 10, 180, 10 };
                const struct metric_change *c0 = &g->changes[0];
                bool neg_last = true, seen_neg = false, mig_after = false;
                int neg = 0;
                is_str(metric_table[c0->metric].name, "context_switches", "3: context_switches (+61%) ranks first");
                ok(c0->rank == CHANGE_SIGNIFICANT && c0->has_p && fabs(c0->p_value - welch_p(cp, 3, cb, 3)) < 1e-12,
                   "3: significant, p by hand %.2g", welch_p(cp, 3, cb, 3));
                for (size_t i = 0; i < g->nchanges; i++) {
                        const struct metric_change *c = &g->changes[i];
                        const char *nm = metric_table[c->metric].name;
                        if (c->rank == CHANGE_NEGLIGIBLE) {
                                seen_neg = true;
                                neg += streq(nm, "cpu_iowait") || streq(nm, "cpu_steal") || streq(nm, "page_faults_major");
                        } else
                                neg_last &= !seen_neg;
                        if (streq(nm, "cpu_migrations"))
                                mig_after = i > 0 && c->rank == CHANGE_NOT_SIGNIFICANT &&
                                            fabs(c->p_value - welch_p(mp, 3, mb, 3)) < 1e-12;
                }
                is_int(neg, 3, "3: cpu_iowait (new), cpu_steal (-100%) and page_faults_major (+997%) are negligible");
                ok(neg_last, "3: and come after every other change");
                ok(mig_after, "3: cpu_migrations (+198%% from one wild run) is not significant (p %.2f) and ranks below",
                   welch_p(mp, 3, mb, 3));
        }
        gr = group_result_free(gr);
        group_opts_free(&go);

        /* 4: a counter proportional to the work ranks below one whose rate
         * per unit of work moves */
        ni = bench_idx(runs, n, "explain", idx);
        is_int(ni, 10, "4: ten runs for --explain");
        r = analysis_explain(runs, idx, ni, "ops", &e);
        ok(r == 0 && e.nrows >= 2, "4: ranked");
        if (r == 0 && e.nrows >= 2) {
                double sc[10], w[10];
                for (size_t i = 0; i < ni; i++) {
                        sc[i] = analysis_find_score(&runs[idx[i]].d, "ops")->value;
                        w[i] = runs[idx[i]].m[metric_id_by_name("lock_contentions")].per_s / sc[i];
                }
                is_str(e.rows[0].name, "context_switches/s", "4: context_switches first (its rate per op moves)");
                ok(fabs(e.rows[0].rho + 1) < 1e-9 && fabs(e.rows[0].rho_per_score + 1) < 1e-9,
                   "4: rho -1 in both views");
                is_str(e.rows[1].name, "lock_contentions/s", "4: lock_contentions (5 per op) below it");
                ok(fabs(e.rows[1].rho - 1) < 1e-9 && e.rows[1].ranked_by == EXPLAIN_PER_SCORE,
                   "4: its rho/s is +1 but it is ranked per unit of score");
                ok(fabs(e.rows[1].rho_per_score - spearman_noties(w, sc, ni)) < 1e-9, "4: rho per op %.3f, as by hand",
                   spearman_noties(w, sc, ni));
        }

        /* 12: VS_FIRST within the same tags; a change that is not -100% */
        ok(analysis_first_same_tags(runs, (size_t)(run_named(runs, n, "cmp-b") - runs)) == run_named(runs, n, "cmp-a"),
           "12: cmp-b compares with cmp-a (same tags)");
        ok(analysis_first_same_tags(runs, (size_t)(run_named(runs, n, "other") - runs)) == run_named(runs, n, "other"),
           "12: 'other' (bench=other) has nothing to compare with");
        format_pct((19.81 - 87669) / 87669 * 100, buf, sizeof buf);
        is_str(buf, "-99.98%", "12: 19.81/s vs 87,669/s is -99.98%, not -100.0%");
        format_pct(-100, buf, sizeof buf);
        is_str(buf, "-100.0%", "12: all gone is -100.0%");
        format_pct(61, buf, sizeof buf);
        is_str(buf, "+61.0%", "12: +61.0%");
        format_pct(0.004, buf, sizeof buf);
        is_str(buf, "+0.004%", "12: +0.004%, not +0.0%");

        analysis_unload(runs, n);
        store_close(st);
}

/* The run's own counters against the machine's (analysis-own.c), on a run
 * built by hand: the numbers are the test's. */
static void test_own(void)
{
        static struct analysis_run r;
        struct analysis_own_cpu cpu;
        double own, share, others;
        char buf[320];

        r.m[M_CONTEXT_SWITCHES] = (struct mstat){ .have = true, .total = 362232, .has_own = true, .own_total = 358901 };
        r.m[M_CPU_MIGRATIONS] = (struct mstat){ .have = true, .total = 0, .has_own = true, .own_total = 0 };
        r.m[M_CPU_USER] = (struct mstat){ .have = true, .total = 6, .has_own = true, .own_total = 0.1 };
        r.m[M_CPU_SYSTEM] = (struct mstat){ .have = true, .total = 2, .has_own = true, .own_total = 0.4 };
        r.cpu_total = 10;
        r.cpu_time[3] = 1.5;    /* idle */
        r.cpu_time[4] = 0.5;    /* iowait */
        ok(analysis_own_share(&r, M_CONTEXT_SWITCHES, &own, &share) && own == 358901, "own: the cgroup's count");
        is_near(share, 358901.0 / 362232.0, 1e-12, "own: its share of the machine's (99.1%)");
        ok(analysis_own_others(&r, M_CONTEXT_SWITCHES, &others) && others == 362232 - 358901, "own: everything else's");
        ok(analysis_own_share(&r, M_CPU_MIGRATIONS, &own, &share) && isnan(share), "own: no share of a zero total");
        ok(!analysis_own_share(&r, M_PAGE_FAULTS, &own, &share), "own: none where the cgroup did not count");
        ok(analysis_own_cpu(&r, &cpu), "own: the CPU time split");
        is_near(cpu.busy_s, 8, 1e-12, "own: busy = all - idle - iowait");
        is_near(cpu.own_s, 0.5, 1e-12, "own: the benchmark's = its user + system");
        is_near(cpu.others_s, 7.5, 1e-12, "own: everything else's = busy - the benchmark's");
        ok(!cpu.self_known && cpu.self_s == 0, "own: a run without scalemond_cpu takes nothing out");
        analysis_own_cpu_words(&cpu, buf, sizeof buf);
        is_str(buf, "cpu time busy: 8.00 CPU-s, the benchmark 0.50 (user 0.10, system 0.40), everything else 7.50 CPU-s",
               "own: the words without scalemond_cpu, as before it existed");

        r.m[M_SCALEMOND_CPU] = (struct mstat){ .have = true, .total = 0.012 };
        ok(analysis_own_cpu(&r, &cpu) && cpu.self_known, "own: scalemond_cpu recorded");
        is_near(cpu.others_s, 7.488, 1e-12, "own: everything else's = busy - the benchmark's - scalemond's");
        analysis_own_cpu_words(&cpu, buf, sizeof buf);
        is_str(buf, "cpu time busy: 8.00 CPU-s, the benchmark 0.50 (user 0.10, system 0.40), everything else 7.49 CPU-s "
               "(scalemond's own 0.01 CPU-s taken out)", "own: the words say what was taken out");
        r.m[M_CPU_USER].own_total = 7.995;
        ok(analysis_own_cpu(&r, &cpu) && cpu.others_s == 0, "own: never negative when scalemond's is the rest");
}

int main(void)
{
        char cmd[128];

        test_own();
        if (!mkdtemp(dir)) {
                fprintf(stderr, "cannot make a temporary directory: %m\n");
                return 77;
        }
        aim7();
        speedup();
        thp();
        study();
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0)
                fprintf(stderr, "could not remove %s\n", dir);
        return tap_done();
}
