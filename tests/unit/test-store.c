/* test-store.c - the SQLite store on real files: migrations from empty
 * and from an older version, reopen, refusal of a newer schema and of a
 * second writer, and a round trip of samples through the query path. */
#include "config.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <unistd.h>

#include "schema.h"
#include "packed-sql.h"
#include "store.h"
#include "tap.h"

static char dir[] = "/tmp/scalemon-test-store.XXXXXX";

static void path(char *buf, size_t len, const char *name)
{
        snprintf(buf, len, "%s/%s", dir, name);
}

static int raw_exec(const char *db, const char *sql)
{
        sqlite3 *h;
        int r;
        if (sqlite3_open(db, &h) != SQLITE_OK)
                return -1;
        packed_sql_register(h);         /* views over cpu_sample use scalemon_cpus() */
        r = sqlite3_exec(h, sql, NULL, NULL, NULL);
        sqlite3_close(h);
        return r == SQLITE_OK ? 0 : -1;
}

/* The first column of the first row of a query, -1 on error. */
static int raw_count(const char *db, const char *sql)
{
        sqlite3 *h;
        sqlite3_stmt *st;
        int v = -1;
        if (sqlite3_open(db, &h) != SQLITE_OK)
                return -1;
        if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK) {
                if (sqlite3_step(st) == SQLITE_ROW)
                        v = sqlite3_column_int(st, 0);
                sqlite3_finalize(st);
        }
        sqlite3_close(h);
        return v;
}

static int sum_cb(void *userdata, int metric, int loc, double value)
{
        double (*sums)[4] = userdata;
        if (loc >= 0 && loc < 4)
                sums[metric][loc] += value;
        return 0;
}

static void fill_catalogue(struct store *s)
{
        bool avail[_M_MAX];
        char *why[_M_MAX] = { 0 };
        double scale[_M_MAX];
        for (int i = 0; i < _M_MAX; i++) {
                avail[i] = i != M_CYCLES;
                scale[i] = metric_table[i].source == SRC_PROCSTAT ? 0.01 : 1;
        }
        why[M_CYCLES] = "no hardware PMU";
        ok(store_metrics_sync(s, avail, why, scale) == 0, "catalogue written");
}

