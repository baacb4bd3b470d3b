/* test-runs.c - runs and subscriptions as the daemon keeps them, on the
 * daemon's own tick path (ticker.c: sampler -> writer -> store, and ->
 * subscribers) over a fake kernel whose software counters count 1000 per
 * read on every CPU, a real SQLite file and a real control socket: a
 * run's totals are 1000 a tick per online CPU over exactly the ticks from
 * its start to its stop, and equal the sums of those ticks in the
 * database; boundaries in a burst share a tick; marks, the choice of the
 * run a stop means, deletion; a subscriber gets its reply, then each tick
 * with 1000 per CPU, the tick's times and the open run with its mark.
 * No root; needs the test seams. */
#include "config.h"

#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fakekernel.h"
#include "macro.h"
#include "runs.h"
#include "subscribe.h"
#include "store.h"
#include "tap.h"
#include "ticker.h"
#include "timeutil.h"
#include "writer.h"

#define PER_TICK 1000           /* FAKE_KERNEL_PER_READ */

static char dir[] = "/tmp/scalemon-test-runs.XXXXXX";

static int sum_cb(void *userdata, int metric, int loc, double value)
{
        double *sum = userdata;

        (void)loc;
        if (metric == M_CONTEXT_SWITCHES)
                *sum += value;
        return 0;
}

/* The run's system-wide context_switches total, -1 if none. */
static double run_total(struct store *st, const char *name, struct run_info *ri)
{
        struct run_detail d = { 0 };
        double v = -1;

        if (store_run_find(st, name, ri) < 0 || store_run_detail(st, ri->id, &d) < 0)
                return -1;
        for (size_t i = 0; i < d.ntotals; i++)
                if (strcmp(d.totals[i].metric, "context_switches") == 0 && d.totals[i].level == LEVEL_SYSTEM)
                        v = d.totals[i].value;
        run_detail_free(&d);
        return v;
}

struct rig {
        struct store *st;
        struct sampler *sm;
        struct writer *w;
        struct runs *rs;
        struct ticker tk;
        struct conf c;
        int64_t host;
        int online;
};

static int env_fill(struct rig *g, struct runs_env *env, char **err)
{
        *env = (struct runs_env){ .store = g->st, .sampler = g->sm, .host = g->host, .interval_ns = g->c.interval_ns,
                                  .sysroot = "/sys", .procroot = "/proc" };
        return ticker_snapshot(&g->tk, &env->pt, err);
}

static int start(struct rig *g, const char *name, struct run_result *res)
{
        struct runs_env env;
        char *err = NULL;
        int r = env_fill(g, &env, &err);

        if (r >= 0)
                r = runs_start(g->rs, &env, &(struct run_start_args){ .name = name }, res, &err);
        if (r < 0)
                printf("# start %s: %s\n", name, err ? err : strerror(-r));
        free(err);
        return r;
}

static int stop(struct rig *g, const char *name, char **err)
{
        struct run_result res = { 0 };
        struct runs_env env;
        int r = env_fill(g, &env, err);

        if (r >= 0)
                r = runs_stop(g->rs, &env, &(struct run_stop_args){ .name = name }, &res, err);
        run_result_clear(&res);
        return r;
}

static void rig_open(struct rig *g)
{
        struct sampler_config sc = { .sysroot = "/sys", .procroot = "/proc" };
        struct host_info h = { .machine_id = "0123456789abcdef", .hostname = "box", .kernel = "6.1.0",
                               .cpu_model = "Test CPU" };
        bool avail[_M_MAX];
        char *why[_M_MAX], *err = NULL, db[512];
        double scale[_M_MAX];
        const struct cpumap *map;

        conf_defaults(&g->c);
        sc.enabled[M_CONTEXT_SWITCHES] = true;
        snprintf(db, sizeof db, "%s/runs.db", dir);
        if (store_open(db, STORE_WRITE, &g->st, &err) < 0 || sampler_new(&sc, &g->sm, &err) < 0) {
                printf("Bail out! %s\n", err ? err : "cannot open the store or the sampler");
                exit(1);
        }
        map = sampler_cpumap(g->sm);
        for (int c = 0; c < map->ncpus; c++)
                g->online += map->online[c];
        for (int i = 0; i < _M_MAX; i++) {
                avail[i] = sampler_available(g->sm, i);
                why[i] = (char *)sampler_why(g->sm, i);
                scale[i] = sampler_scale(g->sm, i);
        }
        h.ncpus = map->ncpus;
        h.nnodes = 1;
        if (store_metrics_sync(g->st, avail, why, scale) < 0 || store_host_update(g->st, &h, 1, &g->host) < 0 ||
            store_topology_set(g->st, map->ncpus, map->node, map->online) < 0 || runs_new(&g->rs) < 0 ||
            writer_new(g->st, &g->c, &g->w) < 0) {
                printf("Bail out! cannot set up: %s\n", store_errmsg(g->st));
                exit(1);
        }
        sampler_set_own(g->sm, NULL, NULL);
        g->tk = (struct ticker){ .sampler = g->sm, .writer = g->w, .runs = g->rs, .store = g->st };
}

