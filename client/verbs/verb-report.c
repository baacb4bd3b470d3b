/* verb-report.c - `scalemonctl report`: what each counter did in each run.
 *
 * Everything comes from the runs' stored totals (exact differences of the
 * daemon's snapshots at the run's start and stop); no sample is scanned.
 * For each run: duration, status, scores, where the CPU time went, and per
 * metric its total, rate, and spread across CPUs (min, median, max, and
 * imbalance = max / mean), with the change against the first run in range
 * that has the same tags (none for the first of its tags).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis.h"
#include "differs.h"
#include "explain.h"
#include "groups.h"
#include "locks.h"
#include "output.h"
#include "report-own.h"
#include "proto.h"
#include "selection.h"
#include "timeutil.h"
#include "units.h"
#include "verbs.h"

enum per { PER_SYSTEM, PER_NODE, PER_CPU };

/* Per-CPU or per-node totals of one metric, in loc order. */
static json_t *per_loc_json(const struct analysis_run *r, int m, enum total_level level)
{
        json_t *a = json_array();
        for (size_t i = 0; i < r->d.ntotals; i++) {
                const struct store_total *t = &r->d.totals[i];
                if (t->level != level || !streq(t->metric, metric_table[m].name))
                        continue;
                json_array_append_new(a, json_pack("{s:i,s:o,s:o}", level == LEVEL_CPU ? "cpu" : "node", t->loc,
                                                   "total", json_number(t->value), "per_s",
                                                   metric_table[m].max ? json_null()    /* a maximum: no rate */
                                                   : json_real(r->dur > 0 ? t->value / r->dur : 0)));
        }
        return a;
}

static json_t *run_report_json(const struct analysis_run *r, const struct analysis_run *first, const bool *sel, enum per per)
{
        json_t *o = run_json(&r->info, &r->d), *metrics = json_object(), *ct = json_object(), *ctx = json_object(),
               *marks = json_array(), *svf = json_object();

        json_object_set_new(o, "host", json_string(r->hostname));

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
                        jm = json_pack("{s:o,s:o}", "total", json_number(s->total), "per_s",
                                       metric_table[m].max ? json_null() : json_real(s->per_s));   /* a maximum: no rate */
                        if (s->spread) {
                                json_object_set_new(jm, "cpu_min", json_number(s->cpu_min));
                                json_object_set_new(jm, "cpu_median", json_number(s->cpu_median));
                                json_object_set_new(jm, "cpu_max", json_number(s->cpu_max));
                                json_object_set_new(jm, "imbalance", s->imbalance_ok && !metric_table[m].max
                                                                             ? json_real(s->imbalance) : json_null());
                                if (metric_table[m].max)
                                        json_object_set_new(jm, "why", json_string("a maximum, not a count"));
                                else if (!s->imbalance_ok)
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
                        report_own_json(r, m, jm);
                        if (first != r && first->m[m].have)
                                json_object_set_new(jm, "vs_first_pct",
                                                    metric_table[m].max ? (analysis_pct_change(first->m[m].total, s->total,
                                                                                               &pct) ? json_real(pct) : json_null())
                                                    : analysis_pct_change(first->m[m].per_s, s->per_s, &pct) ? json_real(pct)
                                                                                                 : json_null());
                        if (per == PER_CPU && metric_table[m].scope == SCOPE_CPU)
                                json_object_set_new(jm, "per_cpu", per_loc_json(r, m, LEVEL_CPU));
                        if (per == PER_NODE && metric_table[m].scope != SCOPE_SYSTEM)
                                json_object_set_new(jm, "per_node", per_loc_json(r, m, LEVEL_NODE));
                }
                json_object_set_new(metrics, metric_table[m].name, jm);
        }
        for (int i = 0; i < ANALYSIS_CPU_TIMES; i++)
                json_object_set_new(ct, analysis_cpu_time_name[i],
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
                        const struct store_score *b = analysis_find_score(&first->d, r->d.scores[i].key);
                        double pct;
                        if (b)
                                json_object_set_new(svf, r->d.scores[i].key,
                                                    analysis_pct_change(b->value, r->d.scores[i].value, &pct) ? json_real(pct)
                                                                                                    : json_null());
                }
        json_object_set_new(o, "cpu_time_pct", ct);
        json_object_set_new(o, "scores_vs_first_pct", svf);
        json_object_set_new(o, "metrics", metrics);
        json_object_set_new(o, "marks", marks);
        json_object_set_new(o, "context", ctx);
        locks_add_json(r, per == PER_NODE, per == PER_CPU, o);
        if (streq(r->info.status, "interrupted"))
                json_object_set_new(o, "why", json_string("scalemond stopped during the run: totals end at its last "
                                                          "interval written"));
        return o;
}