static void test_new_and_roundtrip(void)
{
        char db[512];
        struct store *w = NULL, *r2 = NULL, *rd = NULL;
        char *err = NULL, *v = NULL;
        int node_of[4] = { 0, 0, 1, 1 };
        bool online[4] = { true, true, true, false };
        struct host_info h = { .machine_id = "0123456789abcdef", .hostname = "box", .kernel = "6.1.0",
                               .cpu_model = "Test CPU", .ncpus = 4, .nnodes = 2 };
        int64_t id1 = 0, id2 = 0, tick[3];
        const int64_t S = 1000000000LL, t0 = 1796031478LL * S;
        struct series_point *pts = NULL;
        size_t n = 0;

        path(db, sizeof db, "new.db");
        is_int(store_open(db, STORE_WRITE, &w, &err), 0, "create a new database");
        if (!w)
                return;
        is_int(store_schema_version(w), store_latest_schema_version(), "migrated from empty to the latest schema");
        fill_catalogue(w);
        ok(store_host_update(w, &h, t0, &id1) == 0 && store_host_update(w, &h, t0 + S, &id2) == 0 && id1 == id2,
           "same machine-id, same host row");
        ok(store_topology_set(w, 4, node_of, online) == 0, "topology written");
        ok(store_meta_set(w, "k", "v1") == 0 && store_meta_set(w, "k", "v2") == 0 && store_meta_get(w, "k", &v) == 0,
           "meta set twice and read");
        is_str(v, "v2", "meta keeps the last value");
        free(v);

        is_int(store_open(db, STORE_WRITE, &r2, &err), -EBUSY, "a second writer is refused");
        contains(err, "in use by another scalemond", "with a message that says so");
        free(err);
        err = NULL;

        ok(store_begin(w) == 0, "begin");
        for (int i = 0; i < 3; i++) {
                ok(store_add_tick(w, t0 + i * S, S, &tick[i]) == 0, "tick %d", i);
                int64_t cs[4] = { 100 + i, 10, 0, 1 }, user[4] = { 0, 0, 50, 0 }, zero[4] = { 0 };
                ok(store_add_cpu_values(w, tick[i], M_CONTEXT_SWITCHES, cs, NULL, 4) == 0, "context_switches row");
                store_add_cpu_values(w, tick[i], M_CPU_USER, user, NULL, 4);                /* 0.5 s */
                store_add_cpu_values(w, tick[i], M_PAGE_FAULTS, zero, NULL, 4);             /* not stored */
                store_add_sample(w, tick[i], M_NUMA_HIT, 1, 7, false);
        }
        {
                int64_t lc[2] = { 0, 4 };
                bool nl[2] = { true, false };
                ok(store_add_cpu_values(w, tick[2], M_LOCK_CONTENTIONS, lc, nl, 2) == 0, "a row with a CPU not counted");
                is_int(store_add_sample(w, tick[2], M_LOCK_CONTENTIONS, 0, 5, false), -EINVAL,
                       "a cpu-scope value cannot go to sample");
                is_int(store_add_cpu_values(w, tick[2], M_NUMA_HIT, lc, NULL, 2), -EINVAL,
                       "nor a node-scope one to cpu_sample");
        }
        ok(store_add_mux(w, tick[1], 0, "hw", 0.5) == 0, "mux row");
        ok(store_add_event(w, t0, "cpu-offline", 3, NULL) == 0, "event row");
        ok(store_commit(w) == 0, "commit");

        /* a reader while the writer is open */
        is_int(store_open(db, STORE_READ, &rd, &err), 0, "reader opens while the writer holds the database");
        if (rd) {
                ok(store_series(rd, "context_switches", SERIES_ALL, 0, t0, t0 + 3 * S, 0, &pts, &n) == 0 && n == 3,
                   "3 points system-wide");
                ok(n == 3 && pts[0].value == 111 && pts[1].value == 112 && pts[2].value == 113,
                   "system-wide sums (zero rows count as 0)");
                free(pts);
                ok(store_series(rd, "context_switches", SERIES_CPU, 2, t0, t0 + 3 * S, 0, &pts, &n) == 0 && n == 3 &&
                   pts[0].value == 0 && !pts[0].not_counted, "a CPU with no rows reads 0");
                free(pts);
                ok(store_series(rd, "context_switches", SERIES_NODE, 1, t0, t0 + 3 * S, 0, &pts, &n) == 0 && n == 3 &&
                   pts[0].value == 1, "node 1 = cpu2 + cpu3");
                free(pts);
                ok(store_series(rd, "cpu_user", SERIES_ALL, 0, t0, t0 + 3 * S, 0, &pts, &n) == 0 && n == 3 &&
                   pts[1].value == 0.5, "scale applied: 50 ticks = 0.5 s");
                free(pts);
                ok(store_series(rd, "numa_hit", SERIES_NODE, 1, t0, t0 + 3 * S, 0, &pts, &n) == 0 && n == 3 &&
                   pts[0].value == 7, "node-scope metric by node");
                free(pts);
                ok(store_series(rd, "lock_contentions", SERIES_ALL, 0, t0, t0 + 3 * S, 0, &pts, &n) == 0 && n == 3 &&
                   !pts[0].not_counted && pts[2].not_counted, "NULL sample reads as not counted");
                free(pts);
                ok(store_series(rd, "lock_contentions", SERIES_CPU, 1, t0, t0 + 3 * S, 0, &pts, &n) == 0 && n == 3 &&
                   !pts[2].not_counted && pts[2].value == 4, "the other CPU of that row reads its value");
                free(pts);
                ok(store_series(rd, "lock_contentions", SERIES_NODE, 0, t0, t0 + 3 * S, 0, &pts, &n) == 0 && n == 3 &&
                   pts[2].not_counted && pts[2].value == 4, "its node: not counted, with what was counted");
                free(pts);
                ok(store_series(rd, "page_faults", SERIES_ALL, 0, t0, t0 + 3 * S, 0, &pts, &n) == 0 && n == 3 &&
                   pts[0].value == 0, "an all-zero metric reads 0");
                free(pts);
                is_int(raw_count(db, "SELECT count(*) FROM cpu_sample"), 7, "7 cpu_sample rows: no all-zero row");
                is_int(raw_count(db, "SELECT count(*) FROM cpu_sample WHERE total IS NULL"), 1,
                       "total NULL where a CPU was not counted");
                {
                        double sums[_M_MAX][4] = { { 0 } };
                        ok(store_sum_samples(rd, 0, tick[2], sum_cb, sums) == 0, "sum of samples");
                        ok(sums[M_CONTEXT_SWITCHES][0] == 303 && sums[M_CONTEXT_SWITCHES][1] == 30 &&
                           sums[M_CONTEXT_SWITCHES][2] == 0 && sums[M_CONTEXT_SWITCHES][3] == 3, "per CPU");
                        ok(sums[M_CPU_USER][2] == 1.5 && sums[M_NUMA_HIT][1] == 21 && sums[M_LOCK_CONTENTIONS][1] == 4 &&
                           sums[M_LOCK_CONTENTIONS][0] == 0, "scaled, node rows, NULLs left out");
                }
                ok(store_series(rd, "context_switches", SERIES_ALL, 0, t0, t0 + 3 * S, 2 * S, &pts, &n) == 0,
                   "stepped query");
                ok(n == 2 && pts[0].value + pts[1].value == 336 && pts[0].dur_ns + pts[1].dur_ns == 3 * S,
                   "buckets keep every count and every second");
                free(pts);
                ok(store_series(rd, "context_switches", SERIES_ALL, 0, t0 + S, t0 + 2 * S, 0, &pts, &n) == 0 && n == 1 &&
                   pts[0].value == 112, "time range selects by tick start");
                free(pts);
                is_int(store_series(rd, "no_such_metric", SERIES_ALL, 0, t0, t0 + S, 0, &pts, &n), -ENOENT,
                       "unknown metric");
                {
                        struct store_summary sum;
                        ok(store_summary(rd, &sum) == 0 && sum.ticks == 3 && sum.first_t == t0 &&
                           sum.last_t == t0 + 3 * S && sum.ncpus == 4 && sum.nnodes == 2 && sum.online_cpus == 3,
                           "summary");
                }
                {
                        struct host_info g = { 0 };
                        ok(store_host_get(rd, &g) == 0 && strcmp(g.hostname, "box") == 0 && g.ncpus == 4,
                           "host read back");
                        host_info_clear(&g);
                }
                rd = store_close(rd);
        }
        w = store_close(w);

        /* reopen as writer: nothing to migrate, data kept */
        is_int(store_open(db, STORE_WRITE, &w, &err), 0, "reopen");
        if (w) {
                ok(store_series(w, "context_switches", SERIES_ALL, 0, t0, t0 + 3 * S, 0, &pts, &n) == 0 && n == 3,
                   "data survives a reopen");
                free(pts);
                store_close(w);
        }
        {
                char sql[128];
                snprintf(sql, sizeof sql, "PRAGMA integrity_check");
                ok(raw_exec(db, sql) == 0, "integrity_check runs");
        }
}

