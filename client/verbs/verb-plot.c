/* verb-plot.c - `scalemonctl plot KIND`: charts drawn by gnuplot.
 *
 * Each kind gathers its data into one chart (chart.h) - series of points
 * (with optional min/max bars), vertical markers, fitted functions, or a
 * heat map - from the store's samples (timeseries, heatmap) or from the
 * analysis (curve, groups, scatter); chart.c writes it as JSON or draws it.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "analysis.h"
#include "verb-curve.h"
#include "chart.h"
#include "explain.h"
#include "output.h"
#include "proto.h"
#include "selection.h"
#include "stats.h"
#include "suggest.h"
#include "timeutil.h"
#include "verbs.h"

#define MAX_POINTS 300          /* a time series is merged down to this many */
#define HEAT_BINS  120

static void set_text(char *buf, size_t len, const char *fmt, ...) _printf_(3, 4);
static void set_text(char *buf, size_t len, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, len, fmt, ap);
        va_end(ap);
}

/* ---- the kinds ---- */

struct popts {
        const char *kind;       /* timeseries, heatmap, curve, groups, scatter, explain */
        const char *metric, *run, *score, *by, *series, *output;
        char *against;          /* explain: --against RUN,... */
        const char *per;
        struct run_select sel;
        struct group_opts go;
        bool y_score;           /* curve: the score rather than the speedup */
        const char *lower;      /* curve: --lower-is-better K,... */
        enum curve_work work;   /* curve: --work */
};

static double pick_step(int64_t span, int64_t tick)
{
        int64_t step = span / MAX_POINTS;
        return step > tick ? (double)step : 0;
}

/* Time range and markers: a run, or --since/--until. */
static int time_range(struct ctl *ctl, struct popts *o, struct chart *p, int64_t *since, int64_t *until, char *what,
                      size_t whatlen)
{
        int r;

        if (o->run) {
                struct run_info ri;
                struct run_detail d;
                const char *why;
                if (!proto_valid_name(o->run, &why))
                        return ctl_fail(EXIT_USAGE, "--run '%s': %s", o->run, why);
                if (store_run_find(ctl->store, o->run, &ri) < 0)
                        return ctl_fail(EXIT_FAILED, "no run named '%s' (see scalemonctl runs)", o->run);
                if (ri.imported) {
                        run_info_free(&ri);
                        return ctl_fail(EXIT_FAILED, "run %s was imported: its samples are in the database it came from",
                                        o->run);
                }
                *since = ri.start;
                *until = ri.end ? ri.end : now_realtime_ns();
                if (store_run_detail(ctl->store, ri.id, &d) == 0) {
                        for (size_t i = 0; i < d.nmarks; i++)
                                chart_add_mark(p, (double)(d.marks[i].t - ri.start) / 1e9, d.marks[i].text);
                        run_detail_free(&d);
                }
                set_text(what, whatlen, "run %s", o->run);
                run_info_free(&ri);
                return 0;
        }
        if ((r = ctl_when(ctl, "--since", o->sel.since_arg ? o->sel.since_arg : "-5m", false, since)) ||
            (r = ctl_when(ctl, "--until", o->sel.until_arg ? o->sel.until_arg : "now", true, until)))
                return r;
        if (*until <= *since)
                return ctl_fail(EXIT_USAGE, "--until is not after --since");
        /* the range in the title, and each run in it as its window */
        {
                struct run_filter f = { .since = *since, .until = *until };
                struct run_info *infos = NULL;
                size_t n = 0, len = 0;
                if (store_runs_list(ctl->store, &f, &infos, &n) < 0)
                        n = 0;
                for (size_t i = 0; i < n; i++)
                        chart_add_window(p, (double)(infos[i].start - *since) / 1e9,
                                         (double)((infos[i].end ? MIN(infos[i].end, *until) : *until) - *since) / 1e9,
                                         infos[i].name);
                if (o->sel.since_arg)
                        len = (size_t)snprintf(what, whatlen, "%s to %s", o->sel.since_arg,
                                               o->sel.until_arg ? o->sel.until_arg : "now");
                else
                        len = (size_t)snprintf(what, whatlen, "the last 5 minutes");
                if (n > 0 && len < whatlen)
                        snprintf(what + len, whatlen - len, " (%zu run%s)", n, n == 1 ? "" : "s");
                run_infos_free(infos, n);
        }
        return 0;
}

