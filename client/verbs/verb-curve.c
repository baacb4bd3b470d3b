/* verb-curve.c - `scalemonctl curve --by TAG`: a scalability curve across runs,
 * printed as a table, JSON or CSV.  The points and the USL fit come from
 * analysis_curve() (analysis-curve.c).
 */
#include "config.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis.h"
#include "groups.h"
#include "units.h"
#include "macro.h"
#include "verb-curve.h"
#include "output.h"
#include "proto.h"
#include "selection.h"
#include "verbs.h"

/* "per_score" is each metric's rate per unit of throughput (the score,
 * or work per second for a time). */
static json_t *point_json(const struct curve_series *cs, const struct curve_point *pt, const struct curve_show *show)
{
        json_t *ps = json_object(), *o;

        for (int m = 0; m < _M_MAX; m++)
                if (pt->has_per_score[m] && show->m[m])
                        json_object_set_new(ps, metric_table[m].name, json_real(pt->per_score[m]));
        o = json_pack("{s:o,s:I,s:f,s:o,s:o,s:f,s:o,s:o,s:o}", "n", json_number(pt->n), "runs", (json_int_t)pt->nruns,
                      "mean", pt->mean, "min", json_number(pt->min), "max", json_number(pt->max), "throughput", pt->x,
                      "speedup", cs->has_speedup ? json_real(pt->speedup) : json_null(), "efficiency",
                      cs->has_speedup ? json_real(pt->efficiency) : json_null(), "per_score", ps);
        if (!cs->has_speedup)
                json_object_set_new(o, "why", json_string("one value of N: nothing to compare with"));
        json_object_set_new(o, "busy_cpu_s_per_score", pt->has_busy_per_score ? json_real(pt->busy_per_score) : json_null());
        if (pt->pools.ntags)
                json_object_set_new(o, "pools", groups_pools_json(&pt->pools));
        return o;
}

static json_t *usl_json(const struct curve_series *cs)
{
        const struct usl *u = &cs->usl;
        json_t *o;

        if (!cs->usl_ok)
                return json_pack("{s:n,s:n,s:n,s:n,s:o,s:s}", "lambda", "sigma", "kappa", "peak_n", "r2",
                                 cs->has_usl ? json_real(u->r2) : json_null(), "why", cs->usl_why);
        o = json_pack("{s:f,s:f,s:f,s:o,s:f}", "lambda", u->lambda, "sigma", u->sigma, "kappa", u->kappa, "peak_n",
                      isfinite(u->peak_n) ? json_real(u->peak_n) : json_null(), "r2", u->r2);
        if (!isfinite(u->peak_n))
                json_object_set_new(o, "why", json_string("kappa is 0: no peak, throughput keeps rising"));
        return o;
}

static json_t *points_json(const struct curve_series *cs, const struct curve_show *shown)
{
        json_t *a = json_array();

        for (size_t k = 0; k < cs->npts; k++)
                json_array_append_new(a, point_json(cs, &cs->pts[k], shown));
        return a;
}

/* {"by", "score", "points", "usl"}, or with --series {"by", "series_by",
 * "score", "series": [{"points", "usl", "value"}]}. */
static const char *throughput_text(const struct curve_result *cr)
{
        if (!cr->opts.lower_is_better)
                return "the score (higher is better)";
        return cr->opts.work == CURVE_WORK_PER_N ? "N / score (lower is better; work grows with N)"
                                                 : "1 / score (lower is better; the same work at every N)";
}