/* Points a and b the same, to the bit. */
static bool same_points(const struct series_point *a, const struct series_point *b, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (a[i].t_ns != b[i].t_ns || a[i].dur_ns != b[i].dur_ns || a[i].value != b[i].value ||
                    a[i].not_counted != b[i].not_counted)
                        return false;
        return true;
}

/* store_series_cpus() against store_series() for each CPU, on rows with
 * NULLs, runs of zeros, missing rows, and CPUs past the topology. */
static void test_series_cpus(void)
{
        enum { NC = 6, NT = 200 };
        static const char *const metrics[] = { "context_switches", "cpu_user" };
        char db[512];
        struct store *w = NULL, *rd = NULL;
        char *err = NULL;
        int node_of[NC] = { 0, 0, 0, 1, 1, 1 };
        bool online[NC] = { true, true, true, true, true, true };
        const int64_t S = 1000000000LL, t0 = 1796031478LL * S;
        unsigned x = 12345;
        bool all_same = true, some_null = false;

        path(db, sizeof db, "cpus.db");
        is_int(store_open(db, STORE_WRITE, &w, &err), 0, "create");
        if (!w)
                return;
        fill_catalogue(w);
        ok(store_topology_set(w, NC, node_of, online) == 0, "topology of %d CPUs", NC);
        ok(store_begin(w) == 0, "begin");
        for (int i = 0; i < NT; i++) {
                int64_t tick, vals[NC + 2];
                bool nulls[NC + 2];

                store_add_tick(w, t0 + i * S, S, &tick);
                for (int m = 0; m < 2; m++) {
                        for (int c = 0; c < NC + 2; c++) {
                                x = x * 1103515245u + 12345u;
                                vals[c] = (x >> 16) % 4 ? 0 : (int64_t)((x >> 8) % 100000);
                                nulls[c] = (x >> 4) % 16 == 0;
                                some_null |= nulls[c] && c < NC;
                        }
                        if (i % 7 == 3)         /* no row: every CPU 0 */
                                continue;
                        /* one row in 5 also has CPUs the topology does not */
                        store_add_cpu_values(w, tick, m ? M_CPU_USER : M_CONTEXT_SWITCHES, vals, nulls,
                                             i % 5 ? NC : NC + 2);
                }
        }
        ok(store_commit(w) == 0, "commit");
        ok(some_null, "some CPUs not counted");
        w = store_close(w);

        is_int(store_open(db, STORE_READ, &rd, &err), 0, "reader");
        if (!rd)
                return;
        for (int m = 0; m < 2; m++)
                for (int k = 0; k < 4; k++) {
                        static const int64_t steps[] = { 0, 1, 3, 60 };
                        int64_t since = k == 3 ? t0 + 17 * S : t0, until = k == 3 ? t0 + 150 * S : t0 + NT * S;
                        struct series_point **all = NULL;
                        size_t n = 0;

                        if (store_series_cpus(rd, metrics[m], NC, since, until, steps[k] * S, &all, &n) < 0) {
                                all_same = false;
                                continue;
                        }
                        for (int c = 0; c < NC; c++) {
                                struct series_point *one = NULL;
                                size_t n1 = 0;
                                if (store_series(rd, metrics[m], SERIES_CPU, c, since, until, steps[k] * S, &one,
                                                 &n1) < 0 || n1 != n || !same_points(one, all[c], n))
                                        all_same = false;
                                free(one);
                                free(all[c]);
                        }
                        free(all);
                }
        ok(all_same, "every CPU's series as store_series gives it, with and without steps");
        {
                struct series_point **all = NULL;
                size_t n = 1;
                ok(store_series_cpus(rd, "context_switches", NC, t0 - 10 * S, t0, 0, &all, &n) == 0 && n == 0,
                   "no ticks in range: no points");
                if (all)
                        for (int c = 0; c < NC; c++)
                                free(all[c]);
                free(all);
                is_int(store_series_cpus(rd, "numa_hit", NC, t0, t0 + S, 0, &all, &n), -EINVAL,
                       "a node-scope metric is refused");
                is_int(store_series_cpus(rd, "no_such_metric", NC, t0, t0 + S, 0, &all, &n), -ENOENT,
                       "unknown metric");
        }
        rd = store_close(rd);

        /* a truncated token: both fail the same way */
        ok(raw_exec(db, "UPDATE cpu_sample SET vals = x'ff' WHERE tick = 3") == 0, "corrupt a row");
        is_int(store_open(db, STORE_READ, &rd, &err), 0, "reader");
        if (rd) {
                struct series_point **all = NULL, *one = NULL;
                size_t n;
                is_int(store_series_cpus(rd, "context_switches", NC, t0, t0 + NT * S, 0, &all, &n), -EBADMSG,
                       "corrupt blob: -EBADMSG");
                contains(store_errmsg(rd), "corrupt cpu_sample row", "and says which row");
                is_int(store_series(rd, "context_switches", SERIES_CPU, 0, t0, t0 + NT * S, 0, &one, &n), -EBADMSG,
                       "as store_series does");
                store_close(rd);
        }
}

