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
#include "store.h"
#include "tap.h"

static char dir[] = "/tmp/scalemon-test-analysis.XXXXXX";

/* The fixture imported into its own database, and its runs loaded. */
static struct store *load(const char *name, enum analysis_totals keep, struct analysis_run **ret, size_t *ret_n)
{
        const char *srcdir = getenv("srcdir") ? getenv("srcdir") : ".";
        char path[4096], db[4096];
        struct run_filter f = { .since = INT64_MIN, .until = INT64_MAX };
        struct run_info *infos = NULL;
        struct store *st = NULL;
        char *err = NULL;
        size_t nruns = 0, n = 0, failed;
        int fd, r;

        snprintf(path, sizeof path, "%s/tests/fixtures/seeds/%s.json", srcdir, name);
        snprintf(db, sizeof db, "%s/%s.db", dir, name);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
                fprintf(stderr, "cannot open %s: %m (set srcdir to the source tree)\n", path);
                exit(77);
        }
        r = store_open(db, STORE_WRITE, &st, &err);
        if (r == 0)
                r = exchange_import_fd(st, fd, &nruns, &err);
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
        r = analysis_curve(runs, n, "vcpus", "variant", "builds_per_hour", &cr);
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

        r = analysis_curve(runs, n, "vcpus", NULL, "builds_per_hour", &cr);
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
                ok(g->nchanges >= 2 && !g->changes[0].has_change && !g->changes[1].has_change,
                   "  and come first, before the changes in %%");
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

int main(void)
{
        char cmd[128];

        if (!mkdtemp(dir)) {
                fprintf(stderr, "cannot make a temporary directory: %m\n");
                return 77;
        }
        aim7();
        speedup();
        thp();
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0)
                fprintf(stderr, "could not remove %s\n", dir);
        return tap_done();
}