static json_t *curve_json(const struct curve_result *cr, const struct curve_show *shown)
{
        json_t *series, *o;

        if (!cr->series_by) {
                o = json_pack("{s:s,s:s,s:o,s:o}", "by", cr->by, "score", cr->score, "points",
                              points_json(&cr->series[0], shown), "usl", usl_json(&cr->series[0]));
                json_object_set_new(o, "lower_is_better", json_boolean(cr->opts.lower_is_better));
                json_object_set_new(o, "throughput", json_string(throughput_text(cr)));
                json_object_set_new(o, "speedup_base_n", cr->series[0].has_speedup ? json_real(cr->series[0].base_n)
                                                                                    : json_null());
                return o;
        }
        series = json_array();
        for (size_t j = 0; j < cr->nseries; j++)
                json_array_append_new(series, json_pack("{s:o,s:o,s:s}", "points", points_json(&cr->series[j], shown),
                                                        "usl", usl_json(&cr->series[j]), "value", cr->series[j].value));
        o = json_pack("{s:s,s:s,s:s,s:o}", "by", cr->by, "series_by", cr->series_by, "score", cr->score, "series",
                      series);
        json_object_set_new(o, "lower_is_better", json_boolean(cr->opts.lower_is_better));
        json_object_set_new(o, "throughput", json_string(throughput_text(cr)));
        return o;
}

/* One row per point, with its series. */
static json_t *curve_csv(const struct curve_result *cr, const struct curve_show *shown)
{
        json_t *rows = json_array();

        for (size_t j = 0; j < cr->nseries; j++)
                for (size_t k = 0; k < cr->series[j].npts; k++) {
                        json_t *row = point_json(&cr->series[j], &cr->series[j].pts[k], shown);
                        if (cr->series_by)
                                json_object_set_new(row, cr->series_by, json_string(cr->series[j].value));
                        json_array_append_new(rows, row);
                }
        return rows;
}

/* The counters a curve's table shows by default: the head of each
 * family (context switches, migrations, page faults, lock wait, run-queue
 * wait; with the busy CPU time, six columns).  PSI cpu some stands in for
 * the run-queue wait, and lock_contentions for the lock wait, where those
 * were not recorded (no BPF). */
static const int curve_heads[] = { M_CONTEXT_SWITCHES, M_CPU_MIGRATIONS, M_PAGE_FAULTS, M_LOCK_WAIT_NS, M_RUNQUEUE_WAIT };

/* Does some point of the series have metric m per unit of work, not 0? */
static bool series_has(const struct curve_series *cs, int m)
{
        for (size_t k = 0; k < cs->npts; k++)
                if (cs->pts[k].has_per_score[m] && cs->pts[k].per_score[m] != 0)
                        return true;
        return false;
}

static bool series_has_busy(const struct curve_series *cs)
{
        for (size_t k = 0; k < cs->npts; k++)
                if (cs->pts[k].has_busy_per_score)
                        return true;
        return false;
}

/* The metric columns of the table, into mcol (-1: the busy CPU time):
 * what --metric named, every counter with --all-metrics, else the heads. */
static int curve_columns(const struct curve_series *cs, const struct curve_show *show, int *mcol)
{
        int nm = 0;

        if (show->all || show->given) {
                for (int m = 0; m < _M_MAX; m++)
                        if (show->m[m] && series_has(cs, m) && metric_table[m].source != SRC_PROCSTAT)
                                mcol[nm++] = m;
                return nm;
        }
        for (size_t i = 0; i < ELEMENTSOF(curve_heads); i++) {
                int m = curve_heads[i];
                if (m == M_RUNQUEUE_WAIT && !series_has(cs, m))
                        m = M_PSI_CPU_SOME;
                if (m == M_LOCK_WAIT_NS && !series_has(cs, m))
                        m = M_LOCK_CONTENTIONS;
                if (series_has(cs, m))
                        mcol[nm++] = m;
        }
        if (series_has_busy(cs))
                mcol[nm++] = -1;
        return nm;
}

/* A column's header: the metric's name, a time's without its stored
 * unit (the cells carry theirs). */
static void column_header(int m, char *buf, size_t len)
{
        const char *name = m < 0 ? "cpu_time" : metric_table[m].name;
        size_t l = strlen(name);

        if (m >= 0 && units_is_time(m, NULL) && l > 3 && (streq(name + l - 3, "_ns") || streq(name + l - 3, "_us")))
                l -= 3;
        snprintf(buf, len, "%.*s", (int)l, name);
}

