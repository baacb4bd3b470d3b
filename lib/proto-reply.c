/* proto-reply.c - the control protocol's replies, encoded by the daemon
 * and decoded by the client (proto-reply.h).  The encoders keep the key
 * order the daemon has always sent: scalemonctl --format json prints
 * replies in that order.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "proto-reply.h"

/* ---- framing ---- */

json_t *proto_reply_ok(json_t *body)
{
        if (body && json_object_set_new(body, "ok", json_true()) < 0) {
                json_decref(body);
                return NULL;
        }
        return body;
}

json_t *proto_reply_error(const char *msg)
{
        return json_pack("{s:b,s:s}", "ok", 0, "error", msg);
}

int proto_reply_parse(const char *line, json_t **ret, char **ret_err)
{
        json_error_t jerr;
        json_t *o = json_loads(line, 0, &jerr);
        const char *e;

        *ret = NULL;
        *ret_err = NULL;
        if (!json_is_object(o)) {
                json_decref(o);
                *ret_err = strdup(jerr.text[0] ? jerr.text : "not an object");
                return *ret_err ? -EINVAL : -ENOMEM;
        }
        if (!json_is_true(json_object_get(o, "ok"))) {
                e = json_string_value(json_object_get(o, "error"));
                *ret_err = e ? strdup(e) : NULL;
                json_decref(o);
                return e && !*ret_err ? -ENOMEM : -EPROTO;
        }
        json_object_del(o, "ok");
        *ret = o;
        return 0;
}

/* ---- decoding helpers ---- */

/* o.key as a new string in *ret; absent: NULL, and -EINVAL if required. */
static int get_str(json_t *o, const char *key, bool required, char **ret)
{
        const char *s = json_string_value(json_object_get(o, key));

        *ret = NULL;
        if (!s)
                return required ? -EINVAL : 0;
        *ret = strdup(s);
        return *ret ? 0 : -ENOMEM;
}

static int get_time(json_t *o, const char *key, bool required, char ret[PROTO_TIME_LEN])
{
        const char *s = json_string_value(json_object_get(o, key));

        ret[0] = 0;
        if (!s)
                return required ? -EINVAL : 0;
        if (strlen(s) >= PROTO_TIME_LEN)
                return -EINVAL;         /* not a time the daemon writes */
        memcpy(ret, s, strlen(s) + 1);
        return 0;
}

static int64_t get_int(json_t *o, const char *key)
{
        return (int64_t)json_integer_value(json_object_get(o, key));
}

/* ---- run-start, run-stop ---- */

json_t *proto_run_reply_to_json(const struct proto_run_reply *r)
{
        json_t *run = json_pack("{s:s}", "name", r->name);
        bool ok = run;

        if (ok && r->status)
                ok = json_object_set_new(run, "status", json_string(r->status)) == 0;
        if (ok)
                ok = json_object_set_new(run, "start", json_string(r->start)) == 0;
        if (ok && r->end[0])
                ok = json_object_set_new(run, "end", json_string(r->end)) == 0 &&
                     json_object_set_new(run, "duration_s", json_real(r->duration_s)) == 0;
        if (ok && r->cgroup)
                ok = json_object_set_new(run, "cgroup", json_string(r->cgroup)) == 0;
        else if (ok && r->cgroup_why)
                ok = json_object_set_new(run, "cgroup_why", json_string(r->cgroup_why)) == 0;
        if (!ok) {
                json_decref(run);
                return NULL;
        }
        return json_pack("{s:o}", "run", run);
}

int proto_run_reply_from_json(json_t *o, struct proto_run_reply *ret)
{
        struct proto_run_reply r = { 0 };
        json_t *run = json_object_get(o, "run");
        int e;

        e = get_str(run, "name", true, &r.name) ?: get_str(run, "status", false, &r.status)
                ?: get_time(run, "start", true, r.start) ?: get_time(run, "end", false, r.end)
                ?: get_str(run, "cgroup", false, &r.cgroup) ?: get_str(run, "cgroup_why", false, &r.cgroup_why);
        if (e < 0) {
                proto_run_reply_clear(&r);
                return e;
        }
        r.duration_s = json_number_value(json_object_get(run, "duration_s"));
        *ret = r;
        return 0;
}

void proto_run_reply_clear(struct proto_run_reply *r)
{
        free(r->name);
        free(r->status);
        free(r->cgroup);
        free(r->cgroup_why);
        memset(r, 0, sizeof *r);
}

/* ---- run-mark ---- */

json_t *proto_mark_reply_to_json(const struct proto_mark_reply *m)
{
        return json_pack("{s:{s:s,s:s,s:s}}", "mark", "run", m->run, "time", m->time, "text", m->text);
}

