/* runs.c - runs as the daemon keeps them.
 *
 * An open run holds a copy of the sampler's running totals at its start.
 * Its totals at the stop are the exact difference of the two snapshots,
 * per CPU; node and system totals are sums of those.  A run the daemon
 * could not close (it was killed) is closed at the next start, as
 * interrupted, with totals summed from the samples written up to the last
 * tick - the last good snapshot.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "context.h"
#include "log.h"
#include "owncg.h"
#include "macro.h"
#include "runlocks.h"
#include "runs.h"
#include "timeutil.h"

struct open_run {
        int64_t id;
        char *name;
        int64_t start;
        int64_t start_mono;            /* CLOCK_MONOTONIC at the start tick's end */
        int64_t *snap;                 /* sampler totals at the start, [_M_MAX * nloc] */
        bool *cpus;                    /* CPUs online at the start, [ncpus] */
        int ncpus;
        bool metrics[_M_MAX];          /* metrics counted at the start */
        struct owncg *own;             /* the run's own cgroup's counters, or NULL (owncg.c) */
        enum owncg_state own_state;    /* what someone else did to it, as last seen */
        int64_t start_tick;            /* lock wait: the start's tick (max metrics) ... */
        struct lockwait_run *locks;    /* ... and its contended locks; NULL without BPF */
};

struct runs {
        struct open_run *v;
        size_t n;
};

int runs_new(struct runs **ret)
{
        *ret = calloc(1, sizeof **ret);
        return *ret ? 0 : -ENOMEM;
}

static void open_run_clear(struct open_run *r)
{
        int e = owncg_free(r->own);

        if (e < 0 && r->name && !(e == -ENOENT && r->own_state == OWNCG_REMOVED))
                log_run(LOG_WARNING, r->name, "run %s: its cgroup stays: %s", r->name, strerror(-e));
        r->own = NULL;
        free(r->name);
        free(r->snap);
        free(r->cpus);
        lockwait_run_free(r->locks);
}

struct runs *runs_free(struct runs *rs)
{
        if (!rs)
                return NULL;
        for (size_t i = 0; i < rs->n; i++)
                open_run_clear(&rs->v[i]);
        free(rs->v);
        free(rs);
        return NULL;
}

size_t runs_count(const struct runs *rs)
{
        return rs->n;
}

const char *runs_name(const struct runs *rs, size_t i, int64_t *ret_start)
{
        if (ret_start)
                *ret_start = rs->v[i].start;
        return rs->v[i].name;
}

void run_result_clear(struct run_result *r)
{
        free(r->name);
        free(r->cgroup);
        free(r->cgroup_why);
        memset(r, 0, sizeof *r);
}

static char *errf(const char *fmt, ...) _printf_(1, 2);
static char *errf(const char *fmt, ...)
{
        va_list ap;
        char *s;
        va_start(ap, fmt);
        if (vasprintf(&s, fmt, ap) < 0)
                s = NULL;
        va_end(ap);
        return s;
}

int runs_pick(const struct runs *rs, const char *name, char **ret_err)
{
        if (name) {
                for (size_t i = 0; i < rs->n; i++)
                        if (streq(rs->v[i].name, name))
                                return (int)i;
                return -ENOENT;
        }
        if (rs->n == 0) {
                *ret_err = errf("no run is open (scalemonctl run start NAME opens one)");
                return -ENOENT;
        }
        if (rs->n > 1) {
                char list[512] = "";
                size_t len = 0;
                for (size_t i = 0; i < rs->n && len < sizeof list - 140; i++)
                        strbuf_appendf(list, sizeof list, &len, "%s%s", i ? ", " : "", rs->v[i].name);
                *ret_err = errf("several runs are open (%s): name the one you mean", list);
                return -EINVAL;
        }
        return 0;
}