static void test_schema_versions(void)
{
        char db[512], sql[128];
        struct store *s = NULL;
        char *err = NULL;

        path(db, sizeof db, "newer.db");
        ok(store_open(db, STORE_WRITE, &s, &err) == 0, "create");
        store_close(s);
        s = NULL;
        snprintf(sql, sizeof sql, "PRAGMA user_version = %d", store_latest_schema_version() + 1);
        ok(raw_exec(db, sql) == 0, "pretend a newer scalemon wrote it");
        is_int(store_open(db, STORE_WRITE, &s, &err), -EPROTONOSUPPORT, "writer refuses a newer schema");
        contains(err, "newer than this scalemon knows", "and says so");
        free(err);
        err = NULL;
        is_int(store_open(db, STORE_READ, &s, &err), -EPROTONOSUPPORT, "reader refuses a newer schema");
        free(err);
        err = NULL;
        ok(raw_exec(db, "PRAGMA integrity_check") == 0, "refused database is intact");

        /* an older version: the first migration only, then open */
        path(db, sizeof db, "older.db");
        ok(raw_exec(db, schema_migrations[0].sql) == 0 && raw_exec(db, "PRAGMA user_version = 1") == 0,
           "database at schema 1");
        is_int(store_open(db, STORE_WRITE, &s, &err), 0, "opens");
        if (s) {
                is_int(store_schema_version(s), store_latest_schema_version(), "migrated to the latest");
                s = store_close(s);
        }

        /* schema 2 with two runs sharing a context and one with another:
         * 0003 moves the pairs into shared sets, run_context reads the same */
        path(db, sizeof db, "v2.db");
        ok(raw_exec(db, schema_migrations[0].sql) == 0 && raw_exec(db, schema_migrations[1].sql) == 0 &&
                   raw_exec(db, "PRAGMA user_version = 2") == 0 &&
                   raw_exec(db, "INSERT INTO host (id, machine_id, hostname, kernel, ncpus, nnodes, first_seen, last_seen) "
                                "VALUES (1, 'm', 'h', 'k', 2, 1, 0, 0);"
                                "INSERT INTO run (id, name, host, status, start, end) VALUES "
                                "(1, 'a', 1, 'done', 0, 1), (2, 'b', 1, 'done', 1, 2), (3, 'c', 1, 'done', 2, 3);"
                                "INSERT INTO run_context VALUES (1, 'thp', 'always'), (1, 'kernel', '6.1'), "
                                "(2, 'thp', 'always'), (2, 'kernel', '6.1'), (3, 'thp', 'never');") == 0,
           "database at schema 2 with three runs' contexts");
        is_int(store_open(db, STORE_WRITE, &s, &err), 0, "opens");
        if (s) {
                is_int(store_schema_version(s), store_latest_schema_version(), "migrated to the latest");
                s = store_close(s);
        }
        is_int(raw_count(db, "SELECT count(*) FROM run_context"), 5, "run_context still has the 5 pairs");
        is_int(raw_count(db, "SELECT count(*) FROM run_context WHERE run = 2 AND key = 'thp' AND value = 'always'"), 1,
               "run b's context reads the same");
        is_int(raw_count(db, "SELECT count(*) FROM run WHERE context IS NOT NULL"), 3, "each run points to its set");

        /* schema 3 with per-CPU rows in sample: 0004 packs them */
        path(db, sizeof db, "v3.db");
        ok(raw_exec(db, schema_migrations[0].sql) == 0 && raw_exec(db, schema_migrations[1].sql) == 0 &&
                   raw_exec(db, schema_migrations[2].sql) == 0 && raw_exec(db, "PRAGMA user_version = 3") == 0 &&
                   raw_exec(db, "INSERT INTO metric (id, name, scope, unit, source) VALUES "
                                "(1, 'context_switches', 'cpu', 'x', 's'), (2, 'numa_hit', 'node', 'x', 's');"
                                "INSERT INTO tick (id, t, dur) VALUES (1, 0, 1), (2, 1, 1);"
                                "INSERT INTO sample VALUES (1, 1, 0, 5), (1, 1, 3, NULL), (1, 1, 200, 70000),"
                                "(1, 2, 1, 9), (2, 1, 0, 11), (2, 2, 1, 12);") == 0,
           "database at schema 3 with cpu and node rows");
        is_int(store_open(db, STORE_WRITE, &s, &err), 0, "opens");
        if (s) {
                is_int(store_schema_version(s), store_latest_schema_version(), "migrated to the latest");
                s = store_close(s);
        }
        is_int(raw_count(db, "SELECT count(*) FROM sample"), 2, "sample keeps the node rows only");
        is_int(raw_count(db, "SELECT count(*) FROM cpu_sample"), 2, "one cpu_sample row per tick");
        is_int(raw_count(db, "SELECT count(*) FROM cpu_sample WHERE tick = 1 AND total IS NULL AND "
                             "hex(vals) = '0700000100C201F2A204'"), 1,
               "tick 1: 5, two zeros, NULL, a run of 196 zeros, 70000");
        is_int(raw_count(db, "SELECT total FROM cpu_sample WHERE tick = 2 AND hex(vals) = '020B'"), 9,
               "tick 2: total 9, CPU 1 = 9");

        /* schema 6 with run totals: 0007 rebuilds run_total with level 'cgroup' and keeps every row (and
         * 0008 adds lock objects).  The
         * database is made at the latest version and taken back to 6 (run_total as 0002 made it: 0004
         * needs scalemon's SQL functions, which a raw connection lacks) */
        path(db, sizeof db, "v6.db");
        is_int(store_open(db, STORE_WRITE, &s, &err), 0, "create a database to take back to schema 6");
        s = store_close(s);
        ok(raw_exec(db, "DROP VIEW run_totals; DROP TABLE run_total; DROP TABLE run_own_sample;"
                        "DROP TABLE run_lock_object; ALTER TABLE run_lock DROP COLUMN locks;"
                        "ALTER TABLE run_lock DROP COLUMN own_contended;"
                        "ALTER TABLE run_lock DROP COLUMN own_total_wait_ns;"
                        "ALTER TABLE run_lock_lost DROP COLUMN nested;"
                        "ALTER TABLE run DROP COLUMN voluntary_switches;"
                        "ALTER TABLE run DROP COLUMN involuntary_switches;"
                        "CREATE TABLE run_total (run INTEGER NOT NULL REFERENCES run (id) ON DELETE CASCADE,"
                        " metric INTEGER NOT NULL REFERENCES metric (id),"
                        " level TEXT NOT NULL CHECK (level IN ('cpu', 'node', 'system')), loc INTEGER NOT NULL,"
                        " value REAL NOT NULL, PRIMARY KEY (run, metric, level, loc)) WITHOUT ROWID;"
                        "CREATE VIEW run_totals AS SELECT run.name AS run, metric.name AS metric,"
                        " run_total.level AS level, run_total.loc AS loc, run_total.value AS value FROM run_total"
                        " JOIN run ON run.id = run_total.run JOIN metric ON metric.id = run_total.metric;"
                        "PRAGMA user_version = 6;"
                        "INSERT INTO host (id, machine_id, hostname, kernel, ncpus, nnodes, first_seen, "
                        "last_seen) VALUES (1, 'm', 'h', 'k', 2, 1, 0, 0);"
                        "INSERT OR IGNORE INTO metric (id, name, scope, unit, source) VALUES "
                        "(1, 'context_switches', 'cpu', 'x', 's');"
                        "INSERT INTO run (id, name, host, status, start, end) VALUES (1, 'a', 1, 'done', 0, 1);"
                        "INSERT INTO run_total VALUES (1, 1, 'cpu', 0, 10), (1, 1, 'cpu', 1, 32),"
                        "(1, 1, 'node', 0, 42), (1, 1, 'system', 0, 42);") == 0,
           "database at schema 6 with a run's totals");
        is_int(store_open(db, STORE_WRITE, &s, &err), 0, "opens");
        if (s) {
                is_int(store_schema_version(s), store_latest_schema_version(), "migrated to the latest");
                s = store_close(s);
        }
        is_int(raw_count(db, "SELECT count(*) FROM run_total"), 4, "run_total keeps its 4 rows");
        is_int(raw_count(db, "SELECT value FROM run_totals WHERE run = 'a' AND level = 'system'"), 42,
               "and the run_totals view reads them");
        is_int(raw_exec(db, "INSERT INTO run_total VALUES (1, 1, 'cgroup', 0, 40)"), 0, "level 'cgroup' is accepted");
        ok(raw_exec(db, "INSERT INTO run_total VALUES (1, 1, 'pod', 0, 1)") != 0, "an unknown level is not");
        is_int(raw_count(db, "SELECT count(*) FROM run r JOIN run_total t ON t.run = r.id WHERE r.name = 'a'"), 5,
               "the foreign key to run holds");
        is_int(raw_count(db, "SELECT count(*) FROM run WHERE voluntary_switches IS NULL AND involuntary_switches IS NULL"),
               1, "the run's context switch columns are there, NULL for a run from before");
        is_int(raw_exec(db, "INSERT INTO run_own_sample VALUES (1, 5, 1, 12.5)"), 0, "run_own_sample is there");
        is_int(raw_exec(db, "PRAGMA foreign_keys = ON; DELETE FROM run WHERE name = 'a'"), 0, "delete the run");
        is_int(raw_count(db, "SELECT count(*) FROM run_own_sample"), 0, "its own samples go with it");

        path(db, sizeof db, "foreign.db");
        ok(raw_exec(db, "CREATE TABLE t (x)") == 0, "some other program's database");
        is_int(store_open(db, STORE_WRITE, &s, &err), -EMEDIUMTYPE, "not a scalemon database: refused");
        contains(err, "not a scalemon one", "and says so");
        free(err);
        err = NULL;

        path(db, sizeof db, "missing.db");
        is_int(store_open(db, STORE_READ, &s, &err), -ENOENT, "reader: missing database");
        contains(err, "no database at", "says so");
        free(err);
        ok(access(db, F_OK) < 0, "reader did not create it");
}

