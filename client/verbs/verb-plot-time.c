/* verb-plot-time.c - `plot timeseries` and `plot heatmap`: a metric's
 * rate over a run's time (or a range), system-wide, per node or per CPU,
 * and CPUs by time; and the units their axes are in.
 *
 * A time counter's rate is drawn in s/s, ms/s or us/s (units.c), chosen
 * from the largest value, so that an axis reads 49 ms/s and not
 * 4.9x10^7 ns/s; a count per second stays as it is.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "output.h"
#include "proto.h"
#include "suggest.h"
#include "timeutil.h"
#include "units.h"
#include "verb-plot.h"
#include "verbs.h"

#define MAX_POINTS 300          /* a time series is merged down to this many */
#define HEAT_BINS  120

const char *plot_scale_rates(struct chart *p, int m, size_t from, bool on_x, char *unit, size_t len)
{
        double max = 0, f;
        const char *u;

        for (size_t i = from; i < p->ns; i++)
                for (size_t k = 0; k < p->s[i].n; k++)
                        max = fmax(max, fabs(on_x ? p->s[i].x[k] : fmax(p->s[i].y[k], p->s[i].yhi[k])));
        for (size_t i = 0; p->heat && i < p->hx * p->hy; i++)
                max = fmax(max, p->hz[i]);
        u = units_rate_axis(m, max, &f);
        for (size_t i = from; i < p->ns; i++)
                for (size_t k = 0; k < p->s[i].n; k++) {
                        if (on_x) {
                                p->s[i].x[k] *= f;
                                continue;
                        }
                        p->s[i].y[k] *= f;
                        p->s[i].ylo[k] *= f;
                        p->s[i].yhi[k] *= f;
                }
        for (size_t i = 0; p->heat && i < p->hx * p->hy; i++)
                p->hz[i] *= f;
        snprintf(unit, len, "%s%s", u[0] == '/' ? metric_table[m].unit : "", u);
        /* a maximum is a time, not a time per second */
        if (metric_table[m].max && strlen(unit) > 2 && streq(unit + strlen(unit) - 2, "/s"))
                unit[strlen(unit) - 2] = 0;
        return unit;
}

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
                snprintf(what, whatlen, "run %s", o->run);
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

const struct metric_def *plot_need_metric(const char *m, int *r)
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

int plot_kind_timeseries(struct ctl *ctl, struct popts *o, struct chart *p)
{
        const struct metric_def *def;
        int64_t since, until, step;
        _cleanup_free_ int *node_of = NULL;
        int ncpu = 0, r = 0;
        char what[256], unit[32];
        enum series_filter f = SERIES_ALL;
        int nlocs = 1;

        def = plot_need_metric(o->metric, &r);
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
                                chart_add_point(s, (double)(pts[i].t_ns - since) / 1e9,
                                                /* a maximum is drawn as it is, not per second */
                                                def->max ? pts[i].value : pts[i].value / ((double)pts[i].dur_ns / 1e9), 0, 0);
                free(pts);
        }
        {
                size_t total = 0;
                for (size_t i = 0; i < p->ns; i++)
                        total += p->s[i].n;
                if (total == 0)
                        return ctl_fail(EXIT_FAILED, "no samples of %s in %s", o->metric, what);
        }
        snprintf(p->title, sizeof p->title, "%s %s, %s%s", o->metric, def->max ? "in each interval" : "per second",
                 what, f == SERIES_CPU ? ", per CPU" : f == SERIES_NODE ? ", per node" : "");
        snprintf(p->xlabel, sizeof p->xlabel, "seconds since the start of %s", o->run ? o->run : "the range");
        snprintf(p->ylabel, sizeof p->ylabel, "%s%s (%s)", o->metric, def->max ? ", the longest in each interval" : " per second",
                 plot_scale_rates(p, (int)(def - metric_table), 0, false, unit, sizeof unit));
        p->yzero = true;
        p->xfix = true;         /* from the first sample, not from a round tic before it */
        return 0;
}

int plot_kind_heatmap(struct ctl *ctl, struct popts *o, struct chart *p)
{
        const struct metric_def *def;
        int64_t since, until, iv = interval_ns(ctl), step;
        _cleanup_free_ int *node_of = NULL;
        int ncpu = 0, r = 0;
        char what[256], unit[32];

        def = plot_need_metric(o->metric, &r);
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
                        sum[b] = def->max ? fmax(sum[b], pts[i].value) : sum[b] + pts[i].value;
                        dur[b] += (double)pts[i].dur_ns / 1e9;
                }
                for (size_t b = 0; b < p->hx; b++)
                        p->hz[(size_t)c * p->hx + b] = dur[b] <= 0 ? 0 : def->max ? sum[b] : sum[b] / dur[b];
                free(pts);
                free(sum);
                free(dur);
        }
        snprintf(p->title, sizeof p->title, "%s%s on each CPU (%s), %s", o->metric,
                 def->max ? ", the longest in each interval," : " per second",
                 plot_scale_rates(p, (int)(def - metric_table), 0, false, unit, sizeof unit), what);
        snprintf(p->xlabel, sizeof p->xlabel, "seconds since the start of %s", o->run ? o->run : "the range");
        snprintf(p->ylabel, sizeof p->ylabel, "CPU");
        snprintf(p->zlabel, sizeof p->zlabel, "%s%s (%s)", o->metric, def->max ? ", the longest" : " per second", unit);
        return 0;
}

