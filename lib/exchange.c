/* exchange.c - export runs as one JSON document, and import them.
 *
 * The document (version 1):
 *
 *   {"format": "scalemon-runs", "version": 1, "exported_at": TIME,
 *    "hosts": [{"machine_id", "hostname", "kernel", "cpus", "nodes", "cpu_model"}],
 *    "metrics": [{"name", "scope", "unit"}],
 *    "runs": [{"name", "host": MACHINE_ID, "status", "start", "end",
 *              "start_ns", "end_ns", "length_ns", "exit_status", "wall_s", "user_s", "sys_s",
 *              "command", "tags": {K: V}, "scores": {K: N}, "context": {K: V},
 *              "marks": [{"time", "time_ns", "text"}],
 *              "locks": [{"caller", "type", "contended", "total_wait_ns", "max_wait_ns",
 *                         "min_wait_ns", "locks"?, "own_contended"?, "own_total_wait_ns"?}],
 *              "locks_lost": {"untimed", "unattributed", "unattributed_ns", "nested"?},
 *              "lock_objects": [{"lock", "name", "type", "contended", "total_wait_ns",
 *                                "max_wait_ns", "callers", "own_contended"?, "own_total_wait_ns"?}],
 *              "totals": {"system": {METRIC: N}, "node": {"0": {METRIC: N}},
 *                         "cpu": {"0": {METRIC: N}}}}]}
 *
 * length_ns (the run's length on CLOCK_MONOTONIC, or null) is optional, and
 * so are voluntary_switches and involuntary_switches (the command's own,
 * from run exec; both or neither).
 * Import (exchange-import.c) checks the whole document here before it
 * writes anything, then adds every run in one transaction, so a bad file
 * changes nothing.  These own the format; the rows are read and written
 * through the store's API (store-exchange.c).
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exchange.h"
#include "exchange-internal.h"
#include "macro.h"
#include "proto.h"
#include "store.h"
#include "store-locks.h"
#include "timeutil.h"

/* ---- export ---- */

static json_t *kv_object(const struct store_kv *kv, size_t n)
{
        json_t *o = json_object();
        for (size_t i = 0; o && i < n; i++)
                json_object_set_new(o, kv[i].key, json_string(kv[i].value));
        return o;
}

/* A run's contended locks (lock wait by BPF): "locks" and "locks_lost",
 * set on jr only where the run has them. */
static void own_to_json(json_t *o, bool has_own, int64_t contended, int64_t total_wait_ns)
{
        if (!has_own)
                return;
        json_object_set_new(o, "own_contended", json_integer(contended));
        json_object_set_new(o, "own_total_wait_ns", json_integer(total_wait_ns));
}

/* "lock_objects": the run's locks by lock object (schema 0008 on). */
static int lock_objects_to_json(struct store *s, int64_t run, json_t *jr)
{
        _cleanup_free_ struct store_lock_obj *o = NULL;
        size_t n = 0;
        json_t *a;
        int r = store_run_lock_objects_get(s, run, &o, &n);

        if (r < 0 || n == 0)
                return r < 0 ? r : 0;
        a = json_array();
        for (size_t i = 0; a && i < n; i++) {
                json_t *e = json_pack("{s:s,s:s,s:s,s:I,s:I,s:I,s:I}", "lock", o[i].lock, "name", o[i].name, "type",
                                      o[i].type, "contended", (json_int_t)o[i].contended, "total_wait_ns",
                                      (json_int_t)o[i].total_wait_ns, "max_wait_ns", (json_int_t)o[i].max_wait_ns,
                                      "callers", (json_int_t)o[i].callers);
                own_to_json(e, o[i].has_own, o[i].own_contended, o[i].own_total_wait_ns);
                json_array_append_new(a, e);
        }
        if (!a)
                return -ENOMEM;
        json_object_set_new(jr, "lock_objects", a);
        return 0;
}

