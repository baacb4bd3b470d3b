/* curve.c - `scalemonctl curve --by TAG`: a scalability curve across runs.
 *
 * For each numeric value N of the tag (threads, vCPUs, ways): the mean
 * score with its min and max, the speedup over the smallest N (scaled by
 * that N, so a curve starting at 4 threads still reads as speedup over
 * one), the parallel efficiency, and each metric's rate per unit of score.
 * The Universal Scalability Law X(N) = lambda N / (1 + sigma (N-1) +
 * kappa N (N-1)) is fitted to the mean scores: sigma is contention, kappa
 * coherency, and sqrt((1 - sigma) / kappa) the N of peak throughput.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "proto.h"
#include "report.h"
#include "stats.h"

struct point {
        double n;
        size_t nruns;
        double mean, min, max;
        double per_score[_M_MAX];       /* mean of metric rate / score */
        bool has_per_score[_M_MAX];
};

static int cmp_point(const void *a, const void *b)
{
        double x = ((const struct point *)a)->n, y = ((const struct point *)b)->n;
        return x < y ? -1 : x > y;
}

static const char *tag_value(const struct rrun *r, const char *key)
{
        for (size_t i = 0; i < r->d.ntags; i++)
                if (streq(r->d.tags[i].key, key))
                        return r->d.tags[i].value;
        return NULL;
}

static bool numeric(const char *s, double *ret)
{
        char *end;
        if (!s)
                return false;
        errno = 0;
        *ret = strtod(s, &end);
        return !errno && end != s && !*end && isfinite(*ret) && *ret > 0;
}

/* The points of one series (runs whose series tag is value, or all). */
static json_t *series_json(struct rrun *runs, size_t n, const char *by, const char *series, const char *value,
                           const char *score, const bool *shown, struct point **ret_pts, size_t *ret_np,
                           struct usl *ret_usl, bool *ret_has_usl)
{
        struct point *pts = calloc(n + 1, sizeof *pts);
        size_t np = 0;
        json_t *jp = json_array(), *o;
        double *xn, *xx;

        for (size_t i = 0; pts && i < n; i++) {
                const struct store_score *s = report_find_score(&runs[i].d, score);
                const char *sv = series ? tag_value(&runs[i], series) : NULL;
                double nv;
                size_t k;
                if (!s || !numeric(tag_value(&runs[i], by), &nv))
                        continue;
                if (series && (!sv || !streq(sv, value)))
                        continue;
                for (k = 0; k < np && pts[k].n != nv; k++)
                        ;
                if (k == np) {
                        pts[np].n = nv;
                        pts[np].min = INFINITY;
                        pts[np].max = -INFINITY;
                        np++;
                }
                pts[k].nruns++;
                pts[k].mean += s->value;
                pts[k].min = fmin(pts[k].min, s->value);
                pts[k].max = fmax(pts[k].max, s->value);
                for (int m = 0; m < _M_MAX; m++)
                        if (runs[i].m[m].have && s->value != 0) {
                                pts[k].per_score[m] += runs[i].m[m].per_s / s->value;
                                pts[k].has_per_score[m] = true;
                        }
        }
        for (size_t k = 0; k < np; k++) {
                pts[k].mean /= (double)pts[k].nruns;
                for (int m = 0; m < _M_MAX; m++)
                        pts[k].per_score[m] /= (double)pts[k].nruns;
        }
        qsort(pts, np, sizeof *pts, cmp_point);
        for (size_t k = 0; k < np; k++) {
                double speedup = pts[k].mean / pts[0].mean * pts[0].n;
                json_t *ps = json_object();
                for (int m = 0; m < _M_MAX; m++)
                        if (pts[k].has_per_score[m] && shown[m])
                                json_object_set_new(ps, metric_table[m].name, json_real(pts[k].per_score[m]));
                json_array_append_new(jp, json_pack("{s:o,s:I,s:f,s:o,s:o,s:f,s:f,s:o}", "n", json_number(pts[k].n),
                                                    "runs", (json_int_t)pts[k].nruns, "mean", pts[k].mean, "min",
                                                    json_number(pts[k].min), "max", json_number(pts[k].max), "speedup",
                                                    speedup, "efficiency", speedup / pts[k].n, "per_score", ps));
        }
        xn = calloc(np + 1, sizeof *xn);
        xx = calloc(np + 1, sizeof *xx);
        *ret_has_usl = false;
        for (size_t k = 0; xn && xx && k < np; k++) {
                xn[k] = pts[k].n;
                xx[k] = pts[k].mean;
        }
        if (xn && xx && stats_usl_fit(xn, xx, np, ret_usl) == 0) {
                *ret_has_usl = true;
                o = json_pack("{s:f,s:f,s:f,s:o,s:f}", "lambda", ret_usl->lambda, "sigma", ret_usl->sigma, "kappa",
                              ret_usl->kappa, "peak_n", isfinite(ret_usl->peak_n) ? json_real(ret_usl->peak_n) : json_null(),
                              "r2", ret_usl->r2);
                if (!isfinite(ret_usl->peak_n))
                        json_object_set_new(o, "why", json_string("kappa is 0: no peak, throughput keeps rising"));
        } else
                o = json_pack("{s:n,s:n,s:n,s:n,s:n,s:s}", "lambda", "sigma", "kappa", "peak_n", "r2", "why",
                              np < 3 ? "the USL needs at least 3 distinct values of N" : "the fit did not converge");
        free(xn);
        free(xx);
        *ret_pts = pts;
        *ret_np = np;
        return json_pack("{s:o,s:o}", "points", jp, "usl", o);
}

