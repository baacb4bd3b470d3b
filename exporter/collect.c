/* collect.c - scalemon's series, named the Prometheus way.
 *
 * Every available counter is a counter since the daemon started, in base
 * units (DESIGN.md, second stage): per CPU, or summed per node with
 * --per node; node metrics per node; system metrics without a label.  The
 * daemon's start is scalemon_start_time_seconds: counters start from 0
 * there, which rate() and increase() take as a reset; in OpenMetrics each
 * counter's sample also carries it as its created time (NAME_created).  Runs come from the
 * database as an info family (with their tags as labels), their start and
 * end times and their scores, so that a dashboard can draw a run's window
 * over the counters.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "collect.h"
#include "macro.h"
#include "metric.h"

static bool ends_with(const char *s, const char *suffix)
{
        size_t n = strlen(s), k = strlen(suffix);
        return n >= k && streq(s + n - k, suffix);
}

int collect_family_name(const char *metric, const char *unit, char *out, size_t n, double *factor,
                        const char **ret_unit)
{
        size_t len = strlen(metric);

        if (strstr(metric, "_max_") || ends_with(metric, "_max"))
                return -ENOENT;
        *factor = 1;
        *ret_unit = NULL;
        if (streq(unit, "s")) {
                snprintf(out, n, "scalemon_%s_seconds", metric);
                *ret_unit = "seconds";
        } else if ((ends_with(metric, "_ns") || ends_with(metric, "_us")) && len > 3) {
                snprintf(out, n, "scalemon_%.*s_seconds", (int)(len - 3), metric);
                *factor = metric[len - 2] == 'n' ? 1e-9 : 1e-6;
                *ret_unit = "seconds";
        } else
                snprintf(out, n, "scalemon_%s", metric);
        return 0;
}

/* decimals such that factor is 10^-decimals (cpu_user's 1/100 s clock
 * ticks: 2), or -1: such values are written exactly (expo_sample_decimal) */
static int decimals_of(double factor)
{
        double p = 1;

        for (int k = 0; k <= 9; k++, p *= 10)
                if (fabs(factor * p - 1) < 1e-9)
                        return k;
        return -1;
}

/* A counter's total, and in OpenMetrics its created time: the daemon's
 * start, where every total starts from 0 (none restarts while it runs:
 * a CPU that goes and comes back keeps its totals). */
static int put_counter(struct expo *e, const struct expo_label *l, size_t n, int64_t raw, double factor, int decimals,
                       int64_t created_ns)
{
        int r = decimals >= 0 ? expo_sample_decimal(e, l, n, raw, decimals) : expo_sample(e, l, n, (double)raw * factor);

        if (r >= 0 && created_ns > 0)
                r = expo_created(e, l, n, (double)created_ns / 1e9);
        return r;
}

