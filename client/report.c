/* report.c - `scalemonctl report`: what each counter did in each run.
 *
 * Everything comes from the runs' stored totals (exact differences of the
 * daemon's snapshots at the run's start and stop); no sample is scanned.
 * For each run: duration, status, scores, where the CPU time went, and per
 * metric its total, rate, and spread across CPUs (min, median, max, and
 * imbalance = max / mean), with the change against the first run in range.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ctl.h"
#include "locks.h"
#include "proto.h"
#include "report.h"
#include "stats.h"
#include "timeutil.h"

static const int cpu_time_metric[8] = { M_CPU_USER, M_CPU_NICE, M_CPU_SYSTEM, M_CPU_IDLE,
                                        M_CPU_IOWAIT, M_CPU_IRQ, M_CPU_SOFTIRQ, M_CPU_STEAL };
static const char *const cpu_time_name[8] = { "user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal" };

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

const char *report_context_value(const struct run_detail *d, const char *key)
{
        for (size_t i = 0; i < d->ncontext; i++)
                if (streq(d->context[i].key, key))
                        return d->context[i].value;
        return NULL;
}

/* Is metric listed as unavailable in the run's context? */
static bool listed_unavailable(const struct run_detail *d, const char *metric)
{
        const char *list = report_context_value(d, "metrics_unavailable");
        size_t n = strlen(metric);

        for (const char *p = list; p && *p;) {
                const char *e = strchr(p, ',');
                size_t len = e ? (size_t)(e - p) : strlen(p);
                if (len == n && strncmp(p, metric, n) == 0)
                        return true;
                p = e ? e + 1 : NULL;
        }
        return false;
}

/* One pass over the totals (they come grouped by metric, so a metric's
 * name is looked up once per run, not compared with each of the ~5,000
 * totals of a 256-CPU run for each of the metrics), then each metric's
 * per-CPU values sorted and summed in that order. */
void report_compute(struct rrun *r)
{
        double *vals = calloc(r->d.ntotals + 1, sizeof *vals);
        int *mof = calloc(r->d.ntotals + 1, sizeof *mof);      /* metric of each total, -1: unknown */
        size_t ncpu[_M_MAX] = { 0 }, off[_M_MAX + 1], fill[_M_MAX];
        const char *prev = NULL;
        int m = -1;

        r->dur = run_duration_s(&r->info);
        for (m = 0; m < _M_MAX; m++) {
                memset(&r->m[m], 0, sizeof r->m[m]);
                r->busiest[m] = NAN;
        }
        for (size_t i = 0; i < r->d.ntotals; i++) {
                const struct store_total *t = &r->d.totals[i];
                if (!prev || !streq(prev, t->metric)) {
                        prev = t->metric;
                        m = metric_id_by_name(t->metric);
                }
                if (mof)
                        mof[i] = m;
                if (m < 0)
                        continue;
                if (t->level == LEVEL_SYSTEM) {
                        r->m[m].have = true;
                        r->m[m].total = t->value;
                } else if (t->level == LEVEL_CPU)
                        ncpu[m]++;
        }
        off[0] = 0;
        for (m = 0; m < _M_MAX; m++) {
                off[m + 1] = off[m] + ncpu[m];
                fill[m] = off[m];
        }
        for (size_t i = 0; vals && mof && i < r->d.ntotals; i++)
                if (mof[i] >= 0 && r->d.totals[i].level == LEVEL_CPU)
                        vals[fill[mof[i]]++] = r->d.totals[i].value;

        for (m = 0; m < _M_MAX; m++) {
                struct mstat *s = &r->m[m];
                double *v = vals ? vals + off[m] : NULL, sum = 0;
                size_t nv = vals && mof ? ncpu[m] : 0;

                if (!s->have) {
                        s->why = streq(r->info.status, "running") ? "the run is still running"
                                 : listed_unavailable(&r->d, metric_table[m].name)
                                         ? "not available on the run's host (scalemonctl metrics says why)"
                                         : "not recorded in this run";
                        continue;
                }
                s->per_s = r->dur > 0 ? s->total / r->dur : 0;
                if (metric_table[m].scope == SCOPE_CPU && nv > 0) {
                        qsort(v, nv, sizeof *v, cmp_double);
                        for (size_t i = 0; i < nv; i++)
                                sum += v[i];
                        s->spread = true;
                        s->cpu_min = v[0];
                        s->cpu_max = v[nv - 1];
                        s->cpu_median = nv % 2 ? v[nv / 2] : (v[nv / 2 - 1] + v[nv / 2]) / 2;
                        s->imbalance_ok = sum > 0;
                        s->imbalance = sum > 0 ? s->cpu_max / (sum / (double)nv) : 0;
                        r->busiest[m] = r->dur > 0 ? s->cpu_max / r->dur : 0;
                }
        }
        free(vals);
        free(mof);
        r->cpu_total = 0;
        for (int i = 0; i < 8; i++) {
                r->cpu_time[i] = r->m[cpu_time_metric[i]].have ? r->m[cpu_time_metric[i]].total : 0;
                r->cpu_total += r->cpu_time[i];
        }
}