/* A new database's page size follows the CPU count; an
 * existing one keeps its own */
static void test_page_size(void)
{
        char db[512];
        struct store *w = NULL;
        char *err = NULL;

        is_int(store_page_size_for(2), 1024, "2 CPUs: 1 KiB pages");
        is_int(store_page_size_for(16), 1024, "16 CPUs: 1 KiB pages");
        is_int(store_page_size_for(17), 4096, "17 CPUs: 4 KiB pages");
        is_int(store_page_size_for(64), 4096, "64 CPUs: 4 KiB pages");
        is_int(store_page_size_for(65), 16384, "65 CPUs: 16 KiB pages");
        is_int(store_page_size_for(1024), 16384, "1024 CPUs: 16 KiB pages");
        path(db, sizeof db, "small.db");
        is_int(store_open_sized(db, 4096, &w, &err), 0, "create with 4 KiB pages");
        w = store_close(w);
        is_int(raw_count(db, "PRAGMA page_size"), 4096, "the new database has 4 KiB pages");
        is_int(store_open_sized(db, 16384, &w, &err), 0, "open it again asking for 16 KiB");
        w = store_close(w);
        is_int(raw_count(db, "PRAGMA page_size"), 4096, "it keeps its 4 KiB pages");
        path(db, sizeof db, "large.db");
        is_int(store_open(db, STORE_WRITE, &w, &err), 0, "store_open creates");
        w = store_close(w);
        is_int(raw_count(db, "PRAGMA page_size"), 16384, "with 16 KiB pages");
        free(err);
}