static void fmt_or_dash(bool ok, double v, char *buf, size_t len)
{
        if (ok)
                format_number(v, buf, len);
        else
                snprintf(buf, len, "-");
}

/* The run's line, its times, scores, CPU time and marks. */
/* Do the runs come from more than one host?  Then the report names each
 * run's host. */
static bool several_hosts(const struct analysis_run *runs, size_t n)
{
        for (size_t i = 1; i < n; i++)
                if (!streq(runs[i].hostname, runs[0].hostname))
                        return true;
        return false;
}

static void print_run_header(const struct analysis_run *r, const struct analysis_run *first, bool show_host)
{
        char start[32], dur[32], line[2048], tags[1024];
        size_t len = 0;

        time_format_local(r->info.start, start, sizeof start);
        format_duration_s(r->dur, dur, sizeof dur);
        format_kvs(tags, sizeof tags, r->d.tags, r->d.ntags);
        len = (size_t)snprintf(line, sizeof line, "%s: %s", r->info.name, r->info.status);
        if (show_host)
                strbuf_appendf(line, sizeof line, &len, ", host %s", r->hostname);
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
        if (r->info.has_switches)
                printf("  its tasks' context switches: %lld voluntary, %lld involuntary\n",
                       (long long)r->info.voluntary_switches, (long long)r->info.involuntary_switches);
        if (r->d.nscores) {
                len = 0;
                line[0] = 0;
                for (size_t i = 0; i < r->d.nscores; i++) {
                        const struct store_score *b = first != r ? analysis_find_score(&first->d, r->d.scores[i].key) : NULL;
                        char v[32];
                        double pct;
                        format_number(r->d.scores[i].value, v, sizeof v);
                        strbuf_appendf(line, sizeof line, &len, "%s%s=%s", i ? ", " : "",
                                                r->d.scores[i].key, v);
                        if (b && analysis_pct_change(b->value, r->d.scores[i].value, &pct)) {
                                char pc[32];
                                format_pct(pct, pc, sizeof pc);
                                strbuf_appendf(line, sizeof line, &len, " (%s)", pc);
                        }
                }
                printf("  scores: %s\n", line);
        }
        if (r->cpu_total > 0) {
                len = 0;
                for (int i = 0; i < ANALYSIS_CPU_TIMES; i++)
                        if (i < 4 || i == 7 || r->cpu_time[i] / r->cpu_total >= 0.0005)
                                strbuf_appendf(line, sizeof line, &len, "%s%s %.1f%%", len ? ", " : "",
                                                        analysis_cpu_time_name[i], r->cpu_time[i] / r->cpu_total * 100);
                printf("  cpu time: %s (of %.1f CPU-seconds)\n", line, r->cpu_total);
        }
        report_own_print(r);
        for (size_t i = 0; i < r->d.nmarks; i++)
                printf("  mark +%.3fs: %s\n", (double)(r->d.marks[i].t - r->info.start) / 1e9, r->d.marks[i].text);
}

/* One row per CPU or node, one column per shown metric (rates). */
static void print_per_loc_table(const struct analysis_run *r, const bool *shown, enum per per)
{
        struct libscols_table *tb;
        const char *colv[_M_MAX + 2], *prev = NULL;
        char maxname[_M_MAX][64];
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
                        /* a maximum (lock_wait_max_ns) is shown as it is, not per second */
                        if (metric_table[m].max)
                                snprintf(maxname[m], sizeof maxname[m], "%s (max)", metric_table[m].name);
                        colv[ncol++] = metric_table[m].max ? maxname[m] : metric_table[m].name;
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
                        if (metric_table[mcols[c - 1]].max)
                                units_total(mcols[c - 1], t->value, v, sizeof v);
                        else
                                units_rate(mcols[c - 1], r->dur > 0 ? t->value / r->dur : 0, true, v, sizeof v);
                        scols_line_set_data(ln, (size_t)c, v);
                }
        }
        free(cell);
        table_print(tb);
}