bool report_pct_change(double base, double x, double *ret)
{
        if (base == 0)
                return false;
        *ret = (x - base) / fabs(base) * 100;
        return true;
}

const struct store_score *report_find_score(const struct run_detail *d, const char *key)
{
        for (size_t i = 0; i < d->nscores; i++)
                if (streq(d->scores[i].key, key))
                        return &d->scores[i];
        return NULL;
}

/* Per-CPU or per-node totals of one metric, in loc order. */
static json_t *per_loc_json(const struct rrun *r, int m, enum total_level level)
{
        json_t *a = json_array();
        for (size_t i = 0; i < r->d.ntotals; i++) {
                const struct store_total *t = &r->d.totals[i];
                if (t->level != level || !streq(t->metric, metric_table[m].name))
                        continue;
                json_array_append_new(a, json_pack("{s:i,s:o,s:o}", level == LEVEL_CPU ? "cpu" : "node", t->loc,
                                                   "total", json_number(t->value), "per_s",
                                                   json_real(r->dur > 0 ? t->value / r->dur : 0)));
        }
        return a;
}

static json_t *run_report_json(const struct rrun *r, const struct rrun *first, const bool *sel, enum per per)
{
        json_t *o = run_json(&r->info, &r->d), *metrics = json_object(), *ct = json_object(), *ctx = json_object(),
               *marks = json_array(), *svf = json_object();

        for (int m = 0; m < _M_MAX; m++) {
                const struct mstat *s = &r->m[m];
                json_t *jm;
                double pct;

                if (!sel[m])
                        continue;
                if (!s->have) {
                        jm = json_pack("{s:n,s:n,s:n,s:n,s:n,s:n,s:s}", "total", "per_s", "cpu_min", "cpu_median",
                                       "cpu_max", "imbalance", "why", s->why);
                } else {
                        jm = json_pack("{s:o,s:f}", "total", json_number(s->total), "per_s", s->per_s);
                        if (s->spread) {
                                json_object_set_new(jm, "cpu_min", json_number(s->cpu_min));
                                json_object_set_new(jm, "cpu_median", json_number(s->cpu_median));
                                json_object_set_new(jm, "cpu_max", json_number(s->cpu_max));
                                json_object_set_new(jm, "imbalance", s->imbalance_ok ? json_real(s->imbalance) : json_null());
                                if (!s->imbalance_ok)
                                        json_object_set_new(jm, "why", json_string("zero on every CPU"));
                        } else {
                                json_object_set_new(jm, "cpu_min", json_null());
                                json_object_set_new(jm, "cpu_median", json_null());
                                json_object_set_new(jm, "cpu_max", json_null());
                                json_object_set_new(jm, "imbalance", json_null());
                                json_object_set_new(jm, "why", json_string(metric_table[m].scope == SCOPE_NODE
                                                                                   ? "a per-node metric"
                                                                                   : "a system-wide metric"));
                        }
                        if (first != r && first->m[m].have)
                                json_object_set_new(jm, "vs_first_pct",
                                                    report_pct_change(first->m[m].per_s, s->per_s, &pct) ? json_real(pct)
                                                                                                 : json_null());
                        if (per == PER_CPU && metric_table[m].scope == SCOPE_CPU)
                                json_object_set_new(jm, "per_cpu", per_loc_json(r, m, LEVEL_CPU));
                        if (per == PER_NODE && metric_table[m].scope != SCOPE_SYSTEM)
                                json_object_set_new(jm, "per_node", per_loc_json(r, m, LEVEL_NODE));
                }
                json_object_set_new(metrics, metric_table[m].name, jm);
        }
        for (int i = 0; i < 8; i++)
                json_object_set_new(ct, cpu_time_name[i],
                                    r->cpu_total > 0 ? json_real(r->cpu_time[i] / r->cpu_total * 100) : json_null());
        if (r->cpu_total <= 0)
                json_object_set_new(ct, "why", json_string(streq(r->info.status, "running")
                                                                   ? "the run is still running"
                                                                   : "no CPU time recorded: the run was shorter than the "
                                                                     "kernel's CPU time resolution (1/USER_HZ)"));
        for (size_t i = 0; i < r->d.ncontext; i++)
                json_object_set_new(ctx, r->d.context[i].key, json_string(r->d.context[i].value));
        for (size_t i = 0; i < r->d.nmarks; i++)
                json_array_append_new(marks, json_pack("{s:o,s:f,s:s}", "time", json_time(r->d.marks[i].t), "offset_s",
                                                       (double)(r->d.marks[i].t - r->info.start) / 1e9, "text",
                                                       r->d.marks[i].text));
        if (first != r)
                for (size_t i = 0; i < r->d.nscores; i++) {
                        const struct store_score *b = report_find_score(&first->d, r->d.scores[i].key);
                        double pct;
                        if (b)
                                json_object_set_new(svf, r->d.scores[i].key,
                                                    report_pct_change(b->value, r->d.scores[i].value, &pct) ? json_real(pct)
                                                                                                    : json_null());
                }
        json_object_set_new(o, "cpu_time_pct", ct);
        json_object_set_new(o, "scores_vs_first_pct", svf);
        json_object_set_new(o, "metrics", metrics);
        json_object_set_new(o, "marks", marks);
        json_object_set_new(o, "context", ctx);
        locks_add_json(r, per, o);      /* lock wait hook: "locks", "lock_wait_share" */
        if (streq(r->info.status, "interrupted"))
                json_object_set_new(o, "why", json_string("scalemond stopped during the run: totals end at its last "
                                                          "interval written"));
        return o;
}