/* Why a named run is not open: it ended, or it does not exist. */
static char *not_open_why(struct store *st, const char *name)
{
        struct run_info ri;
        char t[40];

        if (store_run_find(st, name, &ri) < 0)
                return errf("no run named '%s' (see scalemonctl runs)", name);
        time_format_local(ri.end ? ri.end : ri.start, t, sizeof t);
        run_info_free(&ri);
        return errf("run '%s' is not running (it ended at %s as %s)", name, t, ri.status);
}

int runs_build_totals(const double *vals, int nloc, const struct cpumap *map, const bool *cpus, const bool *metrics,
                      struct store_total **ret, size_t *ret_n)
{
        size_t cap = (size_t)_M_MAX * (size_t)(map->ncpus + map->nnodes + 1), n = 0;
        struct store_total *t = calloc(cap, sizeof *t);
        double *node = calloc((size_t)map->nnodes, sizeof *node);

#define ROW(m_, level_, loc_, v_)                                                          \
        do {                                                                               \
                snprintf(t[n].metric, sizeof t[n].metric, "%s", metric_table[m_].name);    \
                t[n].level = (level_);                                                     \
                t[n].loc = (loc_);                                                         \
                t[n].value = (v_);                                                         \
                n++;                                                                       \
        } while (0)

        if (!t || !node) {
                free(t);
                free(node);
                return -ENOMEM;
        }
        for (int m = 0; m < _M_MAX; m++) {
                double sys = 0;
                if (!metrics[m])
                        continue;
                switch (metric_table[m].scope) {
                case SCOPE_CPU:
                        memset(node, 0, (size_t)map->nnodes * sizeof *node);
                        for (int c = 0; c < map->ncpus && c < nloc; c++) {
                                double v = vals[m * nloc + c];
                                if (!cpus[c] && v == 0)
                                        continue;
                                ROW(m, LEVEL_CPU, c, v);
                                if (metric_table[m].max) {      /* a maximum */
                                        node[map->node[c]] = MAX(node[map->node[c]], v);
                                        sys = MAX(sys, v);
                                        continue;
                                }
                                node[map->node[c]] += v;
                                sys += v;
                        }
                        for (int nd = 0; nd < map->nnodes; nd++)
                                if (map->has_node[nd])
                                        ROW(m, LEVEL_NODE, nd, node[nd]);
                        break;
                case SCOPE_NODE:
                        for (int nd = 0; nd < map->nnodes && nd < nloc; nd++)
                                if (map->has_node[nd]) {
                                        ROW(m, LEVEL_NODE, nd, vals[m * nloc + nd]);
                                        sys += vals[m * nloc + nd];
                                }
                        break;
                case SCOPE_SYSTEM:
                        sys = vals[m * nloc];
                        break;
                }
                ROW(m, LEVEL_SYSTEM, 0, sys);
        }
#undef ROW
        free(node);
        *ret = t;
        *ret_n = n;
        return 0;
}

/* Keep run id open from pt: the sampler's totals there, and its CPUs. */
static int open_run_add(struct runs *rs, int64_t id, const char *name, const struct sampler *sm,
                        const struct snapshot_point *pt)
{
        const struct cpumap *map = sampler_cpumap(sm);
        struct open_run *r = realloc(rs->v, (rs->n + 1) * sizeof *rs->v);

        if (!r)
                return -ENOMEM;
        rs->v = r;
        r = &rs->v[rs->n];
        memset(r, 0, sizeof *r);
        r->id = id;
        r->start = pt->time;
        r->start_mono = pt->mono;
        r->name = strdup(name);
        r->ncpus = map->ncpus;
        r->snap = malloc((size_t)_M_MAX * (size_t)sampler_nloc(sm) * sizeof *r->snap);
        r->cpus = malloc((size_t)map->ncpus * sizeof *r->cpus);
        if (!r->name || !r->snap || !r->cpus) {
                open_run_clear(r);
                return -ENOMEM;
        }
        memcpy(r->snap, sampler_totals(sm), (size_t)_M_MAX * (size_t)sampler_nloc(sm) * sizeof *r->snap);
        memcpy(r->cpus, map->online, (size_t)map->ncpus * sizeof *r->cpus);
        for (int m = 0; m < _M_MAX; m++)
                r->metrics[m] = sampler_available(sm, m);
        r->start_tick = pt->tick;
        rs->n++;
        if (sampler_lockwait(sm)) {     /* a run boundary for the per-caller map */
                int e = lockwait_run_start(sampler_lockwait(sm), &r->locks);
                if (e < 0)
                        log_run(LOG_WARNING, name, "run %s: its contended locks will not be recorded: %s", name,
                                strerror(-e));
        }
        return 0;
}