static int locks_to_json(struct store *s, int64_t run, json_t *jr)
{
        _cleanup_free_ struct store_lock *v = NULL;
        struct store_lock_lost lost = { 0 };
        json_t *a, *jl;
        size_t n = 0;
        int r = store_run_locks_get(s, run, &v, &n, &lost);

        if (r < 0)
                return r;
        if (!lost.known && n == 0)
                return 0;
        a = json_array();
        for (size_t i = 0; a && i < n; i++) {
                json_t *e = json_pack("{s:s,s:s,s:I,s:I,s:I,s:I}", "caller", v[i].caller, "type", v[i].type,
                                      "contended", (json_int_t)v[i].contended, "total_wait_ns",
                                      (json_int_t)v[i].total_wait_ns, "max_wait_ns", (json_int_t)v[i].max_wait_ns,
                                      "min_wait_ns", (json_int_t)v[i].min_wait_ns);
                if (v[i].locks > 0)
                        json_object_set_new(e, "locks", json_integer(v[i].locks));
                own_to_json(e, v[i].has_own, v[i].own_contended, v[i].own_total_wait_ns);
                json_array_append_new(a, e);
        }
        if (!a)
                return -ENOMEM;
        json_object_set_new(jr, "locks", a);
        if (lost.known) {
                jl = json_pack("{s:I,s:I,s:I}", "untimed", (json_int_t)lost.untimed, "unattributed",
                               (json_int_t)lost.unattributed, "unattributed_ns", (json_int_t)lost.unattributed_ns);
                if (lost.nested >= 0)
                        json_object_set_new(jl, "nested", json_integer(lost.nested));
                json_object_set_new(jr, "locks_lost", jl);
        }
        return lock_objects_to_json(s, run, jr);
}

static json_t *run_to_json(const struct run_info *ri, const struct run_detail *d, const char *machine_id)
{
        json_t *o, *scores = json_object(), *marks = json_array(), *totals = json_object();
        char t[40];

        o = json_pack("{s:s,s:s,s:s}", "name", ri->name, "host", machine_id, "status", ri->status);
        if (!o || !scores || !marks || !totals) {
                json_decref(o);
                json_decref(scores);
                json_decref(marks);
                json_decref(totals);
                return NULL;
        }
        time_format_rfc3339(ri->start, t, sizeof t);
        json_object_set_new(o, "start", json_string(t));
        time_format_rfc3339(ri->end, t, sizeof t);
        json_object_set_new(o, "end", json_string(t));
        json_object_set_new(o, "start_ns", json_integer(ri->start));
        json_object_set_new(o, "end_ns", json_integer(ri->end));
        json_object_set_new(o, "length_ns", ri->dur_ns >= 0 ? json_integer(ri->dur_ns) : json_null());
        json_object_set_new(o, "exit_status", ri->has_exit_status ? json_integer(ri->exit_status) : json_null());
        json_object_set_new(o, "wall_s", ri->has_times ? json_real(ri->wall_s) : json_null());
        json_object_set_new(o, "user_s", ri->has_times ? json_real(ri->user_s) : json_null());
        json_object_set_new(o, "sys_s", ri->has_times ? json_real(ri->sys_s) : json_null());
        json_object_set_new(o, "command", ri->command ? json_string(ri->command) : json_null());
        if (ri->has_switches) {
                json_object_set_new(o, "voluntary_switches", json_integer(ri->voluntary_switches));
                json_object_set_new(o, "involuntary_switches", json_integer(ri->involuntary_switches));
        }
        json_object_set_new(o, "tags", kv_object(d->tags, d->ntags));
        for (size_t i = 0; i < d->nscores; i++)
                json_object_set_new(scores, d->scores[i].key, json_real(d->scores[i].value));
        json_object_set_new(o, "scores", scores);
        json_object_set_new(o, "context", kv_object(d->context, d->ncontext));
        for (size_t i = 0; i < d->nmarks; i++) {
                time_format_rfc3339(d->marks[i].t, t, sizeof t);
                json_array_append_new(marks, json_pack("{s:s,s:I,s:s}", "time", t, "time_ns",
                                                       (json_int_t)d->marks[i].t, "text", d->marks[i].text));
        }
        json_object_set_new(o, "marks", marks);
        for (size_t i = 0; i < d->ntotals; i++) {
                const struct store_total *tt = &d->totals[i];
                const char *level = total_level_name(tt->level);
                json_t *lv = json_object_get(totals, level), *at;
                char loc[16];

                if (!lv) {
                        lv = json_object();
                        json_object_set_new(totals, level, lv);
                }
                if (tt->level == LEVEL_SYSTEM)
                        at = lv;
                else {
                        snprintf(loc, sizeof loc, "%d", tt->loc);
                        at = json_object_get(lv, loc);
                        if (!at) {
                                at = json_object();
                                json_object_set_new(lv, loc, at);
                        }
                }
                json_object_set_new(at, tt->metric, json_real(tt->value));
        }
        json_object_set_new(o, "totals", totals);
        return o;
}