static void print_run_table(const struct analysis_run *r, const struct analysis_run *first, const bool *shown, enum per per,
                            bool show_host, bool by_lock)
{
        static const char *const cols[] = { "METRIC", "TOTAL", "PER_S", "CPU_MIN", "CPU_MEDIAN", "CPU_MAX", "IMBALANCE",
                                            "VS_FIRST", NULL };
        struct libscols_table *tb;

        print_run_header(r, first, show_host);
        locks_print_share(r, per == PER_NODE, per == PER_CPU);        /* beside the cpu time line */
        if (streq(r->info.status, "running")) {
                printf("  (still running: totals are written when it stops)\n\n");
                return;
        }
        tb = table_new(cols, "lrrrrrrr");
        if (!tb)
                return;
        for (int m = 0; m < _M_MAX; m++) {
                const struct mstat *s = &r->m[m];
                char total[40], per_s[32], mn[32], md[32], mx[32], im[32], vf[32] = "";
                double pct;
                if (!shown[m])
                        continue;
                if (!s->have) {
                        table_row(tb, metric_table[m].name, "n/a", "", "", "", "", "", "");
                        continue;
                }
                /* times in s, ms, us (units.c); a maximum (lock_wait_max_ns)
                 * has no rate, and its CPUs' max over their mean is no
                 * imbalance */
                units_total(m, s->total, mx, sizeof mx);
                snprintf(total, sizeof total, "%s%s", metric_table[m].max ? "max " : "", mx);
                fmt_or_dash(!metric_table[m].max, NAN, per_s, sizeof per_s);
                if (!metric_table[m].max)
                        units_rate(m, s->per_s, true, per_s, sizeof per_s);
                fmt_or_dash(s->spread, NAN, mn, sizeof mn);
                fmt_or_dash(s->spread, NAN, md, sizeof md);
                fmt_or_dash(s->spread, NAN, mx, sizeof mx);
                if (s->spread) {
                        units_total(m, s->cpu_min, mn, sizeof mn);
                        units_total(m, s->cpu_median, md, sizeof md);
                        units_total(m, s->cpu_max, mx, sizeof mx);
                }
                if (s->spread && s->imbalance_ok && !metric_table[m].max)
                        snprintf(im, sizeof im, "%.2f", s->imbalance);
                else
                        snprintf(im, sizeof im, "-");
                if (first != r && first->m[m].have) {
                        double a = metric_table[m].max ? first->m[m].total : first->m[m].per_s,
                               b = metric_table[m].max ? s->total : s->per_s;
                        if (analysis_pct_change(a, b, &pct))
                                format_pct(pct, vf, sizeof vf);
                        else
                                snprintf(vf, sizeof vf, b == 0 ? "=" : "new");
                }
                table_row(tb, metric_table[m].name, total, per_s, mn, md, mx, im, vf);
        }
        table_print(tb);
        locks_print(r, 10, by_lock);    /* the contended locks */

        if (per != PER_SYSTEM)
                print_per_loc_table(r, shown, per);
        printf("\n");
}

/* What report was asked for. */
struct report_args {
        struct run_select sel;
        struct group_opts go;
        bool selm[_M_MAX];      /* --metric */
        bool any_metric_opt;
        enum per per;
        bool locks_by_lock;     /* --locks lock */
};

static void report_args_free(struct report_args *a)
{
        run_select_free(&a->sel);
        group_opts_free(&a->go);
}