/* The run's own cgroup: made (cgroup "new") or named, and counted from
 * now.  A failure leaves the run without one, and says why in the reply
 * and the log, once. */
static void runs_own_start(struct open_run *r, const struct runs_env *env, const char *cgroup, struct run_result *ret)
{
        _cleanup_free_ char *path = NULL, *notes = NULL;
        char *err = NULL;
        bool made = streq(cgroup, "new");
        int e;

        e = made ? owncg_create(env->procroot, r->name, &path, &err) : 0;
        if (e >= 0 && !made && !(path = strdup(cgroup)))
                e = -ENOMEM;
        if (e >= 0)
                e = owncg_open(path, made, env->sampler, &r->own, &notes, &err);
        if (e < 0) {
                if (made && path)
                        (void)rmdir(path);
                ret->cgroup_why = err ? err : strdup(strerror(-e));
                log_run(LOG_WARNING, r->name, "run %s: no counters of its own: %s", r->name,
                        ret->cgroup_why ? ret->cgroup_why : strerror(-e));
                return;
        }
        ret->cgroup = strdup(path);
        log_run(LOG_INFO, r->name, "run %s: counting its cgroup %s%s%s", r->name, path, notes ? "; " : "",
                notes ? notes : "");
        /* its tasks' lock waits told apart from the machine's */
        if (r->locks && (e = lockwait_run_own(r->locks, path)) < 0)
                log_run(LOG_WARNING, r->name, "run %s: its own lock wait will not be told apart: %s", r->name,
                        strerror(-e));
}

void runs_watch_own(struct runs *rs, struct store *st)
{
        for (size_t i = 0; i < rs->n; i++) {
                struct open_run *r = &rs->v[i];
                enum owncg_state now;
                char text[PATH_MAX + 128];

                if (!r->own || r->own_state == OWNCG_REMOVED)
                        continue;
                now = owncg_state(r->own);
                if (now == r->own_state)
                        continue;
                snprintf(text, sizeof text,
                         now == OWNCG_REMOVED ? "its cgroup %s was removed by someone else: its own counters stop here"
                         : now == OWNCG_FROZEN ? "its cgroup %s was frozen by someone else (cgroup.freeze)"
                                               : "its cgroup %s was thawed",
                         owncg_path(r->own));
                log_run(LOG_NOTICE, r->name, "run %s: %s", r->name, text);
                if (store_run_add_mark(st, r->id, now_realtime_ns(), text) < 0)
                        log_run(LOG_WARNING, r->name, "run %s: cannot record the mark: %s", r->name,
                                store_errmsg(st));
                r->own_state = now;
        }
}

int runs_own_sample(struct runs *rs, struct tick *t)
{
        for (size_t i = 0; i < rs->n; i++)
                if (rs->v[i].own) {
                        int e = owncg_sample(rs->v[i].own, rs->v[i].id, t);
                        if (e < 0)
                                return e;
                }
        return 0;
}

/* The name the new run gets when a->name is taken: refused, the next free
 * NAME-K (--name-suffix), or the same after deleting the finished run
 * (*replace, --replace).  0 with the name in want (size PROTO_MAX_NAME +
 * 16), or -errno with *ret_err. */