static const struct metric_def *need_metric(const char *m, int *r)
{
        const struct metric_def *def = m ? metric_by_name(m) : NULL;
        if (!m)
                *r = ctl_fail(EXIT_USAGE, "this plot needs a METRIC (scalemonctl metrics lists them)");
        else if (!def) {
                char hint[160];
                *r = ctl_fail(EXIT_USAGE, "unknown metric '%s' (scalemonctl metrics lists them)%s", m,
                              suggest_metric_hint(m, hint, sizeof hint));
        }
        return def;
}

static int64_t interval_ns(struct ctl *ctl)
{
        int64_t iv = NSEC_PER_SEC;
        store_meta_get_int(ctl->store, "interval_ns", &iv);
        return iv;
}

static int kind_timeseries(struct ctl *ctl, struct popts *o, struct chart *p)
{
        const struct metric_def *def;
        int64_t since, until, step;
        _cleanup_free_ int *node_of = NULL;
        int ncpu = 0, r = 0;
        char what[256];
        enum series_filter f = SERIES_ALL;
        int nlocs = 1;

        def = need_metric(o->metric, &r);
        if (!def)
                return r;
        if ((r = time_range(ctl, o, p, &since, &until, what, sizeof what)))
                return r;
        if (store_topology_get(ctl->store, &node_of, NULL, &ncpu) < 0)
                return ctl_fail(EXIT_FAILED, "cannot read the CPU map: %s", store_errmsg(ctl->store));
        if (o->per && streq(o->per, "cpu")) {
                if (def->scope != SCOPE_CPU)
                        return ctl_fail(EXIT_USAGE, "--per cpu: %s is not a per-CPU metric", o->metric);
                f = SERIES_CPU;
                nlocs = ncpu;
        } else if (o->per && streq(o->per, "node")) {
                int maxnode = 0;
                if (def->scope == SCOPE_SYSTEM)
                        return ctl_fail(EXIT_USAGE, "--per node: %s is a system-wide metric", o->metric);
                for (int i = 0; i < ncpu; i++)
                        maxnode = MAX(maxnode, node_of[i]);
                f = SERIES_NODE;
                nlocs = maxnode + 1;
        } else if (o->per && !streq(o->per, "system"))
                return ctl_fail(EXIT_USAGE, "--per '%s': use system, node or cpu", o->per);
        step = (int64_t)pick_step(until - since, interval_ns(ctl));

        for (int loc = 0; loc < nlocs; loc++) {
                struct series_point *pts = NULL;
                struct chart_series *s;
                size_t n = 0;
                char name[64];
                if (f == SERIES_NODE) {
                        bool exists = false;
                        for (int i = 0; i < ncpu; i++)
                                exists |= node_of[i] == loc;
                        if (!exists)
                                continue;
                }
                if (store_series(ctl->store, o->metric, f, loc, since - interval_ns(ctl) / 2, until, step, &pts, &n) < 0)
                        return ctl_fail(EXIT_FAILED, "cannot read %s: %s", o->metric, store_errmsg(ctl->store));
                if (f == SERIES_CPU)
                        snprintf(name, sizeof name, "cpu%d", loc);
                else if (f == SERIES_NODE)
                        snprintf(name, sizeof name, "node%d", loc);
                else
                        snprintf(name, sizeof name, "all CPUs");
                s = chart_add_series(p, name, CHART_LINES);
                for (size_t i = 0; s && i < n; i++)
                        if (!pts[i].not_counted && pts[i].dur_ns > 0)
                                chart_add_point(s, (double)(pts[i].t_ns - since) / 1e9, pts[i].value / ((double)pts[i].dur_ns / 1e9), 0, 0);
                free(pts);
        }
        {
                size_t total = 0;
                for (size_t i = 0; i < p->ns; i++)
                        total += p->s[i].n;
                if (total == 0)
                        return ctl_fail(EXIT_FAILED, "no samples of %s in %s", o->metric, what);
        }
        set_text(p->title, sizeof p->title, "%s per second, %s%s", o->metric, what,
                 f == SERIES_CPU ? ", per CPU" : f == SERIES_NODE ? ", per node" : "");
        set_text(p->xlabel, sizeof p->xlabel, "seconds since the start of %s", o->run ? o->run : "the range");
        set_text(p->ylabel, sizeof p->ylabel, "%s per second (%s/s)", o->metric, def->unit);
        p->yzero = true;
        p->xfix = true;         /* from the first sample, not from a round tic before it */
        return 0;
}

