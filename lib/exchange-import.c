/* exchange-import.c - import runs from an export document (exchange.c
 * describes it): the whole document is checked first (exchange_validate),
 * then every run is added in one transaction, so a bad file changes
 * nothing.  A run whose name another host's run has here is recorded as
 * NAME:HOSTNAME.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exchange.h"
#include "exchange-internal.h"
#include "macro.h"
#include "proto.h"
#include "store.h"
#include "store-locks.h"
#include "timeutil.h"

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

/* A lock row's own share: the benchmark's tasks' waits, where the run had
 * its own cgroup. */
static void own_from_json(json_t *o, bool *has_own, int64_t *contended, int64_t *total_wait_ns)
{
        *has_own = json_is_integer(json_object_get(o, "own_contended"));
        *contended = json_integer_value(json_object_get(o, "own_contended"));
        *total_wait_ns = json_integer_value(json_object_get(o, "own_total_wait_ns"));
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
                v[i].locks = json_integer_value(json_object_get(o, "locks"));
                own_from_json(o, &v[i].has_own, &v[i].own_contended, &v[i].own_total_wait_ns);
        }
        if (lost)
                *ret_lost = (struct store_lock_lost){ .known = true,
                                                      .untimed = json_integer_value(json_object_get(lost, "untimed")),
                                                      .unattributed = json_integer_value(json_object_get(lost, "unattributed")),
                                                      .unattributed_ns =
                                                              json_integer_value(json_object_get(lost, "unattributed_ns")),
                                                      .nested = json_is_integer(json_object_get(lost, "nested"))
                                                                        ? json_integer_value(json_object_get(lost, "nested"))
                                                                        : -1 };
        *ret = v;
        *ret_n = n;
        return 0;
}

/* "lock_objects" (validated) into rows for store_run_import(). */
static int lock_object_array(json_t *a, struct store_lock_obj **ret, size_t *ret_n)
{
        struct store_lock_obj *v = NULL;
        size_t n = json_array_size(a), i;
        json_t *o;

        if (n > 0) {
                v = calloc(n, sizeof *v);
                if (!v)
                        return -ENOMEM;
        }
        json_array_foreach(a, i, o) {
                snprintf(v[i].lock, sizeof v[i].lock, "%s", json_string_value(json_object_get(o, "lock")));
                snprintf(v[i].name, sizeof v[i].name, "%s", json_string_value(json_object_get(o, "name")));
                snprintf(v[i].type, sizeof v[i].type, "%s", json_string_value(json_object_get(o, "type")));
                v[i].contended = json_integer_value(json_object_get(o, "contended"));
                v[i].total_wait_ns = json_integer_value(json_object_get(o, "total_wait_ns"));
                v[i].max_wait_ns = json_integer_value(json_object_get(o, "max_wait_ns"));
                v[i].callers = json_integer_value(json_object_get(o, "callers"));
                own_from_json(o, &v[i].has_own, &v[i].own_contended, &v[i].own_total_wait_ns);
        }
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
                exchange_get_time(m, "time", &t);
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
        _cleanup_free_ struct store_lock_obj *lock_objects = NULL;
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

        exchange_get_time(r, "start", &ri.start);
        exchange_get_time(r, "end", &ri.end);
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
        if (e >= 0)
                e = lock_object_array(json_object_get(r, "lock_objects"), &lock_objects, &ri.nlock_objects);
        if (e < 0)
                return e;
        ri.locks = locks;
        ri.lock_objects = lock_objects;
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
                            exchange_get_time(r, "start", &t) == 0 && t < first)
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