/* Context keys whose values are not the same in every run.  Each key is
 * compared across the runs once (seen), not again for every run that
 * has it: that was quadratic in the runs. */
static json_t *context_differs(const struct rrun *runs, size_t n)
{
        json_t *out = json_object(), *seen = json_object();

        for (size_t i = 0; i < n; i++)
                for (size_t k = 0; k < runs[i].d.ncontext; k++) {
                        const char *key = runs[i].d.context[k].key;
                        bool differs = false;
                        json_t *per;
                        if (json_object_get(seen, key))
                                continue;
                        json_object_set_new(seen, key, json_true());
                        for (size_t j = 0; j < n && !differs; j++) {
                                const char *v = report_context_value(&runs[j].d, key);
                                differs = !v || !streq(v, runs[i].d.context[k].value);
                        }
                        if (!differs)
                                continue;
                        per = json_object();
                        for (size_t j = 0; j < n; j++) {
                                const char *v = report_context_value(&runs[j].d, key);
                                json_object_set_new(per, runs[j].info.name, v ? json_string(v) : json_null());
                        }
                        json_object_set_new(out, key, per);
                }
        json_decref(seen);
        return out;
}

static void print_differs(json_t *differs)
{
        const char *key;
        json_t *per;

        if (json_object_size(differs) == 0)
                return;
        printf("Context that differs between these runs:\n");
        json_object_foreach(differs, key, per) {
                /* group the runs by value: "always (r1, r2); madvise (r3)" */
                json_t *byv = json_object(), *runs;
                const char *run, *val;
                json_t *v;
                bool firstv = true;

                json_object_foreach(per, run, v) {
                        const char *s = json_is_string(v) ? json_string_value(v) : "(not recorded)";
                        json_t *a = json_object_get(byv, s);
                        if (!a) {
                                a = json_array();
                                json_object_set_new(byv, s, a);
                        }
                        json_array_append_new(a, json_string(run));
                }
                printf("  %s:", key);
                json_object_foreach(byv, val, runs) {
                        size_t i;
                        json_t *rn;
                        printf("%s %s (", firstv ? "" : ";", val);
                        json_array_foreach(runs, i, rn)
                                printf("%s%s", i ? ", " : "", json_string_value(rn));
                        printf(")");
                        firstv = false;
                }
                printf("\n");
                json_decref(byv);
        }
        printf("\n");
}