int proto_mark_reply_from_json(json_t *o, struct proto_mark_reply *ret)
{
        struct proto_mark_reply m = { 0 };
        json_t *mark = json_object_get(o, "mark");
        int e = get_str(mark, "run", true, &m.run) ?: get_time(mark, "time", true, m.time)
                ?: get_str(mark, "text", true, &m.text);

        if (e < 0) {
                proto_mark_reply_clear(&m);
                return e;
        }
        *ret = m;
        return 0;
}

void proto_mark_reply_clear(struct proto_mark_reply *m)
{
        free(m->run);
        free(m->text);
        memset(m, 0, sizeof *m);
}

/* ---- run-delete, import ---- */

json_t *proto_delete_reply_to_json(const char *name)
{
        return json_pack("{s:s}", "deleted", name);
}

json_t *proto_import_reply_to_json(const struct proto_import_reply *c)
{
        return json_pack("{s:I,s:I,s:I}", "imported", (json_int_t)c->imported, "skipped", (json_int_t)c->skipped,
                         "renamed", (json_int_t)c->renamed);
}

int proto_import_reply_from_json(json_t *o, struct proto_import_reply *ret)
{
        if (!json_is_integer(json_object_get(o, "imported")))
                return -EINVAL;
        *ret = (struct proto_import_reply){ get_int(o, "imported"), get_int(o, "skipped"), get_int(o, "renamed") };
        return 0;
}

/* ---- reload ---- */

json_t *proto_reload_reply_to_json(const struct proto_reload_reply *r)
{
        json_t *na = json_array();

        for (size_t i = 0; na && i < r->nnot_applied; i++) {
                const struct proto_not_applied *p = &r->not_applied[i];
                if (json_array_append_new(na, json_pack("{s:s,s:s,s:s,s:s}", "key", p->key, "value", p->value,
                                                        "running", p->running, "why", p->why)) < 0) {
                        json_decref(na);
                        return NULL;
                }
        }
        return json_pack("{s:s,s:o}", "status", r->status, "not_applied", na);
}

int proto_reload_reply_from_json(json_t *o, struct proto_reload_reply *ret)
{
        struct proto_reload_reply r = { 0 };
        json_t *na = json_object_get(o, "not_applied"), *v;
        size_t i;
        int e = get_str(o, "status", true, &r.status);

        if (e == 0 && json_array_size(na) > 0) {
                r.not_applied = calloc(json_array_size(na), sizeof *r.not_applied);
                if (!r.not_applied)
                        e = -ENOMEM;
        }
        json_array_foreach(na, i, v) {
                struct proto_not_applied *p = &r.not_applied[r.nnot_applied];
                if (e < 0)
                        break;
                e = get_str(v, "key", true, &p->key) ?: get_str(v, "value", true, &p->value)
                        ?: get_str(v, "running", true, &p->running) ?: get_str(v, "why", true, &p->why);
                r.nnot_applied++;
        }
        if (e < 0) {
                proto_reload_reply_clear(&r);
                return e;
        }
        *ret = r;
        return 0;
}

void proto_reload_reply_clear(struct proto_reload_reply *r)
{
        for (size_t i = 0; i < r->nnot_applied; i++) {
                free(r->not_applied[i].key);
                free(r->not_applied[i].value);
                free(r->not_applied[i].running);
                free(r->not_applied[i].why);
        }
        free(r->not_applied);
        free(r->status);
        memset(r, 0, sizeof *r);
}

/* ---- status ---- */

json_t *proto_status_memory_to_json(const struct proto_status_reply *s)
{
        return json_pack("{s:I,s:I,s:I}", "sqlite_bytes", (json_int_t)s->memory.sqlite_bytes, "held_intervals",
                         (json_int_t)s->memory.held_intervals, "held_bytes", (json_int_t)s->memory.held_bytes);
}

json_t *proto_status_retention_to_json(const struct proto_status_reply *s)
{
        return json_pack("{s:I,s:I,s:I,s:I,s:I}", "merged_intervals", (json_int_t)s->retention.merged_intervals,
                         "deleted_intervals", (json_int_t)s->retention.deleted_intervals, "step_max_us",
                         (json_int_t)s->retention.step_max_us, "tick_late_max_us",
                         (json_int_t)s->retention.tick_late_max_us, "db_bytes", (json_int_t)s->retention.db_bytes);
}