static int put_counters(struct expo *e, const struct proto_totals *t, enum collect_per per)
{
        int64_t *node_sum = calloc((size_t)MAX(t->nnodes, 1), sizeof *node_sum);
        char (*cpu_s)[12] = calloc((size_t)MAX(t->ncpus, 1), sizeof *cpu_s);      /* labels, made once */
        char (*cpu_node_s)[12] = calloc((size_t)MAX(t->ncpus, 1), sizeof *cpu_node_s);
        int r = 0;

        if (!node_sum || !cpu_s || !cpu_node_s) {
                free(node_sum);
                free(cpu_s);
                free(cpu_node_s);
                return -ENOMEM;
        }
        for (int c = 0; c < t->ncpus; c++) {
                snprintf(cpu_s[c], sizeof cpu_s[c], "%d", c);
                snprintf(cpu_node_s[c], sizeof cpu_node_s[c], "%d", t->cpu_node[c]);
        }
        for (size_t i = 0; r >= 0 && i < t->nmetrics; i++) {
                const struct proto_totals_metric *m = &t->metrics[i];
                const struct metric_def *d = metric_by_name(m->name);
                char family[128], help[512], node[16];
                const char *unit;
                double factor;
                int dec;

                if (collect_family_name(m->name, m->unit, family, sizeof family, &factor, &unit) < 0)
                        continue;
                snprintf(help, sizeof help, "%s, since scalemond started (%s)", d ? d->description : m->name,
                         d ? d->source_name : "?");
                r = expo_family(e, family, EXPO_COUNTER, unit, help);
                if (r < 0)
                        break;
                factor *= m->scale;
                dec = decimals_of(factor);
                if (m->scope == SCOPE_SYSTEM) {
                        if (m->nvalues > 0)
                                r = put_counter(e, NULL, 0, m->values[0], factor, dec, t->started_ns);
                } else if (m->scope == SCOPE_CPU && per == COLLECT_PER_CPU) {
                        for (int c = 0; r >= 0 && c < m->nvalues && c < t->ncpus; c++) {
                                struct expo_label l[] = { { "cpu", cpu_s[c] }, { "node", cpu_node_s[c] } };
                                r = put_counter(e, l, ELEMENTSOF(l), m->values[c], factor, dec, t->started_ns);
                        }
                } else {
                        /* per node: a node metric as it is, a cpu metric summed */
                        for (int k = 0; k < t->nnodes; k++) {
                                node_sum[k] = 0;
                                if (m->scope == SCOPE_NODE) {
                                        if (t->nodes[k] >= 0 && t->nodes[k] < m->nvalues)
                                                node_sum[k] = m->values[t->nodes[k]];
                                        continue;
                                }
                                for (int c = 0; c < m->nvalues && c < t->ncpus; c++)
                                        if (t->cpu_node[c] == t->nodes[k])
                                                node_sum[k] += m->values[c];
                        }
                        for (int k = 0; r >= 0 && k < t->nnodes; k++) {
                                struct expo_label l[] = { { "node", node } };
                                snprintf(node, sizeof node, "%d", t->nodes[k]);
                                r = put_counter(e, l, 1, node_sum[k], factor, dec, t->started_ns);
                        }
                }
        }
        free(node_sum);
        free(cpu_s);
        free(cpu_node_s);
        return r;
}