static int kind_heatmap(struct ctl *ctl, struct popts *o, struct chart *p)
{
        const struct metric_def *def;
        int64_t since, until, iv = interval_ns(ctl), step;
        _cleanup_free_ int *node_of = NULL;
        int ncpu = 0, r = 0;
        char what[256];

        def = need_metric(o->metric, &r);
        if (!def)
                return r;
        if (def->scope != SCOPE_CPU)
                return ctl_fail(EXIT_USAGE, "heatmap: %s is a %s metric; the heat map is CPUs by time", o->metric,
                                metric_scope_name(def->scope));
        if ((r = time_range(ctl, o, p, &since, &until, what, sizeof what)))
                return r;
        if (store_topology_get(ctl->store, &node_of, NULL, &ncpu) < 0 || ncpu == 0)
                return ctl_fail(EXIT_FAILED, "cannot read the CPU map: %s", store_errmsg(ctl->store));
        step = (until - since) / HEAT_BINS;
        if (step < iv)
                step = iv;
        p->heat = true;
        p->hx = (size_t)((until - since + step - 1) / step);
        if (p->hx == 0)
                p->hx = 1;
        p->hy = (size_t)ncpu;
        p->hdx = (double)step / 1e9;
        p->hx0 = p->hdx / 2;
        p->hz = calloc(p->hx * p->hy, sizeof *p->hz);
        if (!p->hz)
                return ctl_fail(EXIT_FAILED, "out of memory");
        for (int c = 0; c < ncpu; c++) {
                struct series_point *pts = NULL;
                double *sum = calloc(p->hx, sizeof *sum), *dur = calloc(p->hx, sizeof *dur);
                size_t n = 0;
                if (!sum || !dur || store_series(ctl->store, o->metric, SERIES_CPU, c, since - iv / 2, until, 0, &pts, &n) < 0) {
                        free(sum);
                        free(dur);
                        return ctl_fail(EXIT_FAILED, "cannot read %s: %s", o->metric, store_errmsg(ctl->store));
                }
                for (size_t i = 0; i < n; i++) {
                        int64_t off = pts[i].t_ns - since;
                        size_t b = off < 0 ? 0 : (size_t)(off / step);
                        if (b >= p->hx || pts[i].not_counted)
                                continue;
                        sum[b] += pts[i].value;
                        dur[b] += (double)pts[i].dur_ns / 1e9;
                }
                for (size_t b = 0; b < p->hx; b++)
                        p->hz[(size_t)c * p->hx + b] = dur[b] > 0 ? sum[b] / dur[b] : 0;
                free(pts);
                free(sum);
                free(dur);
        }
        set_text(p->title, sizeof p->title, "%s per second on each CPU, %s", o->metric, what);
        set_text(p->xlabel, sizeof p->xlabel, "seconds since the start of %s", o->run ? o->run : "the range");
        set_text(p->ylabel, sizeof p->ylabel, "CPU");
        set_text(p->zlabel, sizeof p->zlabel, "%s per second (%s/s)", o->metric, def->unit);
        return 0;
}

/* A curve's series: the mean score (or the speedup over the smallest N)
 * with min/max bars, and its USL fit as a function. */
