/* proto-tick.c - a subscription's pushed tick line (proto-tick.h), one
 * encoder for the daemon and one decoder for the clients. */
#include "config.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "proto-tick.h"
#include "timeutil.h"

#define REAL_DIGITS 10          /* significant digits of a pushed value */

static json_t *time_json(int64_t t)
{
        char buf[40];

        time_format_rfc3339(t, buf, sizeof buf);
        return json_string(buf);
}

static json_t *number(const struct proto_tick_metric *m, size_t i)
{
        if (m->null[i])
                return json_null();
        return m->integer ? json_integer((json_int_t)m->v[i]) : json_real(m->v[i]);
}

static json_t *values_json(const struct proto_tick *t)
{
        json_t *o = json_object();

        for (size_t i = 0; o && i < t->nmetrics; i++) {
                const struct proto_tick_metric *m = &t->metrics[i];
                json_t *a = m->scalar ? (m->n > 0 ? number(m, 0) : json_null()) : json_array();

                for (size_t l = 0; !m->scalar && a && l < m->n; l++)
                        json_array_append_new(a, number(m, l));
                if (json_object_set_new(o, m->name, a) < 0) {
                        json_decref(o);
                        return NULL;
                }
        }
        return o;
}

static json_t *runs_json(const struct proto_tick *t)
{
        json_t *a = json_array();

        for (size_t i = 0; a && i < t->nruns; i++) {
                const struct proto_tick_run *u = &t->runs[i];
                json_t *r = json_pack("{s:s,s:o,s:f}", "name", u->name, "start", time_json(u->start_ns), "elapsed_s",
                                      u->elapsed_s);

                if (r && u->mark)
                        json_object_set_new(r, "mark", json_pack("{s:s,s:o}", "text", u->mark, "time",
                                                                 time_json(u->mark_ns)));
                if (json_array_append_new(a, r) < 0) {
                        json_decref(a);
                        return NULL;
                }
        }
        return a;
}

char *proto_tick_line(const struct proto_tick *t, size_t *ret_len)
{
        char a[40], b[40];
        json_t *o;
        char *line;

        time_format_rfc3339(t->start_ns, a, sizeof a);
        time_format_rfc3339(t->end_ns, b, sizeof b);
        o = json_pack("{s:{s:s,s:s,s:I,s:I,s:f},s:o,s:o}", "tick", "start", a, "end", b, "start_ns",
                      (json_int_t)t->start_ns, "end_ns", (json_int_t)t->end_ns, "interval_s",
                      (double)(t->end_ns - t->start_ns) / 1e9, "values", values_json(t), "runs", runs_json(t));
        if (!o)
                return NULL;
        line = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(REAL_DIGITS));
        json_decref(o);
        if (line)
                *ret_len = strlen(line);
        return line;
}

void proto_tick_clear(struct proto_tick *t)
{
        for (size_t i = 0; i < t->nmetrics; i++) {
                free((char *)t->metrics[i].name);
                free(t->metrics[i].v);
                free(t->metrics[i].null);
        }
        free(t->metrics);
        for (size_t i = 0; i < t->nruns; i++) {
                free((char *)t->runs[i].name);
                free((char *)t->runs[i].mark);
        }
        free(t->runs);
        memset(t, 0, sizeof *t);
}

static int decode_metric(const char *name, json_t *v, struct proto_tick_metric *m)
{
        size_t n = json_is_array(v) ? json_array_size(v) : 1;

        m->scalar = !json_is_array(v);
        m->name = strdup(name);
        m->v = calloc(n, sizeof *m->v);
        m->null = calloc(n, sizeof *m->null);
        if (!m->name || !m->v || !m->null)
                return -ENOMEM;
        m->n = n;
        for (size_t l = 0; l < n; l++) {
                json_t *x = m->scalar ? v : json_array_get(v, l);
                m->null[l] = !json_is_number(x);
                m->v[l] = m->null[l] ? 0 : json_number_value(x);
        }
        return 0;
}

/* A run whose times do not parse starts at the tick's end; a mark
 * without a time is at the run's start. */
static int decode_run(json_t *r, int64_t end_ns, struct proto_tick_run *u)
{
        json_t *mk = json_object_get(r, "mark");
        const char *start = json_string_value(json_object_get(r, "start"));
        const char *mt = json_string_value(json_object_get(mk, "time"));

        u->name = strdup(json_string_value(json_object_get(r, "name")) ?: "?");
        if (!u->name)
                return -ENOMEM;
        if (!start || when_parse(start, end_ns, &u->start_ns) < 0)
                u->start_ns = end_ns;
        u->elapsed_s = json_number_value(json_object_get(r, "elapsed_s"));
        if (json_is_string(json_object_get(mk, "text"))) {
                u->mark = strdup(json_string_value(json_object_get(mk, "text")));
                if (!u->mark)
                        return -ENOMEM;
                if (!mt || when_parse(mt, end_ns, &u->mark_ns) < 0)
                        u->mark_ns = u->start_ns;
        }
        return 0;
}

static int decode_object(json_t *o, struct proto_tick *t)
{
        json_t *tk = json_object_get(o, "tick"), *vals = json_object_get(o, "values"), *runs = json_object_get(o, "runs");
        const char *key;
        json_t *v;
        size_t i;
        int r;

        if (!json_is_object(tk) || !json_is_integer(json_object_get(tk, "start_ns")) ||
            !json_is_integer(json_object_get(tk, "end_ns")) || (vals && !json_is_object(vals)) ||
            (runs && !json_is_array(runs)))
                return -EPROTO;
        t->start_ns = json_integer_value(json_object_get(tk, "start_ns"));
        t->end_ns = json_integer_value(json_object_get(tk, "end_ns"));
        t->interval_s = json_number_value(json_object_get(tk, "interval_s"));
        t->metrics = calloc(json_object_size(vals) + 1, sizeof *t->metrics);
        t->runs = calloc(json_array_size(runs) + 1, sizeof *t->runs);
        if (!t->metrics || !t->runs)
                return -ENOMEM;
        json_object_foreach(vals, key, v) {
                r = decode_metric(key, v, &t->metrics[t->nmetrics++]);
                if (r < 0)
                        return r;
        }
        json_array_foreach(runs, i, v) {
                if (!json_is_object(v))
                        return -EPROTO;
                r = decode_run(v, t->end_ns, &t->runs[t->nruns++]);
                if (r < 0)
                        return r;
        }
        return 0;
}

int proto_tick_decode(const char *line, size_t len, struct proto_tick *ret, char **ret_err)
{
        json_t *o = json_loadb(line, len, 0, NULL);
        int r;

        memset(ret, 0, sizeof *ret);
        if (json_is_object(o) && !json_object_get(o, "tick")) {
                json_decref(o);
                return -ENOMSG;
        }
        r = json_is_object(o) ? decode_object(o, ret) : -EPROTO;
        json_decref(o);
        if (r < 0) {
                proto_tick_clear(ret);
                if (r == -EPROTO && ret_err && asprintf(ret_err, "scalemond sent something that is not a tick: %.*s",
                                             (int)MIN(len, (size_t)80), line) < 0)
                        *ret_err = NULL;
        }
        return r;
}