static void point_row(struct libscols_table *tb, const struct curve_series *cs, const struct curve_point *pt,
                      bool lower, const int *mcol, int nm)
{
        struct libscols_line *ln = scols_table_new_line(tb, NULL);
        char v[32];
        size_t c = 5;

        format_number(pt->n, v, sizeof v);
        scols_line_set_data(ln, 0, v);
        snprintf(v, sizeof v, "%zu", pt->nruns);
        scols_line_set_data(ln, 1, v);
        format_number(pt->mean, v, sizeof v);
        scols_line_set_data(ln, 2, v);
        format_number(pt->min, v, sizeof v);
        scols_line_set_data(ln, 3, v);
        format_number(pt->max, v, sizeof v);
        scols_line_set_data(ln, 4, v);
        if (lower) {
                snprintf(v, sizeof v, "%.4g", pt->x);
                scols_line_set_data(ln, c++, v);
        }
        if (cs->has_speedup)
                snprintf(v, sizeof v, "%.2f", pt->speedup);
        else
                snprintf(v, sizeof v, "-");
        scols_line_set_data(ln, c++, v);
        if (cs->has_speedup)
                snprintf(v, sizeof v, "%.0f%%", pt->efficiency * 100);
        scols_line_set_data(ln, c++, v);
        for (int i = 0; i < nm; i++) {
                int m = mcol[i];
                if (m < 0 && pt->has_busy_per_score)
                        units_seconds(pt->busy_per_score, v, sizeof v);
                else if (m >= 0 && pt->has_per_score[m])
                        units_per_work(m, pt->per_score[m], v, sizeof v);
                else
                        snprintf(v, sizeof v, "-");
                scols_line_set_data(ln, c + (size_t)i, v);
        }
}

static void print_series(const struct curve_result *cr, const char *label, const struct curve_series *cs,
                         const struct curve_show *show)
{
        const struct usl *u = &cs->usl;
        const char *cols[9 + _M_MAX + 1];
        char hdr[_M_MAX + 1][64], align[9 + _M_MAX + 1];
        bool lower = cr->opts.lower_is_better;
        int nc = 0, mcol[_M_MAX + 1], nm;
        struct libscols_table *tb;

        cols[nc++] = "N";
        cols[nc++] = "RUNS";
        cols[nc++] = "MEAN";
        cols[nc++] = "MIN";
        cols[nc++] = "MAX";
        if (lower)
                cols[nc++] = cr->opts.work == CURVE_WORK_PER_N ? "THROUGHPUT (N/score)" : "THROUGHPUT (1/score)";
        cols[nc++] = "SPEEDUP";
        cols[nc++] = "EFFICIENCY";
        nm = curve_columns(cs, show, mcol);
        for (int i = 0; i < nm; i++) {
                column_header(mcol[i], hdr[i], sizeof hdr[i]);
                cols[nc++] = hdr[i];
        }
        cols[nc] = NULL;
        memset(align, 'r', sizeof align);
        align[nc] = 0;
        tb = table_new(cols, align);
        for (size_t k = 0; k < cs->npts; k++)
                point_row(tb, cs, &cs->pts[k], lower, mcol, nm);
        printf("%s\n", label);
        if (lower)
                printf("%s is lower-is-better: throughput is %s\n", cr->score,
                       cr->opts.work == CURVE_WORK_PER_N ? "N / score (the work grows with N)"
                                                         : "1 / score (the same work at every N)");
        if (cs->has_speedup)
                printf("speedup: throughput over throughput at N=%g%s\n", cs->base_n,
                       cs->base_n == 1 ? "" : " (no N=1 in range); efficiency = speedup x that N / N");
        else
                printf("speedup: none (one value of N: nothing to compare with)\n");
        if (nm)
                printf("counters per unit of work (rate / %s), times in s, ms, us%s\n",
                       !lower ? cr->score : cr->opts.work == CURVE_WORK_PER_N ? "(N/score)" : "(1/score)",
                       show->all || show->given ? "" : "; --metric M or --all-metrics for more");
        table_print(tb);
        if (cs->usl_ok) {
                char peak[48];
                if (isfinite(u->peak_n))
                        snprintf(peak, sizeof peak, "peak throughput at N=%.1f", u->peak_n);
                else
                        snprintf(peak, sizeof peak, "no peak (kappa = 0)");
                printf("USL: sigma=%.4g (contention), kappa=%.4g (coherency), lambda=%.4g, %s, r2=%.4f\n", u->sigma,
                       u->kappa, u->lambda, peak, u->r2);
        } else
                printf("USL: no meaningful fit (%s)\n", cs->usl_why);
}