static void fmt_or_dash(bool ok, double v, char *buf, size_t len)
{
        if (ok)
                format_number(v, buf, len);
        else
                snprintf(buf, len, "-");
}

static void print_run_table(const struct rrun *r, const struct rrun *first, const bool *shown, enum per per)
{
        static const char *const cols[] = { "METRIC", "TOTAL", "PER_S", "CPU_MIN", "CPU_MEDIAN", "CPU_MAX", "IMBALANCE",
                                            "VS_FIRST", NULL };
        char start[32], dur[32], line[2048], tags[1024];
        struct libscols_table *tb;
        size_t len = 0;

        time_format_local(r->info.start, start, sizeof start);
        format_duration_s(r->dur, dur, sizeof dur);
        format_kvs(tags, sizeof tags, r->d.tags, r->d.ntags);
        len = (size_t)snprintf(line, sizeof line, "%s: %s", r->info.name, r->info.status);
        if (r->info.has_exit_status)
                strbuf_appendf(line, sizeof line, &len, ", exit %d", r->info.exit_status);
        strbuf_appendf(line, sizeof line, &len, ", started %s, %s", start, dur);
        if (r->d.ntags)
                strbuf_appendf(line, sizeof line, &len, ", %s", tags);
        printf("%s\n", line);
        if (streq(r->info.status, "interrupted"))
                printf("  INTERRUPTED: scalemond stopped during this run; its totals end at the last interval written\n");
        if (r->info.has_times)
                printf("  time: real %.3fs, user %.3fs, sys %.3fs\n", r->info.wall_s, r->info.user_s, r->info.sys_s);
        if (r->d.nscores) {
                len = 0;
                line[0] = 0;
                for (size_t i = 0; i < r->d.nscores; i++) {
                        const struct store_score *b = first != r ? report_find_score(&first->d, r->d.scores[i].key) : NULL;
                        char v[32];
                        double pct;
                        format_number(r->d.scores[i].value, v, sizeof v);
                        strbuf_appendf(line, sizeof line, &len, "%s%s=%s", i ? ", " : "",
                                                r->d.scores[i].key, v);
                        if (b && report_pct_change(b->value, r->d.scores[i].value, &pct))
                                strbuf_appendf(line, sizeof line, &len, " (%+.1f%%)", pct);
                }
                printf("  scores: %s\n", line);
        }
        if (r->cpu_total > 0) {
                len = 0;
                for (int i = 0; i < 8; i++)
                        if (i < 4 || i == 7 || r->cpu_time[i] / r->cpu_total >= 0.0005)
                                strbuf_appendf(line, sizeof line, &len, "%s%s %.1f%%", len ? ", " : "",
                                                        cpu_time_name[i], r->cpu_time[i] / r->cpu_total * 100);
                printf("  cpu time: %s (of %.1f CPU-seconds)\n", line, r->cpu_total);
        }
        locks_print_share(r, per);      /* lock wait hook */
        for (size_t i = 0; i < r->d.nmarks; i++)
                printf("  mark +%.3fs: %s\n", (double)(r->d.marks[i].t - r->info.start) / 1e9, r->d.marks[i].text);

        if (streq(r->info.status, "running")) {
                printf("  (still running: totals are written when it stops)\n\n");
                return;
        }
        tb = table_new(cols, "lrrrrrrr");
        if (!tb)
                return;
        for (int m = 0; m < _M_MAX; m++) {
                const struct mstat *s = &r->m[m];
                char total[32], per_s[32], mn[32], md[32], mx[32], im[32], vf[32] = "";
                double pct;
                if (!shown[m])
                        continue;
                if (!s->have) {
                        table_row(tb, metric_table[m].name, "n/a", "", "", "", "", "", "");
                        continue;
                }
                format_number(s->total, total, sizeof total);
                format_number(s->per_s, per_s, sizeof per_s);
                fmt_or_dash(s->spread, s->cpu_min, mn, sizeof mn);
                fmt_or_dash(s->spread, s->cpu_median, md, sizeof md);
                fmt_or_dash(s->spread, s->cpu_max, mx, sizeof mx);
                if (s->spread && s->imbalance_ok)
                        snprintf(im, sizeof im, "%.2f", s->imbalance);
                else
                        snprintf(im, sizeof im, "-");
                if (first != r && first->m[m].have) {
                        if (report_pct_change(first->m[m].per_s, s->per_s, &pct))
                                snprintf(vf, sizeof vf, "%+.1f%%", pct);
                        else
                                snprintf(vf, sizeof vf, s->per_s == 0 ? "=" : "new");
                }
                table_row(tb, metric_table[m].name, total, per_s, mn, md, mx, im, vf);
        }
        table_print(tb);
        locks_print(r, 10);             /* lock wait hook: the contended locks */

        if (per != PER_SYSTEM) {
                /* one row per CPU or node, one column per shown metric (rates) */
                const char *colv[_M_MAX + 2], *prev = NULL;
                const struct store_total **cell;        /* [loc * ncol + column] */
                int ncol = 0, mcols[_M_MAX], col_of[_M_MAX] = { 0 }, tm = -1;
                enum total_level level = per == PER_CPU ? LEVEL_CPU : LEVEL_NODE;
                int maxloc = -1;
                colv[ncol++] = per == PER_CPU ? "CPU" : "NODE";
                for (int m = 0; m < _M_MAX; m++)
                        if (shown[m] && r->m[m].have &&
                            (metric_table[m].scope == SCOPE_CPU ||
                             (per == PER_NODE && metric_table[m].scope == SCOPE_NODE))) {
                                mcols[ncol - 1] = m;
                                colv[ncol++] = metric_table[m].name;
                        }
                colv[ncol] = NULL;
                for (size_t i = 0; i < r->d.ntotals; i++)
                        if (r->d.totals[i].level == level && r->d.totals[i].loc > maxloc)
                                maxloc = r->d.totals[i].loc;
                printf("  per %s, per second:\n", per == PER_CPU ? "CPU" : "node");
                /* each cell's total, in one pass over them (not one per CPU
                 * and column: 256 x 19 x 5,000 steps for a 256-CPU run);
                 * the last one wins, as it did */
                cell = calloc((size_t)(maxloc + 1) * (size_t)ncol + 1, sizeof *cell);
                for (int c = 1; c < ncol; c++)
                        col_of[mcols[c - 1]] = c;
                for (size_t i = 0; cell && i < r->d.ntotals; i++) {
                        const struct store_total *t = &r->d.totals[i];
                        if (t->level != level || t->loc < 0)
                                continue;
                        if (!prev || !streq(prev, t->metric)) {
                                prev = t->metric;
                                tm = metric_id_by_name(t->metric);
                        }
                        if (tm >= 0 && col_of[tm] > 0)
                                cell[(size_t)t->loc * (size_t)ncol + (size_t)col_of[tm]] = t;
                }
                tb = scols_new_table();
                for (int c = 0; c < ncol; c++)
                        scols_table_new_column(tb, colv[c], 0, c ? SCOLS_FL_RIGHT : 0);
                for (int loc = 0; cell && loc <= maxloc; loc++) {
                        struct libscols_line *ln = NULL;
                        for (int c = 1; c < ncol; c++) {
                                const struct store_total *t = cell[(size_t)loc * (size_t)ncol + (size_t)c];
                                char v[32], l[16];
                                if (!t)
                                        continue;
                                if (!ln) {
                                        ln = scols_table_new_line(tb, NULL);
                                        snprintf(l, sizeof l, "%d", loc);
                                        scols_line_set_data(ln, 0, l);
                                }
                                format_number(r->dur > 0 ? t->value / r->dur : 0, v, sizeof v);
                                scols_line_set_data(ln, (size_t)c, v);
                        }
                }
                free(cell);
                table_print(tb);
        }
        printf("\n");
}