static void test_totals(struct rig *g)
{
        struct run_result res = { 0 };
        struct run_info ri;
        double want, sum = 0;
        char *err = NULL;

        ok(sampler_available(g->sm, M_CONTEXT_SWITCHES), "the fake kernel counts context_switches on %d CPUs",
           g->online);
        is_int(ticker_prime(&g->tk), 0, "primed");
        is_int(writer_backlog(g->w, NULL), 0, "the priming sample keeps no tick");
        for (int i = 0; i < 2; i++)
                ticker_sample(&g->tk);
        is_int(start(g, "r1", &res), 0, "run r1 started");
        is_str(res.status, "running", "r1 running");
        run_result_clear(&res);
        is_int(runs_count(g->rs), 1, "one run open");
        for (int i = 0; i < 3; i++)
                ticker_sample(&g->tk);
        is_int(stop(g, "r1", &err), 0, "run r1 stopped");
        is_int(runs_count(g->rs), 0, "none open");
        /* 3 timer ticks and the stop's own */
        want = 4.0 * PER_TICK * g->online;
        is_near(run_total(g->st, "r1", &ri), want, 0, "r1: 1000 a tick per CPU over its 4 ticks");
        is_int(ri.end_tick - ri.start_tick, 4, "r1: 4 ticks from its start to its stop");
        is_str(ri.status, "done", "r1 done");
        is_int(store_sum_samples(g->st, ri.start_tick, ri.end_tick, sum_cb, &sum), 0, "r1: its ticks summed");
        is_near(sum, want, 0, "r1: its total is the sum of its ticks in the database");
        is_int(writer_samples(g->w), 2 + 1 + 3 + 1, "7 ticks taken: 2 before, the start's, 3, the stop's");
        free(err);
}

/* Run boundaries within a millisecond of the last, with no tick since,
 * share its tick; with a tick since, never.  Judged by when the second
 * call started and ended against the first's end (ticker.last_snap_mono):
 * both within 1 ms, shared; both past it, not; tried again in between. */
static void test_snapshot_reuse(struct rig *g)
{
        struct snapshot_point p1 = { 0 }, p2 = { 0 };
        int shared_ok = 0, shared_bad = 0, new_ok = 0, new_bad = 0;
        char *err = NULL;

        for (int i = 0; i < 100 && shared_ok == 0; i++) {
                int64_t end1, before, after;
                uint64_t n;

                ticker_sample(&g->tk);
                if (ticker_snapshot(&g->tk, &p1, &err) < 0)
                        break;
                end1 = g->tk.last_snap_mono;
                n = writer_samples(g->w);
                before = now_monotonic_ns();
                if (ticker_snapshot(&g->tk, &p2, &err) < 0)
                        break;
                after = now_monotonic_ns();
                if (after - end1 < NSEC_PER_MSEC) {
                        if (p2.tick == p1.tick && writer_samples(g->w) == n)
                                shared_ok++;
                        else
                                shared_bad++;
                } else if (before - end1 >= NSEC_PER_MSEC) {
                        if (p2.tick == p1.tick + 1)
                                new_ok++;
                        else
                                new_bad++;
                }
        }
        ok(shared_ok > 0 && shared_bad == 0, "a boundary within 1 ms of the last, no tick since, shares its tick "
           "and samples nothing (%d, %d not)", shared_ok, shared_bad);
        ok(new_bad == 0, "one 1 ms or more after has a tick of its own (%d, %d not)", new_ok, new_bad);
        ticker_sample(&g->tk);
        ok(ticker_snapshot(&g->tk, &p2, &err) == 0 && p2.tick == p1.tick + 2,
           "with a timer tick since, a boundary has its own: the one after it");
        free(err);
}

static void test_errors(struct rig *g)
{
        struct run_result a = { 0 }, b = { 0 };
        struct run_info ra;
        const char *run;
        int64_t t;
        char *err = NULL;

        ok(start(g, "a", &a) == 0 && start(g, "b", &b) == 0, "two runs open");
        run_result_clear(&a);
        run_result_clear(&b);
        is_int(runs_pick(g->rs, NULL, &err), -EINVAL, "a stop without a name with two open is refused");
        free(err);
        err = NULL;
        is_int(runs_pick(g->rs, "nope", &err), -ENOENT, "a run that is not open is not found");
        free(err);
        err = NULL;
        is_int(runs_mark(g->rs, g->st, "a", "phase 2", &run, &t, &err), 0, "a mark in run a");
        is_str(run, "a", "on run a");
        is_int(runs_delete(g->rs, g->st, "a", &err), -EBUSY, "an open run cannot be deleted");
        free(err);
        err = NULL;
        ok(stop(g, "a", &err) == 0 && stop(g, "b", &err) == 0, "both stopped");
        is_int(runs_count(g->rs), 0, "none open");
        is_int(runs_delete(g->rs, g->st, "a", &err), 0, "a finished run deleted");
        is_int(store_run_find(g->st, "a", &ra), -ENOENT, "and gone");
        free(err);
}