/* Events in the database file alone, without its log: a copy of the
 * file, read with no -wal beside it. */
static int events_in_file(const char *db)
{
        char copy[512], cmd[4 * 512 + 64];

        path(copy, sizeof copy, "ckpt-copy.db");
        snprintf(cmd, sizeof cmd, "rm -f %s %s-wal %s-shm && cp %s %s", copy, copy, copy, db, copy);
        if (system(cmd) != 0)
                return -1;
        return raw_count(copy, "SELECT count(*) FROM event WHERE kind = 'test'");
}

/* The minute's checkpoint: at the log's size, or once it is quiet (a
 * write since the last checkpoint, none since the last call).  What
 * tells: the rows are in the database file without its log. */
static void test_checkpoint_due(void)
{
        char db[512];
        struct store *w = NULL;
        char *err = NULL;
        int64_t tick;

        path(db, sizeof db, "ckpt.db");
        is_int(store_open_sized(db, 1024, &w, &err), 0, "create");
        is_int(store_checkpoint(w, true), 0, "the schema into the file");
        ok(store_begin(w) == 0 && store_add_tick(w, 1000000000, 1000000000, &tick) == 0 &&
           store_add_event(w, 2000000000, "test", -1, NULL) == 0 && store_commit(w) == 0, "a commit");
        is_int(store_checkpoint_due(w, 1LL << 30), 0, "the first call after it");
        is_int(events_in_file(db), 0, "copies nothing: the log is not quiet yet");
        is_int(store_checkpoint_due(w, 1LL << 30), 0, "the next call, nothing written since");
        is_int(events_in_file(db), 1, "copies the log into the file");
        ok(store_begin(w) == 0 && store_add_event(w, 3000000000, "test", -1, NULL) == 0 && store_commit(w) == 0,
           "another commit");
        is_int(store_checkpoint_due(w, 1LL << 30), 0, "a call after it");
        is_int(store_checkpoint_due(w, 1), 0, "a call with the log past min_wal");
        is_int(events_in_file(db), 2, "copies it at once");
        w = store_close(w);
        free(err);
}

int main(void)
{
        if (!mkdtemp(dir)) {
                printf("Bail out! mkdtemp\n");
                return 1;
        }
        test_new_and_roundtrip();
        test_series_cpus();
        test_schema_versions();
        test_page_size();
        test_checkpoint_due();
        {
                char cmd[600];
                snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
                if (system(cmd) != 0)
                        printf("# could not remove %s\n", dir);
        }
        return tap_done();
}
