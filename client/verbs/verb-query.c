/* verb-query.c - `scalemonctl query METRIC`: a metric's deltas over time. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "output.h"
#include "selection.h"
#include "sock.h"
#include "suggest.h"
#include "timeutil.h"
#include "verbs.h"

#define DEFAULT_SINCE "-5m"

enum per { PER_SYSTEM, PER_NODE, PER_CPU };

static void usage(void)
{
        printf("Usage: scalemonctl query METRIC [--cpu N | --node N | --per system|node|cpu]\n"
               "                         [--since WHEN] [--until WHEN] [--step DUR]\n"
               "Deltas of METRIC per interval (default: the last 5 minutes, summed over the system).\n");
}

struct series {
        const char *key;        /* "cpu", "node", or NULL for system-wide */
        int loc;
        struct series_point *pts;
        size_t n;
};

static int add_series(struct ctl *ctl, struct series **all, size_t *nall, const char *metric, enum series_filter f,
                      int loc, const char *key, int64_t since, int64_t until, int64_t step)
{
        struct series *s = realloc(*all, (*nall + 1) * sizeof **all);
        int r;

        if (!s)
                return -ENOMEM;
        *all = s;
        s = &s[*nall];
        s->key = key;
        s->loc = loc;
        r = store_series(ctl->store, metric, f, loc, since, until, step, &s->pts, &s->n);
        if (r < 0)
                return r;
        (*nall)++;
        return 0;
}

/* One series per CPU 0..ncpus-1, from one pass over the database (a
 * store_series() per CPU would decode every tick's blob ncpus times). */
static int add_cpu_series(struct ctl *ctl, struct series **all, size_t *nall, const char *metric, int ncpus,
                          int64_t since, int64_t until, int64_t step)
{
        _cleanup_free_ struct series_point **pts = NULL;
        struct series *s;
        size_t n;
        int r;

        r = store_series_cpus(ctl->store, metric, ncpus, since, until, step, &pts, &n);
        if (r < 0)
                return r;
        s = realloc(*all, (*nall + ncpus) * sizeof **all);
        if (!s) {
                for (int c = 0; c < ncpus; c++)
                        free(pts[c]);
                return -ENOMEM;
        }
        *all = s;
        for (int c = 0; c < ncpus; c++)
                (*all)[(*nall)++] = (struct series){ .key = "cpu", .loc = c, .pts = pts[c], .n = n };
        return 0;
}

struct query_opts {
        const char *since_arg, *until_arg, *metric;
        long cpu, node;
        enum per per;
        bool per_given;
        int64_t step;
};

/* The options and METRIC.  0, EXIT_OK after --help (metric NULL), or an
 * exit code after saying what is wrong. */