void curve_pool_line(const struct curve_result *cr, size_t j, size_t k, char *buf, size_t len)
{
        const struct curve_point *pt = &cr->series[j].pts[k];
        char label[256];

        if (cr->series_by)
                snprintf(label, sizeof label, "%s=%s %s=%g", cr->series_by, cr->series[j].value, cr->by, pt->n);
        else
                snprintf(label, sizeof label, "%s=%g", cr->by, pt->n);
        groups_pools_line(label, &pt->pools, cr->series_by ? NULL : "--series", buf, len);
}

static void curve_pools_print(const struct curve_result *cr)
{
        for (size_t j = 0; j < cr->nseries; j++)
                for (size_t k = 0; k < cr->series[j].npts; k++) {
                        char line[1024];
                        curve_pool_line(cr, j, k, line, sizeof line);
                        if (line[0])
                                printf("%s\n", line);
                }
}

static void curve_print(const struct curve_result *cr, const struct curve_show *shown)
{
        for (size_t j = 0; j < cr->nseries; j++) {
                const struct curve_series *cs = &cr->series[j];
                char label[256];
                if (cr->series_by)
                        snprintf(label, sizeof label, "%s%s=%s: %s by %s", j ? "\n" : "", cr->series_by, cs->value,
                                 cr->score, cr->by);
                else
                        snprintf(label, sizeof label, "%s by %s", cr->score, cr->by);
                print_series(cr, label, cs, shown);
        }
        curve_pools_print(cr);
}

bool curve_lower_is_better(const char *list, const struct analysis_run *runs, size_t n, const char *score)
{
        size_t kl = strlen(score);

        for (const char *p = list; p && *p;) {
                size_t l = strcspn(p, ",");
                if (l == kl && strncmp(p, score, kl) == 0)
                        return true;
                p += l + (p[l] == ',');
        }
        return analysis_recorded_lower(runs, n, score);
}

int curve_check_lower(const char *arg)
{
        const char *why;
        char k[256];

        for (const char *p = arg;;) {
                size_t l = strcspn(p, ",");
                snprintf(k, sizeof k, "%.*s", (int)MIN(l, sizeof k - 1), p);
                if (!proto_valid_key(k, &why))
                        return ctl_fail(EXIT_USAGE, "--lower-is-better '%s': %s", arg, why);
                if (!p[l])
                        return 0;
                p += l + 1;
        }
}

int curve_refuse_time(const char *score)
{
        return ctl_fail(EXIT_USAGE,
                        "%s is lower-is-better (a time): a curve needs throughput, and for that how the work changes "
                        "with N: --work fixed (the same work at every N: throughput = 1/%s) or --work per-n (work "
                        "grows with N, as perf bench sched messaging -g N: throughput = N/%s)",
                        score, score, score);
}

/* What curve was asked for. */
struct curve_args {
        const char *by, *series, *score, *lower;
        struct curve_opts co;
        struct run_select sel;
        struct curve_show show;
};