/* The per-CPU totals, once report_compute() has their spread: 256 of
 * every 261 rows of a 256-CPU run, and only --per cpu shows them. */
static void drop_cpu_totals(struct run_detail *d)
{
        size_t k = 0;

        for (size_t i = 0; i < d->ntotals; i++)
                if (d->totals[i].level != LEVEL_CPU)
                        d->totals[k++] = d->totals[i];
        d->ntotals = k;
        if (k > 0) {
                void *p = realloc(d->totals, k * sizeof *d->totals);
                if (p)
                        d->totals = p;
        }
}

int report_load(struct ctl *ctl, const struct run_select *sel, enum report_totals keep, struct rrun **ret,
                size_t *ret_n)
{
        unsigned parts = keep == REPORT_TOTALS_SYSTEM ? (RUN_ALL & ~RUN_TOTALS) | RUN_SYSTEM_TOTALS : RUN_ALL;
        struct run_info *infos = NULL;
        struct rrun *runs;
        size_t n = 0;
        int r = run_select_list(ctl, sel, &infos, &n);

        if (r)
                return r;
        runs = calloc(n, sizeof *runs);
        if (!runs) {
                run_infos_free(infos, n);
                return ctl_fail(EXIT_FAILED, "out of memory");
        }
        for (size_t i = 0; i < n; i++)
                runs[i].info = infos[i];        /* the runs own the strings now */
        free(infos);
        for (size_t i = 0; i < n; i++) {
                if (store_run_detail_parts(ctl->store, runs[i].info.id, parts, &runs[i].d) < 0) {
                        r = ctl_fail(EXIT_FAILED, "cannot read run %s: %s", runs[i].info.name, store_errmsg(ctl->store));
                        report_unload(runs, n);
                        return r;
                }
                report_compute(&runs[i]);
                if (keep != REPORT_TOTALS_SYSTEM && locks_load(ctl, &runs[i]) < 0) {   /* lock wait hook */
                        r = ctl_fail(EXIT_FAILED, "cannot read the locks of run %s: %s", runs[i].info.name,
                                     store_errmsg(ctl->store));
                        report_unload(runs, n);
                        return r;
                }
                if (keep == REPORT_TOTALS_NODE)
                        drop_cpu_totals(&runs[i].d);
        }
        *ret = runs;
        *ret_n = n;
        return 0;
}