/* The hosts of the exported runs, each once. */
static json_t *host_json(const struct host_info *h)
{
        return json_pack("{s:s,s:s,s:s,s:i,s:i,s:s}", "machine_id", h->machine_id, "hostname", h->hostname, "kernel",
                         h->kernel, "cpus", h->ncpus, "nodes", h->nnodes, "cpu_model", h->cpu_model ? h->cpu_model : "");
}

int exchange_export(struct store *s, const struct run_filter *f, json_t **ret, size_t *ret_skipped)
{
        struct run_info *runs = NULL;
        struct store_metric_row *mrows = NULL;
        size_t n = 0, skipped = 0, nmrows = 0;
        json_t *doc, *hosts, *jruns, *metrics;
        char t[40];
        int r;

        r = store_runs_list(s, f, &runs, &n);
        if (r < 0)
                return r;
        hosts = json_array();
        jruns = json_array();
        metrics = json_array();
        time_format_rfc3339(now_realtime_ns(), t, sizeof t);
        doc = json_pack("{s:s,s:i,s:s,s:o,s:o,s:o}", "format", EXCHANGE_FORMAT, "version", EXCHANGE_VERSION,
                        "exported_at", t, "hosts", hosts, "metrics", metrics, "runs", jruns);
        if (!doc) {
                r = -ENOMEM;
                goto out;
        }

        for (size_t i = 0; i < n; i++) {
                struct host_info h;
                struct run_detail d;
                json_t *jr;
                bool seen = false;
                size_t k;

                if (streq(runs[i].status, "running")) {
                        skipped++;
                        continue;
                }
                r = store_host_by_id(s, runs[i].host, &h);
                if (r < 0)
                        goto out;
                json_array_foreach(hosts, k, jr)
                        seen |= streq(json_string_value(json_object_get(jr, "machine_id")), h.machine_id);
                if (!seen)
                        json_array_append_new(hosts, host_json(&h));
                r = store_run_detail(s, runs[i].id, &d);
                if (r < 0) {
                        host_info_clear(&h);
                        goto out;
                }
                jr = run_to_json(&runs[i], &d, h.machine_id);
                host_info_clear(&h);
                run_detail_free(&d);
                if (!jr) {
                        r = -ENOMEM;
                        goto out;
                }
                r = locks_to_json(s, runs[i].id, jr);
                if (r < 0) {
                        json_decref(jr);
                        goto out;
                }
                json_array_append_new(jruns, jr);
        }

        r = store_metrics_list(s, &mrows, &nmrows);
        if (r < 0)
                goto out;
        for (size_t i = 0; i < nmrows; i++)
                json_array_append_new(metrics, json_pack("{s:s,s:s,s:s}", "name", mrows[i].name, "scope",
                                                         mrows[i].scope, "unit", mrows[i].unit));
        *ret = doc;
        doc = NULL;
        *ret_skipped = skipped;
        r = 0;
out:
        free(mrows);
        json_decref(doc);
        run_infos_free(runs, n);
        return r;
}