/* 0, an exit code after printing why, or -1 after --help. */
static int curve_parse(struct curve_args *a, int argc, char **argv)
{
        static const struct option options[] = {
                { "by", required_argument, NULL, 'b' },
                { "series", required_argument, NULL, 'r' },
                { "score", required_argument, NULL, 'k' },
                { "metric", required_argument, NULL, 'm' },
                { "all-metrics", no_argument, NULL, 'a' },
                { "since", required_argument, NULL, 's' },
                { "until", required_argument, NULL, 'u' },
                { "tag", required_argument, NULL, 't' },
                { "lower-is-better", required_argument, NULL, 'L' },
                { "work", required_argument, NULL, 'w' },
                { "host", required_argument, NULL, 'H' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        const char *why;
        int c, r = 0;

        while (r == 0 && (c = ctl_getopt(argc, argv, "", options)) >= 0) {
                switch (c) {
                case 'b':
                case 'r':
                case 'k':
                        if (!proto_valid_key(optarg, &why))
                                r = ctl_fail(EXIT_USAGE, "--%s '%s': %s", c == 'b' ? "by" : c == 'r' ? "series" : "score",
                                             optarg, why);
                        *(c == 'b' ? &a->by : c == 'r' ? &a->series : &a->score) = optarg;
                        break;
                case 'm':
                        r = parse_metric_option(optarg, a->show.m, &a->show.given);
                        break;
                case 'a':
                        a->show.all = true;
                        break;
                case 'L':
                        a->lower = optarg;
                        r = curve_check_lower(optarg);
                        break;
                case 'w':
                        if (streq(optarg, "fixed"))
                                a->co.work = CURVE_WORK_FIXED;
                        else if (streq(optarg, "per-n"))
                                a->co.work = CURVE_WORK_PER_N;
                        else
                                r = ctl_fail(EXIT_USAGE, "--work '%s': use fixed (the same work at every N) or per-n "
                                                         "(the work grows with N)", optarg);
                        break;
                case 's':
                case 'u':
                case 't':
                case 'H':
                        r = run_select_set(&a->sel, c, optarg);
                        break;
                case 'h':
                        printf("Usage: scalemonctl curve --by TAG [--series TAG] [--score K] [--metric M,...] [--all-metrics]\n"
                               "                         [--lower-is-better K,...] [--work fixed|per-n]\n"
                               "                         [--since WHEN] [--until WHEN] [--tag K=V]... [--host NAME]\n");
                        return -1;
                default:
                        r = EXIT_USAGE;
                }
        }
        if (r == 0 && !a->by)
                r = ctl_fail(EXIT_USAGE, "curve needs --by TAG, the tag that holds N (threads, vcpus, ways)");
        if (r == 0 && optind < argc)
                r = ctl_fail(EXIT_USAGE, "curve takes no arguments, got '%s'", argv[optind]);
        return r;
}

int verb_curve(struct ctl *ctl, int argc, char **argv)
{
        struct curve_args a = { 0 };
        struct analysis_run *runs = NULL;
        struct curve_result *cr = NULL;
        const char *score = NULL;
        size_t n = 0;
        json_t *doc = NULL;
        int r;

        for (int m = 0; m < _M_MAX; m++)
                a.show.m[m] = true;
        r = curve_parse(&a, argc, argv);
        if (r == 0)
                r = run_select_load(ctl, &a.sel, ANALYSIS_TOTALS_SYSTEM, &runs, &n);    /* rates are all a curve needs */
        run_select_free(&a.sel);
        if (r < 0)
                return EXIT_OK;         /* --help */
        if (r || (r = run_select_check_key(runs, n, a.by, "--by")) ||
            (a.series && (r = run_select_check_key(runs, n, a.series, "--series"))) ||
            (r = run_select_score(runs, n, a.by, a.score, &score)))
                goto out;
        a.co.lower_is_better = curve_lower_is_better(a.lower, runs, n, score);
        if (a.co.lower_is_better && a.co.work == CURVE_WORK_UNKNOWN) {
                r = curve_refuse_time(score);
                goto out;
        }
        if (analysis_curve(runs, n, a.by, a.series, score, &a.co, &cr) < 0) {
                r = ctl_fail(EXIT_FAILED, "out of memory");
                goto out;
        }
        if (ctl->format == FORMAT_TABLE) {
                curve_print(cr, &a.show);
                r = EXIT_OK;
        } else {
                doc = ctl->format == FORMAT_CSV ? curve_csv(cr, &a.show) : curve_json(cr, &a.show);
                r = ctl->format == FORMAT_CSV ? output_csv(doc) : output_json(doc);
        }
out:
        json_decref(doc);
        curve_result_free(cr);
        analysis_unload(runs, n);
        return r;
}
