/* proto-totals.c - the totals reply (proto-reply.h): the daemon's running
 * totals since it started and its health, encoded by daemon/totals.c and
 * decoded by scalemon-exporter.  At 256 CPUs it is some 9,000 integers
 * (bench/bench-exporter.sh measures it).
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "proto-reply.h"

void proto_totals_clear(struct proto_totals *t)
{
        for (size_t i = 0; i < t->nmetrics; i++)
                free(t->metrics[i].values);
        free(t->metrics);
        for (size_t i = 0; i < t->nunavailable; i++)
                free(t->unavailable[i].why);
        free(t->unavailable);
        free(t->cpu_node);
        free(t->nodes);
        memset(t, 0, sizeof *t);
}

static int int_array(json_t *a, int **ret, int *ret_n)
{
        size_t i;
        json_t *v;
        int *out;

        if (!json_is_array(a))
                return -EINVAL;
        out = calloc(json_array_size(a) + 1, sizeof *out);
        if (!out)
                return -ENOMEM;
        json_array_foreach(a, i, v) {
                if (!json_is_integer(v)) {
                        free(out);
                        return -EINVAL;
                }
                out[i] = (int)json_integer_value(v);
        }
        *ret = out;
        *ret_n = (int)json_array_size(a);
        return 0;
}

/* The reply line's object, or why not in words for the exporter's log. */
static int parse_line(const char *text, json_t **ret, char **ret_err)
{
        _cleanup_free_ char *why = NULL;
        int r = proto_reply_parse(text, ret, &why);

        *ret_err = NULL;
        if (r == -EINVAL)
                return ret_errf(ret_err, -EINVAL, "scalemond's reply is not JSON: %s", why ? why : "");
        if (r == -EPROTO)
                return ret_errf(ret_err, -EPROTO, "scalemond refused the totals request: %s",
                            why ? why : "no reason given (is it older than this exporter?)");
        return r;
}

int proto_totals_decode(const char *text, struct proto_totals *ret, char **ret_err)
{
        struct proto_totals t = { 0 };
        json_error_t jerr;
        json_t *o = NULL, *ms, *us, *m, *v;
        json_int_t started = 0, sampled = 0, ticks = 0, late = 0, held = 0;
        double interval = 0;
        size_t i, k;
        int r = -EINVAL, ncpus = 0, nmap = 0;

        r = parse_line(text, &o, ret_err);
        if (r < 0)
                goto out;
        r = -EINVAL;
        if (json_unpack_ex(o, &jerr, 0, "{s:I,s:I,s:F,s:I,s:I,s:I,s:i,s:o,s:o}", "started_ns", &started,
                           "sampled_at_ns", &sampled, "interval_s", &interval, "ticks", &ticks, "tick_late_max_us",
                           &late, "held_intervals", &held, "cpus", &ncpus, "metrics", &ms, "unavailable", &us) < 0 ||
            !json_is_array(ms) || !json_is_array(us)) {
                r = ret_errf(ret_err, -EINVAL, "scalemond's totals reply lacks a field: %s", jerr.text);
                goto out;
        }
        t.started_ns = started;
        t.sampled_at_ns = sampled;
        t.interval_s = interval;
        t.ticks = ticks;
        t.tick_late_max_us = late;
        t.held_intervals = held;
        t.ncpus = ncpus;
        if ((r = int_array(json_object_get(o, "cpu_node"), &t.cpu_node, &nmap)) < 0 || nmap != ncpus ||
            (r = int_array(json_object_get(o, "nodes"), &t.nodes, &t.nnodes)) < 0) {
                r = ret_errf(ret_err, r == -ENOMEM ? r : -EINVAL, "scalemond's totals reply has a bad CPU map");
                goto out;
        }
        t.metrics = calloc(json_array_size(ms) + 1, sizeof *t.metrics);
        t.unavailable = calloc(json_array_size(us) + 1, sizeof *t.unavailable);
        if (!t.metrics || !t.unavailable) {
                r = -ENOMEM;
                goto out;
        }
        json_array_foreach(ms, i, m) {
                struct proto_totals_metric *sm = &t.metrics[t.nmetrics];
                const char *name, *scope, *unit;
                json_t *vals;
                int id;

                if (json_unpack(m, "{s:s,s:s,s:s,s:F,s:o}", "name", &name, "scope", &scope, "unit", &unit, "scale",
                                &sm->scale, "values", &vals) < 0 || !json_is_array(vals)) {
                        r = ret_errf(ret_err, -EINVAL, "scalemond's totals reply has a bad metric");
                        goto out;
                }
                /* names and scopes are the catalogue's, known to both sides */
                id = metric_id_by_name(name);
                if (id < 0)
                        continue;       /* a newer daemon's metric: left out, not guessed at */
                snprintf(sm->name, sizeof sm->name, "%s", name);
                snprintf(sm->unit, sizeof sm->unit, "%s", unit);
                sm->scope = metric_table[id].scope;
                sm->values = calloc(json_array_size(vals) + 1, sizeof *sm->values);
                if (!sm->values) {
                        r = -ENOMEM;
                        goto out;
                }
                json_array_foreach(vals, k, v)
                        sm->values[k] = json_integer_value(v);
                sm->nvalues = (int)json_array_size(vals);
                t.nmetrics++;
        }
        json_array_foreach(us, i, m) {
                struct proto_totals_unavailable *u = &t.unavailable[t.nunavailable];
                const char *name, *why;

                if (json_unpack(m, "{s:s,s:s}", "name", &name, "why", &why) < 0)
                        continue;
                snprintf(u->name, sizeof u->name, "%s", name);
                u->why = strdup(why);
                if (!u->why) {
                        r = -ENOMEM;
                        goto out;
                }
                t.nunavailable++;
        }
        *ret = t;
        memset(&t, 0, sizeof t);
        r = 0;
out:
        proto_totals_clear(&t);
        json_decref(o);
        if (r == -ENOMEM && !*ret_err)
                *ret_err = strdup("out of memory");
        return r;
}


