/* requests.c - the control requests.
 *
 * ctl.c reads a line, proto.c decodes and validates it into a struct
 * proto_request, and ctl.c checks that the peer may send it.  Here each
 * command has one handler, found in a table: it turns the request into a
 * typed call (runs.h, writer.h, exchange.h, ...) and the typed result into
 * the reply's struct, which lib/proto-reply.c encodes.
 *
 * A new request: its command in proto.h (enum proto_cmd, its name and its
 * fields in proto.c), a handler below, and a row in handlers[].
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "exchange.h"
#include "log.h"
#include "macro.h"
#include "proto-reply.h"
#include "requests.h"
#include "retain-sched.h"
#include "runs.h"
#include "subscribe.h"
#include "timeutil.h"
#include "ticker.h"
#include "totals.h"
#include "writer.h"

/* A handler: the reply object (without "ok"), or NULL with *ret_err set
 * (NULL there too means out of memory).  fd: a descriptor passed with the
 * request, or -1; the caller closes it. */
typedef json_t *(*request_fn)(struct requests_ctx *x, const struct proto_request *req, int fd, const struct ucred *peer,
                              char **ret_err);

/* ---- status ---- */

/* The sampler's running totals since the daemon started, system-wide,
 * in each metric's unit; names borrowed from the catalogue. */
static size_t totals_fill(const struct sampler *sm, struct proto_total *out)
{
        const int64_t *tot = sampler_totals(sm);
        int nloc = sampler_nloc(sm);
        size_t n = 0;

        for (int i = 0; i < _M_MAX; i++) {
                double sum = 0;
                if (!sampler_available(sm, i))
                        continue;
                if (metric_table[i].max)        /* a maximum (lock_wait_max_ns) adds up to nothing */
                        continue;
                for (int l = 0; l < nloc; l++)
                        sum += (double)tot[i * nloc + l];
                out[n++] = (struct proto_total){ (char *)metric_table[i].name, sum * sampler_scale(sm, i) };
        }
        return n;
}

/* The daemon's own figures: memory, retention, the newest interval. */
static void status_health(struct requests_ctx *x, struct proto_status_reply *s)
{
        struct store *st = x->store;
        struct retain_stats rst;
        int64_t last_tick = 0, last_end = 0, held_bytes = 0;
        size_t held;

        /* the newest interval sampled: committed, or still held until the
         * next commit (commit_interval) */
        bool have = store_last_tick(st, &last_tick, &last_end) == 0;
        if (writer_last_sampled(x->writer, &last_end) || have)
                time_format_rfc3339(last_end, s->sampled_at, sizeof s->sampled_at);
        s->sampled_at_ns = last_end;
        retain_sched_stats(x->retain, &rst);
        held = writer_backlog(x->writer, &held_bytes);
        s->has_memory = true;
        s->memory.sqlite_bytes = store_memory_used();
        s->memory.held_intervals = (int64_t)held;
        s->memory.held_bytes = held_bytes;
        s->has_retention = true;
        s->retention.merged_intervals = (int64_t)rst.merged;
        s->retention.deleted_intervals = (int64_t)rst.deleted;
        s->retention.step_max_us = rst.step_max_ns / NSEC_PER_USEC;
        s->retention.tick_late_max_us = *x->tick_late_max_ns / NSEC_PER_USEC;
        s->retention.db_bytes = rst.db_bytes;
}

static json_t *handle_status(struct requests_ctx *x, const struct proto_request *req, int fd, const struct ucred *peer,
                             char **ret_err)
{
        const struct conf *conf = x->conf;
        struct sampler *sm = x->sampler;
        const struct cpumap *map = sampler_cpumap(sm);
        const struct runs *rs = x->runs;
        struct proto_total totals[_M_MAX];
        struct proto_status_reply s = {
                .pid = (int)getpid(), .version = (char *)PACKAGE_VERSION, .status = (char *)x->status,
                .interval_s = (double)conf->interval_ns / 1e9, .cpus_online = cpumap_online_count(map),
                .cpus = map->ncpus, .database = conf->database, .totals = totals,
                .access = (char *)x->access,
        };
        json_t *reply;

        (void)req, (void)fd, (void)peer, (void)ret_err;
        s.open_runs = calloc(runs_count(rs) + 1, sizeof *s.open_runs);
        if (!s.open_runs)
                return NULL;
        for (size_t i = 0; i < runs_count(rs); i++) {
                int64_t start;
                s.open_runs[i].name = (char *)runs_name(rs, i, &start);
                time_format_rfc3339(start, s.open_runs[i].start, sizeof s.open_runs[i].start);
        }
        s.nopen_runs = runs_count(rs);
        s.ntotals = totals_fill(sm, totals);
        status_health(x, &s);
        reply = proto_status_reply_to_json(&s);
        free(s.open_runs);      /* the array: its names are the runs' */
        return reply;
}