/* ---- subscriptions ---- */

static json_t *no_request(void *userdata, const struct proto_request *req, int fd, const struct ucred *peer,
                          char **ret_err)
{
        (void)userdata, (void)req, (void)fd, (void)peer;
        *ret_err = strdup("not in this test");
        return NULL;
}

/* One line from fd, running the loop meanwhile; NULL after 5 s. */
static json_t *read_line(sd_event *e, int fd, char *buf, size_t len, size_t *have)
{
        int64_t start = now_monotonic_ns();

        while (now_monotonic_ns() - start < 5 * NSEC_PER_SEC) {
                char *nl = memchr(buf, '\n', *have);
                struct pollfd p = { .fd = fd, .events = POLLIN };

                if (nl) {
                        json_t *o;
                        *nl = 0;
                        o = json_loads(buf, 0, NULL);
                        *have -= (size_t)(nl + 1 - buf);
                        memmove(buf, nl + 1, *have);
                        return o;
                }
                sd_event_run(e, 10000);
                if (poll(&p, 1, 0) == 1 && *have < len) {
                        ssize_t k = read(fd, buf + *have, len - *have);
                        if (k <= 0)
                                return NULL;
                        *have += (size_t)k;
                }
        }
        return NULL;
}

static void test_subscribe(struct rig *g)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        const char *req = "{\"cmd\": \"subscribe\", \"metrics\": [\"context_switches\"], \"per\": \"cpu\"}\n";
        struct ctl_server *ctl = NULL;
        struct subscribers *subs = NULL;
        struct run_result res = { 0 };
        sd_event *e = NULL;
        char *err = NULL, buf[65536];
        const char *run;
        size_t have = 0;
        json_t *o, *v;
        int64_t t;
        int fd, per_cpu = 0;

        snprintf(sa.sun_path, sizeof sa.sun_path, "%s/control.sock", dir);
        ok(sd_event_new(&e) >= 0 && ctl_server_new(e, sa.sun_path, no_request, NULL, &ctl, &err) == 0 &&
           subscribe_new(ctl, g->sm, &g->c.interval_ns, &subs) == 0, "subscribe: a control socket and subscriptions");
        if (!subs)
                return;
        g->tk.subs = subs;
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ok(connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0 && write(fd, req, strlen(req)) == (ssize_t)strlen(req),
           "subscribe: a client connects and asks");
        o = read_line(e, fd, buf, sizeof buf, &have);
        ok(o && json_is_true(json_object_get(o, "ok")) && json_object_get(o, "subscribed"), "subscribe: the reply");
        json_decref(o);

        ok(start(g, "live", &res) == 0 && runs_mark(g->rs, g->st, "live", "warm", &run, &t, &err) == 0,
           "subscribe: a run open with a mark");
        run_result_clear(&res);
        subscribe_mark(subs, run, t, "warm");
        /* the run's start was a tick too: pushed; read past it */
        o = read_line(e, fd, buf, sizeof buf, &have);
        json_decref(o);
        ticker_sample(&g->tk);
        o = read_line(e, fd, buf, sizeof buf, &have);
        ok(o != NULL, "subscribe: a tick pushed");
        v = json_object_get(json_object_get(o, "values"), "context_switches");
        for (size_t c = 0; c < json_array_size(v); c++)
                per_cpu += json_is_number(json_array_get(v, c)) && json_number_value(json_array_get(v, c)) == PER_TICK;
        is_int(per_cpu, g->online, "subscribe: 1000 context switches on each online CPU");
        ok(json_integer_value(json_object_get(json_object_get(o, "tick"), "end_ns")) -
           json_integer_value(json_object_get(json_object_get(o, "tick"), "start_ns")) > 0,
           "subscribe: the tick's start and end");
        v = json_array_get(json_object_get(o, "runs"), 0);
        is_str(json_string_value(json_object_get(v, "name")), "live", "subscribe: the open run with it");
        is_str(json_string_value(json_object_get(json_object_get(v, "mark"), "text")), "warm", "subscribe: and its mark");
        json_decref(o);
        ok(stop(g, "live", &err) == 0, "subscribe: the run stopped");
        close(fd);
        g->tk.subs = NULL;
        ctl_server_free(ctl);
        subscribe_free(subs);
        sd_event_unref(e);
        free(err);
}

int main(void)
{
        struct rig g = { 0 };

        if (!ENABLE_TEST_SEAMS) {
                printf("1..0 # SKIP the fake kernel needs a build with --enable-test-seams\n");
                return 77;
        }
        setenv(FAKE_KERNEL_ENV, "1", 1);
        if (!mkdtemp(dir)) {
                printf("Bail out! mkdtemp\n");
                return 1;
        }
        rig_open(&g);
        test_totals(&g);
        test_snapshot_reuse(&g);
        test_errors(&g);
        test_subscribe(&g);
        runs_free(g.rs);
        writer_free(g.w);
        sampler_free(g.sm);
        store_close(g.st);
        conf_free(&g.c);
        tap_rm_rf(dir);
        return tap_done();
}
