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
#include "groups.h"
#include "output.h"
#include "proto.h"
#include "selection.h"
#include "stats.h"
#include "suggest.h"
#include "timeutil.h"
#include "units.h"
#include "verb-plot.h"
#include "verbs.h"


static void set_text(char *buf, size_t len, const char *fmt, ...) _printf_(3, 4);
static void set_text(char *buf, size_t len, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, len, fmt, ap);
        va_end(ap);
}

/* ---- the kinds ---- */


/* The runs a chart is drawn from, for its title: "run A", "12 runs, A to
 * L", or "12 runs" where the names would make a title too long for a
 * terminal line. */
static void runs_span(const struct analysis_run *runs, size_t n, char *buf, size_t len)
{
        if (n == 1)
                snprintf(buf, len, "run %s", runs[0].info.name);
        else if (n > 1 && strlen(runs[0].info.name) + strlen(runs[n - 1].info.name) > 24)
                snprintf(buf, len, "%zu runs", n);
        else if (n > 1)
                snprintf(buf, len, "%zu runs, %s to %s", n, runs[0].info.name, runs[n - 1].info.name);
        else
                snprintf(buf, len, "no runs");
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
                char line[1024];
                if (o->y_score)
                        chart_add_point(ps, pt->n, pt->mean, pt->min, pt->max);
                else
                        chart_add_point(ps, pt->n, pt->x / x0 * n0, pt->xmin / x0 * n0, pt->xmax / x0 * n0);
                /* a point that pools runs of different tags: said */
                curve_pool_line(cr, (size_t)(cs - cr->series), k, line, sizeof line);
                if (line[0]) {
                        chart_point_pools(ps, groups_pools_json(&pt->pools));
                        chart_add_note(p, line);
                }
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
        char span[400];
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
        runs_span(runs, n, span, sizeof span);
        set_text(p->title, sizeof p->title, "%s%s by %s%s%s, %s", o->y_score ? "" : "speedup of ", score, o->by,
                 o->series ? ", one line per " : "", o->series ? o->series : "", span);
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
        char span[400];
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
                if (ps && chart_add_point(ps, x, sc->s.mean, sc->s.min, sc->s.max) == 0 && g->pools.ntags) {
                        char label[512], note[1024];
                        groups_label(gr, g, label, sizeof label);
                        groups_pools_line(label, &g->pools, "--group-by", note, sizeof note);
                        chart_point_pools(ps, groups_pools_json(&g->pools));
                        chart_add_note(p, note);
                }
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
        runs_span(runs, n, span, sizeof span);
        set_text(p->title, sizeof p->title, "%s by group, %s (mean, bars: min to max; circled: CV above %.0f%% or "
                 "min/max below %.2f)", score, span, o->go.cv_limit * 100, o->go.minmax_limit);
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
        char unit[32];
        int r = 0;

        def = plot_need_metric(o->metric, &r);
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
                /* a maximum is the run's longest, not per second */
                xs[k] = def->max ? runs[i].m[m].total : runs[i].m[m].per_s;
                chart_add_point(ps, xs[k], s->value, 0, 0);
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
        set_text(p->xlabel, sizeof p->xlabel, "%s%s (%s)", o->metric, def->max ? ", the run's maximum" : " per second",
                 plot_scale_rates(p, (int)(def - metric_table), 0, true, unit, sizeof unit));
        set_text(p->ylabel, sizeof p->ylabel, "%s", score);
        p->key = "outside right top box";
        free(xs);
        free(ys);
        analysis_unload(runs, n);
        return 0;
}

/* explain RUN: the top counters of `explain` over time, the run against
 * its siblings' range, in units of the siblings' mean; phases shaded (in
 * the terminal, between lines and numbered). */
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
        set_text(p->title, sizeof p->title, "%s against %s%s", o->metric, sibs,
                 !res.nphases ? "" : o->output ? " (phases shaded)" : " (phases between lines)");
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
        { "timeseries", plot_kind_timeseries, true },
        { "heatmap", plot_kind_heatmap, true },
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