static int runs_choose_name(struct runs *rs, struct store *st, const struct run_start_args *a, char *want,
                            bool *replace, char **ret_err)
{
        struct run_info ri, taken;
        const char *why;
        char t[40];
        int r = 0;

        snprintf(want, PROTO_MAX_NAME + 16, "%s", a->name);
        if (store_run_find(st, a->name, &ri) != 0)
                return 0;
        time_format_local(ri.start, t, sizeof t);
        if (a->if_exists == PROTO_IF_EXISTS_REFUSE) {
                *ret_err = errf("a run named '%s' already exists (started %s, %s): choose another name, "
                                "or give --name-suffix (records %s-2, %s-3...) or --replace (replaces a "
                                "finished run)", a->name, t, ri.status, a->name, a->name);
                r = -EEXIST;
        } else if (a->if_exists == PROTO_IF_EXISTS_REPLACE) {
                _cleanup_free_ char *ignore = NULL;
                if (runs_pick(rs, a->name, &ignore) >= 0) {
                        *ret_err = errf("a run named '%s' is running (started %s): --replace replaces only "
                                        "a finished run", a->name, t);
                        r = -EBUSY;
                }
                *replace = r == 0;
        } else
                for (int k = 2; k < 100000; k++) {
                        snprintf(want, PROTO_MAX_NAME + 16, "%s-%d", a->name, k);
                        if (!proto_valid_name(want, &why)) {
                                *ret_err = errf("a run named '%s' already exists, and %s is not a run name: %s",
                                                a->name, want, why);
                                r = -EINVAL;
                                break;
                        }
                        if (store_run_find(st, want, &taken) != 0)
                                break;
                        run_info_free(&taken);
                }
        run_info_free(&ri);
        return r;
}

/* The run's context as it starts: the machine's (context_capture) and
 * the daemon's interval, version and unavailable metrics. */
static int runs_context(const struct runs_env *env, struct store_kv **ctx, size_t *nctx, char **ret_err)
{
        struct store_kv extra[3];
        char iv[16], unavail[1024] = "";
        size_t len = 0;
        int e;

        duration_format(env->interval_ns, iv, sizeof iv);
        for (int m = 0; m < _M_MAX; m++)
                if (!sampler_available(env->sampler, m) && len < sizeof unavail - 64)
                        strbuf_appendf(unavail, sizeof unavail, &len, "%s%s", len ? "," : "",
                                       metric_table[m].name);
        extra[0] = (struct store_kv){ "interval", iv };
        extra[1] = (struct store_kv){ "scalemond_version", PACKAGE_VERSION };
        extra[2] = (struct store_kv){ "metrics_unavailable", unavail[0] ? unavail : "none" };
        e = context_capture(env->sysroot, env->procroot, extra, 3, ctx, nctx);
        if (e < 0)
                *ret_err = errf("cannot record the run's context: %s", strerror(-e));
        return e;
}