static void curve_series_plot(struct chart *p, const struct popts *o, const struct curve_result *cr,
                              const struct curve_series *cs)
{
        double x0 = cs->npts ? cs->pts[0].x : 0, n0 = cs->npts ? cs->pts[0].n : 1;
        struct chart_series *ps = chart_add_series(p, o->series ? cs->value : cr->score, CHART_ERRORLINES);
        char name[256], expr[512];

        /* the speedup as the table shows it, but scaled by N0 so that the
         * ideal line is y = x: X(N) / X(N0) * N0 */
        for (size_t k = 0; ps && k < cs->npts; k++) {
                const struct curve_point *pt = &cs->pts[k];
                if (o->y_score)
                        chart_add_point(ps, pt->n, pt->mean, pt->min, pt->max);
                else
                        chart_add_point(ps, pt->n, pt->x / x0 * n0, pt->xmin / x0 * n0, pt->xmax / x0 * n0);
        }
        /* the fit is of throughput: not drawn over a time */
        if (cs->usl_ok && x0 > 0 && !(o->y_score && cr->opts.lower_is_better)) {
                double l = cs->usl.lambda, sg = cs->usl.sigma, kp = cs->usl.kappa;
                /* the fitted X(N), or as a speedup: X(N) / X(N0) * N0 */
                if (o->y_score)
                        snprintf(expr, sizeof expr, "%.10g*x/(1+%.10g*(x-1)+%.10g*x*(x-1))", l, sg, kp);
                else
                        snprintf(expr, sizeof expr, "%.10g*x/(1+%.10g*(x-1)+%.10g*x*(x-1))/%.10g*%.10g", l, sg, kp, x0,
                                 n0);
                snprintf(name, sizeof name, "USL fit%s%s (sigma %.3g, kappa %.3g)", o->series ? " " : "",
                         o->series ? cs->value : "", sg, kp);
                chart_add_func(p, name, expr, true, false);
        }
}

static int kind_curve(struct ctl *ctl, struct popts *o, struct chart *p)
{
        struct analysis_run *runs = NULL;
        struct curve_result *cr = NULL;
        struct curve_opts co = { .work = o->work };
        const char *score;
        size_t n = 0;
        int r;

        if (!o->by)
                return ctl_fail(EXIT_USAGE, "plot curve needs --by TAG, the tag that holds N");
        if ((r = run_select_load(ctl, &o->sel, ANALYSIS_TOTALS_SYSTEM, &runs, &n)))
                return r;
        if ((r = run_select_check_key(runs, n, o->by, "--by")) == 0 &&
            (!o->series || (r = run_select_check_key(runs, n, o->series, "--series")) == 0) &&
            (r = run_select_score(runs, n, o->by, o->score, &score)) == 0) {
                co.lower_is_better = curve_lower_is_better(o->lower, runs, n, score);
                if (co.lower_is_better && co.work == CURVE_WORK_UNKNOWN)
                        r = curve_refuse_time(score);
                else if (analysis_curve(runs, n, o->by, o->series, score, &co, &cr) < 0)
                        r = ctl_fail(EXIT_FAILED, "out of memory");
        }
        if (r) {
                analysis_unload(runs, n);
                return r;
        }
        for (size_t j = 0; j < cr->nseries; j++)
                curve_series_plot(p, o, cr, &cr->series[j]);
        if (!o->y_score)
                chart_add_func(p, "linear (ideal)", "x", true, true);
        p->key = "inside top left box";
        p->yzero = true;
        set_text(p->title, sizeof p->title, "%s by %s%s%s", o->y_score ? score : "speedup", o->by,
                 o->series ? ", one line per " : "", o->series ? o->series : "");
        set_text(p->xlabel, sizeof p->xlabel, "N = %s", o->by);
        if (o->y_score)
                set_text(p->ylabel, sizeof p->ylabel, "%s (mean, bars: min to max)", score);
        else
                set_text(p->ylabel, sizeof p->ylabel, "speedup over the smallest N, x that N (throughput: %s)",
                         !co.lower_is_better ? score : co.work == CURVE_WORK_PER_N ? "N/score" : "1/score");
        curve_result_free(cr);
        analysis_unload(runs, n);
        return 0;
}

/* A group's place: the line is the first tag's value (with several tags),
 * the category along x the others'. */
static void group_place(const struct group_result *gr, const struct group *g, const char *score, char *line,
                        size_t linelen, char *cat, size_t catlen)
{
        size_t lo = 0, co = 0;

        line[0] = cat[0] = 0;
        for (size_t t = 0; t < gr->go->nby; t++) {
                const char *val = g->val[t][0] ? g->val[t] : "(none)";
                if (t == 0 && gr->go->nby > 1)
                        strbuf_appendf(line, linelen, &lo, "%s=%s", gr->go->by[t], val);
                else
                        strbuf_appendf(cat, catlen, &co, "%s%s=%s", co ? " " : "", gr->go->by[t], val);
        }
        if (!line[0])
                snprintf(line, linelen, "%s", score);
}

