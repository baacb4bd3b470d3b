/* bench-store.c - what the sparse sample layout buys (per-CPU values
 * packed one row per tick and metric since schema 0004), measured side by
 * side with the obvious dense one (one row per metric, tick and location,
 * zeros included, rowid table with an index), on the same synthetic hour
 * of a large machine: file size, write time, and the time to read one
 * metric's system-wide series over ten minutes.
 *
 * Targets: sparse file <= 1/2 of dense; write and query no slower than
 * dense.  Then runs: reading 50 runs' totals (what report does) from that
 * database of 2.5 million samples, side by side with a database holding
 * the same runs and no samples.  Target: within 1.5x (report never scans
 * samples).  And the per-CPU series of one metric over those ten minutes
 * (query --per cpu), read in one pass, side by side with one
 * store_series() per CPU.  Target: <= 1/4 of the time.
 */
#include "config.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store.h"
#include "timeutil.h"

#define NCPU   80
#define NNODE  8
#define TICKS  3600

/* How busy each metric is on a loaded 80-CPU box: share of CPUs with a
 * non-zero delta per tick, and the typical size of that delta. */
static void synth(int m, int cpu, int tick, int64_t *v)
{
        unsigned x = (unsigned)(m * 7919 + cpu * 104729 + tick * 1299709);
        x ^= x >> 13;
        x *= 0x5bd1e995u;
        x ^= x >> 15;
        *v = 0;
        switch (metric_table[m].source) {
        case SRC_PERF_SW:
                if (m == M_PAGE_FAULTS_MAJOR)
                        *v = x % 200 == 0;
                else
                        *v = 50 + x % 2000;
                break;
        case SRC_TRACEPOINT:
                if (m == M_LOCK_CONTENTIONS && x % 3 == 0)
                        *v = x % 400;
                break;
        case SRC_PROCSTAT:
                if (m == M_CPU_USER || m == M_CPU_SYSTEM || m == M_CPU_IDLE)
                        *v = x % 100;
                else if (m == M_CPU_SOFTIRQ || m == M_CPU_IRQ)
                        *v = x % 10 == 0;
                break;
        case SRC_NUMASTAT:
                if (cpu < NNODE && (m == M_NUMA_HIT || m == M_NUMA_LOCAL))
                        *v = 1000 + x % 5000;
                break;
        case SRC_VMSTAT:
                if (cpu == 0 && (m == M_THP_FAULT_ALLOC || m == M_THP_SPLIT_PMD) && x % 5 == 0)
                        *v = x % 30;
                break;
        default:
                break;
        }
}

static int nloc(int m)
{
        return metric_table[m].scope == SCOPE_CPU ? NCPU : metric_table[m].scope == SCOPE_NODE ? NNODE : 1;
}

static double now_s(void)
{
        return (double)now_monotonic_ns() / 1e9;
}

static long long fsize(const char *p)
{
        struct stat st;
        char w[600];
        long long n = stat(p, &st) == 0 ? st.st_size : 0;
        snprintf(w, sizeof w, "%s-wal", p);
        if (stat(w, &st) == 0)
                n += st.st_size;
        return n;
}

/* 50 runs with exact totals for every metric on every CPU. */
static void add_runs(struct store *st)
{
        const int64_t S = 1000000000LL, t0 = 1796031478LL * S;
        struct store_total *tot = calloc((size_t)_M_MAX * (NCPU + NNODE + 1), sizeof *tot);
        int64_t host, id;
        struct host_info h = { .machine_id = "bench", .hostname = "bench", .kernel = "6.1", .cpu_model = "x",
                               .ncpus = NCPU, .nnodes = NNODE };

        store_host_update(st, &h, t0, &host);
        for (int r = 0; r < 50; r++) {
                char name[32];
                struct store_kv tag = { "ways", "80" };
                size_t n = 0;
                snprintf(name, sizeof name, "run%02d", r);
                struct run_new rn = { .name = name, .host = host, .start = t0 + r * 60 * S, .start_tick = r * 60,
                                      .tags = &tag, .ntags = 1 };
                store_run_insert(st, &rn, &id);
                for (int m = 0; m < _M_MAX; m++) {
                        for (int c = 0; c < NCPU && metric_table[m].scope == SCOPE_CPU; c++)
                                tot[n++] = (struct store_total){ .level = LEVEL_CPU, .loc = c, .value = m * c };
                        for (int nd = 0; nd < NNODE && metric_table[m].scope != SCOPE_SYSTEM; nd++)
                                tot[n++] = (struct store_total){ .level = LEVEL_NODE, .loc = nd, .value = m };
                        tot[n++] = (struct store_total){ .level = LEVEL_SYSTEM, .loc = 0, .value = m };
                        for (size_t k = n; k > 0 && tot[k - 1].metric[0] == 0; k--)
                                snprintf(tot[k - 1].metric, sizeof tot[k - 1].metric, "%s", metric_table[m].name);
                }
                struct run_end re = { .status = "done", .end = t0 + (r * 60 + 50) * S, .end_tick = r * 60 + 50,
                                      .totals = tot, .ntotals = n };
                store_run_finish(st, id, &re);
        }
        free(tot);
}