int runs_start(struct runs *rs, const struct runs_env *env, const struct run_start_args *a, struct run_result *ret,
               char **ret_err)
{
        struct store *st = env->store;
        const struct snapshot_point *pt = &env->pt;
        _cleanup_free_ char *cgdir = NULL;
        struct store_kv *ctx = NULL;
        size_t nctx = 0;
        char *name, want[PROTO_MAX_NAME + 16];
        bool replace = false;
        struct run_new rn;
        int64_t id;
        int e;

        e = runs_choose_name(rs, st, a, want, &replace, ret_err);
        if (e < 0)
                return e;
        /* a cgroup the user named must be one, before the run exists */
        if (a->cgroup && !streq(a->cgroup, "new") && (e = owncg_resolve(env->procroot, a->cgroup, &cgdir, ret_err)) < 0)
                return e;
        e = runs_context(env, &ctx, &nctx, ret_err);
        if (e < 0)
                return e;
        if (replace) {
                e = store_run_delete(st, a->name);
                if (e < 0 && e != -ENOENT) {
                        context_free(ctx, nctx);
                        *ret_err = errf("cannot replace run %s: %s", a->name, store_errmsg(st));
                        return e;
                }
                log_run(LOG_INFO, a->name, "run %s deleted: replaced by a new run of that name", a->name);
        }
        rn = (struct run_new){ .name = want, .host = env->host, .start = pt->time, .start_tick = pt->tick,
                               .command = a->command, .tags = a->tags, .ntags = a->ntags, .context = ctx,
                               .ncontext = nctx };
        e = store_run_insert(st, &rn, &id);
        context_free(ctx, nctx);
        if (e == -EEXIST) {
                *ret_err = errf("a run named '%s' already exists: choose another name", want);
                return e;
        }
        if (e < 0) {
                *ret_err = errf("cannot record the run: %s", store_errmsg(st));
                return e;
        }

        name = strdup(want);
        if (!name)
                return -ENOMEM;
        e = open_run_add(rs, id, want, env->sampler, pt);
        if (e < 0) {
                free(name);
                return e;
        }

        log_run(LOG_INFO, want, "run %s started", want);
        *ret = (struct run_result){ .name = name, .status = "running", .start = pt->time };
        if (a->cgroup)
                runs_own_start(&rs->v[rs->n - 1], env, cgdir ? cgdir : a->cgroup, ret);
        return 0;
}

/* Close open run i at pt with the given status and the stop's fields. */
static int finish(struct runs *rs, size_t i, struct store *st, const struct sampler *sm, const struct snapshot_point *pt,
                  const char *status, const struct run_stop_args *req)
{
        struct open_run *r = &rs->v[i];
        const struct cpumap *map = sampler_cpumap(sm);
        int nloc = sampler_nloc(sm);
        const int64_t *tot = sampler_totals(sm);
        struct store_total *totals = NULL;
        size_t ntotals = 0;
        struct lw_result locks = { 0 };
        bool have_locks = false;
        struct run_end re = { .status = status, .end = pt->time, .end_tick = pt->tick,
                              .length_ns = pt->mono - r->start_mono };
        bool *cpus = NULL;
        double *vals = NULL;
        int e = -ENOMEM;

        vals = calloc((size_t)_M_MAX * (size_t)nloc, sizeof *vals);
        cpus = calloc((size_t)map->ncpus, sizeof *cpus);
        if (!vals || !cpus)
                goto out;
        for (int m = 0; m < _M_MAX; m++) {
                double scale = sampler_scale(sm, m);
                for (int l = 0; l < nloc; l++)
                        vals[m * nloc + l] = (double)(tot[m * nloc + l] - r->snap[m * nloc + l]) * scale;
        }
        for (int c = 0; c < map->ncpus; c++)
                cpus[c] = map->online[c] || (c < r->ncpus && r->cpus[c]);
        e = runlocks_max_values(st, r->start_tick, pt->tick, vals, nloc);
        if (e < 0)
                goto out;
        e = runs_build_totals(vals, nloc, map, cpus, r->metrics, &totals, &ntotals);
        if (e >= 0 && r->own)
                e = owncg_totals(r->own, &totals, &ntotals);
        if (e < 0)
                goto out;
        if (r->locks) {                 /* the run's contended locks, and its own share of them */
                int el = runlocks_stop(TAKE_PTR(r->locks), &locks);
                have_locks = el >= 0;
                if (el < 0)
                        log_run(LOG_WARNING, r->name, "run %s: its contended locks were not recorded: %s", r->name,
                                strerror(-el));
                else if (r->own && (e = runlocks_own_total(&locks, &totals, &ntotals)) < 0)
                        goto out;
        }
        re.totals = totals;
        re.ntotals = ntotals;
        if (req) {
                re.scores = req->scores;
                re.nscores = req->nscores;
                re.has_exit_status = req->has_exit_status;
                re.exit_status = req->exit_status;
                re.has_times = req->has_times;
                re.wall_s = req->wall_s;
                re.user_s = req->user_s;
                re.sys_s = req->sys_s;
                re.has_switches = req->has_switches;
                re.voluntary_switches = req->voluntary_switches;
                re.involuntary_switches = req->involuntary_switches;
        }
        e = store_run_finish(st, r->id, &re);
        if (e < 0)
                goto out;
        if (have_locks) {
                int el = runlocks_put(st, r->id, &locks);
                if (el < 0)
                        log_run(LOG_WARNING, r->name, "run %s: its contended locks were not recorded: %s", r->name,
                                el == -EIO ? store_errmsg(st) : strerror(-el));
        }
        open_run_clear(r);
        memmove(&rs->v[i], &rs->v[i + 1], (rs->n - i - 1) * sizeof *rs->v);
        rs->n--;
out:
        lw_result_clear(&locks);
        free(vals);
        free(cpus);
        free(totals);
        return e;
}