static int kind_groups(struct ctl *ctl, struct popts *o, struct chart *p)
{
        struct analysis_run *runs = NULL;
        struct group_result *gr = NULL;
        struct chart_series *hv;
        const char *score;
        size_t n = 0;
        int r;

        if (!o->go.nby)
                return ctl_fail(EXIT_USAGE, "plot groups needs --group-by TAG[,TAG...]");
        if ((r = run_select_load(ctl, &o->sel, ANALYSIS_TOTALS_NODE, &runs, &n)))
                return r;
        if ((r = run_select_check_groups(runs, n, &o->go, "--group-by")) == 0 &&
            (r = run_select_score(runs, n, NULL, o->score, &score)) == 0 && analysis_groups(runs, n, &o->go, &gr) < 0)
                r = ctl_fail(EXIT_FAILED, "out of memory");
        if (r) {
                analysis_unload(runs, n);
                return r;
        }
        /* with several tags: one line per value of the first, the others
         * along x (config by ways, as the AIM7 table); with one, one line */
        p->xtics = json_array();
        for (size_t i = 0; i < gr->ngroups; i++) {
                const struct group *g = &gr->groups[i];
                const struct group_score *sc = group_find_score(g, score);
                char line[256], cat[256];
                struct chart_series *ps = NULL;
                double x = -1;
                size_t k;
                json_t *c;

                if (!sc)
                        continue;
                group_place(gr, g, score, line, sizeof line, cat, sizeof cat);
                json_array_foreach(p->xtics, k, c)
                        if (streq(json_string_value(json_object_get(c, "label")), cat))
                                x = (double)k;
                if (x < 0) {
                        x = (double)json_array_size(p->xtics);
                        json_array_append_new(p->xtics, json_pack("{s:s,s:f}", "label", cat, "x", x));
                }
                for (k = 0; k < p->ns; k++)
                        if (streq(p->s[k].name, line))
                                ps = &p->s[k];
                if (!ps)
                        ps = chart_add_series(p, line, CHART_ERRORLINES);
                if (ps)
                        chart_add_point(ps, x, sc->s.mean, sc->s.min, sc->s.max);
        }
        hv = chart_add_series(p, "HIGH VARIANCE", CHART_MARKED);
        for (size_t i = 0; hv && i < gr->ngroups; i++) {
                const struct group *g = &gr->groups[i];
                const struct group_score *sc = group_find_score(g, score);
                char line[256], cat[256];
                size_t k;
                json_t *c;
                if (!sc || !g->high_variance)
                        continue;
                group_place(gr, g, score, line, sizeof line, cat, sizeof cat);
                json_array_foreach(p->xtics, k, c)
                        if (streq(json_string_value(json_object_get(c, "label")), cat))
                                chart_add_point(hv, (double)k, sc->s.mean, 0, 0);
        }
        p->key = "inside top right box";
        p->yzero = true;
        set_text(p->title, sizeof p->title, "%s by group (mean, bars: min to max; circled: CV above %.0f%% or min/max below %.2f)",
                 score, o->go.cv_limit * 100, o->go.minmax_limit);
        {
                char by[256] = "";
                size_t bo = 0;
                for (size_t k = (o->go.nby > 1); k < o->go.nby; k++)
                        strbuf_appendf(by, sizeof by, &bo, "%s%s", bo ? ", " : "", o->go.by[k]);
                set_text(p->xlabel, sizeof p->xlabel, "%s", by);
        }
        set_text(p->ylabel, sizeof p->ylabel, "%s", score);
        group_result_free(gr);
        analysis_unload(runs, n);
        return 0;
}