/* ---- validation ---- */

static int bad(char **ret_err, const char *fmt, ...) _printf_(2, 3);
static int bad(char **ret_err, const char *fmt, ...)
{
        va_list ap;
        char msg[512];

        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        if (asprintf(ret_err, "not a valid scalemon export: %s", msg) < 0)
                *ret_err = NULL;
        return -EINVAL;
}

static bool valid_metric_name(const char *s)
{
        size_t n = strlen(s);
        if (n == 0 || n > 63)
                return false;
        for (; *s; s++)
                if (!islower((unsigned char)*s) && !isdigit((unsigned char)*s) && *s != '_')
                        return false;
        return true;
}

static bool valid_loc(const char *s)
{
        size_t n = strlen(s);
        if (n == 0 || n > 5)
                return false;
        for (const char *p = s; *p; p++)
                if (!isdigit((unsigned char)*p))
                        return false;
        return atoi(s) <= 65535 && (n == 1 || s[0] != '0');
}

static bool is_count(json_t *v)
{
        return json_is_integer(v) && json_integer_value(v) >= 0;
}

static bool opt_count(json_t *v)
{
        return !v || is_count(v);
}

static bool is_opt_number(json_t *v)
{
        return !v || json_is_null(v) || (json_is_number(v) && isfinite(json_number_value(v)) && json_number_value(v) >= 0);
}

/* A time: RFC 3339 string "field", or integer "field_ns" (preferred). */
int exchange_get_time(json_t *o, const char *field, int64_t *ret)
{
        char ns_key[32];
        json_t *v;

        snprintf(ns_key, sizeof ns_key, "%s_ns", field);
        v = json_object_get(o, ns_key);
        if (json_is_integer(v)) {
                *ret = json_integer_value(v);
                return *ret >= 0 ? 0 : -EINVAL;
        }
        v = json_object_get(o, field);
        if (!json_is_string(v) || !json_string_value(v)[0] || !isdigit((unsigned char)json_string_value(v)[0]))
                return -EINVAL;
        return when_parse(json_string_value(v), 0, ret);
}

static int validate_totals(json_t *totals, const char *run, char **ret_err)
{
        const char *level, *loc, *metric;
        json_t *lv, *at, *v;

        if (!json_is_object(totals))
                return bad(ret_err, "run '%s': 'totals' must be an object", run);
        json_object_foreach(totals, level, lv) {
                bool sys = streq(level, "system");
                if (!sys && !streq(level, "node") && !streq(level, "cpu") && !streq(level, "cgroup"))
                        return bad(ret_err, "run '%s': totals level '%s' is not system, node, cpu or cgroup", run,
                                   level);
                if (!json_is_object(lv))
                        return bad(ret_err, "run '%s': totals.%s must be an object", run, level);
                if (sys) {
                        json_object_foreach(lv, metric, v)
                                if (!valid_metric_name(metric) || !json_is_number(v) || !isfinite(json_number_value(v)))
                                        return bad(ret_err, "run '%s': totals.system.%s must be a metric name and a number",
                                                   run, metric);
                        continue;
                }
                json_object_foreach(lv, loc, at) {
                        if (!valid_loc(loc) || !json_is_object(at))
                                return bad(ret_err, "run '%s': totals.%s.%s: expected a %s number and an object", run,
                                           level, loc, level);
                        json_object_foreach(at, metric, v)
                                if (!valid_metric_name(metric) || !json_is_number(v) || !isfinite(json_number_value(v)))
                                        return bad(ret_err, "run '%s': totals.%s.%s.%s must be a metric name and a number",
                                                   run, level, loc, metric);
                }
        }
        return 0;
}

