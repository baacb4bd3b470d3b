/* store-query.c - what clients read from the store.
 *
 * Every query here is bounded by an index: ticks are found by tick_by_t,
 * and a metric's samples in a tick by the (tick, metric) prefix of the
 * sample table's key, or cpu_sample's whole key: one row, whose blob is
 * decoded here for a CPU or a node (schema 0004), or for every CPU at
 * once (store_series_cpus).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "macro.h"
#include "packed.h"
#include "store-internal.h"

static void copy_col(char *dst, size_t len, sqlite3_stmt *st, int col)
{
        const char *v = (const char *)sqlite3_column_text(st, col);
        snprintf(dst, len, "%s", v ? v : "");
}

int store_metrics_list(struct store *s, struct store_metric_row **ret, size_t *ret_n)
{
        _cleanup_free_ struct store_metric_row *rows = NULL;
        sqlite3_stmt *st;
        size_t n = 0, cap = 0;
        int r;

        if (sqlite3_prepare_v2(s->db, "SELECT name, scope, unit, source, scale, available, why FROM metric ORDER BY id",
                               -1, &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, "metrics");
        while ((r = sqlite3_step(st)) == SQLITE_ROW) {
                struct store_metric_row *m;
                if (n == cap) {
                        void *p = realloc(rows, (cap = cap ? cap * 2 : 64) * sizeof *rows);
                        if (!p) {
                                sqlite3_finalize(st);
                                return -ENOMEM;
                        }
                        rows = p;
                }
                m = &rows[n++];
                memset(m, 0, sizeof *m);
                copy_col(m->name, sizeof m->name, st, 0);
                copy_col(m->scope, sizeof m->scope, st, 1);
                copy_col(m->unit, sizeof m->unit, st, 2);
                copy_col(m->source, sizeof m->source, st, 3);
                m->scale = sqlite3_column_double(st, 4);
                m->available = sqlite3_column_int(st, 5);
                copy_col(m->why, sizeof m->why, st, 6);
        }
        sqlite3_finalize(st);
        if (r != SQLITE_DONE)
                return store_sqlite_error(s, "metrics");
        *ret = TAKE_PTR(rows);
        *ret_n = n;
        return 0;
}

static int64_t file_size(const char *path)
{
        struct stat st;
        return stat(path, &st) == 0 ? (int64_t)st.st_size : 0;
}

int store_summary(struct store *s, struct store_summary *ret)
{
        struct store_summary sum = { 0 };
        sqlite3_stmt *st;
        char wal[4096];

        /* min/max on the primary key and the t index are single seeks */
        if (sqlite3_prepare_v2(s->db,
                               "SELECT (SELECT count(*) FROM tick), "
                               "(SELECT t FROM tick ORDER BY id LIMIT 1), "
                               "(SELECT t + dur FROM tick ORDER BY id DESC LIMIT 1), "
                               "(SELECT count(*) FROM cpu), (SELECT count(DISTINCT node) FROM cpu), "
                               "(SELECT count(*) FROM cpu WHERE online)",
                               -1, &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, "summary");
        if (sqlite3_step(st) != SQLITE_ROW) {
                sqlite3_finalize(st);
                return store_sqlite_error(s, "summary");
        }
        sum.ticks = sqlite3_column_int64(st, 0);
        sum.first_t = sqlite3_column_int64(st, 1);
        sum.last_t = sqlite3_column_int64(st, 2);
        sum.ncpus = sqlite3_column_int(st, 3);
        sum.nnodes = sqlite3_column_int(st, 4);
        sum.online_cpus = sqlite3_column_int(st, 5);
        sqlite3_finalize(st);
        sum.samples = -1;       /* counting them means a full scan: not here */
        snprintf(wal, sizeof wal, "%s-wal", s->path);
        sum.size_bytes = file_size(s->path) + file_size(wal);
        *ret = sum;
        return 0;
}