static int kind_scatter(struct ctl *ctl, struct popts *o, struct chart *p)
{
        const struct metric_def *def;
        struct analysis_run *runs = NULL;
        double *xs, *ys, rho, pv;
        size_t n = 0, k = 0;
        const char *score;
        int r = 0;

        def = need_metric(o->metric, &r);
        if (!def)
                return r;
        if ((r = run_select_load(ctl, &o->sel, ANALYSIS_TOTALS_SYSTEM, &runs, &n)))
                return r;
        if ((r = run_select_check_groups(runs, n, &o->go, "--group-by")) ||
            (r = run_select_score(runs, n, NULL, o->score, &score))) {
                analysis_unload(runs, n);
                return r;
        }
        xs = calloc(n + 1, sizeof *xs);
        ys = calloc(n + 1, sizeof *ys);
        for (size_t i = 0; xs && ys && i < n; i++) {
                const struct store_score *s = analysis_find_score(&runs[i].d, score);
                int m = (int)(def - metric_table);
                char label[256] = "runs";
                struct chart_series *ps = NULL;
                size_t lo = 0;
                if (!s || !runs[i].m[m].have)
                        continue;
                if (o->go.nby) {
                        label[0] = 0;
                        for (size_t t = 0; t < o->go.nby; t++) {
                                const char *v = NULL;
                                for (size_t q = 0; q < runs[i].d.ntags; q++)
                                        if (streq(runs[i].d.tags[q].key, o->go.by[t]))
                                                v = runs[i].d.tags[q].value;
                                strbuf_appendf(label, sizeof label, &lo, "%s%s=%s",
                                                       lo ? " " : "", o->go.by[t], v ? v : "(none)");
                        }
                }
                for (size_t q = 0; q < p->ns; q++)
                        if (streq(p->s[q].name, label))
                                ps = &p->s[q];
                if (!ps)
                        ps = chart_add_series(p, label, CHART_POINTS);
                chart_add_point(ps, runs[i].m[m].per_s, s->value, 0, 0);
                xs[k] = runs[i].m[m].per_s;
                ys[k] = s->value;
                k++;
        }
        if (k == 0) {
                free(xs);
                free(ys);
                analysis_unload(runs, n);
                return ctl_fail(EXIT_FAILED, "no run in range has both score %s and %s", score, o->metric);
        }
        if (stats_spearman(xs, ys, k, &rho, &pv) == 0) {
                char ps[32];
                if (pv < 0.001)
                        snprintf(ps, sizeof ps, "p<0.001");
                else
                        snprintf(ps, sizeof ps, "p=%.3g", pv);
                set_text(p->title, sizeof p->title, "%s against %s, one point per run (Spearman rho %+.2f, n=%zu, %s)",
                         score, o->metric, rho, k, ps);
        }
        else
                set_text(p->title, sizeof p->title, "%s against %s, one point per run (n=%zu)", score, o->metric, k);
        set_text(p->xlabel, sizeof p->xlabel, "%s per second (%s/s)", o->metric, def->unit);
        set_text(p->ylabel, sizeof p->ylabel, "%s", score);
        p->key = "outside right top box";
        free(xs);
        free(ys);
        analysis_unload(runs, n);
        return 0;
}

/* explain RUN: the top counters of `explain` over time, the run against
 * its siblings' range, in units of the siblings' mean; phases shaded. */
