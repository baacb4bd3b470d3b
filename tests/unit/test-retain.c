/* test-retain.c - retention on real SQLite files: the store's steps
 * (store_rollup_step(), store_delete_step(): buckets merged into their
 * first tick over slices, a run's ticks never touched, what a rollup
 * keeps adding up to what it merged, the oldest deleted, a deleted run's
 * ticks free to go) and the daemon's schedule (retain-sched.c in a real
 * sd-event loop, on ticks three days old).  60 one-second ticks with
 * context_switches 1 on CPU 0 and 2 on CPU 1, a run over ticks 20..29:
 * every expected count follows from these.  No root. */
#include "config.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <unistd.h>

#include "macro.h"
#include "retain-sched.h"
#include "sqlraw.h"
#include "store.h"
#include "tap.h"
#include "timeutil.h"
#include "writer.h"

#define S 1000000000LL
#define NTICKS 60
#define BUCKET (10 * S)

static char dir[] = "/tmp/scalemon-test-retain.XXXXXX";

static int sum_cb(void *userdata, int metric, int loc, double value)
{
        double *sums = userdata;

        if (metric == M_CONTEXT_SWITCHES && loc >= 0 && loc < 2)
                sums[loc] += value;
        return 0;
}

/* context_switches per CPU over every tick in the database */
static void sums_now(struct store *st, double sums[2])
{
        sums[0] = sums[1] = 0;
        if (store_sum_samples(st, 0, INT64_MAX, sum_cb, sums) < 0)
                sums[0] = sums[1] = -1;
}

/* A database with NTICKS ticks from t0 (on a bucket boundary) and a
 * finished run "r" over ticks 20..29 (ids 21..30). */
static struct store *make_db(const char *name, int64_t t0, char *db, size_t len)
{
        bool avail[_M_MAX];
        char *why[_M_MAX] = { 0 }, *err = NULL;
        double scale[_M_MAX];
        struct host_info h = { .machine_id = "0123456789abcdef", .hostname = "box", .kernel = "6.1.0",
                               .cpu_model = "Test CPU", .ncpus = 2, .nnodes = 1 };
        struct store *st = NULL;
        int64_t host = 0, run = 0, id;
        int r;

        snprintf(db, len, "%s/%s", dir, name);
        if (store_open(db, STORE_WRITE, &st, &err) < 0) {
                printf("Bail out! cannot create %s: %s\n", db, err ? err : "?");
                exit(1);
        }
        for (int i = 0; i < _M_MAX; i++) {
                avail[i] = true;
                scale[i] = 1;
        }
        r = store_metrics_sync(st, avail, why, scale);
        if (r >= 0)
                r = store_host_update(st, &h, t0, &host);
        if (r >= 0)
                r = store_begin(st);
        for (int i = 0; r >= 0 && i < NTICKS; i++) {
                int64_t cs[2] = { 1, 2 };
                r = store_add_tick(st, t0 + i * S, S, &id);
                if (r >= 0)
                        r = store_add_cpu_values(st, id, M_CONTEXT_SWITCHES, cs, NULL, 2);
        }
        if (r >= 0)
                r = store_commit(st);
        if (r >= 0)
                r = store_run_insert(st, &(struct run_new){ .name = "r", .host = host, .start = t0 + 20 * S,
                                                            .start_tick = 21 }, &run);
        if (r >= 0)
                r = store_run_finish(st, run, &(struct run_end){ .status = "done", .end = t0 + 30 * S,
                                                                 .end_tick = 30, .length_ns = 10 * S });
        if (r < 0) {
                printf("Bail out! cannot fill %s: %s\n", db, store_errmsg(st));
                exit(1);
        }
        return st;
}