static json_t *int_array_json(const int64_t *v, int n)
{
        json_t *a = json_array();

        for (int i = 0; a && i < n; i++)
                if (json_array_append_new(a, json_integer((json_int_t)v[i])) < 0) {
                        json_decref(a);
                        return NULL;
                }
        return a;
}

static json_t *int_list_json(const int *v, int n)
{
        json_t *a = json_array();

        for (int i = 0; a && i < n; i++)
                if (json_array_append_new(a, json_integer(v[i])) < 0) {
                        json_decref(a);
                        return NULL;
                }
        return a;
}

static json_t *metrics_json(const struct proto_totals *t)
{
        json_t *a = json_array();

        for (size_t i = 0; a && i < t->nmetrics; i++) {
                const struct proto_totals_metric *m = &t->metrics[i];
                json_t *e = json_pack("{s:s,s:s,s:s,s:f,s:o}", "name", m->name, "scope", metric_scope_name(m->scope),
                                      "unit", m->unit, "scale", m->scale, "values",
                                      int_array_json(m->values, m->nvalues));
                if (!e || json_array_append_new(a, e) < 0) {
                        json_decref(a);
                        return NULL;
                }
        }
        return a;
}

json_t *proto_totals_to_json(const struct proto_totals *t)
{
        json_t *unavail = json_array();

        for (size_t i = 0; unavail && i < t->nunavailable; i++) {
                const struct proto_totals_unavailable *u = &t->unavailable[i];
                if (json_array_append_new(unavail, json_pack("{s:s,s:s}", "name", u->name, "why", u->why)) < 0) {
                        json_decref(unavail);
                        return NULL;
                }
        }
        if (!unavail)
                return NULL;
        return json_pack("{s:I,s:I,s:f,s:I,s:I,s:I,s:i,s:o,s:o,s:o,s:o}", "started_ns", (json_int_t)t->started_ns,
                         "sampled_at_ns", (json_int_t)t->sampled_at_ns, "interval_s", t->interval_s, "ticks",
                         (json_int_t)t->ticks, "tick_late_max_us", (json_int_t)t->tick_late_max_us, "held_intervals",
                         (json_int_t)t->held_intervals, "cpus", t->ncpus, "cpu_node",
                         int_list_json(t->cpu_node, t->ncpus), "nodes", int_list_json(t->nodes, t->nnodes), "metrics",
                         metrics_json(t), "unavailable", unavail);
}