static int query_parse(struct query_opts *q, int argc, char **argv)
{
        static const struct option options[] = {
                { "cpu", required_argument, NULL, 'c' },
                { "node", required_argument, NULL, 'n' },
                { "per", required_argument, NULL, 'p' },
                { "since", required_argument, NULL, 's' },
                { "until", required_argument, NULL, 'u' },
                { "step", required_argument, NULL, 't' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        int c, r;

        while ((c = ctl_getopt(argc, argv, "", options)) >= 0) {
                if (c == 'c' && (r = ctl_int("--cpu", optarg, 0, 65535, &q->cpu)))
                        return r;
                if (c == 'n' && (r = ctl_int("--node", optarg, 0, 4095, &q->node)))
                        return r;
                if (c == 't' && (r = ctl_duration("--step", optarg, &q->step)))
                        return r;
                if (c == 'p') {
                        q->per_given = true;
                        if (streq(optarg, "system"))
                                q->per = PER_SYSTEM;
                        else if (streq(optarg, "node"))
                                q->per = PER_NODE;
                        else if (streq(optarg, "cpu"))
                                q->per = PER_CPU;
                        else
                                return ctl_fail(EXIT_USAGE, "--per '%s': use system, node or cpu", optarg);
                } else if (c == 's')
                        q->since_arg = optarg;
                else if (c == 'u')
                        q->until_arg = optarg;
                else if (c == 'h') {
                        usage();
                        return EXIT_OK;
                } else if (!strchr("cnt", c))
                        return EXIT_USAGE;
        }
        if (optind >= argc)
                return ctl_fail(EXIT_USAGE, "query needs a METRIC (scalemonctl metrics lists them)");
        if (optind + 1 < argc)
                return ctl_fail(EXIT_USAGE, "query takes one METRIC, got also '%s'", argv[optind + 1]);
        q->metric = argv[optind];
        return 0;
}

/* METRIC against the options: known, and per CPU or node where they ask
 * for it.  0 or EXIT_USAGE after saying what is wrong. */
static int query_check(const struct query_opts *q, const struct metric_def *def)
{
        char hint[160];

        if (!def)
                return ctl_fail(EXIT_USAGE, "unknown metric '%s' (scalemonctl metrics lists them)%s", q->metric,
                                suggest_metric_hint(q->metric, hint, sizeof hint));
        if ((q->cpu >= 0) + (q->node >= 0) + q->per_given > 1)
                return ctl_fail(EXIT_USAGE, "use only one of --cpu, --node and --per");
        if (q->cpu >= 0 && def->scope != SCOPE_CPU)
                return ctl_fail(EXIT_USAGE, "--cpu: %s is a %s metric, not per CPU", q->metric,
                                metric_scope_name(def->scope));
        if ((q->node >= 0 || q->per == PER_NODE) && def->scope == SCOPE_SYSTEM)
                return ctl_fail(EXIT_USAGE, "%s: %s is a system-wide metric, not per node",
                                q->node >= 0 ? "--node" : "--per node", q->metric);
        if (q->per == PER_CPU && def->scope != SCOPE_CPU)
                return ctl_fail(EXIT_USAGE, "--per cpu: %s is a %s metric, not per CPU", q->metric,
                                metric_scope_name(def->scope));
        return 0;
}

/* The series the options ask for, between since and until.  0, or an exit
 * code after saying what is wrong. */
static int query_read(struct ctl *ctl, struct store *s, const struct query_opts *q, int64_t since, int64_t until,
                      struct series **all, size_t *nall)
{
        _cleanup_free_ int *node_of = NULL;
        int ncpu_map = 0, maxnode = -1, r = 0;
        bool found = false;

        if (store_topology_get(s, &node_of, NULL, &ncpu_map) < 0)
                return ctl_fail(EXIT_FAILED, "cannot read the CPU map: %s", store_errmsg(s));
        if (q->cpu >= ncpu_map && q->cpu >= 0)
                return ctl_fail(EXIT_USAGE, "--cpu %ld: this host has CPUs 0..%d", q->cpu, ncpu_map - 1);
        for (int i = 0; i < ncpu_map; i++) {
                found |= node_of[i] == q->node;
                maxnode = MAX(maxnode, node_of[i]);
        }
        if (q->node >= 0 && !found)
                return ctl_fail(EXIT_USAGE, "--node %ld: no such node on this host", q->node);

        if (q->cpu >= 0)
                r = add_series(ctl, all, nall, q->metric, SERIES_CPU, (int)q->cpu, "cpu", since, until, q->step);
        else if (q->node >= 0)
                r = add_series(ctl, all, nall, q->metric, SERIES_NODE, (int)q->node, "node", since, until, q->step);
        else if (q->per == PER_CPU)
                r = ncpu_map > 0 ? add_cpu_series(ctl, all, nall, q->metric, ncpu_map, since, until, q->step) : 0;
        else if (q->per == PER_NODE) {
                for (int nd = 0; nd <= maxnode && r >= 0; nd++) {
                        bool exists = false;
                        for (int i = 0; i < ncpu_map; i++)
                                exists |= node_of[i] == nd;
                        if (exists)
                                r = add_series(ctl, all, nall, q->metric, SERIES_NODE, nd, "node", since, until,
                                               q->step);
                }
        } else
                r = add_series(ctl, all, nall, q->metric, SERIES_ALL, 0, NULL, since, until, q->step);
        if (r < 0)
                return ctl_fail(EXIT_FAILED, "cannot read %s: %s", q->metric, store_errmsg(s));
        return 0;
}

static int print_table(const struct query_opts *q, const char *unit, const struct series *all, size_t nall)
{
        static const char *const cols3[] = { "TIME", "INTERVAL", "VALUE", "PER_S", NULL };
        static const char *const cols4[] = { "TIME", "INTERVAL", "LOC", "VALUE", "PER_S", NULL };
        bool loc = nall > 1 || all[0].key;
        struct libscols_table *tb = table_new(loc ? cols4 : cols3, loc ? "lrlrr" : "lrrr");
        /* below a second (a --step, or the daemon's own interval without
         * one) whole seconds would repeat: show milliseconds */
        bool subsec = q->step > 0 && q->step < NSEC_PER_SEC;

        if (!tb)
                return ctl_fail(EXIT_FAILED, "out of memory");
        for (size_t k = 0; q->step == 0 && k < nall; k++)
                for (size_t i = 0; i < all[k].n; i++)
                        subsec |= all[k].pts[i].dur_ns < NSEC_PER_SEC;
        for (size_t k = 0; k < nall; k++)
                for (size_t i = 0; i < all[k].n; i++) {
                        const struct series_point *p = &all[k].pts[i];
                        char t[32], iv[32], v[32], rate[32], where[32];
                        if (subsec)
                                time_format_local_ms(p->t_ns, t, sizeof t);
                        else
                                time_format_local(p->t_ns, t, sizeof t);
                        snprintf(iv, sizeof iv, "%.3fs", (double)p->dur_ns / 1e9);
                        if (p->not_counted) {
                                snprintf(v, sizeof v, "not counted");
                                snprintf(rate, sizeof rate, "-");
                        } else {
                                format_number(p->value, v, sizeof v);
                                format_number(p->dur_ns ? p->value / ((double)p->dur_ns / 1e9) : 0, rate,
                                              sizeof rate);
                        }
                        if (all[k].key) {
                                snprintf(where, sizeof where, "%s%d", all[k].key, all[k].loc);
                                table_row(tb, t, iv, where, v, rate);
                        } else
                                table_row(tb, t, iv, v, rate);
                }
        printf("%s (%s)\n", q->metric, unit);
        return table_print(tb);
}

static int print_json(struct ctl *ctl, const struct query_opts *q, const char *unit, const struct series *all,
                      size_t nall)
{
        json_t *pts = json_array(), *doc;
        int r;

        for (size_t k = 0; k < nall; k++)
                for (size_t i = 0; i < all[k].n; i++) {
                        const struct series_point *p = &all[k].pts[i];
                        json_t *o = json_pack("{s:o,s:f}", "time", json_time(p->t_ns), "interval_s",
                                              (double)p->dur_ns / 1e9);
                        if (all[k].key)
                                json_object_set_new(o, all[k].key, json_integer(all[k].loc));
                        if (p->not_counted) {
                                json_object_set_new(o, "value", json_null());
                                json_object_set_new(o, "per_s", json_null());
                                json_object_set_new(o, "why",
                                                    json_string("not counted: the perf group was multiplexed out"));
                        } else {
                                json_object_set_new(o, "value", json_number(p->value));
                                json_object_set_new(o, "per_s",
                                                    json_real(p->dur_ns ? p->value / ((double)p->dur_ns / 1e9) : 0));
                        }
                        json_array_append_new(pts, o);
                }
        if (ctl->format == FORMAT_CSV)
                r = output_csv(pts);
        else {
                doc = json_pack("{s:s,s:s,s:O}", "metric", q->metric, "unit", unit, "points", pts);
                r = output_json(doc);
                json_decref(doc);
        }
        json_decref(pts);
        return r;
}

int verb_query(struct ctl *ctl, int argc, char **argv)
{
        struct query_opts q = {
                .since_arg = DEFAULT_SINCE, .until_arg = "now", .cpu = -1, .node = -1, .per = PER_SYSTEM,
        };
        _cleanup_free_ struct store_metric_row *rows = NULL;
        const struct store_metric_row *row = NULL;
        struct series *all = NULL;
        size_t nall = 0, nrows = 0, npoints = 0;
        int64_t since, until;
        struct store *s;
        int r;

        if ((r = query_parse(&q, argc, argv)) || !q.metric)
                return r;
        if ((r = query_check(&q, metric_by_name(q.metric))))
                return r;
        s = ctl_store(ctl);
        if (!s)
                return EXIT_FAILED;
        if ((r = ctl_when(ctl, "--since", q.since_arg, false, &since)) ||
            (r = ctl_when(ctl, "--until", q.until_arg, true, &until)))
                return r;
        if (until <= since)
                return ctl_fail(EXIT_USAGE, "--until is not after --since");

        if (store_metrics_list(s, &rows, &nrows) < 0)
                return ctl_fail(EXIT_FAILED, "cannot read %s: %s", ctl->db_path, store_errmsg(s));
        for (size_t i = 0; i < nrows; i++)
                if (streq(rows[i].name, q.metric))
                        row = &rows[i];
        if (!row)
                return ctl_fail(EXIT_FAILED, "%s has never been recorded in %s", q.metric, ctl->db_path);
        if (!row->available)
                return ctl_fail(EXIT_FAILED, "%s is not available: %s", q.metric, row->why);

        r = query_read(ctl, s, &q, since, until, &all, &nall);
        for (size_t i = 0; r == 0 && i < nall; i++)
                npoints += all[i].n;
        if (r == 0 && npoints == 0) {
                char a[32], b[32];
                time_format_local(since, a, sizeof a);
                time_format_local(until, b, sizeof b);
                r = ctl_fail(EXIT_FAILED, "no samples between %s and %s in %s (scalemonctl status shows what is there)",
                             a, b, ctl->db_path);
        } else if (r == 0)
                r = ctl->format == FORMAT_TABLE ? print_table(&q, row->unit, all, nall)
                                                : print_json(ctl, &q, row->unit, all, nall);
        for (size_t i = 0; i < nall; i++)
                free(all[i].pts);
        free(all);
        return r;
}