/* The store's steps, called as the daemon does, in slices of 4 ticks. */
static void test_steps(void)
{
        const int64_t t0 = 1796031480LL * S;            /* on a 10 s boundary */
        char db[512];
        struct store *st = make_db("steps.db", t0, db, sizeof db);
        int64_t cursor = -1, del_cursor = 0;
        size_t n, merged = 0, deleted = 0, steps = 0, most = 0;
        double sums[2];
        int r;

        sums_now(st, sums);
        ok(sums[0] == 60 && sums[1] == 120, "steps: 60 and 120 context switches before");
        is_int(store_rollup_step(st, t0, BUCKET, 4, &cursor, &n), 0, "steps: no bucket ended before t0: nothing due");
        cursor = -1;
        while ((r = store_rollup_step(st, t0 + NTICKS * S, BUCKET, 4, &cursor, &n)) > 0 && steps < 1000) {
                merged += n;
                most = MAX(most, n);
                steps++;
        }
        is_int(r, 0, "steps: rollup ends with nothing due");
        is_int(merged, 45, "steps: 45 ticks merged away (9 in each of the 5 buckets outside the run)");
        ok(most <= 3, "steps: at most 3 merged a step (4 ticks into 1; most %zu)", most);
        is_int(raw_int(db, "SELECT count(*) FROM tick"), 15, "steps: 15 ticks left");
        is_int(raw_int(db, "SELECT count(*) FROM tick WHERE id BETWEEN 21 AND 30 AND dur = 1000000000"), 10,
               "steps: the run's 10 ticks untouched");
        is_int(raw_int(db, "SELECT sum(dur) FROM tick"), NTICKS * S, "steps: every second still covered");
        is_int(raw_int(db, "SELECT count(*) FROM tick WHERE id NOT BETWEEN 21 AND 30 AND dur = 10000000000"), 5,
               "steps: one 10 s tick a bucket");
        sums_now(st, sums);
        ok(sums[0] == 60 && sums[1] == 120, "steps: the rollups add up to what they merged (60, 120)");

        /* ticks that ended before t0 + 35 s, outside the run: buckets 0 and 1 */
        while ((r = store_delete_step(st, t0 + 35 * S, 3, &del_cursor, &n)) > 0)
                deleted += n;
        is_int(r, 0, "steps: delete ends with nothing due");
        is_int(deleted, 2, "steps: the 2 oldest rollups deleted");
        is_int(raw_int(db, "SELECT min(t) FROM tick"), t0 + 20 * S, "steps: the oldest left is the run's first");
        sums_now(st, sums);
        ok(sums[0] == 40 && sums[1] == 80, "steps: their samples went with them (40, 80 left)");
        is_int(store_delete_step(st, t0 + 35 * S, 3, &del_cursor, &n), 0, "steps: again: nothing due");

        /* the run deleted, its ticks may go: the cursor starts again */
        is_int(store_run_delete(st, "r"), 0, "steps: the run deleted");
        del_cursor = 0;
        deleted = 0;
        while ((r = store_delete_step(st, t0 + 35 * S, 3, &del_cursor, &n)) > 0)
                deleted += n;
        is_int(deleted, 10, "steps: then its 10 ticks deleted");
        is_int(raw_int(db, "SELECT count(*) FROM tick"), 3, "steps: the 3 rollups after t0 + 30 s left");
        store_close(st);
}

/* Run the loop until the schedule's counts stay put for 1.5 s (it rests
 * 1 s when idle here), at most 20 s. */
static void run_until_idle(sd_event *e, struct retain_sched *rs, struct retain_stats *st)
{
        int64_t start = now_monotonic_ns(), still = now_monotonic_ns();
        struct retain_stats last = { 0 };

        while (now_monotonic_ns() - start < 20 * S) {
                sd_event_run(e, 100000);
                retain_sched_stats(rs, st);
                if (st->merged != last.merged || st->deleted != last.deleted)
                        still = now_monotonic_ns();
                else if (now_monotonic_ns() - still > 3 * S / 2)
                        break;
                last = *st;
        }
}

/* The daemon's schedule in a real event loop: raw samples kept 1 day
 * then 10 s rollups; then rollups kept 2 days; then the run deleted. */
static void test_sched(void)
{
        int64_t t0 = (now_realtime_ns() - 3 * 86400 * S) / BUCKET * BUCKET;
        char db[512];
        struct store *st = make_db("sched.db", t0, db, sizeof db);
        struct retain_sched *rs = NULL;
        struct retain_stats stats;
        struct writer *w = NULL;
        sd_event *e = NULL;
        struct conf c;
        double sums[2];

        conf_defaults(&c);
        c.interval_ns = S;
        c.commit_interval_ns = 0;
        c.retain_raw_ns = 86400 * S;
        c.rollup_interval_ns = BUCKET;
        c.retain_rollup_ns = 0;
        c.max_db_size = 0;
        ok(sd_event_new(&e) >= 0 && writer_new(st, &c, &w) == 0 && retain_sched_new(e, st, w, &c, 0, &rs) == 0,
           "sched: event loop, writer and schedule");
        if (!rs)
                return;
        run_until_idle(e, rs, &stats);
        is_int(stats.merged, 45, "sched: 45 ticks merged away");
        is_int(stats.deleted, 0, "sched: none deleted (rollups kept forever)");
        ok(stats.db_bytes > 0, "sched: the database's bytes in use (%lld)", (long long)stats.db_bytes);
        is_int(raw_int(db, "SELECT count(*) FROM tick"), 15, "sched: 15 ticks left");
        sums_now(st, sums);
        ok(sums[0] == 60 && sums[1] == 120, "sched: nothing lost in the rollups (60, 120)");

        c.retain_rollup_ns = 2 * 86400 * S;             /* a reload: read at the next slice */
        run_until_idle(e, rs, &stats);
        is_int(stats.deleted, 5, "sched: rollups kept 2 days: the 5 outside the run deleted");
        is_int(raw_int(db, "SELECT count(*) FROM tick"), 10, "sched: the run's 10 ticks kept");

        is_int(store_run_delete(st, "r"), 0, "sched: the run deleted");
        retain_sched_run_deleted(rs);
        run_until_idle(e, rs, &stats);
        is_int(stats.deleted, 15, "sched: then its 10 ticks too (15 in all)");
        is_int(raw_int(db, "SELECT count(*) FROM tick"), 0, "sched: no tick left");
        retain_sched_free(rs);
        writer_free(w);
        sd_event_unref(e);
        store_close(st);
        conf_free(&c);
}

int main(void)
{
        if (!mkdtemp(dir)) {
                printf("Bail out! mkdtemp\n");
                return 1;
        }
        test_steps();
        test_sched();
        tap_rm_rf(dir);
        return tap_done();
}