static void print_series(const char *label, const struct point *pts, size_t np, const struct usl *u, bool has_usl,
                         const bool *shown)
{
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
                double speedup = pts[k].mean / pts[0].mean * pts[0].n;
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
                snprintf(v, sizeof v, "%.2f", speedup);
                scols_line_set_data(ln, 5, v);
                snprintf(v, sizeof v, "%.0f%%", speedup / pts[k].n * 100);
                scols_line_set_data(ln, 6, v);
                for (int i = 0; i < nm; i++) {
                        snprintf(v, sizeof v, "%.4g", pts[k].per_score[mcol[i]]);
                        scols_line_set_data(ln, (size_t)(7 + i), v);
                }
        }
        printf("%s\n", label);
        table_print(tb);
        if (has_usl) {
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

const char *curve_pick_score(const struct rrun *runs, size_t n, const char *by, const char *score, int *ret_exit)
{
        size_t usable = 0;
        double v;

        if (!score) {
                for (size_t i = 0; i < n; i++)
                        for (size_t k = 0; k < runs[i].d.nscores; k++) {
                                if (!score)
                                        score = runs[i].d.scores[k].key;
                                else if (!streq(score, runs[i].d.scores[k].key)) {
                                        *ret_exit = ctl_fail(EXIT_USAGE,
                                                             "the runs have several scores (%s, %s, ...): choose one with --score",
                                                             score, runs[i].d.scores[k].key);
                                        return NULL;
                                }
                        }
                if (!score) {
                        *ret_exit = ctl_fail(EXIT_FAILED,
                                             "none of these runs has a score (run stop --score, run exec --score-regex)");
                        return NULL;
                }
        }
        for (size_t i = 0; by && i < n; i++)
                usable += report_find_score(&runs[i].d, score) && numeric(tag_value(&runs[i], by), &v);
        if (by && usable == 0) {
                *ret_exit = ctl_fail(EXIT_FAILED, "no run in range has both score %s and a numeric tag %s", score, by);
                return NULL;
        }
        return score;
}

json_t *curve_series(struct rrun *runs, size_t n, const char *by, const char *series, const char *score,
                     const bool *shown, bool print_tables)
{
        json_t *values = json_array(), *jseries = json_array(), *v;
        size_t j;

        if (series)
                for (size_t i = 0; i < n; i++) {
                        const char *sv = tag_value(&runs[i], series);
                        bool seen = false;
                        if (!sv)
                                continue;
                        json_array_foreach(values, j, v)
                                seen |= streq(json_string_value(v), sv);
                        if (!seen)
                                json_array_append_new(values, json_string(sv));
                }
        else
                json_array_append_new(values, json_string(""));
        json_array_foreach(values, j, v) {
                struct point *pts = NULL;
                size_t np = 0;
                struct usl u;
                bool has_usl;
                json_t *s = series_json(runs, n, by, series, json_string_value(v), score, shown, &pts, &np, &u, &has_usl);
                if (series)
                        json_object_set_new(s, "value", json_string(json_string_value(v)));
                if (print_tables) {
                        char label[256];
                        if (series)
                                snprintf(label, sizeof label, "%s%s=%s: %s by %s", j ? "\n" : "", series,
                                         json_string_value(v), score, by);
                        else
                                snprintf(label, sizeof label, "%s by %s", score, by);
                        print_series(label, pts, np, &u, has_usl, shown);
                }
                json_array_append_new(jseries, s);
                free(pts);
        }
        json_decref(values);
        return jseries;
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
        struct rrun *runs = NULL;
        size_t n = 0;
        bool shown[_M_MAX], metric_opt = false;
        json_t *doc = NULL, *jseries = NULL;
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
                r = report_load(ctl, &sel, REPORT_TOTALS_SYSTEM, &runs, &n);      /* rates are all a curve needs */
        run_select_free(&sel);
        if (r)
                goto out;
        score = curve_pick_score(runs, n, by, score, &r);
        if (!score)
                goto out;
        jseries = curve_series(runs, n, by, series, score, shown, ctl->format == FORMAT_TABLE);
        if (!jseries) {
                r = ctl_fail(EXIT_FAILED, "out of memory");
                goto out;
        }
        if (ctl->format == FORMAT_TABLE)
                r = EXIT_OK;
        else if (ctl->format == FORMAT_CSV) {
                /* one row per point, with its series */
                json_t *rows = json_array(), *s, *p;
                size_t j, k;
                json_array_foreach(jseries, j, s)
                        json_array_foreach(json_object_get(s, "points"), k, p) {
                                json_t *row = json_deep_copy(p);
                                if (series)
                                        json_object_set_new(row, series, json_string(json_string_value(json_object_get(s, "value"))));
                                json_array_append_new(rows, row);
                        }
                r = output_csv(rows);
                json_decref(rows);
        } else {
                if (series)
                        doc = json_pack("{s:s,s:s,s:s,s:O}", "by", by, "series_by", series, "score", score, "series", jseries);
                else {
                        json_t *s0 = json_array_get(jseries, 0);
                        doc = json_pack("{s:s,s:s,s:O,s:O}", "by", by, "score", score, "points",
                                        json_object_get(s0, "points"), "usl", json_object_get(s0, "usl"));
                }
                r = output_json(doc);
        }
out:
        json_decref(doc);
        json_decref(jseries);
        report_unload(runs, n);
        return r;
}