static int put_health(struct expo *e, const struct proto_totals *t)
{
        int r;

        if ((r = expo_family(e, "scalemon_start_time_seconds", EXPO_GAUGE, "seconds",
                             "when scalemond started: every counter starts from 0 there")) < 0 ||
            (r = expo_sample(e, NULL, 0, (double)t->started_ns / 1e9)) < 0 ||
            (r = expo_family(e, "scalemon_interval_seconds", EXPO_GAUGE, "seconds",
                             "scalemond's sampling interval")) < 0 ||
            (r = expo_sample(e, NULL, 0, t->interval_s)) < 0 ||
            (r = expo_family(e, "scalemon_last_sample_timestamp_seconds", EXPO_GAUGE, "seconds",
                             "end of the last interval the counters include")) < 0 ||
            (r = expo_sample(e, NULL, 0, (double)t->sampled_at_ns / 1e9)) < 0 ||
            (r = expo_family(e, "scalemon_intervals", EXPO_COUNTER, NULL,
                             "intervals sampled since scalemond started")) < 0 ||
            (r = expo_sample(e, NULL, 0, (double)t->ticks)) < 0 ||
            (r = t->started_ns > 0 ? expo_created(e, NULL, 0, (double)t->started_ns / 1e9) : 0) < 0 ||
            (r = expo_family(e, "scalemon_tick_late_max_seconds", EXPO_GAUGE, "seconds",
                             "the latest a sampling tick ran after its time since scalemond started")) < 0 ||
            (r = expo_sample(e, NULL, 0, (double)t->tick_late_max_us / 1e6)) < 0 ||
            (r = expo_family(e, "scalemon_held_intervals", EXPO_GAUGE, NULL,
                             "intervals sampled and not yet written to the database")) < 0 ||
            (r = expo_sample(e, NULL, 0, (double)t->held_intervals)) < 0 ||
            (r = expo_family(e, "scalemon_metric_unavailable", EXPO_GAUGE, NULL,
                             "1 for each enabled metric scalemond cannot count, with the reason")) < 0)
                return r;
        for (size_t i = 0; i < t->nunavailable; i++) {
                struct expo_label l[] = { { "metric", t->unavailable[i].name }, { "reason", t->unavailable[i].why } };
                r = expo_sample(e, l, ELEMENTSOF(l), 1);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* A run's labels: run, status, then its tags under label names made from
 * their keys; a key that would repeat a label (run, status, or another
 * tag's after the change) is left out. */
static size_t run_labels(const struct src_run *run, struct expo_label *l, char (*names)[80], size_t max)
{
        size_t n = 0;

        l[n++] = (struct expo_label){ "run", run->name };
        l[n++] = (struct expo_label){ "status", run->status };
        for (size_t i = 0; i < run->ntags && n < max; i++) {
                bool dup = false;

                expo_label_name_from(run->tags[i].key, names[n], sizeof names[n]);
                for (size_t k = 0; k < n && !dup; k++)
                        dup = streq(l[k].name, names[n]);
                if (dup)
                        continue;
                l[n].name = names[n];
                l[n].value = run->tags[i].value;
                n++;
        }
        return n;
}

static int put_runs(struct expo *e, const struct src_run *runs, size_t nruns)
{
        struct expo_label l[80];
        char names[80][80];
        int r;

        r = expo_family(e, "scalemon_run", EXPO_INFO, NULL, "a benchmark run recorded by scalemonctl, with its tags");
        for (size_t i = 0; r >= 0 && i < nruns; i++)
                r = expo_sample(e, l, run_labels(&runs[i], l, names, ELEMENTSOF(l)), 1);
        if (r >= 0)
                r = expo_family(e, "scalemon_run_start_timestamp_seconds", EXPO_GAUGE, "seconds",
                                "when the run started");
        for (size_t i = 0; r >= 0 && i < nruns; i++) {
                struct expo_label rl[] = { { "run", runs[i].name } };
                r = expo_sample(e, rl, 1, (double)runs[i].start / 1e9);
        }
        if (r >= 0)
                r = expo_family(e, "scalemon_run_end_timestamp_seconds", EXPO_GAUGE, "seconds",
                                "when the run ended (absent while it runs)");
        for (size_t i = 0; r >= 0 && i < nruns; i++) {
                struct expo_label rl[] = { { "run", runs[i].name } };
                if (runs[i].end > 0)
                        r = expo_sample(e, rl, 1, (double)runs[i].end / 1e9);
        }
        if (r >= 0)
                r = expo_family(e, "scalemon_run_score", EXPO_GAUGE, NULL,
                                "a score the benchmark reported for the run (run stop --score)");
        for (size_t i = 0; r >= 0 && i < nruns; i++)
                for (size_t k = 0; r >= 0 && k < runs[i].nscores; k++) {
                        struct expo_label rl[] = { { "run", runs[i].name }, { "score", runs[i].scores[k].key } };
                        r = expo_sample(e, rl, 2, runs[i].scores[k].value);
                }
        return r;
}

int collect_exposition(const struct collect_input *in, enum expo_format f, char **ret, size_t *ret_len,
                       size_t *ret_samples)
{
        struct expo *e = NULL;
        int r = expo_new(f, &e);

        if (r < 0)
                return r;
        r = expo_family(e, "scalemon_up", EXPO_GAUGE, NULL, "1 if scalemond answered this scrape, else 0");
        if (r >= 0)
                r = expo_sample(e, NULL, 0, in->totals ? 1 : 0);
        if (r >= 0)
                r = expo_family(e, "scalemon_database_up", EXPO_GAUGE, NULL,
                                "1 if the exporter could read runs from the database this scrape, else 0");
        if (r >= 0)
                r = expo_sample(e, NULL, 0, in->runs_read ? 1 : 0);
        if (r >= 0 && in->totals)
                r = put_health(e, in->totals);
        if (r >= 0 && in->totals)
                r = put_counters(e, in->totals, in->per);
        if (r >= 0 && in->runs_read)
                r = put_runs(e, in->runs, in->nruns);
        if (r >= 0 && ret_samples)
                *ret_samples = expo_samples(e);
        if (r >= 0)
                r = expo_finish(e, ret, ret_len);
        expo_free(e);
        return r;
}