/* A run's tags, locks, scores, context and marks. */
static int validate_run_parts(json_t *r, const char *name, char **ret_err)
{
        const char *why, *key;
        json_t *v, *h;
        size_t i;

        v = json_object_get(r, "tags");
        if (v && !json_is_object(v))
                return bad(ret_err, "run '%s': tags must be an object", name);
        json_object_foreach(v, key, h)
                if (!proto_valid_key(key, &why) || !json_is_string(h) || !proto_valid_value(json_string_value(h), &why))
                        return bad(ret_err, "run '%s': tag '%.64s': %s", name, key, json_is_string(h) ? why : "not a string");
        v = json_object_get(r, "locks");
        if (v && !json_is_array(v))
                return bad(ret_err, "run '%s': locks must be an array", name);
        json_array_foreach(v, i, h) {
                const char *c = json_string_value(json_object_get(h, "caller")),
                           *t = json_string_value(json_object_get(h, "type"));
                if (!json_is_object(h) || !c || !t || strlen(c) >= sizeof ((struct store_lock *)0)->caller ||
                    strlen(t) >= sizeof ((struct store_lock *)0)->type || !proto_valid_value(c, &why) ||
                    !proto_valid_value(t, &why) || !is_count(json_object_get(h, "contended")) ||
                    !is_count(json_object_get(h, "total_wait_ns")) || !is_count(json_object_get(h, "max_wait_ns")) ||
                    !is_count(json_object_get(h, "min_wait_ns")))
                        return bad(ret_err, "run '%s': lock %zu: needs caller and type (short strings) and contended, "
                                   "total_wait_ns, max_wait_ns, min_wait_ns (whole numbers >= 0)", name, i);
                if (!opt_count(json_object_get(h, "locks")) || !opt_count(json_object_get(h, "own_contended")) ||
                    !opt_count(json_object_get(h, "own_total_wait_ns")))
                        return bad(ret_err, "run '%s': lock %zu: locks, own_contended and own_total_wait_ns are "
                                   "whole numbers >= 0 where given", name, i);
        }
        v = json_object_get(r, "lock_objects");
        if (v && !json_is_array(v))
                return bad(ret_err, "run '%s': lock_objects must be an array", name);
        json_array_foreach(v, i, h) {
                const char *l = json_string_value(json_object_get(h, "lock")),
                           *nm = json_string_value(json_object_get(h, "name")),
                           *t = json_string_value(json_object_get(h, "type"));
                if (!json_is_object(h) || !l || !nm || !t || strlen(l) >= sizeof ((struct store_lock_obj *)0)->lock ||
                    strlen(nm) >= sizeof ((struct store_lock_obj *)0)->name ||
                    strlen(t) >= sizeof ((struct store_lock_obj *)0)->type || !proto_valid_value(l, &why) ||
                    (nm[0] && !proto_valid_value(nm, &why)) || !proto_valid_value(t, &why) ||
                    !is_count(json_object_get(h, "contended")) || !is_count(json_object_get(h, "total_wait_ns")) ||
                    !is_count(json_object_get(h, "max_wait_ns")) || !is_count(json_object_get(h, "callers")) ||
                    !opt_count(json_object_get(h, "own_contended")) ||
                    !opt_count(json_object_get(h, "own_total_wait_ns")))
                        return bad(ret_err, "run '%s': lock_objects[%zu]: needs lock, name and type (short strings) and "
                                   "contended, total_wait_ns, max_wait_ns, callers (whole numbers >= 0)", name, i);
        }
        v = json_object_get(r, "locks_lost");
        if (v && (!json_is_object(v) || !is_count(json_object_get(v, "untimed")) ||
                  !is_count(json_object_get(v, "unattributed")) || !is_count(json_object_get(v, "unattributed_ns")) ||
                  !opt_count(json_object_get(v, "nested"))))
                return bad(ret_err, "run '%s': locks_lost needs untimed, unattributed and unattributed_ns "
                           "(whole numbers >= 0)", name);
        v = json_object_get(r, "scores");
        if (v && !json_is_object(v))
                return bad(ret_err, "run '%s': scores must be an object", name);
        json_object_foreach(v, key, h)
                if (!proto_valid_key(key, &why) || !json_is_number(h) || !isfinite(json_number_value(h)))
                        return bad(ret_err, "run '%s': score '%.64s' must be a key and a finite number", name, key);
        v = json_object_get(r, "context");
        if (v && !json_is_object(v))
                return bad(ret_err, "run '%s': context must be an object", name);
        json_object_foreach(v, key, h)
                if (!key[0] || strlen(key) > 128 || !json_is_string(h) || strlen(json_string_value(h)) > 4096)
                        return bad(ret_err, "run '%s': context '%.64s' must be a string of at most 4096 bytes", name, key);
        v = json_object_get(r, "marks");
        if (v && !json_is_array(v))
                return bad(ret_err, "run '%s': marks must be an array", name);
        json_array_foreach(v, i, h) {
                int64_t t;
                json_t *text = json_object_get(h, "text");
                if (!json_is_object(h) || exchange_get_time(h, "time", &t) < 0 || !json_is_string(text) ||
                    !proto_valid_text(json_string_value(text), PROTO_MAX_TEXT, &why))
                        return bad(ret_err, "run '%s': marks[%zu] needs a time and a text", name, i);
        }
        return 0;
}

