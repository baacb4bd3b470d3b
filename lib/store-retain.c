/* store-retain.c - old intervals rolled up and deleted (schema 0005).
 *
 * Ticks from a run's start tick to its end tick (to the newest one, for a
 * run still open) are kept as they are: never merged, never deleted.
 * The others age.  Those of one rollup bucket (rollup_interval, aligned
 * on the epoch) are merged into one tick once the bucket ended before a
 * cutoff, and the oldest are deleted.  Each call does one small piece of
 * work in one transaction, so that the daemon can interleave it with
 * sampling; cursors the caller keeps make a call that finds nothing to do
 * cost one or two indexed lookups.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "packed.h"
#include "store-internal.h"

/* An id range [lo, hi] of kept ticks. */
struct kept {
        int64_t lo, hi;
};

/* Every run's range, sorted and merged. */
static int kept_load(struct store *s, struct kept **ret, size_t *ret_n)
{
        sqlite3_stmt *st;
        struct kept *k = NULL;
        size_t n = 0, cap = 0;
        int r;

        if (sqlite3_prepare_v2(s->db,
                               "SELECT start_tick, coalesce(end_tick, 9223372036854775807) FROM run ORDER BY start_tick",
                               -1, &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, "runs' intervals");
        while ((r = sqlite3_step(st)) == SQLITE_ROW) {
                int64_t lo = sqlite3_column_int64(st, 0), hi = sqlite3_column_int64(st, 1);

                if (hi < lo)
                        continue;
                if (n > 0 && lo <= k[n - 1].hi + 1) {
                        k[n - 1].hi = MAX(k[n - 1].hi, hi);
                        continue;
                }
                if (n == cap) {
                        struct kept *t = realloc(k, (cap = cap ? cap * 2 : 64) * sizeof *k);
                        if (!t) {
                                sqlite3_finalize(st);
                                free(k);
                                return -ENOMEM;
                        }
                        k = t;
                }
                k[n++] = (struct kept){ lo, hi };
        }
        sqlite3_finalize(st);
        if (r != SQLITE_DONE) {
                free(k);
                return store_sqlite_error(s, "runs' intervals");
        }
        *ret = k;
        *ret_n = n;
        return 0;
}

/* The first range that ends at or after id, or n. */
static size_t kept_find(const struct kept *k, size_t n, int64_t id)
{
        size_t lo = 0, hi = n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (k[mid].hi < id)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

static bool kept_has(const struct kept *k, size_t n, int64_t id)
{
        size_t i = kept_find(k, n, id);
        return i < n && k[i].lo <= id;
}

static int step_done(struct store *s, sqlite3_stmt *st, const char *what)
{
        int r = sqlite3_step(st);

        sqlite3_finalize(st);
        return r == SQLITE_DONE ? 0 : store_sqlite_error(s, what);
}

/* The ticks of one merge: those of the bucket [b, e) with ids in [a, z]. */
#define SEGMENT "SELECT id FROM tick WHERE id BETWEEN ?1 AND ?2 AND t >= ?3 AND t < ?4"

struct segment {
        int64_t a, z;           /* first and last id */
        int64_t b, e;           /* the bucket */
        int64_t dur, n;         /* their sums */
        int64_t count;          /* how many ticks */
};

static sqlite3_stmt *seg_prepare(struct store *s, const struct segment *g, const char *sql)
{
        sqlite3_stmt *st;

        if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) {
                store_sqlite_error(s, "rollup");
                return NULL;
        }
        sqlite3_bind_int64(st, 1, g->a);
        sqlite3_bind_int64(st, 2, g->z);
        sqlite3_bind_int64(st, 3, g->b);
        sqlite3_bind_int64(st, 4, g->e);
        return st;
}

/* Delete a table's rows of the segment (sql: "DELETE ... IN (SEGMENT)"). */
static int seg_delete(struct store *s, const struct segment *g, const char *sql)
{
        sqlite3_stmt *st = seg_prepare(s, g, sql);

        return st ? step_done(s, st, "rollup") : -EIO;
}

/* One metric's per-CPU sums over a segment. */
struct cpu_sums {
        int64_t metric;
        int64_t *sum;
        int *nulls;             /* in how many ticks the CPU was not counted */
        int ncpus;
        bool max;               /* a maximum (lock_wait_max_ns): merged by max, not summed */
};

static int sums_add(struct cpu_sums *p, int cpu, int64_t v, bool isnull)
{
        if (cpu >= p->ncpus) {
                int n = MAX(cpu + 1, 2 * p->ncpus);
                int64_t *sum = realloc(p->sum, (size_t)n * sizeof *sum);
                int *nulls;

                if (!sum)
                        return -ENOMEM;
                p->sum = sum;
                nulls = realloc(p->nulls, (size_t)n * sizeof *nulls);
                if (!nulls)
                        return -ENOMEM;
                p->nulls = nulls;
                memset(p->sum + p->ncpus, 0, (size_t)(n - p->ncpus) * sizeof *sum);
                memset(p->nulls + p->ncpus, 0, (size_t)(n - p->ncpus) * sizeof *nulls);
                p->ncpus = n;
        }
        if (isnull)
                p->nulls[cpu]++;
        else if (p->max)
                p->sum[cpu] = MAX(p->sum[cpu], v);
        else
                p->sum[cpu] = (int64_t)((uint64_t)p->sum[cpu] + (uint64_t)v);
        return 0;
}

/* Write one metric's sums as the merged tick's row.  A CPU is NULL only
 * if it was not counted in any of the count merged intervals; the total
 * is NULL if a CPU is (as store_add_cpu_values() has it). */
static int sums_write(struct store *s, const struct cpu_sums *p, int64_t tick, int64_t count)
{
        _cleanup_free_ bool *isnull = calloc((size_t)MAX(p->ncpus, 1), sizeof *isnull);
        _cleanup_free_ uint8_t *buf = malloc(packed_encode_bound(p->ncpus));
        sqlite3_stmt *st;
        int64_t total = 0;
        bool any = false, null = false;
        size_t len;
        int r;

        if (!isnull || !buf)
                return -ENOMEM;
        for (int i = 0; i < p->ncpus; i++) {
                isnull[i] = p->nulls[i] == count;
                if (isnull[i])
                        null = any = true;
                else if (p->sum[i]) {
                        any = true;
                        total = p->max ? MAX(total, p->sum[i]) : (int64_t)((uint64_t)total + (uint64_t)p->sum[i]);
                }
        }
        if (!any)               /* invariant 6 */
                return 0;
        r = packed_encode(p->sum, isnull, p->ncpus, buf, packed_encode_bound(p->ncpus), &len);
        if (r < 0)
                return r;
        if (sqlite3_prepare_v2(s->db, "INSERT INTO cpu_sample (tick, metric, total, vals) VALUES (?1, ?2, ?3, ?4)", -1,
                               &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, "rollup");
        sqlite3_bind_int64(st, 1, tick);
        sqlite3_bind_int64(st, 2, p->metric);
        if (null)
                sqlite3_bind_null(st, 3);
        else
                sqlite3_bind_int64(st, 3, total);
        sqlite3_bind_blob(st, 4, buf, (int)len, SQLITE_STATIC);
        return step_done(s, st, "rollup");
}

/* cpu_sample: decode every row of the segment, sum per metric and CPU,
 * and replace the rows by one per metric. */
static int merge_cpu(struct store *s, const struct segment *g)
{
        sqlite3_stmt *st = seg_prepare(s, g, "SELECT metric, vals FROM cpu_sample WHERE tick IN (" SEGMENT ") "
                                             "ORDER BY metric");
        struct cpu_sums *m = NULL;
        size_t nm = 0;
        int r = 0, k;

        if (!st)
                return -EIO;
        while (r >= 0 && (k = sqlite3_step(st)) == SQLITE_ROW) {
                int64_t metric = sqlite3_column_int64(st, 0);
                struct packed_iter it;
                int64_t v;
                bool isnull;
                int cpu;

                if (nm == 0 || m[nm - 1].metric != metric) {
                        struct cpu_sums *t = realloc(m, (nm + 1) * sizeof *m);
                        if (!t) {
                                r = -ENOMEM;
                                break;
                        }
                        m = t;
                        k = store_metric_by_rowid(s, metric);
                        m[nm++] = (struct cpu_sums){ .metric = metric, .max = k >= 0 && metric_table[k].max };
                }
                packed_iter_init(&it, sqlite3_column_blob(st, 1), (size_t)sqlite3_column_bytes(st, 1));
                while ((r = packed_next(&it, &cpu, &v, &isnull)) > 0)
                        if ((r = sums_add(&m[nm - 1], cpu, v, isnull)) < 0)
                                break;
                if (r == -EBADMSG)
                        snprintf(s->errmsg, sizeof s->errmsg,
                                 "the packed values of metric %lld in a tick of %lld..%lld are corrupt",
                                 (long long)metric, (long long)g->a, (long long)g->z);
        }
        if (r >= 0 && k != SQLITE_DONE)
                r = store_sqlite_error(s, "rollup");
        sqlite3_finalize(st);
        if (r >= 0) {
                r = seg_delete(s, g, "DELETE FROM cpu_sample WHERE tick IN (" SEGMENT ")");
        }
        for (size_t i = 0; i < nm; i++) {
                if (r >= 0)
                        r = sums_write(s, &m[i], g->a, g->count);
                free(m[i].sum);
                free(m[i].nulls);
        }
        free(m);
        return r;
}

/* sample (node and system metrics): one row per metric and place, the
 * sum over the segment; NULL only if not counted in any interval. */
static int merge_sample(struct store *s, const struct segment *g)
{
        struct row {
                int64_t metric, loc, value;
                bool isnull;
        } *v = NULL;
        size_t nv = 0;
        sqlite3_stmt *st = seg_prepare(s, g, "SELECT metric, loc, count(value), sum(value), count(*) FROM sample "
                                             "WHERE tick IN (" SEGMENT ") GROUP BY metric, loc");
        int r = 0, k;

        if (!st)
                return -EIO;
        while ((k = sqlite3_step(st)) == SQLITE_ROW) {
                struct row *t = realloc(v, (nv + 1) * sizeof *v);
                if (!t) {
                        r = -ENOMEM;
                        break;
                }
                v = t;
                v[nv++] = (struct row){ sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                                        sqlite3_column_int64(st, 3),
                                        sqlite3_column_int64(st, 2) == 0 && sqlite3_column_int64(st, 4) == g->count };
        }
        if (r >= 0 && k != SQLITE_DONE)
                r = store_sqlite_error(s, "rollup");
        sqlite3_finalize(st);
        if (r >= 0) {
                r = seg_delete(s, g, "DELETE FROM sample WHERE tick IN (" SEGMENT ")");
        }
        if (r >= 0 && sqlite3_prepare_v2(s->db, "INSERT INTO sample (tick, metric, loc, value) VALUES (?1, ?2, ?3, ?4)",
                                         -1, &st, NULL) != SQLITE_OK)
                r = store_sqlite_error(s, "rollup");
        else if (r >= 0) {
                for (size_t i = 0; i < nv && r >= 0; i++) {
                        if (!v[i].isnull && v[i].value == 0)    /* samples are sparse */
                                continue;
                        sqlite3_bind_int64(st, 1, g->a);
                        sqlite3_bind_int64(st, 2, v[i].metric);
                        sqlite3_bind_int64(st, 3, v[i].loc);
                        if (v[i].isnull)
                                sqlite3_bind_null(st, 4);
                        else
                                sqlite3_bind_int64(st, 4, v[i].value);
                        if (sqlite3_step(st) != SQLITE_DONE)
                                r = store_sqlite_error(s, "rollup");
                        sqlite3_reset(st);
                }
                sqlite3_finalize(st);
        }
        free(v);
        return r;
}

/* mux: the duty cycle over the merged time (an interval without a row
 * ran at 1). */
static int merge_mux(struct store *s, const struct segment *g)
{
        struct row {
                int64_t cpu;
                char grp[8];
                double lost;    /* ns not counted */
        } *v = NULL;
        size_t nv = 0;
        sqlite3_stmt *st = seg_prepare(s, g, "SELECT mux.cpu, mux.grp, sum((1 - mux.duty) * tick.dur) FROM mux "
                                             "JOIN tick ON tick.id = mux.tick WHERE mux.tick IN (" SEGMENT ") "
                                             "GROUP BY mux.cpu, mux.grp");
        int r = 0, k;

        if (!st)
                return -EIO;
        while ((k = sqlite3_step(st)) == SQLITE_ROW) {
                struct row *t = realloc(v, (nv + 1) * sizeof *v);
                const char *grp = (const char *)sqlite3_column_text(st, 1);
                if (!t) {
                        r = -ENOMEM;
                        break;
                }
                v = t;
                v[nv] = (struct row){ .cpu = sqlite3_column_int64(st, 0), .lost = sqlite3_column_double(st, 2) };
                snprintf(v[nv].grp, sizeof v[nv].grp, "%s", grp ? grp : "");
                nv++;
        }
        if (r >= 0 && k != SQLITE_DONE)
                r = store_sqlite_error(s, "rollup");
        sqlite3_finalize(st);
        if (r >= 0 && nv > 0) {
                r = seg_delete(s, g, "DELETE FROM mux WHERE tick IN (" SEGMENT ")");
        }
        if (r >= 0 && nv > 0) {
                if (sqlite3_prepare_v2(s->db, "INSERT INTO mux (tick, cpu, grp, duty) VALUES (?1, ?2, ?3, ?4)", -1, &st,
                                       NULL) != SQLITE_OK) {
                        free(v);
                        return store_sqlite_error(s, "rollup");
                }
                for (size_t i = 0; i < nv && r >= 0; i++) {
                        double duty = g->dur > 0 ? 1 - v[i].lost / (double)g->dur : 1;
                        if (duty >= 1)
                                continue;
                        sqlite3_bind_int64(st, 1, g->a);
                        sqlite3_bind_int64(st, 2, v[i].cpu);
                        sqlite3_bind_text(st, 3, v[i].grp, -1, SQLITE_STATIC);
                        sqlite3_bind_double(st, 4, MAX(duty, 0.0));
                        if (sqlite3_step(st) != SQLITE_DONE)
                                r = store_sqlite_error(s, "rollup");
                        sqlite3_reset(st);
                }
                sqlite3_finalize(st);
        }
        free(v);
        return r;
}

static int merge(struct store *s, const struct segment *g)
{
        sqlite3_stmt *st;
        int r;

        r = merge_cpu(s, g);
        if (r >= 0)
                r = merge_sample(s, g);
        if (r >= 0)
                r = merge_mux(s, g);
        if (r < 0)
                return r;
        if (sqlite3_prepare_v2(s->db, "UPDATE tick SET dur = ?2, n = ?3 WHERE id = ?1", -1, &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, "rollup");
        sqlite3_bind_int64(st, 1, g->a);
        sqlite3_bind_int64(st, 2, g->dur);
        sqlite3_bind_int64(st, 3, g->n);
        r = step_done(s, st, "rollup");
        if (r < 0)
                return r;
        st = seg_prepare(s, g, "DELETE FROM tick WHERE id > ?1 AND id <= ?2 AND t >= ?3 AND t < ?4");
        return st ? step_done(s, st, "rollup") : -EIO;
}

int store_rollup_step(struct store *s, int64_t cutoff_ns, int64_t bucket_ns, size_t max_ticks, int64_t *cursor_ns,
                      size_t *ret_merged)
{
        _cleanup_free_ struct kept *k = NULL;
        struct segment g = { 0 };
        sqlite3_stmt *st;
        size_t nk = 0;
        int64_t t;
        int r;

        *ret_merged = 0;
        if (bucket_ns <= 0 || max_ticks < 2)
                return -EINVAL;
        if (*cursor_ns < 0) {
                r = store_meta_get_int(s, "rollup_until", cursor_ns);
                if (r == -ENOENT)
                        *cursor_ns = 0;
                else if (r < 0)
                        return r;
        }
        if (sqlite3_prepare_v2(s->db, "SELECT t FROM tick WHERE t >= ?1 ORDER BY t LIMIT 1", -1, &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, "rollup");
        sqlite3_bind_int64(st, 1, *cursor_ns);
        r = sqlite3_step(st);
        t = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        if (r == SQLITE_DONE)
                return 0;
        if (r != SQLITE_ROW)
                return store_sqlite_error(s, "rollup");
        g.b = t - (t % bucket_ns + bucket_ns) % bucket_ns;
        g.e = g.b + bucket_ns;
        if (g.e > cutoff_ns)
                return 0;

        /* the first stretch of ticks outside runs in the bucket, at most
         * max_ticks of them (a long bucket is merged over several steps,
         * into its first tick) */
        r = kept_load(s, &k, &nk);
        if (r < 0)
                return r;
        if (sqlite3_prepare_v2(s->db, "SELECT id, dur, n FROM tick WHERE t >= ?1 AND t < ?2 ORDER BY id", -1, &st,
                               NULL) != SQLITE_OK)
                return store_sqlite_error(s, "rollup");
        sqlite3_bind_int64(st, 1, g.b);
        sqlite3_bind_int64(st, 2, g.e);
        while ((r = sqlite3_step(st)) == SQLITE_ROW && (size_t)g.count < max_ticks) {
                int64_t id = sqlite3_column_int64(st, 0);

                if (kept_has(k, nk, id)) {
                        if (g.count >= 2)
                                break;
                        g.count = 0;
                        continue;
                }
                if (g.count == 0) {
                        g.a = id;
                        g.dur = g.n = 0;
                }
                g.z = id;
                g.dur += sqlite3_column_int64(st, 1);
                g.n += sqlite3_column_int64(st, 2);
                g.count++;
        }
        sqlite3_finalize(st);
        if (r != SQLITE_ROW && r != SQLITE_DONE)
                return store_sqlite_error(s, "rollup");
        if (g.count < 2) {
                /* nothing (more) to merge here: on to the next bucket */
                *cursor_ns = g.e;
                return 1;
        }
        r = store_exec(s, "BEGIN IMMEDIATE");
        if (r >= 0)
                r = merge(s, &g);
        if (r >= 0)
                r = store_meta_set_int(s, "rollup_until", g.b);
        if (r >= 0)
                r = store_exec(s, "COMMIT");
        if (r < 0) {
                store_rollback(s);
                return r;
        }
        *cursor_ns = g.b;
        *ret_merged = (size_t)g.count - 1;
        return 1;
}

int store_delete_step(struct store *s, int64_t cutoff_ns, size_t max_ticks, int64_t *cursor_id, size_t *ret_deleted)
{
        _cleanup_free_ struct kept *k = NULL;
        int64_t lo = MAX(*cursor_id, 0);
        size_t nk = 0;
        int r;

        *ret_deleted = 0;
        {
                /* the usual case, once caught up: the tick at the cursor
                 * is too new, and the runs need not be read */
                sqlite3_stmt *st;
                bool due = true;

                if (sqlite3_prepare_v2(s->db, "SELECT t + dur < ?2 FROM tick WHERE id >= ?1 ORDER BY id LIMIT 1", -1, &st,
                                       NULL) != SQLITE_OK)
                        return store_sqlite_error(s, "retention");
                sqlite3_bind_int64(st, 1, lo);
                sqlite3_bind_int64(st, 2, cutoff_ns);
                r = sqlite3_step(st);
                if (r == SQLITE_ROW)
                        due = sqlite3_column_int(st, 0);
                else if (r == SQLITE_DONE)
                        due = false;
                sqlite3_finalize(st);
                if (r != SQLITE_ROW && r != SQLITE_DONE)
                        return store_sqlite_error(s, "retention");
                if (!due)
                        return 0;
        }
        r = kept_load(s, &k, &nk);
        if (r < 0)
                return r;
        for (;;) {
                size_t i = kept_find(k, nk, lo), n = 0;
                int64_t hi, last = 0;
                bool too_new = false;
                sqlite3_stmt *st;

                if (i < nk && k[i].lo <= lo) {
                        if (k[i].hi == INT64_MAX)       /* a run still open: everything after it is kept */
                                break;
                        lo = k[i].hi + 1;
                        continue;
                }
                hi = i < nk ? k[i].lo - 1 : INT64_MAX;
                if (sqlite3_prepare_v2(s->db, "SELECT id, t + dur < ?3 FROM tick WHERE id BETWEEN ?1 AND ?2 ORDER BY id LIMIT ?4",
                                       -1, &st, NULL) != SQLITE_OK)
                        return store_sqlite_error(s, "retention");
                sqlite3_bind_int64(st, 1, lo);
                sqlite3_bind_int64(st, 2, hi);
                sqlite3_bind_int64(st, 3, cutoff_ns);
                sqlite3_bind_int64(st, 4, (int64_t)max_ticks);
                while ((r = sqlite3_step(st)) == SQLITE_ROW) {
                        if (!sqlite3_column_int(st, 1)) {
                                too_new = true;
                                break;
                        }
                        last = sqlite3_column_int64(st, 0);
                        n++;
                }
                sqlite3_finalize(st);
                if (r != SQLITE_ROW && r != SQLITE_DONE)
                        return store_sqlite_error(s, "retention");
                if (n > 0) {
                        static const char *const sql[] = {
                                "DELETE FROM sample WHERE tick BETWEEN ?1 AND ?2",
                                "DELETE FROM cpu_sample WHERE tick BETWEEN ?1 AND ?2",
                                "DELETE FROM mux WHERE tick BETWEEN ?1 AND ?2",
                                "DELETE FROM tick WHERE id BETWEEN ?1 AND ?2",
                        };
                        r = store_exec(s, "BEGIN IMMEDIATE");
                        for (size_t j = 0; j < ELEMENTSOF(sql) && r >= 0; j++) {
                                if (sqlite3_prepare_v2(s->db, sql[j], -1, &st, NULL) != SQLITE_OK) {
                                        r = store_sqlite_error(s, "retention");
                                        break;
                                }
                                sqlite3_bind_int64(st, 1, lo);
                                sqlite3_bind_int64(st, 2, last);
                                r = step_done(s, st, "retention");
                        }
                        if (r >= 0)
                                r = store_exec(s, "COMMIT");
                        if (r < 0) {
                                store_rollback(s);
                                return r;
                        }
                        *cursor_id = last + 1;
                        *ret_deleted = n;
                        return 1;
                }
                if (too_new || hi == INT64_MAX)
                        break;
                lo = hi + 1;
        }
        *cursor_id = lo;
        return 0;
}

int store_db_bytes(struct store *s, int64_t *ret)
{
        sqlite3_stmt *st;
        int r;

        if (sqlite3_prepare_v2(s->db,
                               "SELECT (p.page_count - f.freelist_count) * z.page_size "
                               "FROM pragma_page_count() p, pragma_freelist_count() f, pragma_page_size() z",
                               -1, &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, "database size");
        r = sqlite3_step(st);
        if (r == SQLITE_ROW)
                *ret = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        return r == SQLITE_ROW ? 0 : store_sqlite_error(s, "database size");
}
