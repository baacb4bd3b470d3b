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
 *              "totals": {"system": {METRIC: N}, "node": {"0": {METRIC: N}},
 *                         "cpu": {"0": {METRIC: N}}}}]}
 *
 * length_ns (the run's length on CLOCK_MONOTONIC, or null) is optional, and
 * so are voluntary_switches and involuntary_switches (the command's own,
 * from run exec; both or neither).
 * Import checks the whole document before it writes anything, then adds
 * every run in one transaction, so a bad file changes nothing.  It owns
 * the format; the rows are read and written through the store's API
 * (store-exchange.c).
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
static int locks_to_json(struct store *s, int64_t run, json_t *jr)
{
        _cleanup_free_ struct store_lock *v = NULL;
        struct store_lock_lost lost = { 0 };
        json_t *a;
        size_t n = 0;
        int r = store_run_locks_get(s, run, &v, &n, &lost);

        if (r < 0)
                return r;
        if (!lost.known && n == 0)
                return 0;
        a = json_array();
        for (size_t i = 0; a && i < n; i++)
                json_array_append_new(a, json_pack("{s:s,s:s,s:I,s:I,s:I,s:I}", "caller", v[i].caller, "type",
                                                   v[i].type, "contended", (json_int_t)v[i].contended,
                                                   "total_wait_ns", (json_int_t)v[i].total_wait_ns, "max_wait_ns",
                                                   (json_int_t)v[i].max_wait_ns, "min_wait_ns",
                                                   (json_int_t)v[i].min_wait_ns));
        if (!a)
                return -ENOMEM;
        json_object_set_new(jr, "locks", a);
        if (lost.known)
                json_object_set_new(jr, "locks_lost", json_pack("{s:I,s:I,s:I}", "untimed", (json_int_t)lost.untimed,
                                                                "unattributed", (json_int_t)lost.unattributed,
                                                                "unattributed_ns",
                                                                (json_int_t)lost.unattributed_ns));
        return 0;
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

static bool is_opt_number(json_t *v)
{
        return !v || json_is_null(v) || (json_is_number(v) && isfinite(json_number_value(v)) && json_number_value(v) >= 0);
}

/* A time: RFC 3339 string "field", or integer "field_ns" (preferred). */
static int get_time(json_t *o, const char *field, int64_t *ret)
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
        }
        v = json_object_get(r, "locks_lost");
        if (v && (!json_is_object(v) || !is_count(json_object_get(v, "untimed")) ||
                  !is_count(json_object_get(v, "unattributed")) || !is_count(json_object_get(v, "unattributed_ns"))))
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
                if (!json_is_object(h) || get_time(h, "time", &t) < 0 || !json_is_string(text) ||
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
        if (get_time(r, "start", &start) < 0 || get_time(r, "end", &end) < 0)
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

/* ---- import ---- */

static int import_host(struct store *s, json_t *h, int64_t first, int64_t *ret_id)
{
        json_t *model = json_object_get(h, "cpu_model");
        struct host_info hi = {
                .machine_id = (char *)json_string_value(json_object_get(h, "machine_id")),
                .hostname = (char *)json_string_value(json_object_get(h, "hostname")),
                .kernel = (char *)json_string_value(json_object_get(h, "kernel")),
                .cpu_model = json_is_string(model) ? (char *)json_string_value(model) : NULL,
                .ncpus = (int)json_integer_value(json_object_get(h, "cpus")),
                .nnodes = (int)json_integer_value(json_object_get(h, "nodes")),
        };

        return store_host_import(s, &hi, first, ret_id);
}

/* Metrics this database has not seen get a row: with the scope and unit
 * the document gives, else the catalogue's, else system and count. */
static int import_metric(struct store *s, const char *name, json_t *doc)
{
        const struct metric_def *def = metric_by_name(name);
        const char *scope = def ? metric_scope_name(def->scope) : "system", *unit = def ? def->unit : "count";
        json_t *m;
        size_t i;

        json_array_foreach(json_object_get(doc, "metrics"), i, m)
                if (streq(json_string_value(json_object_get(m, "name")), name)) {
                        scope = json_string_value(json_object_get(m, "scope"));
                        unit = json_string_value(json_object_get(m, "unit"));
                }
        return store_metric_import(s, name, scope, unit);
}

static double opt_real(json_t *v)
{
        return json_is_number(v) ? json_number_value(v) : NAN;
}

static int cmp_kv_key(const void *a, const void *b)
{
        return strcmp(((const struct store_kv *)a)->key, ((const struct store_kv *)b)->key);
}

/* The pairs of a validated object, pointing into it; free(*ret). */
static int kv_array(json_t *obj, struct store_kv **ret, size_t *ret_n)
{
        const char *key;
        json_t *v;
        size_t n = 0;

        *ret = NULL;
        *ret_n = 0;
        if (!obj || json_object_size(obj) == 0)
                return 0;
        *ret = calloc(json_object_size(obj), sizeof **ret);
        if (!*ret)
                return -ENOMEM;
        json_object_foreach(obj, key, v)
                (*ret)[n++] = (struct store_kv){ (char *)key, (char *)json_string_value(v) };
        *ret_n = n;
        return 0;
}

static int score_array(json_t *obj, struct store_score **ret, size_t *ret_n)
{
        const char *key;
        json_t *v;
        size_t n = 0;

        *ret = NULL;
        *ret_n = 0;
        if (!obj || json_object_size(obj) == 0)
                return 0;
        *ret = calloc(json_object_size(obj), sizeof **ret);
        if (!*ret)
                return -ENOMEM;
        json_object_foreach(obj, key, v)
                (*ret)[n++] = (struct store_score){ (char *)key, json_number_value(v) };
        *ret_n = n;
        return 0;
}

/* "locks" and "locks_lost" (validated) into rows for store_run_import(). */
static int lock_array(json_t *a, json_t *lost, struct store_lock **ret, size_t *ret_n, struct store_lock_lost *ret_lost)
{
        struct store_lock *v = NULL;
        size_t n = json_array_size(a), i;
        json_t *o;

        if (n > 0) {
                v = calloc(n, sizeof *v);
                if (!v)
                        return -ENOMEM;
        }
        json_array_foreach(a, i, o) {
                snprintf(v[i].caller, sizeof v[i].caller, "%s", json_string_value(json_object_get(o, "caller")));
                snprintf(v[i].type, sizeof v[i].type, "%s", json_string_value(json_object_get(o, "type")));
                v[i].contended = json_integer_value(json_object_get(o, "contended"));
                v[i].total_wait_ns = json_integer_value(json_object_get(o, "total_wait_ns"));
                v[i].max_wait_ns = json_integer_value(json_object_get(o, "max_wait_ns"));
                v[i].min_wait_ns = json_integer_value(json_object_get(o, "min_wait_ns"));
        }
        if (lost)
                *ret_lost = (struct store_lock_lost){ .known = true,
                                                      .untimed = json_integer_value(json_object_get(lost, "untimed")),
                                                      .unattributed = json_integer_value(json_object_get(lost, "unattributed")),
                                                      .unattributed_ns =
                                                              json_integer_value(json_object_get(lost, "unattributed_ns")) };
        *ret = v;
        *ret_n = n;
        return 0;
}

static int mark_array(json_t *marks, struct store_mark **ret, size_t *ret_n)
{
        json_t *m;
        size_t i;

        *ret = NULL;
        *ret_n = 0;
        if (json_array_size(marks) == 0)
                return 0;
        *ret = calloc(json_array_size(marks), sizeof **ret);
        if (!*ret)
                return -ENOMEM;
        json_array_foreach(marks, i, m) {
                int64_t t = 0;
                get_time(m, "time", &t);
                (*ret)[i] = (struct store_mark){ t, (char *)json_string_value(json_object_get(m, "text")) };
        }
        *ret_n = json_array_size(marks);
        return 0;
}

/* The totals, each metric given a row first (in the order met). */
static int total_array(struct store *s, json_t *totals, json_t *doc, struct store_total **ret, size_t *ret_n)
{
        const char *level, *loc, *metric;
        json_t *lv, *at, *v;
        size_t n = 0, cap = 0;
        int r;

        *ret = NULL;
        *ret_n = 0;
#define PUT(lvl_, loc_)                                                                                 \
        do {                                                                                            \
                r = import_metric(s, metric, doc);                                                      \
                if (r < 0)                                                                              \
                        return r;                                                                       \
                if (n == cap) {                                                                         \
                        struct store_total *p_ = realloc(*ret, (cap = cap ? cap * 2 : 64) * sizeof *p_); \
                        if (!p_)                                                                        \
                                return -ENOMEM;                                                         \
                        *ret = p_;                                                                      \
                }                                                                                       \
                (*ret)[n] = (struct store_total){ .level = (lvl_), .loc = (loc_), .value = json_number_value(v) }; \
                snprintf((*ret)[n].metric, sizeof (*ret)[n].metric, "%s", metric);                      \
                *ret_n = ++n;                                                                           \
        } while (0)
        json_object_foreach(totals, level, lv) {
                if (streq(level, "system")) {
                        json_object_foreach(lv, metric, v)
                                PUT(LEVEL_SYSTEM, 0);
                        continue;
                }
                json_object_foreach(lv, loc, at)
                        json_object_foreach(at, metric, v)
                                PUT(streq(level, "node") ? LEVEL_NODE : streq(level, "cgroup") ? LEVEL_CGROUP : LEVEL_CPU,
                                    atoi(loc));
        }
#undef PUT
        return 0;
}

/* Is a run of this name in the database already, and whose?  1 if it is
 * this very run (same host, same start to the millisecond: an import done
 * before, or the run itself), 0 if the
 * name is free, or -EEXIST if another run has it (*ret_host its host). */
static int name_taken(struct store *s, const char *name, int64_t host, int64_t start, int64_t *ret_host)
{
        struct run_info ri;
        int r = store_run_find(s, name, &ri);

        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        *ret_host = ri.host;
        /* an export writes times to the millisecond */
        r = ri.host == host && llabs(ri.start - start) < NSEC_PER_MSEC ? 1 : -EEXIST;
        run_info_free(&ri);
        return r;
}

/* The name a run gets here (hosts share one database): its own; or,
 * when another host's run has it, NAME:HOSTNAME.  Returns 1 to skip it (it
 * is here already), 0 with ri->name set (*buf may hold it), or -EEXIST
 * with *ret_err when this host used the name for another run. */
static int resolve_name(struct store *s, struct run_import *ri, const char *hostname, char **buf, char **ret_err)
{
        int64_t other = 0;
        const char *why;
        int r = name_taken(s, ri->name, ri->host, ri->start, &other);

        if (r >= 0)
                return r;
        if (r != -EEXIST)
                return r;
        if (other != ri->host) {
                if (asprintf(buf, "%s:%s", ri->name, hostname) < 0)
                        return -ENOMEM;
                if (!proto_valid_name(*buf, &why)) {
                        if (asprintf(ret_err, "run '%s' from host %s: another host's run has that name, and %s is "
                                     "no run name (%s): nothing imported", ri->name, hostname, *buf, why) < 0)
                                *ret_err = NULL;
                        return -EINVAL;
                }
                r = name_taken(s, *buf, ri->host, ri->start, &other);
                if (r == 1)
                        return 1;
                if (r == 0) {
                        ri->name = *buf;
                        return 0;
                }
                if (r != -EEXIST)
                        return r;
        }
        if (asprintf(ret_err, "run '%s' already exists in %s, from the same host with another start: nothing imported",
                     ri->name, store_path(s)) < 0)
                *ret_err = NULL;
        return -EEXIST;
}

static int insert_run(struct store *s, json_t *r, int64_t host, const char *hostname, json_t *doc, char **ret_err)
{
        _cleanup_free_ char *name = NULL;
        _cleanup_free_ struct store_kv *tags = NULL, *ctx = NULL;
        _cleanup_free_ struct store_score *scores = NULL;
        _cleanup_free_ struct store_mark *marks = NULL;
        _cleanup_free_ struct store_total *totals = NULL;
        _cleanup_free_ struct store_lock *locks = NULL;
        struct store_lock_lost locks_lost = { 0 };
        json_t *exit_status = json_object_get(r, "exit_status"), *command = json_object_get(r, "command"),
               *length = json_object_get(r, "length_ns"), *vsw = json_object_get(r, "voluntary_switches"),
               *isw = json_object_get(r, "involuntary_switches");
        struct run_import ri = {
                .name = json_string_value(json_object_get(r, "name")),
                .host = host,
                .status = json_string_value(json_object_get(r, "status")),
                .has_exit_status = json_is_integer(exit_status),
                .exit_status = (int)json_integer_value(exit_status),
                .wall_s = opt_real(json_object_get(r, "wall_s")),
                .user_s = opt_real(json_object_get(r, "user_s")),
                .sys_s = opt_real(json_object_get(r, "sys_s")),
                .command = json_is_string(command) ? json_string_value(command) : NULL,
                .has_length = json_is_integer(length),
                .length_ns = json_integer_value(length),
                .has_switches = json_is_integer(vsw) && json_is_integer(isw),
                .voluntary_switches = json_integer_value(vsw),
                .involuntary_switches = json_integer_value(isw),
        };
        int64_t id;
        int e;

        get_time(r, "start", &ri.start);
        get_time(r, "end", &ri.end);
        e = kv_array(json_object_get(r, "tags"), &tags, &ri.ntags);
        if (e >= 0)
                e = score_array(json_object_get(r, "scores"), &scores, &ri.nscores);
        if (e >= 0)
                e = kv_array(json_object_get(r, "context"), &ctx, &ri.ncontext);
        if (e >= 0)
                e = mark_array(json_object_get(r, "marks"), &marks, &ri.nmarks);
        if (e >= 0)
                e = total_array(s, json_object_get(r, "totals"), doc, &totals, &ri.ntotals);
        if (e < 0)
                return e;
        if (e >= 0)
                e = lock_array(json_object_get(r, "locks"), json_object_get(r, "locks_lost"), &locks, &ri.nlocks,
                               &locks_lost);
        if (e < 0)
                return e;
        ri.locks = locks;
        ri.locks_lost = locks_lost.known ? &locks_lost : NULL;
        if (ctx)
                qsort(ctx, ri.ncontext, sizeof *ctx, cmp_kv_key);
        ri.tags = tags;
        ri.scores = scores;
        ri.context = ctx;
        ri.marks = marks;
        ri.totals = totals;
        e = resolve_name(s, &ri, hostname, &name, ret_err);
        if (e != 0)
                return e;       /* 1: skipped; < 0: a collision on this host */
        e = store_run_import(s, &ri, &id);
        if (e == -EEXIST && asprintf(ret_err, "run '%s' already exists in %s: nothing imported", ri.name,
                                     store_path(s)) < 0)
                *ret_err = NULL;
        return e < 0 ? e : ri.name != json_string_value(json_object_get(r, "name")) ? 2 : 0;
}

int exchange_import(struct store *s, json_t *doc, struct exchange_counts *ret, char **ret_err)
{
        struct exchange_counts c = { 0 };
        json_t *hosts, *runs, *h, *r;
        int64_t *host_ids = NULL;
        size_t i, j;
        int e;

        e = exchange_validate(doc, ret_err);
        if (e < 0)
                return e;
        hosts = json_object_get(doc, "hosts");
        runs = json_object_get(doc, "runs");
        host_ids = calloc(json_array_size(hosts) + 1, sizeof *host_ids);
        if (!host_ids)
                return -ENOMEM;
        e = store_import_begin(s);
        if (e < 0)
                goto out;
        json_array_foreach(hosts, i, h) {
                int64_t first = INT64_MAX;
                json_array_foreach(runs, j, r) {
                        int64_t t;
                        if (streq(json_string_value(json_object_get(r, "host")),
                                  json_string_value(json_object_get(h, "machine_id"))) &&
                            get_time(r, "start", &t) == 0 && t < first)
                                first = t;
                }
                e = import_host(s, h, first == INT64_MAX ? now_realtime_ns() : first, &host_ids[i]);
                if (e < 0)
                        goto rollback;
        }
        json_array_foreach(runs, i, r) {
                int64_t host = 0;
                const char *hostname = "";
                json_array_foreach(hosts, j, h)
                        if (streq(json_string_value(json_object_get(r, "host")),
                                  json_string_value(json_object_get(h, "machine_id")))) {
                                host = host_ids[j];
                                hostname = json_string_value(json_object_get(h, "hostname"));
                        }
                e = insert_run(s, r, host, hostname, doc, ret_err);
                if (e < 0)
                        goto rollback;
                c.skipped += e == 1;
                c.renamed += e == 2;
                c.imported += e != 1;
        }
        e = store_import_commit(s);
        if (e < 0)
                goto rollback;
        *ret = c;
        goto out;
rollback:
        store_rollback(s);
        if (!*ret_err && asprintf(ret_err, "import failed, nothing imported: %s", store_errmsg(s)) < 0)
                *ret_err = NULL;
out:
        free(host_ids);
        return e;
}

int exchange_import_fd(struct store *s, int fd, struct exchange_counts *ret, char **ret_err)
{
        json_error_t jerr;
        json_t *doc;
        char *buf = NULL;
        size_t len = 0, cap = 0;
        int r;

        for (;;) {
                ssize_t k;
                if (len == cap) {
                        char *p;
                        if (cap >= (size_t)EXCHANGE_MAX_BYTES) {
                                free(buf);
                                if (asprintf(ret_err, "the file is larger than %ld MiB", EXCHANGE_MAX_BYTES >> 20) < 0)
                                        *ret_err = NULL;
                                return -EFBIG;
                        }
                        p = realloc(buf, cap = cap ? cap * 2 : 65536);
                        if (!p) {
                                free(buf);
                                return -ENOMEM;
                        }
                        buf = p;
                }
                k = read(fd, buf + len, cap - len);
                if (k < 0) {
                        r = negative_errno();
                        free(buf);
                        if (asprintf(ret_err, "cannot read the file: %s", strerror(-r)) < 0)
                                *ret_err = NULL;
                        return r;
                }
                if (k == 0)
                        break;
                len += (size_t)k;
        }
        doc = json_loadb(buf ? buf : "", len, JSON_REJECT_DUPLICATES, &jerr);
        free(buf);
        if (!doc) {
                if (asprintf(ret_err, "not a valid scalemon export: not JSON (line %d: %s)", jerr.line, jerr.text) < 0)
                        *ret_err = NULL;
                return -EINVAL;
        }
        r = exchange_import(s, doc, ret, ret_err);
        json_decref(doc);
        return r;
}