static int validate_run(json_t *r, size_t idx, json_t *hosts, char **ret_err)
{
        static const char *const statuses[] = { "done", "failed", "interrupted" };
        const char *name, *why;
        json_t *v, *h;
        int64_t start, end;
        bool host_ok = false, status_ok = false;
        size_t i;
        int e;

        if (!json_is_object(r))
                return bad(ret_err, "runs[%zu] must be an object", idx);
        v = json_object_get(r, "name");
        if (!json_is_string(v))
                return bad(ret_err, "runs[%zu] has no name", idx);
        name = json_string_value(v);
        if (!proto_valid_name(name, &why))
                return bad(ret_err, "runs[%zu] name '%.64s': %s", idx, name, why);
        v = json_object_get(r, "host");
        json_array_foreach(hosts, i, h)
                host_ok |= json_is_string(v) && streq(json_string_value(json_object_get(h, "machine_id")),
                                                      json_string_value(v));
        if (!host_ok)
                return bad(ret_err, "run '%s': 'host' does not name one of the hosts", name);
        v = json_object_get(r, "status");
        for (i = 0; i < ELEMENTSOF(statuses); i++)
                status_ok |= json_is_string(v) && streq(json_string_value(v), statuses[i]);
        if (!status_ok)
                return bad(ret_err, "run '%s': status must be done, failed or interrupted", name);
        if (exchange_get_time(r, "start", &start) < 0 || exchange_get_time(r, "end", &end) < 0)
                return bad(ret_err, "run '%s': start and end must be RFC 3339 times (or start_ns/end_ns)", name);
        if (end < start)
                return bad(ret_err, "run '%s': ends before it starts", name);
        v = json_object_get(r, "length_ns");
        if (v && !json_is_null(v) && (!json_is_integer(v) || json_integer_value(v) < 0))
                return bad(ret_err, "run '%s': length_ns must be a number of nanoseconds or null", name);
        {
                json_t *vs = json_object_get(r, "voluntary_switches"), *is = json_object_get(r, "involuntary_switches");
                if (!!vs != !!is || (vs && (!json_is_integer(vs) || !json_is_integer(is) || json_integer_value(vs) < 0 ||
                                            json_integer_value(is) < 0)))
                        return bad(ret_err, "run '%s': voluntary_switches and involuntary_switches come together, as "
                                   "whole numbers >= 0", name);
        }
        v = json_object_get(r, "exit_status");
        if (v && !json_is_null(v) && (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 255))
                return bad(ret_err, "run '%s': exit_status must be 0..255 or null", name);
        if (!is_opt_number(json_object_get(r, "wall_s")) || !is_opt_number(json_object_get(r, "user_s")) ||
            !is_opt_number(json_object_get(r, "sys_s")))
                return bad(ret_err, "run '%s': wall_s, user_s, sys_s must be numbers of seconds or null", name);
        v = json_object_get(r, "command");
        if (v && !json_is_null(v) && (!json_is_string(v) || !proto_valid_text(json_string_value(v), PROTO_MAX_COMMAND, &why)))
                return bad(ret_err, "run '%s': command must be a string of at most %d characters", name, PROTO_MAX_COMMAND);

        e = validate_run_parts(r, name, ret_err);
        if (e < 0)
                return e;
        v = json_object_get(r, "totals");
        if (v)
                return validate_totals(v, name, ret_err);
        return 0;
}