/* ---- runs ---- */

static int runs_env_fill(struct requests_ctx *x, struct runs_env *env, char **ret_err)
{
        *env = (struct runs_env){ .store = x->store, .sampler = x->sampler,
                                  .host = x->host_id, .interval_ns = x->conf->interval_ns,
                                  .sysroot = x->sysroot, .procroot = x->procroot };
        return ticker_snapshot(x->ticker, &env->pt, ret_err);
}

static json_t *handle_run_start(struct requests_ctx *x, const struct proto_request *req, int fd, const struct ucred *peer,
                                char **ret_err)
{
        struct store_kv tags[PROTO_MAX_TAGS];
        struct run_start_args a = { .name = req->name, .tags = tags, .ntags = req->ntags, .command = req->command,
                                  .if_exists = req->if_exists, .cgroup = req->cgroup };
        struct run_result res = {};
        struct proto_run_reply rr;
        struct runs_env env;
        json_t *reply;

        (void)fd, (void)peer;
        for (size_t i = 0; i < req->ntags; i++)
                tags[i] = (struct store_kv){ req->tags[i].key, req->tags[i].value };
        if (runs_env_fill(x, &env, ret_err) < 0 || runs_start(x->runs, &env, &a, &res, ret_err) < 0)
                return NULL;
        /* with the run's own cgroup (owncg.c), or why none */
        rr = (struct proto_run_reply){ .name = res.name, .cgroup = res.cgroup, .cgroup_why = res.cgroup_why };
        time_format_rfc3339(res.start, rr.start, sizeof rr.start);
        reply = proto_run_reply_to_json(&rr);
        run_result_clear(&res);
        return reply;
}

static json_t *handle_run_stop(struct requests_ctx *x, const struct proto_request *req, int fd, const struct ucred *peer,
                               char **ret_err)
{
        struct store_score scores[PROTO_MAX_SCORES];
        struct run_stop_args a = { .name = req->name, .scores = scores, .nscores = req->nscores,
                                   .has_exit_status = req->has_exit_status, .exit_status = req->exit_status,
                                   .has_times = req->has_times, .wall_s = req->wall_s, .user_s = req->user_s,
                                   .sys_s = req->sys_s, .has_switches = req->has_switches,
                                   .voluntary_switches = req->voluntary_switches,
                                   .involuntary_switches = req->involuntary_switches };
        struct run_result res = {};
        struct runs_env env = { .store = x->store, .sampler = x->sampler };
        struct proto_run_reply rr;
        json_t *reply;
        int i;

        (void)fd, (void)peer;
        for (size_t k = 0; k < req->nscores; k++)
                scores[k] = (struct store_score){ req->scores[k].key, req->scores[k].value };
        /* check the name before taking a snapshot for nothing: a named
         * run that is not open gets runs_stop()'s reason why */
        i = runs_pick(x->runs, req->name, ret_err);
        if (i == -ENOENT && req->name) {
                free(*ret_err);
                *ret_err = NULL;
        } else if (i < 0 || runs_env_fill(x, &env, ret_err) < 0)
                return NULL;
        if (runs_stop(x->runs, &env, &a, &res, ret_err) < 0)
                return NULL;
        rr = (struct proto_run_reply){ .name = res.name, .status = (char *)res.status, .duration_s = res.duration_s };
        time_format_rfc3339(res.start, rr.start, sizeof rr.start);
        time_format_rfc3339(res.end, rr.end, sizeof rr.end);
        reply = proto_run_reply_to_json(&rr);
        run_result_clear(&res);
        return reply;
}

static json_t *handle_run_mark(struct requests_ctx *x, const struct proto_request *req, int fd, const struct ucred *peer,
                               char **ret_err)
{
        struct proto_mark_reply mr = { .text = req->text };
        const char *run;
        int64_t t;

        (void)fd, (void)peer;
        if (runs_mark(x->runs, x->store, req->name, req->text, &run, &t, ret_err) < 0)
                return NULL;
        subscribe_mark(x->subs, run, t, req->text);     /* shown with its run */
        mr.run = (char *)run;
        time_format_rfc3339(t, mr.time, sizeof mr.time);
        return proto_mark_reply_to_json(&mr);
}

