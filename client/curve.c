/* curve.c - `scalemonctl curve --by TAG`: a scalability curve across runs,
 * printed as a table, JSON or CSV.  The points and the USL fit come from
 * analysis_curve() (analysis-curve.c).
 */
#include "config.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis.h"
#include "output.h"
#include "proto.h"
#include "selection.h"
#include "verbs.h"

static json_t *point_json(const struct curve_point *pt, const bool *shown)
{
        json_t *ps = json_object();

        for (int m = 0; m < _M_MAX; m++)
                if (pt->has_per_score[m] && shown[m])
                        json_object_set_new(ps, metric_table[m].name, json_real(pt->per_score[m]));
        return json_pack("{s:o,s:I,s:f,s:o,s:o,s:f,s:f,s:o}", "n", json_number(pt->n), "runs", (json_int_t)pt->nruns,
                         "mean", pt->mean, "min", json_number(pt->min), "max", json_number(pt->max), "speedup",
                         pt->speedup, "efficiency", pt->efficiency, "per_score", ps);
}

static json_t *usl_json(const struct curve_series *cs)
{
        const struct usl *u = &cs->usl;
        json_t *o;

        if (!cs->has_usl)
                return json_pack("{s:n,s:n,s:n,s:n,s:n,s:s}", "lambda", "sigma", "kappa", "peak_n", "r2", "why",
                                 cs->npts < 3 ? "the USL needs at least 3 distinct values of N" : "the fit did not converge");
        o = json_pack("{s:f,s:f,s:f,s:o,s:f}", "lambda", u->lambda, "sigma", u->sigma, "kappa", u->kappa, "peak_n",
                      isfinite(u->peak_n) ? json_real(u->peak_n) : json_null(), "r2", u->r2);
        if (!isfinite(u->peak_n))
                json_object_set_new(o, "why", json_string("kappa is 0: no peak, throughput keeps rising"));
        return o;
}

static json_t *points_json(const struct curve_series *cs, const bool *shown)
{
        json_t *a = json_array();

        for (size_t k = 0; k < cs->npts; k++)
                json_array_append_new(a, point_json(&cs->pts[k], shown));
        return a;
}

/* {"by", "score", "points", "usl"}, or with --series {"by", "series_by",
 * "score", "series": [{"points", "usl", "value"}]}. */
static json_t *curve_json(const struct curve_result *cr, const bool *shown)
{
        json_t *series;

        if (!cr->series_by)
                return json_pack("{s:s,s:s,s:o,s:o}", "by", cr->by, "score", cr->score, "points",
                                 points_json(&cr->series[0], shown), "usl", usl_json(&cr->series[0]));
        series = json_array();
        for (size_t j = 0; j < cr->nseries; j++)
                json_array_append_new(series, json_pack("{s:o,s:o,s:s}", "points", points_json(&cr->series[j], shown),
                                                        "usl", usl_json(&cr->series[j]), "value", cr->series[j].value));
        return json_pack("{s:s,s:s,s:s,s:o}", "by", cr->by, "series_by", cr->series_by, "score", cr->score, "series",
                         series);
}

/* One row per point, with its series. */
static json_t *curve_csv(const struct curve_result *cr, const bool *shown)
{
        json_t *rows = json_array();

        for (size_t j = 0; j < cr->nseries; j++)
                for (size_t k = 0; k < cr->series[j].npts; k++) {
                        json_t *row = point_json(&cr->series[j].pts[k], shown);
                        if (cr->series_by)
                                json_object_set_new(row, cr->series_by, json_string(cr->series[j].value));
                        json_array_append_new(rows, row);
                }
        return rows;
}

static void print_series(const char *label, const struct curve_series *cs, const bool *shown)
{
        const struct curve_point *pts = cs->pts;
        const struct usl *u = &cs->usl;
        size_t np = cs->npts;
        const char *cols[8 + _M_MAX];
        char hdr[_M_MAX][80];
        int nc = 0, mcol[_M_MAX], nm = 0;
        struct libscols_table *tb;
        char align[8 + _M_MAX];

        cols[nc++] = "N";
        cols[nc++] = "RUNS";
        cols[nc++] = "MEAN";
        cols[nc++] = "MIN";
        cols[nc++] = "MAX";
        cols[nc++] = "SPEEDUP";
        cols[nc++] = "EFFICIENCY";
        for (int m = 0; m < _M_MAX; m++) {
                bool any = false;
                for (size_t k = 0; k < np; k++)
                        any |= pts[k].has_per_score[m] && pts[k].per_score[m] != 0;
                if (!shown[m] || !any || metric_table[m].source == SRC_PROCSTAT)
                        continue;
                snprintf(hdr[nm], sizeof hdr[nm], "%s/S", metric_table[m].name);
                cols[nc++] = hdr[nm];
                mcol[nm++] = m;
        }
        cols[nc] = NULL;
        memset(align, 'r', sizeof align);
        align[nc] = 0;
        tb = table_new(cols, align);
        for (size_t k = 0; k < np; k++) {
                struct libscols_line *ln = scols_table_new_line(tb, NULL);
                char v[32];
                format_number(pts[k].n, v, sizeof v);
                scols_line_set_data(ln, 0, v);
                snprintf(v, sizeof v, "%zu", pts[k].nruns);
                scols_line_set_data(ln, 1, v);
                format_number(pts[k].mean, v, sizeof v);
                scols_line_set_data(ln, 2, v);
                format_number(pts[k].min, v, sizeof v);
                scols_line_set_data(ln, 3, v);
                format_number(pts[k].max, v, sizeof v);
                scols_line_set_data(ln, 4, v);
                snprintf(v, sizeof v, "%.2f", pts[k].speedup);
                scols_line_set_data(ln, 5, v);
                snprintf(v, sizeof v, "%.0f%%", pts[k].efficiency * 100);
                scols_line_set_data(ln, 6, v);
                for (int i = 0; i < nm; i++) {
                        snprintf(v, sizeof v, "%.4g", pts[k].per_score[mcol[i]]);
                        scols_line_set_data(ln, (size_t)(7 + i), v);
                }
        }
        printf("%s\n", label);
        table_print(tb);
        if (cs->has_usl) {
                char peak[48];
                if (isfinite(u->peak_n))
                        snprintf(peak, sizeof peak, "peak throughput at N=%.1f", u->peak_n);
                else
                        snprintf(peak, sizeof peak, "no peak (kappa = 0)");
                printf("USL: sigma=%.4g (contention), kappa=%.4g (coherency), lambda=%.4g, %s, r2=%.4f\n", u->sigma,
                       u->kappa, u->lambda, peak, u->r2);
        } else
                printf("USL: no fit (%s)\n", np < 3 ? "needs at least 3 distinct values of N" : "did not converge");
}