/* What report reads: the runs in range and each one's details. */
static double time_report(const char *path)
{
        struct run_filter f = { .since = INT64_MIN, .until = INT64_MAX };
        struct run_info *runs;
        struct store *rd;
        char *err = NULL;
        size_t n;
        double t;

        store_open(path, STORE_READ, &rd, &err);
        t = (double)now_monotonic_ns();
        for (int i = 0; i < 10; i++) {
                store_runs_list(rd, &f, &runs, &n);
                for (size_t k = 0; k < n; k++) {
                        struct run_detail d;
                        store_run_detail(rd, runs[k].id, &d);
                        run_detail_free(&d);
                }
                run_infos_free(runs, n);
        }
        t = ((double)now_monotonic_ns() - t) / 10 / 1e9;
        store_close(rd);
        return t;
}

int main(void)
{
        char dir[] = "/tmp/scalemon-bench.XXXXXX", sparse[600], dense[600];
        const int64_t S = 1000000000LL, t0 = 1796031478LL * S;
        double t_ws, t_wd, t_qs, t_qd, t_p1 = 0, t_pn = 0, sum_s = 0, sum_d = 0;
        bool per_same = true;
        struct store *st;
        sqlite3 *db;
        sqlite3_stmt *ins, *q;
        char *err = NULL;
        int64_t v;

        if (!mkdtemp(dir))
                return 1;
        snprintf(sparse, sizeof sparse, "%s/sparse.db", dir);
        snprintf(dense, sizeof dense, "%s/dense.db", dir);

        /* --- sparse: the real store --- */
        if (store_open(sparse, STORE_WRITE, &st, &err) < 0) {
                fprintf(stderr, "bench-store: %s\n", err);
                return 1;
        }
        {
                bool avail[_M_MAX];
                for (int m = 0; m < _M_MAX; m++)
                        avail[m] = true;
                store_metrics_sync(st, avail, NULL, NULL);
        }
        t_ws = now_s();
        for (int k = 0; k < TICKS; k++) {
                int64_t id;
                store_begin(st);
                store_add_tick(st, t0 + k * S, S, &id);
                for (int m = 0; m < _M_MAX; m++) {
                        int64_t cpu[NCPU];
                        for (int c = 0; c < nloc(m); c++) {
                                synth(m, c, k, &v);
                                if (metric_table[m].scope == SCOPE_CPU)
                                        cpu[c] = v;
                                else
                                        store_add_sample(st, id, m, c, v, false);
                        }
                        if (metric_table[m].scope == SCOPE_CPU)
                                store_add_cpu_values(st, id, m, cpu, NULL, NCPU);
                }
                store_commit(st);
        }
        store_checkpoint(st, true);
        t_ws = now_s() - t_ws;

        /* --- dense: every value, rowid table plus an index --- */
        sqlite3_open(dense, &db);
        sqlite3_exec(db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
                         "CREATE TABLE d (tick INTEGER, t INTEGER, metric INTEGER, loc INTEGER, value INTEGER);"
                         "CREATE INDEX d_by_metric ON d (metric, t);", NULL, NULL, NULL);
        sqlite3_prepare_v2(db, "INSERT INTO d VALUES (?1, ?2, ?3, ?4, ?5)", -1, &ins, NULL);
        t_wd = now_s();
        for (int k = 0; k < TICKS; k++) {
                sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
                for (int m = 0; m < _M_MAX; m++)
                        for (int c = 0; c < nloc(m); c++) {
                                synth(m, c, k, &v);
                                sqlite3_bind_int(ins, 1, k);
                                sqlite3_bind_int64(ins, 2, t0 + k * S);
                                sqlite3_bind_int(ins, 3, m);
                                sqlite3_bind_int(ins, 4, c);
                                sqlite3_bind_int64(ins, 5, v);
                                sqlite3_step(ins);
                                sqlite3_reset(ins);
                        }
                sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
        }
        sqlite3_wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
        t_wd = now_s() - t_wd;

        /* --- query: context_switches system-wide over the last ten
         * minutes, per tick, 20 times --- */
        {
                struct store *rd;
                struct series_point *pts;
                size_t n;
                store_close(st);
                store_open(sparse, STORE_READ, &rd, &err);
                t_qs = now_s();
                for (int i = 0; i < 20; i++) {
                        store_series(rd, "context_switches", SERIES_ALL, 0, t0 + 3000 * S, t0 + 3600 * S, 0, &pts, &n);
                        sum_s = 0;
                        for (size_t j = 0; j < n; j++)
                                sum_s += pts[j].value;
                        free(pts);
                }
                t_qs = (now_s() - t_qs) / 20;

                /* --- the same ten minutes per CPU: one pass, then one
                 * store_series per CPU --- */
                for (int i = 0; i < 5; i++) {
                        struct series_point **all = NULL, *one;
                        size_t n1;
                        double t = now_s();
                        store_series_cpus(rd, "context_switches", NCPU, t0 + 3000 * S, t0 + 3600 * S, 0, &all, &n);
                        t_p1 += now_s() - t;
                        t = now_s();
                        for (int c = 0; c < NCPU; c++) {
                                store_series(rd, "context_switches", SERIES_CPU, c, t0 + 3000 * S, t0 + 3600 * S, 0,
                                             &one, &n1);
                                per_same &= all && n1 == n;
                                for (size_t j = 0; per_same && j < n; j++)
                                        per_same &= one[j].value == all[c][j].value;
                                free(one);
                        }
                        t_pn += now_s() - t;
                        for (int c = 0; all && c < NCPU; c++)
                                free(all[c]);
                        free(all);
                }
                t_p1 /= 5;
                t_pn /= 5;
                store_close(rd);
        }
        sqlite3_prepare_v2(db, "SELECT t, sum(value) FROM d WHERE metric = ?1 AND t >= ?2 AND t < ?3 GROUP BY t ORDER BY t",
                           -1, &q, NULL);
        t_qd = now_s();
        for (int i = 0; i < 20; i++) {
                sqlite3_bind_int(q, 1, M_CONTEXT_SWITCHES);
                sqlite3_bind_int64(q, 2, t0 + 3000 * S);
                sqlite3_bind_int64(q, 3, t0 + 3600 * S);
                sum_d = 0;
                while (sqlite3_step(q) == SQLITE_ROW)
                        sum_d += sqlite3_column_double(q, 1);
                sqlite3_reset(q);
        }
        t_qd = (now_s() - t_qd) / 20;
        sqlite3_finalize(ins);
        sqlite3_finalize(q);
        sqlite3_close(db);

        printf("bench-store: %d CPUs, %d nodes, %d one-second ticks, %d metrics\n", NCPU, NNODE, TICKS, _M_MAX);
        printf("  file size   sparse %8.1f MiB   dense %8.1f MiB   ratio %.2f  (target <= 0.50)  %s\n",
               fsize(sparse) / 1048576.0, fsize(dense) / 1048576.0, (double)fsize(sparse) / (double)fsize(dense),
               (double)fsize(sparse) / (double)fsize(dense) <= 0.5 ? "PASS" : "MISS");
        printf("  bytes/tick  sparse %8.0f       dense %8.0f\n", (double)fsize(sparse) / TICKS,
               (double)fsize(dense) / TICKS);
        printf("  write       sparse %8.2f s     dense %8.2f s     ratio %.2f  (target <= 1.00)  %s\n", t_ws, t_wd,
               t_ws / t_wd, t_ws / t_wd <= 1.0 ? "PASS" : "MISS");
        printf("  query 10min sparse %8.2f ms    dense %8.2f ms    ratio %.2f  (target <= 1.00)  %s\n", t_qs * 1e3,
               t_qd * 1e3, t_qs / t_qd, t_qs / t_qd <= 1.0 ? "PASS" : "MISS");
        printf("  same answer: %s (%.0f)\n", sum_s == sum_d ? "yes" : "NO", sum_s);
        printf("  query 10min per CPU  one pass %8.2f ms   per CPU %8.2f ms   ratio %.2f  (target <= 0.25)  %s\n",
               t_p1 * 1e3, t_pn * 1e3, t_p1 / t_pn, t_p1 / t_pn <= 0.25 ? "PASS" : "MISS");
        printf("  same answer per CPU: %s\n", per_same ? "yes" : "NO");
        {
                char empty[600];
                struct store *w;
                double with, without;
                snprintf(empty, sizeof empty, "%s/runs-only.db", dir);
                store_open(sparse, STORE_WRITE, &w, &err);
                add_runs(w);
                store_close(w);
                store_open(empty, STORE_WRITE, &w, &err);
                {
                        bool avail[_M_MAX];
                        for (int m = 0; m < _M_MAX; m++)
                                avail[m] = true;
                        store_metrics_sync(w, avail, NULL, NULL);
                }
                add_runs(w);
                store_close(w);
                with = time_report(sparse);
                without = time_report(empty);
                printf("  report of 50 runs: beside the hour of samples above %.2f ms, with no samples %.2f ms, "
                       "ratio %.2f (target <= 1.50)  %s\n",
                       with * 1e3, without * 1e3, with / without,
                       with / without <= 1.5 ? "PASS" : "MISS");
        }
        {
                char cmd[700];
                snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
                if (system(cmd) != 0)
                        return 1;
        }
        return sum_s == sum_d && per_same ? 0 : 1;
}