static json_t *handle_run_delete(struct requests_ctx *x, const struct proto_request *req, int fd, const struct ucred *peer,
                                 char **ret_err)
{
        (void)fd;
        if (runs_delete(x->runs, x->store, req->name, ret_err) < 0)
                return NULL;
        log_run(LOG_INFO, req->name, "run %s deleted (uid %u)", req->name, (unsigned)peer->uid);
        retain_sched_run_deleted(x->retain);
        return proto_delete_reply_to_json(req->name);
}

/* ---- the daemon ---- */

static json_t *handle_reload(struct requests_ctx *x, const struct proto_request *req, int fd, const struct ucred *peer,
                             char **ret_err)
{
        struct proto_not_applied na[8];
        struct proto_reload_reply r = { .not_applied = na };
        const char *key, *value, *running;

        (void)req, (void)fd, (void)peer;
        if (x->reload(x->owner, ret_err) < 0)
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(na) && i < x->not_applied(x->owner, i, &key, &value, &running); i++)
                na[r.nnot_applied++] = (struct proto_not_applied){
                        (char *)key, (char *)value, (char *)running,
                        streq(key, "database") ? "the database is opened once, at start: restart scalemond"
                                               : "the socket is bound once, at start: restart scalemond" };
        r.status = (char *)x->status;
        return proto_reload_reply_to_json(&r);
}

static json_t *handle_import(struct requests_ctx *x, const struct proto_request *req, int fd, const struct ucred *peer,
                             char **ret_err)
{
        struct exchange_counts c = { 0 };

        (void)req;
        if (fd < 0) {
                *ret_err = strdup("import needs the file passed as a descriptor");
                return NULL;
        }
        if (exchange_import_fd(x->store, fd, &c, ret_err) < 0)
                return NULL;
        log_info("imported %zu run%s, %zu already there, %zu renamed NAME:HOST (uid %u)", c.imported,
                 c.imported == 1 ? "" : "s", c.skipped, c.renamed, (unsigned)peer->uid);
        return proto_import_reply_to_json(&(struct proto_import_reply){ (int64_t)c.imported, (int64_t)c.skipped,
                                                                        (int64_t)c.renamed });
}

/* ---- totals: for scalemon-exporter (the reply is built in totals.c) ---- */

static json_t *handle_totals(struct requests_ctx *x, const struct proto_request *req, int fd, const struct ucred *peer,
                             char **ret_err)
{
        int64_t held_bytes;
        struct totals_health h = {
                .interval_ns = x->conf->interval_ns,
                .ticks = writer_samples(x->writer),
                .tick_late_max_ns = *x->tick_late_max_ns,
                .held_intervals = writer_backlog(x->writer, &held_bytes),
        };

        (void)req, (void)fd, (void)peer, (void)ret_err;
        return totals_reply(x->sampler, x->store, &h);
}

/* Every command of proto.h, by its enum; requests_check() makes sure
 * none is left out.  A stream's (subscribe) is subscribe.c's, which ctl.c
 * calls with the connection. */
static const request_fn handlers[_CMD_MAX] = {
        [CMD_STATUS] = handle_status,
        [CMD_RUN_START] = handle_run_start,
        [CMD_RUN_STOP] = handle_run_stop,
        [CMD_RUN_MARK] = handle_run_mark,
        [CMD_RELOAD] = handle_reload,
        [CMD_IMPORT] = handle_import,
        [CMD_RUN_DELETE] = handle_run_delete,
        [CMD_TOTALS] = handle_totals,
};

int requests_check(const char **ret_cmd)
{
        for (int c = 0; c < _CMD_MAX; c++)
                if (!handlers[c] && !proto_cmd_is_stream(c)) {
                        *ret_cmd = proto_cmd_name(c);
                        return -ENOSYS;
                }
        return 0;
}

json_t *requests_handle(void *userdata, const struct proto_request *req, int fd, const struct ucred *peer,
                        char **ret_err)
{
        json_t *reply = NULL;

        if (req->cmd < _CMD_MAX && handlers[req->cmd])
                reply = handlers[req->cmd](userdata, req, fd, peer, ret_err);
        if (fd >= 0)
                close(fd);
        if (!reply && !*ret_err)
                *ret_err = strdup("out of memory");
        return reply;
}