void report_unload(struct rrun *runs, size_t n)
{
        for (size_t i = 0; runs && i < n; i++) {
                locks_free(&runs[i]);
                run_detail_free(&runs[i].d);
                run_info_free(&runs[i].info);
        }
        free(runs);
}

int verb_report(struct ctl *ctl, int argc, char **argv)
{
        static const struct option options[] = {
                { "since", required_argument, NULL, 's' },
                { "until", required_argument, NULL, 'u' },
                { "tag", required_argument, NULL, 't' },
                { "metric", required_argument, NULL, 'm' },
                { "per", required_argument, NULL, 'p' },
                { "group-by", required_argument, NULL, 'g' },
                { "baseline", required_argument, NULL, 'b' },
                { "explain", no_argument, NULL, 'e' },
                { "score", required_argument, NULL, 'S' },
                { "variance-cv", required_argument, NULL, 'C' },
                { "variance-minmax", required_argument, NULL, 'M' },
                { "alpha", required_argument, NULL, 'A' },
                { "lower-is-better", required_argument, NULL, 'L' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        struct group_opts go = { .cv_limit = 0.05, .minmax_limit = 0.75, .alpha = 0.05 };
        json_t *groups = NULL, *explain_all = NULL;
        struct run_select sel = { 0 };
        struct rrun *runs = NULL;
        bool selm[_M_MAX], shown[_M_MAX], any_metric_opt = false;
        enum per per = PER_SYSTEM;
        size_t n = 0;
        int c, r = 0;

        for (int m = 0; m < _M_MAX; m++)
                selm[m] = true;
        while (r == 0 && (c = ctl_getopt(argc, argv, "", options)) >= 0) {
                switch (c) {
                case 's':
                case 'u':
                case 't':
                        r = run_select_set(&sel, c, optarg);
                        break;
                case 'm':
                        r = parse_metric_option(optarg, selm, &any_metric_opt);
                        break;
                case 'p':
                        if (streq(optarg, "system"))
                                per = PER_SYSTEM;
                        else if (streq(optarg, "node"))
                                per = PER_NODE;
                        else if (streq(optarg, "cpu"))
                                per = PER_CPU;
                        else
                                r = ctl_fail(EXIT_USAGE, "--per '%s': use system, node or cpu", optarg);
                        break;
                case 'g':
                        r = group_opts_parse_by(&go, optarg);
                        break;
                case 'b':
                        r = group_opts_parse_baseline(&go, optarg);
                        break;
                case 'e':
                        go.explain = true;
                        break;
                case 'S': {
                        const char *why;
                        if (!proto_valid_key(optarg, &why))
                                r = ctl_fail(EXIT_USAGE, "--score '%s': %s", optarg, why);
                        go.score = optarg;
                        break;
                }
                case 'C':
                case 'M':
                case 'A': {
                        char *end;
                        double v;
                        errno = 0;
                        v = strtod(optarg, &end);
                        if (errno || end == optarg || *end || !(v > 0) || (c != 'C' && v >= 1) || v > 1000)
                                r = ctl_fail(EXIT_USAGE, "%s '%s': %s", c == 'C' ? "--variance-cv" : c == 'M' ? "--variance-minmax" : "--alpha",
                                             optarg, c == 'C' ? "a percentage above 0, e.g. 5" : "a number between 0 and 1");
                        else if (c == 'C')
                                go.cv_limit = v / 100;
                        else if (c == 'M')
                                go.minmax_limit = v;
                        else
                                go.alpha = v;
                        break;
                }
                case 'L': {
                        _cleanup_free_ char *buf = strdup(optarg);
                        char *save = NULL, *tok;
                        const char *why;
                        size_t ntok = 0;
                        if (!buf) {
                                r = ctl_fail(EXIT_FAILED, "out of memory");
                                break;
                        }
                        for (tok = strtok_r(buf, ",", &save); r == 0 && tok; tok = strtok_r(NULL, ",", &save), ntok++) {
                                if (!proto_valid_key(tok, &why))
                                        r = ctl_fail(EXIT_USAGE, "--lower-is-better '%s': %s", tok, why);
                                else if (go.nlower_better == ELEMENTSOF(go.lower_better))
                                        r = ctl_fail(EXIT_USAGE, "--lower-is-better: at most %zu scores",
                                                     ELEMENTSOF(go.lower_better));
                                else
                                        go.lower_better[go.nlower_better++] = strdup(tok);
                        }
                        if (r == 0 && ntok == 0)
                                r = ctl_fail(EXIT_USAGE, "--lower-is-better needs K[,K...], the scores where less is better");
                        break;
                }
                case 'h':
                        printf("Usage: scalemonctl report [--since WHEN] [--until WHEN] [--tag K=V]... [--metric M,...]\n"
                               "                          [--per system|node|cpu] [--group-by TAG,...] [--baseline K=V,...]\n"
                               "                          [--explain] [--score K] [--variance-cv PCT] [--variance-minmax R]\n"
                               "                          [--alpha P] [--lower-is-better K,...]\n");
                        run_select_free(&sel);
                        group_opts_free(&go);
                        return EXIT_OK;
                default:
                        r = EXIT_USAGE;
                }
        }
        if (r == 0 && optind < argc)
                r = ctl_fail(EXIT_USAGE, "report takes no arguments, got '%s' (--since NAME starts from a run)",
                             argv[optind]);
        if (r == 0 && go.nbaseline && !go.nby)
                r = ctl_fail(EXIT_USAGE, "--baseline needs --group-by: the baseline is one of the groups");
        for (size_t j = 0; r == 0 && j < go.nbaseline; j++) {
                bool in = false;
                for (size_t k = 0; k < go.nby; k++)
                        in |= streq(go.by[k], go.baseline[j].key);
                if (!in)
                        r = ctl_fail(EXIT_USAGE, "--baseline %s=%s: %s is not one of the --group-by tags",
                                     go.baseline[j].key, go.baseline[j].value, go.baseline[j].key);
        }
        if (r == 0)
                r = report_load(ctl, &sel, per == PER_CPU ? REPORT_TOTALS_ALL : REPORT_TOTALS_NODE, &runs, &n);
        run_select_free(&sel);
        if (r) {
                group_opts_free(&go);
                return r;
        }
        if (go.nby || go.explain) {
                r = report_groups(runs, n, &go, &groups, &explain_all);
                if (r >= 0 && !go.nby) {
                        /* --explain alone: across all runs, no groups */
                        json_decref(groups);
                        groups = json_array();
                }
                if (r < 0) {
                        r = ctl_fail(EXIT_FAILED, "out of memory");
                        goto out;
                }
                r = 0;
        }

        if (ctl->format == FORMAT_TABLE && (go.nby || go.explain)) {
                /* the analysis: one line per run, then the groups */
                static const char *const cols[] = { "RUN", "STATUS", "DURATION", "TAGS", "SCORES", NULL };
                struct libscols_table *tb = table_new(cols, "llr");
                json_t *differs = context_differs(runs, n);
                print_differs(differs);
                json_decref(differs);
                for (size_t i = 0; i < n; i++) {
                        char dur[32], tags[1024], scores[1024];
                        format_duration_s(runs[i].dur, dur, sizeof dur);
                        format_kvs(tags, sizeof tags, runs[i].d.tags, runs[i].d.ntags);
                        format_scores(scores, sizeof scores, runs[i].d.scores, runs[i].d.nscores);
                        table_row(tb, runs[i].info.name, runs[i].info.status, dur, tags, scores);
                }
                table_print(tb);
                printf("\n");
                report_print_groups(groups, explain_all, &go);
        } else if (ctl->format == FORMAT_TABLE) {
                json_t *differs = context_differs(runs, n);
                char zero[2048] = "";
                size_t zl = 0;

                /* rows for counters that moved somewhere; cpu_* are the cpu
                 * time line; what never moved is named once below */
                for (int m = 0; m < _M_MAX; m++) {
                        bool moved = false, have = false;
                        for (size_t i = 0; i < n; i++) {
                                moved |= runs[i].m[m].have && runs[i].m[m].total != 0;
                                have |= runs[i].m[m].have;
                        }
                        shown[m] = selm[m] && metric_table[m].source != SRC_PROCSTAT && (moved || any_metric_opt);
                        if (selm[m] && !shown[m] && have && !moved && metric_table[m].source != SRC_PROCSTAT &&
                            zl < sizeof zero - 64)
                                strbuf_appendf(zero, sizeof zero, &zl, "%s%s", zl ? ", " : "",
                                                       metric_table[m].name);
                }
                printf("%zu run%s\n\n", n, n == 1 ? "" : "s");
                print_differs(differs);
                json_decref(differs);
                for (size_t i = 0; i < n; i++)
                        print_run_table(&runs[i], &runs[0], shown, per);
                if (zl)
                        printf("zero in every run: %s\n", zero);
        } else {
                json_t *arr = json_array(), *doc;
                for (size_t i = 0; i < n; i++)
                        json_array_append_new(arr, run_report_json(&runs[i], &runs[0], selm, per));
                if (ctl->format == FORMAT_CSV && go.nby) {
                        /* one row per group */
                        size_t i;
                        json_t *o;
                        json_array_foreach(groups, i, o) {
                                json_object_del(o, "runs");
                                json_object_del(o, "metrics");
                                json_object_del(o, "metrics_vs_baseline");
                                json_object_del(o, "locks_vs_baseline");
                                json_object_del(o, "explain");
                        }
                        r = output_csv(groups);
                } else if (ctl->format == FORMAT_CSV) {
                        /* context and marks are per-run detail, not columns */
                        size_t i;
                        json_t *o;
                        json_array_foreach(arr, i, o) {
                                json_object_del(o, "context");
                                json_object_del(o, "marks");
                                json_object_del(o, "locks");    /* a list: JSON only */
                        }
                        r = output_csv(arr);
                } else {
                        doc = json_pack("{s:O,s:o,s:o}", "runs", arr, "context_differs", context_differs(runs, n),
                                        "groups", groups ? json_incref(groups) : json_array());
                        if (explain_all)
                                json_object_set(doc, "explain", explain_all);
                        r = output_json(doc);
                        json_decref(doc);
                }
                json_decref(arr);
        }
out:
        json_decref(groups);
        json_decref(explain_all);
        group_opts_free(&go);
        report_unload(runs, n);
        return r;
}