int exchange_validate(json_t *doc, char **ret_err)
{
        json_t *v, *hosts, *runs, *h;
        size_t i, j;
        int r;

        if (!json_is_object(doc))
                return bad(ret_err, "the document is not a JSON object");
        v = json_object_get(doc, "format");
        if (!json_is_string(v) || !streq(json_string_value(v), EXCHANGE_FORMAT))
                return bad(ret_err, "'format' is not \"" EXCHANGE_FORMAT "\"");
        v = json_object_get(doc, "version");
        if (!json_is_integer(v))
                return bad(ret_err, "'version' is missing");
        if (json_integer_value(v) != EXCHANGE_VERSION) {
                if (asprintf(ret_err, "export version %" JSON_INTEGER_FORMAT " is not one this scalemonctl reads (%d): "
                                      "use a matching scalemon", json_integer_value(v), EXCHANGE_VERSION) < 0)
                        *ret_err = NULL;
                return -EPROTONOSUPPORT;
        }
        hosts = json_object_get(doc, "hosts");
        runs = json_object_get(doc, "runs");
        if (!json_is_array(hosts) || !json_is_array(runs))
                return bad(ret_err, "'hosts' and 'runs' must be arrays");
        if (json_array_size(runs) > 1000000 || json_array_size(hosts) > 100000)
                return bad(ret_err, "too many runs or hosts");
        json_array_foreach(hosts, i, h) {
                json_t *mid = json_object_get(h, "machine_id"), *cpus = json_object_get(h, "cpus"),
                       *nodes = json_object_get(h, "nodes");
                if (!json_is_object(h) || !json_is_string(mid) || !json_string_value(mid)[0] ||
                    strlen(json_string_value(mid)) > 128 || !json_is_string(json_object_get(h, "hostname")) ||
                    !json_is_string(json_object_get(h, "kernel")) || !json_is_integer(cpus) ||
                    json_integer_value(cpus) < 0 || json_integer_value(cpus) > 65536 || !json_is_integer(nodes) ||
                    json_integer_value(nodes) < 0 || json_integer_value(nodes) > 4096)
                        return bad(ret_err, "hosts[%zu] needs machine_id, hostname, kernel, cpus and nodes", i);
        }
        v = json_object_get(doc, "metrics");
        if (v && !json_is_array(v))
                return bad(ret_err, "'metrics' must be an array");
        json_array_foreach(v, i, h) {
                json_t *name = json_object_get(h, "name"), *scope = json_object_get(h, "scope"),
                       *unit = json_object_get(h, "unit");
                if (!json_is_string(name) || !valid_metric_name(json_string_value(name)) || !json_is_string(scope) ||
                    (!streq(json_string_value(scope), "cpu") && !streq(json_string_value(scope), "node") &&
                     !streq(json_string_value(scope), "system")) ||
                    !json_is_string(unit) || strlen(json_string_value(unit)) > 31)
                        return bad(ret_err, "metrics[%zu] needs a name, a scope (cpu, node, system) and a unit", i);
        }
        json_array_foreach(runs, i, v) {
                r = validate_run(v, i, hosts, ret_err);
                if (r < 0)
                        return r;
                for (j = 0; j < i; j++)
                        if (streq(json_string_value(json_object_get(json_array_get(runs, j), "name")),
                                  json_string_value(json_object_get(v, "name"))))
                                return bad(ret_err, "run '%s' appears twice", json_string_value(json_object_get(v, "name")));
        }
        return 0;
}