int runs_stop(struct runs *rs, const struct runs_env *env, const struct run_stop_args *a, struct run_result *ret,
              char **ret_err)
{
        const struct snapshot_point *pt = &env->pt;
        const char *status = a->has_exit_status && a->exit_status != 0 ? "failed" : "done";
        _cleanup_free_ char *name = NULL;
        int64_t t0;
        double dur;
        int i = runs_pick(rs, a->name, ret_err);
        int e;

        if (i == -ENOENT && a->name)
                *ret_err = not_open_why(env->store, a->name);
        if (i < 0)
                return i;
        name = strdup(rs->v[i].name);
        if (!name)
                return -ENOMEM;
        t0 = rs->v[i].start;
        dur = (double)(pt->mono - rs->v[i].start_mono) / 1e9;
        e = finish(rs, (size_t)i, env->store, env->sampler, pt, status, a);
        if (e < 0) {
                *ret_err = errf("cannot record the end of run %s: %s", name,
                                e == -ENOMEM ? "out of memory" : store_errmsg(env->store));
                return e;
        }
        /* on CLOCK_MONOTONIC, not end - start: the wall clock may have
         * been set meanwhile */
        log_run(LOG_INFO, name, "run %s stopped: %s after %.3fs", name, status, dur);
        *ret = (struct run_result){ .name = TAKE_PTR(name), .status = status, .start = t0, .end = pt->time,
                                    .duration_s = dur };
        return 0;
}

int runs_mark(struct runs *rs, struct store *st, const char *name, const char *text, const char **ret_run,
              int64_t *ret_time, char **ret_err)
{
        int64_t now = now_realtime_ns();
        int i = runs_pick(rs, name, ret_err);
        int e;

        if (i == -ENOENT && name)
                *ret_err = not_open_why(st, name);
        if (i < 0)
                return i;
        e = store_run_add_mark(st, rs->v[i].id, now, text);
        if (e < 0) {
                *ret_err = errf("cannot record the mark: %s", store_errmsg(st));
                return e;
        }
        log_run(LOG_INFO, rs->v[i].name, "run %s: mark '%s'", rs->v[i].name, text);
        *ret_run = rs->v[i].name;
        *ret_time = now;
        return 0;
}

int runs_delete(struct runs *rs, struct store *st, const char *name, char **ret_err)
{
        _cleanup_free_ char *ignore = NULL;
        int r = runs_pick(rs, name, &ignore) >= 0 ? -EBUSY : store_run_delete(st, name);

        if (r == -ENOENT)
                *ret_err = errf("no run named %s (scalemonctl runs lists them)", name);
        else if (r == -EBUSY)
                *ret_err = errf("run %s is still running: stop it first (scalemonctl run stop %s)", name, name);
        else if (r < 0)
                *ret_err = errf("cannot delete run %s: %s", name, store_errmsg(st));
        return r;
}