static int kind_explain(struct ctl *ctl, struct popts *o, struct chart *p)
{
        struct explain_run_opts eo = { .keep_series = EXPLAIN_KEEP_MAX, .score = o->score };
        struct explain_run_result res;
        _cleanup_free_ char *err = NULL;
        const char *why;
        char name[128], sibs[256];
        size_t off = 0;
        int r;

        if (!o->metric)
                return ctl_fail(EXIT_USAGE, "plot explain needs a RUN");
        if (!proto_valid_name(o->metric, &why))
                return ctl_fail(EXIT_USAGE, "plot explain '%s': not a run name: %s", o->metric, why);
        if (o->against) {
                r = explain_run_parse_against(&eo, o->against);
                if (r)
                        return r;
        }
        r = explain_run_compute(ctl->store, o->metric, &eo, &res, &err);
        if (r < 0)
                return ctl_fail(r == -EINVAL ? EXIT_USAGE : EXIT_FAILED, "%s", err ? err : strerror(-r));
        if (res.nseries == 0) {
                r = ctl_fail(EXIT_FAILED, "run %s: %s", o->metric,
                             res.have_series ? "no counter moved in it and its siblings" : res.phases_why);
                explain_run_free(&res);
                return r;
        }
        sibs[0] = 0;
        for (size_t k = 0; k < res.nsib && k < 3; k++)
                strbuf_appendf(sibs, sizeof sibs, &off, "%s%s", k ? ", " : "", res.siblings[k]);
        if (res.nsib > 3)
                strbuf_appendf(sibs, sizeof sibs, &off, ", ...");
        for (size_t i = 0; i < res.nseries; i++) {
                const struct explain_run_series *sr = &res.series[i];
                struct chart_series *band, *line;
                /* chart_add_series() moves the array: take both after */
                snprintf(name, sizeof name, "%s: siblings' range", metric_table[sr->metric].name);
                if (!chart_add_series(p, name, CHART_BAND))
                        break;
                snprintf(name, sizeof name, "%s: %s", metric_table[sr->metric].name, o->metric);
                if (!chart_add_series(p, name, CHART_LINES))
                        break;
                band = &p->s[p->ns - 2];
                line = &p->s[p->ns - 1];
                for (size_t k = 0; k < sr->n; k++) {
                        if (isfinite(sr->lo[k]))
                                chart_add_point(band, sr->x[k], (sr->lo[k] + sr->hi[k]) / 2, sr->lo[k], sr->hi[k]);
                        if (isfinite(sr->run[k]))
                                chart_add_point(line, sr->x[k], sr->run[k], 0, 0);
                }
        }
        for (size_t i = 0; i < res.nphases; i++)
                chart_add_shade(p, res.phases[i].start_s, res.phases[i].start_s + res.phases[i].dur_s);
        set_text(p->title, sizeof p->title, "%s against %s%s", o->metric, sibs, res.nphases ? " (phases shaded)" : "");
        set_text(p->xlabel, sizeof p->xlabel, "seconds since the start of the run");
        set_text(p->ylabel, sizeof p->ylabel, "rate / the siblings' mean rate");
        p->yzero = true;
        explain_run_free(&res);
        return 0;
}

static void usage(void)
{
        printf("Usage: scalemonctl plot KIND [selection] [-o|--output FILE.svg|FILE.png]\n"
               "  timeseries METRIC (--run NAME | --since WHEN [--until WHEN]) [--per system|node|cpu]\n"
               "  heatmap METRIC (--run NAME | --since WHEN [--until WHEN])\n"
               "  curve --by TAG [--series TAG] [--score K] [--y speedup|score]\n"
               "        [--lower-is-better K,...] [--work fixed|per-n]\n"
               "  groups --group-by TAG,... [--score K]\n"
               "  scatter METRIC [--score K] [--group-by TAG,...]\n"
               "  explain RUN [--against RUN,...] [--score K]\n"
               "Runs are selected with --since, --until and --tag K=V as in report.\n"
               "Without -o the chart is drawn in the terminal; --format json writes the data instead.\n");
}

/* Options, KIND and METRIC into o: 0, an exit code after printing why,
 * or -1 after --help. */