/* 0, an exit code after printing why, or -1 after --help. */
static int report_parse(struct report_args *a, int argc, char **argv)
{
        static const struct option options[] = {
                { "since", required_argument, NULL, 's' },
                { "until", required_argument, NULL, 'u' },
                { "tag", required_argument, NULL, 't' },
                { "host", required_argument, NULL, 'H' },
                { "metric", required_argument, NULL, 'm' },
                { "per", required_argument, NULL, 'p' },
                { "locks", required_argument, NULL, 'l' },
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
        struct group_opts *go = &a->go;
        const char *why;
        int c, r = 0;

        while (r == 0 && (c = ctl_getopt(argc, argv, "", options)) >= 0) {
                switch (c) {
                case 's':
                case 'u':
                case 't':
                case 'H':
                        r = run_select_set(&a->sel, c, optarg);
                        break;
                case 'm':
                        r = parse_metric_option(optarg, a->selm, &a->any_metric_opt);
                        break;
                case 'p':
                        if (streq(optarg, "system"))
                                a->per = PER_SYSTEM;
                        else if (streq(optarg, "node"))
                                a->per = PER_NODE;
                        else if (streq(optarg, "cpu"))
                                a->per = PER_CPU;
                        else
                                r = ctl_fail(EXIT_USAGE, "--per '%s': use system, node or cpu", optarg);
                        break;
                case 'l':
                        if (!streq(optarg, "caller") && !streq(optarg, "lock"))
                                r = ctl_fail(EXIT_USAGE, "--locks '%s': use caller or lock", optarg);
                        a->locks_by_lock = streq(optarg, "lock");
                        break;
                case 'g':
                        r = parse_group_by(go, optarg);
                        break;
                case 'b':
                        r = parse_baseline(go, optarg);
                        break;
                case 'e':
                        go->explain = true;
                        break;
                case 'S':
                        if (!proto_valid_key(optarg, &why))
                                r = ctl_fail(EXIT_USAGE, "--score '%s': %s", optarg, why);
                        go->score = optarg;
                        break;
                case 'C':
                case 'M':
                case 'A':
                        r = parse_group_limit(go, c == 'C' ? "--variance-cv" : c == 'M' ? "--variance-minmax" : "--alpha", optarg);
                        break;
                case 'L':
                        r = parse_lower_is_better(go, optarg);
                        break;
                case 'h':
                        printf("Usage: scalemonctl report [--since WHEN] [--until WHEN] [--tag K=V]... [--metric M,...]\n"
                               "                          [--per system|node|cpu] [--locks caller|lock] [--group-by TAG,...]\n"
                               "                          [--baseline K=V,...] [--explain] [--score K] [--variance-cv PCT]\n"
                               "                          [--variance-minmax R] [--alpha P] [--lower-is-better K,...]\n"
                               "                          [--host NAME]\n"
                               "  --group-by takes tags, host and the recorded context keys (kernel, thp_enabled, ...)\n");
                        return -1;
                default:
                        r = EXIT_USAGE;
                }
        }
        if (r == 0 && optind < argc)
                r = ctl_fail(EXIT_USAGE, "report takes no arguments, got '%s' (--since NAME starts from a run)",
                             argv[optind]);
        if (r == 0 && go->nbaseline && !go->nby)
                r = ctl_fail(EXIT_USAGE, "--baseline needs --group-by: the baseline is one of the groups");
        for (size_t j = 0; r == 0 && j < go->nbaseline; j++) {
                bool in = false;
                for (size_t k = 0; k < go->nby; k++)
                        in |= streq(go->by[k], go->baseline[j].key);
                if (!in)
                        r = ctl_fail(EXIT_USAGE, "--baseline %s=%s: %s is not one of the --group-by tags",
                                     go->baseline[j].key, go->baseline[j].value, go->baseline[j].key);
        }
        return r;
}

/* With --group-by and --explain, each HIGH VARIANCE group's
 * lowest-scoring run explained against the group's others (explain.c,
 * over the runs in range, whose stable groups give the spreads): gx[g]
 * for group g, or why[g] why not; neither for the other groups. */
struct group_explained {
        struct explain_run_result *gx;  /* [ngroups] */
        bool *have;
        char **why;
        size_t n;
};

static void group_explained_free(struct group_explained *ge)
{
        for (size_t g = 0; g < ge->n; g++) {
                if (ge->have[g])
                        explain_run_free(&ge->gx[g]);
                free(ge->why[g]);
        }
        free(ge->gx);
        free(ge->have);
        free(ge->why);
        memset(ge, 0, sizeof *ge);
}

static int group_explain(struct ctl *ctl, const struct analysis_run *runs, size_t nruns, const struct group_result *gr,
                         struct group_explained *ge)
{
        ge->n = gr->ngroups;
        ge->gx = calloc(ge->n + 1, sizeof *ge->gx);
        ge->have = calloc(ge->n + 1, sizeof *ge->have);
        ge->why = calloc(ge->n + 1, sizeof *ge->why);
        if (!ge->gx || !ge->have || !ge->why)
                return -ENOMEM;
        for (size_t g = 0; g < gr->ngroups; g++) {
                const struct group *grp = &gr->groups[g];
                const char *key = gr->go->score ? gr->go->score : grp->nscores ? grp->scores[0].key : NULL;

                if (!grp->high_variance)
                        continue;
                if (explain_run_lowest(ctl->store, runs, nruns, grp->idx, grp->n, key, &ge->gx[g], &ge->why[g]) == 0)
                        ge->have[g] = true;
                else if (!ge->why[g] && !(ge->why[g] = strdup("out of memory")))
                        return -ENOMEM;
        }
        return 0;
}

static void group_explained_print(const struct group_result *gr, const struct group_explained *ge)
{
        bool first = true;

        for (size_t g = 0; g < ge->n; g++) {
                char label[512], l1[1024], l2[1024];
                if (!ge->have[g] && !ge->why[g])
                        continue;
                if (first)
                        printf("\nThe lowest-scoring run of each HIGH VARIANCE group against the others (scalemonctl explain):\n");
                first = false;
                groups_label(gr, &gr->groups[g], label, sizeof label);
                printf("  %s:\n", label);
                if (!ge->have[g]) {
                        printf("    %s\n", ge->why[g]);
                        continue;
                }
                explain_run_brief(&ge->gx[g], l1, sizeof l1, l2, sizeof l2);
                printf("    %s\n", l1);
                if (l2[0])
                        printf("    %s\n", l2);
        }
}

/* Each explained group's JSON object gets "explain_run". */
static void group_explained_json(json_t *groups, const struct group_explained *ge)
{
        for (size_t g = 0; g < ge->n && g < json_array_size(groups); g++) {
                json_t *o = json_array_get(groups, g);
                if (ge->have[g])
                        json_object_set_new(o, "explain_run", explain_run_brief_json(&ge->gx[g]));
                else if (ge->why[g])
                        json_object_set_new(o, "explain_run", json_pack("{s:s}", "why", ge->why[g]));
        }
}

/* The analysis as a table: one line per run, then the groups. */
static void print_analysis(const struct analysis_run *runs, size_t n, const struct context_differs *cd,
                           const struct group_result *gr, const struct group_explained *ge)
{
        static const char *const cols[] = { "RUN", "STATUS", "DURATION", "TAGS", "SCORES", NULL };
        static const char *const cols_host[] = { "RUN", "HOST", "STATUS", "DURATION", "TAGS", "SCORES", NULL };
        bool show_host = several_hosts(runs, n);
        struct libscols_table *tb = show_host ? table_new(cols_host, "lllr") : table_new(cols, "llr");

        differs_print(cd, runs);
        for (size_t i = 0; i < n; i++) {
                char dur[32], tags[1024], scores[1024];
                format_duration_s(runs[i].dur, dur, sizeof dur);
                format_kvs(tags, sizeof tags, runs[i].d.tags, runs[i].d.ntags);
                format_scores(scores, sizeof scores, runs[i].d.scores, runs[i].d.nscores);
                if (show_host)
                        table_row(tb, runs[i].info.name, runs[i].hostname, runs[i].info.status, dur, tags, scores);
                else
                        table_row(tb, runs[i].info.name, runs[i].info.status, dur, tags, scores);
        }
        table_print(tb);
        printf("\n");
        groups_print(gr);
        group_explained_print(gr, ge);
}

/* Each run with its counters: rows for counters that moved somewhere;
 * cpu_* are the cpu time line; what never moved is named once below. */
static void print_runs(const struct analysis_run *runs, size_t n, const struct context_differs *cd,
                       const struct report_args *a)
{
        bool shown[_M_MAX];
        char zero[2048] = "";
        size_t zl = 0;

        for (int m = 0; m < _M_MAX; m++) {
                bool moved = false, have = false;
                for (size_t i = 0; i < n; i++) {
                        moved |= runs[i].m[m].have && runs[i].m[m].total != 0;
                        have |= runs[i].m[m].have;
                }
                shown[m] = a->selm[m] && metric_table[m].source != SRC_PROCSTAT && (moved || a->any_metric_opt);
                if (a->selm[m] && !shown[m] && have && !moved && metric_table[m].source != SRC_PROCSTAT &&
                    zl < sizeof zero - 64)
                        strbuf_appendf(zero, sizeof zero, &zl, "%s%s", zl ? ", " : "", metric_table[m].name);
        }
        printf("%zu run%s\n\n", n, n == 1 ? "" : "s");
        differs_print(cd, runs);
        for (size_t i = 0; i < n; i++)
                print_run_table(&runs[i], analysis_first_same_tags(runs, i), shown, a->per, several_hosts(runs, n),
                                a->locks_by_lock);
        if (zl)
                printf("zero in every run: %s\n", zero);
}

/* JSON: {"runs", "context_differs", "groups", "explain"}; CSV: one row
 * per group with --group-by, else one per run. */
static int output_report(const struct ctl *ctl, const struct analysis_run *runs, size_t n,
                         const struct context_differs *cd, const struct group_result *gr, const struct report_args *a,
                         const struct group_explained *ge)
{
        json_t *doc, *arr;
        int r;

        if (ctl->format == FORMAT_CSV && a->go.nby) {
                doc = groups_json(gr, runs, true);
                r = output_csv(doc);
                json_decref(doc);
                return r;
        }
        arr = json_array();
        for (size_t i = 0; i < n; i++) {
                json_t *o = run_report_json(&runs[i], analysis_first_same_tags(runs, i), a->selm, a->per);
                if (ctl->format == FORMAT_CSV) {
                        /* context and marks are per-run detail, not columns */
                        json_object_del(o, "context");
                        json_object_del(o, "marks");
                        json_object_del(o, "locks");    /* lists: JSON only */
                        json_object_del(o, "locks_by_lock");
                }
                json_array_append_new(arr, o);
        }
        if (ctl->format == FORMAT_CSV) {
                r = output_csv(arr);
                json_decref(arr);
                return r;
        }
        doc = json_pack("{s:o,s:o,s:o}", "runs", arr, "context_differs", differs_json(cd, runs), "groups",
                        groups_json(gr, runs, false));
        group_explained_json(json_object_get(doc, "groups"), ge);
        if (gr && gr->has_all)
                json_object_set_new(doc, "explain", groups_explain_json(gr->all, gr->nall));
        r = output_json(doc);
        json_decref(doc);
        return r;
}

int verb_report(struct ctl *ctl, int argc, char **argv)
{
        struct report_args a = { .go = GROUP_OPTS_DEFAULT, .per = PER_SYSTEM };
        struct context_differs cd = { 0 };
        struct group_result *gr = NULL;
        struct group_explained ge = { 0 };
        struct analysis_run *runs = NULL;
        size_t n = 0;
        int r;

        for (int m = 0; m < _M_MAX; m++)
                a.selm[m] = true;
        r = report_parse(&a, argc, argv);
        if (r == 0)
                r = run_select_load(ctl, &a.sel, a.per == PER_CPU ? ANALYSIS_TOTALS_ALL : ANALYSIS_TOTALS_NODE, &runs, &n);
        if (r == 0)
                r = run_select_check_groups(runs, n, &a.go, "--group-by");
        if (r)
                goto out;
        if (analysis_context_differs(runs, n, &cd) < 0 ||
            ((a.go.nby || a.go.explain) && analysis_groups(runs, n, &a.go, &gr) < 0)) {
                r = ctl_fail(EXIT_FAILED, "out of memory");
                goto out;
        }
        if (gr && a.go.nby && a.go.explain && ctl->format != FORMAT_CSV && group_explain(ctl, runs, n, gr, &ge) < 0) {
                r = ctl_fail(EXIT_FAILED, "out of memory");
                goto out;
        }
        if (ctl->format == FORMAT_TABLE && gr)
                print_analysis(runs, n, &cd, gr, &ge);
        else if (ctl->format == FORMAT_TABLE)
                print_runs(runs, n, &cd, &a);
        else
                r = output_report(ctl, runs, n, &cd, gr, &a, &ge);
out:
        group_explained_free(&ge);
        context_differs_free(&cd);
        group_result_free(gr);
        analysis_unload(runs, n);
        report_args_free(&a);
        return r < 0 ? EXIT_OK : r;
}