int runs_interrupt_all(struct runs *rs, struct store *st, const struct sampler *sm, const struct snapshot_point *pt)
{
        int r = 0;

        while (rs->n > 0) {
                _cleanup_free_ char *name = strdup(rs->v[0].name);
                int e;
                if (!name)
                        return -ENOMEM;
                e = finish(rs, 0, st, sm, pt, "interrupted", NULL);
                if (e < 0) {
                        log_run(LOG_ERR, name, "run %s could not be closed: %s", name, store_errmsg(st));
                        open_run_clear(&rs->v[0]);
                        memmove(&rs->v[0], &rs->v[1], (rs->n - 1) * sizeof *rs->v);
                        rs->n--;
                        r = e;
                        continue;
                }
                log_run(LOG_NOTICE, name, "run %s was open at shutdown: closed as interrupted", name);
        }
        return r;
}

struct sum_ctx {
        double *vals;
        int nloc;
        bool *cpus;
        int ncpus;
};

static int add_sum(void *userdata, int metric, int loc, double value)
{
        struct sum_ctx *c = userdata;

        if (loc < 0 || loc >= c->nloc)
                return 0;
        c->vals[metric * c->nloc + loc] += value;
        if (metric_table[metric].scope == SCOPE_CPU && loc < c->ncpus)
                c->cpus[loc] = true;
        return 0;
}

int runs_recover(struct store *st, const struct sampler *sm)
{
        const struct cpumap *map = sampler_cpumap(sm);
        struct run_info *open = NULL;
        size_t nopen = 0;
        int64_t last_tick = 0, last_end = 0;
        int r;

        r = store_runs_open(st, &open, &nopen);
        if (r < 0 || nopen == 0)
                return r;
        if (store_last_tick(st, &last_tick, &last_end) < 0)
                last_tick = last_end = 0;
        for (size_t i = 0; i < nopen; i++) {
                struct run_info *ri = &open[i];
                struct sum_ctx c = { .nloc = sampler_nloc(sm), .ncpus = map->ncpus };
                struct store_total *totals = NULL;
                size_t ntotals = 0;
                bool metrics[_M_MAX];
                struct run_end re = { .status = "interrupted", .length_ns = ri->dur_ns };
                char t[40];

                c.vals = calloc((size_t)_M_MAX * (size_t)c.nloc, sizeof *c.vals);
                c.cpus = calloc((size_t)map->ncpus, sizeof *c.cpus);
                if (!c.vals || !c.cpus) {
                        free(c.vals);
                        free(c.cpus);
                        r = -ENOMEM;
                        break;
                }
                memcpy(c.cpus, map->online, (size_t)map->ncpus * sizeof *c.cpus);
                re.end_tick = MAX(last_tick, ri->start_tick);
                re.end = MAX(last_end, ri->start);
                r = store_sum_samples(st, ri->start_tick, re.end_tick, add_sum, &c);
                if (r >= 0)
                        r = runlocks_max_values(st, ri->start_tick, re.end_tick, c.vals, c.nloc);
                for (int m = 0; m < _M_MAX; m++)
                        metrics[m] = sampler_available(sm, m);
                if (r >= 0)
                        r = runs_build_totals(c.vals, c.nloc, map, c.cpus, metrics, &totals, &ntotals);
                if (r >= 0) {
                        re.totals = totals;
                        re.ntotals = ntotals;
                        r = store_run_finish(st, ri->id, &re);
                }
                free(c.vals);
                free(c.cpus);
                free(totals);
                time_format_local(re.end, t, sizeof t);
                if (r < 0) {
                        log_run(LOG_ERR, ri->name, "run %s was left open and could not be closed: %s", ri->name,
                                store_errmsg(st));
                        break;
                }
                log_run(LOG_NOTICE, ri->name,
                        "run %s was open when scalemond stopped: closed as interrupted at %s, the last interval written",
                        ri->name, t);
        }
        run_infos_free(open, nopen);
        return r;
}