int store_host_get(struct store *s, struct host_info *ret)
{
        struct host_info h = { 0 };
        sqlite3_stmt *st;
        int r;

        if (sqlite3_prepare_v2(s->db,
                               "SELECT machine_id, hostname, kernel, ncpus, nnodes, cpu_model FROM host "
                               "WHERE id = (SELECT value FROM meta WHERE key = 'host')",
                               -1, &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, "host");
        r = sqlite3_step(st);
        if (r == SQLITE_ROW) {
                h.machine_id = strdup((const char *)sqlite3_column_text(st, 0));
                h.hostname = strdup((const char *)sqlite3_column_text(st, 1));
                h.kernel = strdup((const char *)sqlite3_column_text(st, 2));
                h.ncpus = sqlite3_column_int(st, 3);
                h.nnodes = sqlite3_column_int(st, 4);
                h.cpu_model = strdup(sqlite3_column_text(st, 5) ? (const char *)sqlite3_column_text(st, 5) : "");
                r = (h.machine_id && h.hostname && h.kernel && h.cpu_model) ? 0 : -ENOMEM;
        } else
                r = r == SQLITE_DONE ? -ENOENT : store_sqlite_error(s, "host");
        sqlite3_finalize(st);
        if (r < 0) {
                host_info_clear(&h);
                return r;
        }
        *ret = h;
        return 0;
}

int store_topology_get(struct store *s, int **ret_node, bool **ret_online, int *ret_n)
{
        _cleanup_free_ int *node = NULL;
        _cleanup_free_ bool *online = NULL;
        sqlite3_stmt *st;
        int n = 0, r;

        if (sqlite3_prepare_v2(s->db, "SELECT cpu, node, online FROM cpu ORDER BY cpu", -1, &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, "cpu");
        while ((r = sqlite3_step(st)) == SQLITE_ROW) {
                int c = sqlite3_column_int(st, 0);
                if (c < 0 || c > 65535)
                        continue;
                if (c >= n) {
                        int *pn = realloc(node, (c + 1) * sizeof *node);
                        bool *po;
                        if (!pn) {
                                r = -ENOMEM;
                                break;
                        }
                        node = pn;
                        po = realloc(online, (c + 1) * sizeof *online);
                        if (!po) {
                                r = -ENOMEM;
                                break;
                        }
                        online = po;
                        for (int i = n; i <= c; i++) {
                                node[i] = -1;
                                online[i] = false;
                        }
                        n = c + 1;
                }
                node[c] = sqlite3_column_int(st, 1);
                online[c] = sqlite3_column_int(st, 2);
        }
        sqlite3_finalize(st);
        if (r == -ENOMEM)
                return r;
        if (r != SQLITE_DONE)
                return store_sqlite_error(s, "cpu");
        *ret_node = TAKE_PTR(node);
        if (ret_online)
                *ret_online = TAKE_PTR(online);
        *ret_n = n;
        return 0;
}

/* Append a tick's value to pts, or add it to the last bucket. */
static int series_add(struct series_point **pts, size_t *n, size_t *cap, int64_t t, int64_t dur, double v, bool nc,
                      int64_t step_ns, bool max)
{
        int64_t bucket = step_ns > 0 ? t - ((t % step_ns) + step_ns) % step_ns : t;

        if (step_ns > 0 && *n > 0 && (*pts)[*n - 1].t_ns == bucket) {
                (*pts)[*n - 1].dur_ns += dur;
                if (max)        /* lock_wait_max_ns: a step's value is its ticks' maximum */
                        (*pts)[*n - 1].value = MAX((*pts)[*n - 1].value, v);
                else
                        (*pts)[*n - 1].value += v;
                (*pts)[*n - 1].not_counted |= nc;
                return 0;
        }
        if (*n == *cap) {
                size_t c = *cap ? *cap * 2 : 256;
                void *p = realloc(*pts, c * sizeof **pts);
                if (!p)
                        return -ENOMEM;
                *pts = p;
                *cap = c;
        }
        (*pts)[(*n)++] = (struct series_point){ .t_ns = bucket, .dur_ns = dur, .value = v, .not_counted = nc };
        return 0;
}

/* After the last sqlite3_step() of a series query (r: its result, or a
 * -errno from the loop): hand the points over, or say what failed. */
static int series_end(struct store *s, sqlite3_stmt *st, int r, struct series_point **pts, size_t n,
                      struct series_point **ret, size_t *ret_n)
{
        sqlite3_finalize(st);
        if (r < 0)
                return r;
        if (r != SQLITE_DONE)
                return store_sqlite_error(s, "series");
        *ret = TAKE_PTR(*pts);
        *ret_n = n;
        return 0;
}

/* One cpu_sample row's value for the filter: the total column for the
 * whole machine when every CPU was counted, else the blob decoded. */
static int cpu_row_value(sqlite3_stmt *st, enum series_filter f, int arg, const int *node, int nnode, bool max,
                         int64_t *ret, bool *ret_nc)
{
        struct packed_iter it;
        int64_t sum = 0, v;
        bool nc = false, null;
        int c, r;

        if (sqlite3_column_type(st, 3) == SQLITE_NULL) {        /* no row: all 0 (invariant 6) */
                *ret = 0;
                *ret_nc = false;
                return 0;
        }
        if (f == SERIES_ALL && sqlite3_column_type(st, 2) != SQLITE_NULL) {
                *ret = sqlite3_column_int64(st, 2);
                *ret_nc = false;
                return 0;
        }
        packed_iter_init(&it, sqlite3_column_blob(st, 3), (size_t)sqlite3_column_bytes(st, 3));
        while ((r = packed_next(&it, &c, &v, &null)) > 0) {
                if (f == SERIES_CPU && c != arg) {
                        if (c > arg)
                                break;
                        continue;
                }
                if (f == SERIES_NODE && (c >= nnode || node[c] != arg))
                        continue;
                if (null)
                        nc = true;
                else if (max)           /* lock_wait_max_ns: a node's is its CPUs' maximum */
                        sum = MAX(sum, v);
                else
                        sum = (int64_t)((uint64_t)sum + (uint64_t)v);
        }
        if (r < 0)
                return r;
        *ret = sum;
        *ret_nc = nc;
        return 0;
}

int store_tick_id_range(struct store *s, int64_t since, int64_t until, int64_t *ret_lo, int64_t *ret_hi)
{
        sqlite3_stmt *st;
        int r;

        if (sqlite3_prepare_v2(s->db, "SELECT coalesce(min(id), 0), coalesce(max(id), -1) FROM tick "
                                      "WHERE t >= ?1 AND t < ?2", -1, &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, "tick");
        sqlite3_bind_int64(st, 1, since);
        sqlite3_bind_int64(st, 2, until);
        r = sqlite3_step(st) == SQLITE_ROW ? 0 : store_sqlite_error(s, "tick");
        *ret_lo = sqlite3_column_int64(st, 0);
        *ret_hi = sqlite3_column_int64(st, 1);
        sqlite3_finalize(st);
        return r;
}

/* The ticks between since and until, each with its cpu_sample row of
 * metric mid or NULLs (columns t, dur, total, vals).  The series table's
 * ticks are bounded by constants (store-head.c says why). */
static int cpu_rows_prepare(struct store *s, int64_t mid, int64_t since, int64_t until, sqlite3_stmt **ret)
{
        sqlite3_stmt *st;
        int64_t lo, hi;
        int r = store_tick_id_range(s, since, until, &lo, &hi);

        if (r < 0)
                return r;
        if (sqlite3_prepare_v2(s->db,
                               "SELECT t.t, t.dur, c.total, c.vals FROM tick t "
                               "LEFT JOIN (SELECT tick, total, vals FROM cpu_sample "
                               "WHERE metric = ?1 AND tick >= ?4 AND tick <= ?5) c ON c.tick = t.id "
                               "WHERE t.t >= ?2 AND t.t < ?3 ORDER BY t.id",
                               -1, &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, "series");
        sqlite3_bind_int64(st, 1, mid);
        sqlite3_bind_int64(st, 2, since);
        sqlite3_bind_int64(st, 3, until);
        sqlite3_bind_int64(st, 4, lo);
        sqlite3_bind_int64(st, 5, hi);
        *ret = st;
        return 0;
}

static int series_cpu(struct store *s, int64_t mid, double scale, enum series_filter f, int arg, int64_t since,
                      int64_t until, int64_t step_ns, struct series_point **ret, size_t *ret_n)
{
        _cleanup_free_ struct series_point *pts = NULL;
        _cleanup_free_ int *node = NULL;
        size_t n = 0, cap = 0;
        sqlite3_stmt *st;
        int nnode = 0, r, m = store_metric_by_rowid(s, mid);
        bool max = m >= 0 && metric_table[m].max;      /* combined by max */

        if (f == SERIES_NODE) {
                r = store_topology_get(s, &node, NULL, &nnode);
                if (r < 0)
                        return r;
        }
        r = cpu_rows_prepare(s, mid, since, until, &st);
        if (r < 0)
                return r;
        while ((r = sqlite3_step(st)) == SQLITE_ROW) {
                int64_t v;
                bool nc;

                r = cpu_row_value(st, f, arg, node, nnode, max, &v, &nc);
                if (r < 0) {
                        snprintf(s->errmsg, sizeof s->errmsg, "corrupt cpu_sample row at tick time %lld",
                                 (long long)sqlite3_column_int64(st, 0));
                        break;
                }
                r = series_add(&pts, &n, &cap, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                               (double)v * scale, nc, step_ns, max);
                if (r < 0)
                        break;
        }
        return series_end(s, st, r, &pts, n, ret, ret_n);
}

/* A metric's definition, row id and scale; -ENOENT if this database
 * has never recorded it. */
static int series_metric(struct store *s, const char *metric, const struct metric_def **ret_def, int64_t *ret_mid,
                         double *ret_scale)
{
        const struct metric_def *def = metric_by_name(metric);
        double scale = 1;
        sqlite3_stmt *q;
        int64_t mid;

        if (!def)
                return -ENOENT;
        mid = s->metric_rowid[def - metric_table];
        if (!mid)
                return -ENOENT;
        if (sqlite3_prepare_v2(s->db, "SELECT scale FROM metric WHERE id = ?1", -1, &q, NULL) != SQLITE_OK)
                return store_sqlite_error(s, "metric");
        sqlite3_bind_int64(q, 1, mid);
        if (sqlite3_step(q) == SQLITE_ROW)
                scale = sqlite3_column_double(q, 0);
        sqlite3_finalize(q);
        *ret_def = def;
        *ret_mid = mid;
        *ret_scale = scale;
        return 0;
}

int store_series(struct store *s, const char *metric, enum series_filter f, int arg,
                 int64_t since, int64_t until, int64_t step_ns,
                 struct series_point **ret, size_t *ret_n)
{
        _cleanup_free_ struct series_point *pts = NULL;
        const struct metric_def *def;
        size_t n = 0, cap = 0;
        const char *locsql;
        sqlite3_stmt *st;
        char sql[768];
        double scale;
        int64_t mid, lo, hi;
        int r;

        r = series_metric(s, metric, &def, &mid, &scale);
        if (r < 0)
                return r;
        if (def->scope == SCOPE_CPU)
                return series_cpu(s, mid, scale, f, arg, since, until, step_ns, ret, ret_n);

        /* node and system metrics: one sample row per value (0001) */
        r = store_tick_id_range(s, since, until, &lo, &hi);
        if (r < 0)
                return r;
        locsql = f == SERIES_ALL ? "" : " AND loc = ?4";
        snprintf(sql, sizeof sql,
                 "SELECT t.t, t.dur, total(s.value), count(s.loc) - count(s.value) "
                 "FROM tick t LEFT JOIN (SELECT tick, loc, value FROM sample "
                 "WHERE metric = ?1 AND tick >= ?5 AND tick <= ?6%s) s ON s.tick = t.id "
                 "WHERE t.t >= ?2 AND t.t < ?3 GROUP BY t.id ORDER BY t.id",
                 locsql);
        if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, "series");
        sqlite3_bind_int64(st, 1, mid);
        sqlite3_bind_int64(st, 2, since);
        sqlite3_bind_int64(st, 3, until);
        if (*locsql)
                sqlite3_bind_int(st, 4, arg);
        sqlite3_bind_int64(st, 5, lo);
        sqlite3_bind_int64(st, 6, hi);

        while ((r = sqlite3_step(st)) == SQLITE_ROW) {
                r = series_add(&pts, &n, &cap, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                               sqlite3_column_double(st, 2) * scale, sqlite3_column_int(st, 3) > 0, step_ns, false);
                if (r < 0)
                        break;
        }
        return series_end(s, st, r, &pts, n, ret, ret_n);
}

/* A cpu_sample row's values for CPUs 0..ncpus-1, from one pass over the
 * blob: vals[c] and nulls[c] are what cpu_row_value() gives with
 * SERIES_CPU and c.  The blob is read up to the first CPU >= ncpus, as
 * far as cpu_row_value() reads it for CPU ncpus - 1. */
static int cpu_row_values(sqlite3_stmt *st, int64_t *vals, bool *nulls, int ncpus)
{
        struct packed_iter it;
        int64_t v;
        bool null;
        int c, r;

        memset(vals, 0, ncpus * sizeof *vals);
        memset(nulls, 0, ncpus * sizeof *nulls);
        if (sqlite3_column_type(st, 3) == SQLITE_NULL)          /* no row: all 0 (invariant 6) */
                return 0;
        packed_iter_init(&it, sqlite3_column_blob(st, 3), (size_t)sqlite3_column_bytes(st, 3));
        while ((r = packed_next(&it, &c, &v, &null)) > 0 && c < ncpus) {
                vals[c] = v;                                    /* 0 if null */
                nulls[c] = null;
        }
        return r < 0 ? r : 0;
}

int store_series_cpus(struct store *s, const char *metric, int ncpus, int64_t since, int64_t until,
                      int64_t step_ns, struct series_point ***ret, size_t *ret_n)
{
        _cleanup_free_ int64_t *vals = NULL;
        _cleanup_free_ bool *nulls = NULL;
        struct series_point **pts = NULL;
        const struct metric_def *def;
        size_t n = 0, cap = 0;
        sqlite3_stmt *st;
        double scale;
        int64_t mid;
        int r;

        if (ncpus <= 0)
                return -EINVAL;
        r = series_metric(s, metric, &def, &mid, &scale);
        if (r < 0)
                return r;
        if (def->scope != SCOPE_CPU)
                return -EINVAL;
        pts = calloc(ncpus, sizeof *pts);
        vals = calloc(ncpus, sizeof *vals);
        nulls = calloc(ncpus, sizeof *nulls);
        if (!pts || !vals || !nulls) {
                free(pts);
                return -ENOMEM;
        }
        r = cpu_rows_prepare(s, mid, since, until, &st);
        if (r < 0)
                goto fail;
        while ((r = sqlite3_step(st)) == SQLITE_ROW) {
                int64_t t = sqlite3_column_int64(st, 0), dur = sqlite3_column_int64(st, 1);
                size_t n_c = n, cap_c = cap;

                r = cpu_row_values(st, vals, nulls, ncpus);
                if (r < 0) {
                        snprintf(s->errmsg, sizeof s->errmsg, "corrupt cpu_sample row at tick time %lld",
                                 (long long)t);
                        break;
                }
                /* Every CPU's series has the same ticks, hence after this
                 * tick the same length and the same capacity. */
                for (int c = 0; c < ncpus && r >= 0; c++) {
                        n_c = n;
                        cap_c = cap;
                        r = series_add(&pts[c], &n_c, &cap_c, t, dur, (double)vals[c] * scale, nulls[c], step_ns, def->max);
                }
                if (r < 0)
                        break;
                n = n_c;
                cap = cap_c;
        }
        sqlite3_finalize(st);
        if (r < 0)
                goto fail;
        if (r != SQLITE_DONE) {
                r = store_sqlite_error(s, "series");
                goto fail;
        }
        *ret = pts;
        *ret_n = n;
        return 0;
fail:
        for (int c = 0; c < ncpus; c++)
                free(pts[c]);
        free(pts);
        return r;
}