static void curve_print(const struct curve_result *cr, const bool *shown)
{
        for (size_t j = 0; j < cr->nseries; j++) {
                const struct curve_series *cs = &cr->series[j];
                char label[256];
                if (cr->series_by)
                        snprintf(label, sizeof label, "%s%s=%s: %s by %s", j ? "\n" : "", cr->series_by, cs->value,
                                 cr->score, cr->by);
                else
                        snprintf(label, sizeof label, "%s by %s", cr->score, cr->by);
                print_series(label, cs, shown);
        }
}

int verb_curve(struct ctl *ctl, int argc, char **argv)
{
        static const struct option options[] = {
                { "by", required_argument, NULL, 'b' },
                { "series", required_argument, NULL, 'r' },
                { "score", required_argument, NULL, 'k' },
                { "metric", required_argument, NULL, 'm' },
                { "since", required_argument, NULL, 's' },
                { "until", required_argument, NULL, 'u' },
                { "tag", required_argument, NULL, 't' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        const char *by = NULL, *series = NULL, *score = NULL, *why;
        struct run_select sel = { 0 };
        struct analysis_run *runs = NULL;
        struct curve_result *cr = NULL;
        size_t n = 0;
        bool shown[_M_MAX], metric_opt = false;
        json_t *doc = NULL;
        int c, r = 0;

        for (int m = 0; m < _M_MAX; m++)
                shown[m] = true;
        while (r == 0 && (c = ctl_getopt(argc, argv, "", options)) >= 0) {
                switch (c) {
                case 'b':
                case 'r':
                case 'k':
                        if (!proto_valid_key(optarg, &why))
                                r = ctl_fail(EXIT_USAGE, "--%s '%s': %s", c == 'b' ? "by" : c == 'r' ? "series" : "score",
                                             optarg, why);
                        *(c == 'b' ? &by : c == 'r' ? &series : &score) = optarg;
                        break;
                case 'm':
                        r = parse_metric_option(optarg, shown, &metric_opt);
                        break;
                case 's':
                case 'u':
                case 't':
                        r = run_select_set(&sel, c, optarg);
                        break;
                case 'h':
                        printf("Usage: scalemonctl curve --by TAG [--series TAG] [--score K] [--metric M,...]\n"
                               "                         [--since WHEN] [--until WHEN] [--tag K=V]...\n");
                        run_select_free(&sel);
                        return EXIT_OK;
                default:
                        r = EXIT_USAGE;
                }
        }
        if (r == 0 && !by)
                r = ctl_fail(EXIT_USAGE, "curve needs --by TAG, the tag that holds N (threads, vcpus, ways)");
        if (r == 0 && optind < argc)
                r = ctl_fail(EXIT_USAGE, "curve takes no arguments, got '%s'", argv[optind]);
        if (r == 0)
                r = run_select_load(ctl, &sel, ANALYSIS_TOTALS_SYSTEM, &runs, &n);      /* rates are all a curve needs */
        run_select_free(&sel);
        if (r || (r = run_select_score(runs, n, by, score, &score)))
                goto out;
        if (analysis_curve(runs, n, by, series, score, &cr) < 0) {
                r = ctl_fail(EXIT_FAILED, "out of memory");
                goto out;
        }
        if (ctl->format == FORMAT_TABLE) {
                curve_print(cr, shown);
                r = EXIT_OK;
        } else {
                doc = ctl->format == FORMAT_CSV ? curve_csv(cr, shown) : curve_json(cr, shown);
                r = ctl->format == FORMAT_CSV ? output_csv(doc) : output_json(doc);
        }
out:
        json_decref(doc);
        curve_result_free(cr);
        analysis_unload(runs, n);
        return r;
}