static int plot_parse(struct popts *o, int argc, char **argv)
{
        static const struct option options[] = {
                { "run", required_argument, NULL, 'R' },
                { "per", required_argument, NULL, 'p' },
                { "by", required_argument, NULL, 'b' },
                { "series", required_argument, NULL, 'S' },
                { "score", required_argument, NULL, 'k' },
                { "group-by", required_argument, NULL, 'g' },
                { "since", required_argument, NULL, 's' },
                { "until", required_argument, NULL, 'u' },
                { "tag", required_argument, NULL, 't' },
                { "y", required_argument, NULL, 'y' },
                { "lower-is-better", required_argument, NULL, 'L' },
                { "work", required_argument, NULL, 'w' },
                { "against", required_argument, NULL, 'a' },
                { "output", required_argument, NULL, 'o' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        int c, r = 0;

        while (r == 0 && (c = ctl_getopt(argc, argv, "o:", options)) >= 0) {
                switch (c) {
                case 'R':
                        o->run = optarg;
                        break;
                case 'p':
                        o->per = optarg;
                        break;
                case 'b':
                        o->by = optarg;
                        break;
                case 'S':
                        o->series = optarg;
                        break;
                case 'k':
                        o->score = optarg;
                        break;
                case 'g':
                        r = parse_group_by(&o->go, optarg);
                        break;
                case 's':
                case 'u':
                case 't':
                        r = run_select_set(&o->sel, c, optarg);
                        break;
                case 'y':
                        if (streq(optarg, "score"))
                                o->y_score = true;
                        else if (!streq(optarg, "speedup"))
                                r = ctl_fail(EXIT_USAGE, "--y '%s': use speedup or score", optarg);
                        break;
                case 'o':
                        o->output = optarg;
                        break;
                case 'L':
                        o->lower = optarg;
                        r = curve_check_lower(optarg);
                        break;
                case 'w':
                        if (streq(optarg, "fixed"))
                                o->work = CURVE_WORK_FIXED;
                        else if (streq(optarg, "per-n"))
                                o->work = CURVE_WORK_PER_N;
                        else
                                r = ctl_fail(EXIT_USAGE, "--work '%s': use fixed or per-n", optarg);
                        break;
                case 'a':
                        o->against = optarg;
                        break;
                case 'h':
                        usage();
                        return -1;
                default:
                        r = EXIT_USAGE;
                }
        }
        if (r)
                return r;
        if (optind >= argc)
                return ctl_fail(EXIT_USAGE, "plot needs a KIND: timeseries, heatmap, curve, groups, scatter or explain");
        o->kind = argv[optind++];
        if (optind < argc)
                o->metric = argv[optind++];
        if (optind < argc)
                return ctl_fail(EXIT_USAGE, "plot %s: unexpected argument '%s'", o->kind, argv[optind]);
        if (o->output) {
                size_t len = strlen(o->output);
                if (len < 5 || (!streq(o->output + len - 4, ".svg") && !streq(o->output + len - 4, ".png")))
                        return ctl_fail(EXIT_USAGE, "-o %s: name a .svg or .png file", o->output);
        }
        return 0;
}

static const struct plot_kind {
        const char *name;
        int (*fill)(struct ctl *ctl, struct popts *o, struct chart *p);
        bool takes_metric;      /* curve and groups take none */
} plot_kinds[] = {
        { "timeseries", kind_timeseries, true },
        { "heatmap", kind_heatmap, true },
        { "curve", kind_curve, false },
        { "groups", kind_groups, false },
        { "scatter", kind_scatter, true },
        { "explain", kind_explain, true },      /* its RUN in the METRIC place */
};

int verb_plot(struct ctl *ctl, int argc, char **argv)
{
        struct popts o = { .go = GROUP_OPTS_DEFAULT };
        const struct plot_kind *k = NULL;
        struct chart p = { 0 };
        int r;

        r = plot_parse(&o, argc, argv);
        if (r == 0 && ctl->format == FORMAT_CSV)
                r = ctl_fail(EXIT_USAGE, "plot writes a chart, or its data with --format json; csv does not apply");
        if (r == 0 && !ctl_store(ctl))
                r = EXIT_FAILED;
        for (size_t i = 0; r == 0 && !k && i < ELEMENTSOF(plot_kinds); i++)
                if (streq(plot_kinds[i].name, o.kind))
                        k = &plot_kinds[i];
        if (r == 0 && !k)
                r = ctl_fail(EXIT_USAGE, "unknown plot kind '%s': use timeseries, heatmap, curve, groups, scatter or explain", o.kind);
        else if (r == 0 && o.metric && !k->takes_metric)
                r = ctl_fail(EXIT_USAGE, "plot %s takes no METRIC, got '%s'", k->name, o.metric);
        if (r == 0) {
                p.kind = o.kind;
                r = k->fill(ctl, &o, &p);
        }
        if (r == 0 && ctl->format == FORMAT_JSON) {
                json_t *doc = chart_json(&p);
                r = output_json(doc);
                json_decref(doc);
        } else if (r == 0)
                r = chart_render(&p, o.output);
        chart_free(&p);
        run_select_free(&o.sel);
        group_opts_free(&o.go);
        return r < 0 ? EXIT_OK : r;
}