json_t *proto_status_reply_to_json(const struct proto_status_reply *s)
{
        json_t *runs = json_array(), *totals = json_object(), *o;

        for (size_t i = 0; runs && i < s->nopen_runs; i++)
                if (json_array_append_new(runs, json_pack("{s:s,s:s}", "name", s->open_runs[i].name, "start",
                                                          s->open_runs[i].start)) < 0)
                        goto oom;
        for (size_t i = 0; totals && i < s->ntotals; i++)
                if (json_object_set_new(totals, s->totals[i].name, json_real(s->totals[i].value)) < 0)
                        goto oom;
        if (!runs || !totals)
                goto oom;
        o = json_pack("{s:i,s:s,s:s,s:f,s:i,s:i,s:s,s:o,s:s,s:I,s:o}", "pid", s->pid, "version", s->version,
                      "status", s->status, "interval_s", s->interval_s, "cpus_online", s->cpus_online, "cpus",
                      s->cpus, "database", s->database, "open_runs", runs, "sampled_at", s->sampled_at,
                      "sampled_at_ns", (json_int_t)s->sampled_at_ns, "totals", totals);
        if (o && s->has_memory && json_object_set_new(o, "memory", proto_status_memory_to_json(s)) < 0)
                goto oom_o;
        if (o && s->has_retention && json_object_set_new(o, "retention", proto_status_retention_to_json(s)) < 0)
                goto oom_o;
        if (o && s->access && json_object_set_new(o, "access", json_string(s->access)) < 0)
                goto oom_o;
        return o;
oom_o:
        json_decref(o);
        return NULL;
oom:
        json_decref(runs);
        json_decref(totals);
        return NULL;
}

static int status_lists_from_json(json_t *o, struct proto_status_reply *s)
{
        json_t *runs = json_object_get(o, "open_runs"), *totals = json_object_get(o, "totals"), *v;
        const char *key;
        size_t i;
        int e = 0;

        s->open_runs = calloc(json_array_size(runs) + 1, sizeof *s->open_runs);
        s->totals = calloc(json_object_size(totals) + 1, sizeof *s->totals);
        if (!s->open_runs || !s->totals)
                return -ENOMEM;
        json_array_foreach(runs, i, v) {
                struct proto_open_run *r = &s->open_runs[s->nopen_runs];
                e = get_str(v, "name", true, &r->name) ?: get_time(v, "start", true, r->start);
                if (r->name)
                        s->nopen_runs++;
                if (e < 0)
                        return e;
        }
        json_object_foreach(totals, key, v) {
                struct proto_total *t = &s->totals[s->ntotals];
                if (!json_is_number(v))
                        continue;
                t->name = strdup(key);
                if (!t->name)
                        return -ENOMEM;
                t->value = json_number_value(v);
                s->ntotals++;
        }
        return 0;
}

int proto_status_reply_from_json(json_t *o, struct proto_status_reply *ret)
{
        struct proto_status_reply s = { 0 };
        json_t *mem = json_object_get(o, "memory"), *ret_o = json_object_get(o, "retention");
        int e;

        e = get_str(o, "version", false, &s.version) ?: get_str(o, "status", false, &s.status)
                ?: get_str(o, "database", false, &s.database) ?: get_time(o, "sampled_at", false, s.sampled_at)
                ?: get_str(o, "access", false, &s.access) ?: status_lists_from_json(o, &s);
        if (e == 0 && !json_is_integer(json_object_get(o, "pid")))
                e = -EINVAL;
        if (e < 0) {
                proto_status_reply_clear(&s);
                return e;
        }
        s.pid = (int)get_int(o, "pid");
        s.interval_s = json_number_value(json_object_get(o, "interval_s"));
        s.cpus_online = (int)get_int(o, "cpus_online");
        s.cpus = (int)get_int(o, "cpus");
        s.sampled_at_ns = get_int(o, "sampled_at_ns");
        s.has_memory = json_is_object(mem);
        s.memory.sqlite_bytes = get_int(mem, "sqlite_bytes");
        s.memory.held_intervals = get_int(mem, "held_intervals");
        s.memory.held_bytes = get_int(mem, "held_bytes");
        s.has_retention = json_is_object(ret_o);
        s.retention.merged_intervals = get_int(ret_o, "merged_intervals");
        s.retention.deleted_intervals = get_int(ret_o, "deleted_intervals");
        s.retention.step_max_us = get_int(ret_o, "step_max_us");
        s.retention.tick_late_max_us = get_int(ret_o, "tick_late_max_us");
        s.retention.db_bytes = get_int(ret_o, "db_bytes");
        *ret = s;
        return 0;
}

void proto_status_reply_clear(struct proto_status_reply *s)
{
        for (size_t i = 0; i < s->nopen_runs; i++)
                free(s->open_runs[i].name);
        for (size_t i = 0; i < s->ntotals; i++)
                free(s->totals[i].name);
        free(s->open_runs);
        free(s->totals);
        free(s->version);
        free(s->status);
        free(s->database);
        free(s->access);
        memset(s, 0, sizeof *s);
}

const struct proto_total *proto_status_total(const struct proto_status_reply *s, const char *name)
{
        for (size_t i = 0; i < s->ntotals; i++)
                if (streq(s->totals[i].name, name))
                        return &s->totals[i];
        return NULL;
}
