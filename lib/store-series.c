/* store-series.c - every metric's machine-wide value per tick over a time
 * range, in one pass (explain reads all of a run's counters at once).
 *
 * store_series() reads one metric at a time; its cpu_sample rows are
 * interleaved with every other metric's in the (tick, metric) key order,
 * so reading ten metrics one by one reads the range's pages ten times.
 * Here one range scan of cpu_sample's key and one of sample's give every
 * metric: the total column where every CPU was counted, else the blob
 * decoded (only those rows' blobs are asked for).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "packed.h"
#include "store-internal.h"
#include "store-series.h"

void store_tick_values_free(struct store_tick_values *tv)
{
        if (!tv)
                return;
        free(tv->dur);
        free(tv->v);
        free(tv->nc);
        free(tv->id_);
        free(tv->bin_);
        memset(tv, 0, sizeof *tv);
}

/* Each catalogue metric's scale (1 where the database has none). */
static int load_scales(struct store *s, double *scale)
{
        sqlite3_stmt *st;
        int r;

        for (int m = 0; m < _M_MAX; m++)
                scale[m] = 1;
        if (sqlite3_prepare_v2(s->db, "SELECT id, scale FROM metric", -1, &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, "metrics");
        while ((r = sqlite3_step(st)) == SQLITE_ROW) {
                int m = store_metric_by_rowid(s, sqlite3_column_int64(st, 0));
                if (m >= 0)
                        scale[m] = sqlite3_column_double(st, 1);
        }
        sqlite3_finalize(st);
        return r == SQLITE_DONE ? 0 : store_sqlite_error(s, "metrics");
}

/* The bin of tick id, or -1 if it is not one of the range's. */
static ssize_t tick_bin(const struct store_tick_values *tv, int64_t id)
{
        size_t lo = 0, hi = tv->nticks_;

        /* ids are usually consecutive: try the direct place first */
        if (tv->nticks_ && id >= tv->id_[0] && (size_t)(id - tv->id_[0]) < tv->nticks_ && tv->id_[id - tv->id_[0]] == id)
                return (ssize_t)tv->bin_[id - tv->id_[0]];
        while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (tv->id_[mid] < id)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo < tv->nticks_ && tv->id_[lo] == id ? (ssize_t)tv->bin_[lo] : -1;
}

/* The bin of a tick: the one its middle falls in, so that a bin's label
 * (since + i * bin_ns) is the nearest grid point to the ticks it holds,
 * whatever the offset of the daemon's ticks from `since` (a run's start
 * cuts a tick short: the ticks after it start up to one interval later). */
static size_t bin_of(int64_t t, int64_t dur, int64_t since, int64_t bin_ns, size_t n)
{
        int64_t mid = t + dur / 2 - since;
        size_t b = mid < 0 ? 0 : (size_t)(mid / bin_ns);

        return b < n ? b : n - 1;
}

/* Prepare one of the range scans below, bound to the range's first and
 * last tick ids. */
static int prepare_range(struct store *s, const struct store_tick_values *tv, const char *sql, sqlite3_stmt **ret)
{
        if (sqlite3_prepare_v2(s->db, sql, -1, ret, NULL) != SQLITE_OK)
                return store_sqlite_error(s, "series");
        sqlite3_bind_int64(*ret, 1, tv->id_[0]);
        sqlite3_bind_int64(*ret, 2, tv->id_[tv->nticks_ - 1]);
        return 0;
}

/* The cell (metric x bin) of a (tick, metric, ...) row, marking the metric
 * as present; -1 for a tick outside the range or a metric not known. */
static ssize_t row_cell(struct store *s, struct store_tick_values *tv, sqlite3_stmt *st)
{
        ssize_t b = tick_bin(tv, sqlite3_column_int64(st, 0));
        int m = store_metric_by_rowid(s, sqlite3_column_int64(st, 1));

        if (b < 0 || m < 0)
                return -1;
        tv->have[m] = true;
        return (ssize_t)((size_t)m * tv->n + (size_t)b);
}

/* The ticks of [since, until), by id: id, t, dur. */
static int ticks_stmt(struct store *s, int64_t since, int64_t until, sqlite3_stmt **ret)
{
        if (sqlite3_prepare_v2(s->db, "SELECT id, t, dur FROM tick WHERE t >= ?1 AND t < ?2 ORDER BY id", -1, ret,
                               NULL) != SQLITE_OK)
                return -1;
        sqlite3_bind_int64(*ret, 1, since);
        sqlite3_bind_int64(*ret, 2, until);
        return 0;
}

/* The ticks of [since, until), and the bin of each. */
static int read_ticks(struct store *s, int64_t since, int64_t until, int64_t bin_ns, struct store_tick_values *tv)
{
        sqlite3_stmt *st;
        size_t cap = 0;
        int r;

        if (ticks_stmt(s, since, until, &st) < 0)
                return store_sqlite_error(s, "series");
        while ((r = sqlite3_step(st)) == SQLITE_ROW) {
                size_t b = bin_of(sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2), since, bin_ns, tv->n);
                if (tv->nticks_ == cap) {
                        size_t c = cap ? cap * 2 : 1024;
                        int64_t *a = realloc(tv->id_, c * sizeof *a);
                        size_t *bb;
                        if (a)
                                tv->id_ = a;
                        bb = a ? realloc(tv->bin_, c * sizeof *bb) : NULL;
                        if (!bb) {
                                r = -ENOMEM;
                                break;
                        }
                        tv->bin_ = bb;
                        cap = c;
                }
                tv->id_[tv->nticks_] = sqlite3_column_int64(st, 0);
                tv->bin_[tv->nticks_] = b;
                tv->nticks_++;
                tv->dur[b] += sqlite3_column_int64(st, 2);
        }
        sqlite3_finalize(st);
        if (r != SQLITE_DONE)
                return r < 0 ? r : store_sqlite_error(s, "series");
        return 0;
}

/* cpu metrics: one scan of cpu_sample's (tick, metric) key; the blob only
 * where the total is NULL (a CPU not counted) */
static int add_cpu_rows(struct store *s, const double *scale, struct store_tick_values *tv)
{
        sqlite3_stmt *st;
        int r;

        r = prepare_range(s, tv,
                          "SELECT tick, metric, total, CASE WHEN total IS NULL THEN vals END FROM cpu_sample "
                          "WHERE tick >= ?1 AND tick <= ?2",
                          &st);
        if (r < 0)
                return r;
        while ((r = sqlite3_step(st)) == SQLITE_ROW) {
                ssize_t k = row_cell(s, tv, st);
                struct packed_iter it;
                int64_t sum = 0, v;
                bool null;
                int c, q;

                if (k < 0)
                        continue;
                if (sqlite3_column_type(st, 2) != SQLITE_NULL) {
                        tv->v[k] += (double)sqlite3_column_int64(st, 2) * scale[k / (ssize_t)tv->n];
                        continue;
                }
                packed_iter_init(&it, sqlite3_column_blob(st, 3), (size_t)sqlite3_column_bytes(st, 3));
                while ((q = packed_next(&it, &c, &v, &null)) > 0) {
                        if (null)
                                tv->nc[k] = 1;
                        else
                                sum = (int64_t)((uint64_t)sum + (uint64_t)v);
                }
                if (q < 0) {
                        snprintf(s->errmsg, sizeof s->errmsg, "corrupt cpu_sample row at tick %lld",
                                 (long long)sqlite3_column_int64(st, 0));
                        r = -EIO;
                        break;
                }
                tv->v[k] += (double)sum * scale[k / (ssize_t)tv->n];
        }
        sqlite3_finalize(st);
        if (r != SQLITE_DONE)
                return r < 0 ? r : store_sqlite_error(s, "series");
        return 0;
}

/* node and system metrics: the sums of each (tick, metric) */
static int add_node_rows(struct store *s, const double *scale, struct store_tick_values *tv)
{
        sqlite3_stmt *st;
        int r;

        r = prepare_range(s, tv,
                          "SELECT tick, metric, total(value), count(loc) - count(value) FROM sample "
                          "WHERE tick >= ?1 AND tick <= ?2 GROUP BY tick, metric",
                          &st);
        if (r < 0)
                return r;
        while ((r = sqlite3_step(st)) == SQLITE_ROW) {
                ssize_t k = row_cell(s, tv, st);
                if (k < 0)
                        continue;
                tv->v[k] += sqlite3_column_double(st, 2) * scale[k / (ssize_t)tv->n];
                tv->nc[k] |= sqlite3_column_int(st, 3) > 0;
        }
        sqlite3_finalize(st);
        return r == SQLITE_DONE ? 0 : store_sqlite_error(s, "series");
}

int store_tick_values(struct store *s, int64_t since, int64_t until, int64_t bin_ns, struct store_tick_values *ret)
{
        struct store_tick_values tv = { 0 };
        double scale[_M_MAX];
        int r;

        if (bin_ns <= 0 || until <= since)
                return -EINVAL;
        tv.n = (size_t)((until - since + bin_ns - 1) / bin_ns);
        r = load_scales(s, scale);
        if (r < 0)
                return r;
        tv.dur = calloc(tv.n + 1, sizeof *tv.dur);
        tv.v = calloc((size_t)_M_MAX * (tv.n + 1), sizeof *tv.v);
        tv.nc = calloc((size_t)_M_MAX * (tv.n + 1), sizeof *tv.nc);
        if (!tv.dur || !tv.v || !tv.nc)
                r = -ENOMEM;
        if (r >= 0)
                r = read_ticks(s, since, until, bin_ns, &tv);
        if (r >= 0 && tv.nticks_ > 0)
                r = add_cpu_rows(s, scale, &tv);
        if (r >= 0 && tv.nticks_ > 0)
                r = add_node_rows(s, scale, &tv);
        if (r < 0) {
                store_tick_values_free(&tv);
                return r;
        }
        free(tv.id_);
        free(tv.bin_);
        tv.id_ = NULL;
        tv.bin_ = NULL;
        tv.nticks_ = 0;
        *ret = tv;
        return 0;
}

int store_cpu_sums(struct store *s, const char *metric, int ncpus, int64_t since, int64_t until, double *ret_sum,
                   double *ret_dur)
{
        const struct metric_def *def = metric_by_name(metric);
        sqlite3_stmt *st;
        double scale = 1;
        int64_t mid, lo, hi;
        int r;

        if (!def || ncpus < 1)
                return -EINVAL;
        if (def->scope != SCOPE_CPU)
                return -EINVAL;
        mid = s->metric_rowid[def - metric_table];
        memset(ret_sum, 0, (size_t)ncpus * sizeof *ret_sum);
        memset(ret_dur, 0, (size_t)ncpus * sizeof *ret_dur);
        if (!mid)
                return 0;
        if (sqlite3_prepare_v2(s->db, "SELECT scale FROM metric WHERE id = ?1", -1, &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, "metric");
        sqlite3_bind_int64(st, 1, mid);
        if (sqlite3_step(st) == SQLITE_ROW)
                scale = sqlite3_column_double(st, 0);
        sqlite3_finalize(st);
        r = store_tick_id_range(s, since, until, &lo, &hi);
        if (r < 0)
                return r;
        if (sqlite3_prepare_v2(s->db,
                               "SELECT t.dur, c.vals FROM tick t LEFT JOIN (SELECT tick, vals FROM cpu_sample "
                               "WHERE metric = ?1 AND tick >= ?4 AND tick <= ?5) c ON c.tick = t.id "
                               "WHERE t.t >= ?2 AND t.t < ?3",
                               -1, &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, "series");
        sqlite3_bind_int64(st, 1, mid);
        sqlite3_bind_int64(st, 2, since);
        sqlite3_bind_int64(st, 3, until);
        sqlite3_bind_int64(st, 4, lo);
        sqlite3_bind_int64(st, 5, hi);
        while ((r = sqlite3_step(st)) == SQLITE_ROW) {
                double dur = (double)sqlite3_column_int64(st, 0) / 1e9;
                struct packed_iter it;
                int64_t v;
                bool null;
                int c, q, next = 0;

                if (sqlite3_column_type(st, 1) == SQLITE_NULL) {        /* all 0 (invariant 6) */
                        for (c = 0; c < ncpus; c++)
                                ret_dur[c] += dur;
                        continue;
                }
                packed_iter_init(&it, sqlite3_column_blob(st, 1), (size_t)sqlite3_column_bytes(st, 1));
                while ((q = packed_next(&it, &c, &v, &null)) > 0 && c < ncpus) {
                        for (; next < c; next++)                /* CPUs the blob skips count 0 */
                                ret_dur[next] += dur;
                        next = c + 1;
                        if (null)
                                continue;
                        ret_sum[c] += (double)v * scale;
                        ret_dur[c] += dur;
                }
                if (q < 0) {
                        snprintf(s->errmsg, sizeof s->errmsg, "corrupt cpu_sample row");
                        sqlite3_finalize(st);
                        return -EIO;
                }
                for (; next < ncpus; next++)
                        ret_dur[next] += dur;
        }
        sqlite3_finalize(st);
        return r == SQLITE_DONE ? 0 : store_sqlite_error(s, "series");
}

/* The ticks of [since, until): their lengths into nv->dur by bin, and
 * their id range (*last -1: none). */
static int node_ticks(struct store *s, int64_t since, int64_t until, int64_t bin_ns, struct store_node_values *nv,
                      int64_t *first, int64_t *last)
{
        sqlite3_stmt *st;
        int r;

        if (ticks_stmt(s, since, until, &st) < 0)
                return store_sqlite_error(s, "series");
        *first = 0;
        *last = -1;
        while ((r = sqlite3_step(st)) == SQLITE_ROW) {
                if (*last < 0)
                        *first = sqlite3_column_int64(st, 0);
                *last = sqlite3_column_int64(st, 0);
                nv->dur[bin_of(sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2), since, bin_ns, nv->n)] +=
                        sqlite3_column_int64(st, 2);
        }
        sqlite3_finalize(st);
        return r == SQLITE_DONE ? 0 : store_sqlite_error(s, "series");
}

/* One row of cpu_sample (tick at t of dur ns, metric m, the packed
 * values in blob) into nv's bins per node. */
static int node_row(struct store_node_values *nv, int64_t t, int64_t dur, int m, const void *blob, size_t len,
                    const int *slot, const double *scales, int64_t since, int64_t bin_ns, const int *node_of,
                    int ncpus)
{
        size_t b = bin_of(t, dur, since, bin_ns, nv->n), base;
        struct packed_iter it;
        int64_t v;
        bool null;
        int c, q;

        if (b >= nv->n || m < 0 || slot[m] < 0)
                return 0;
        base = (size_t)slot[m] * (size_t)nv->nnodes * nv->n;
        packed_iter_init(&it, blob, len);
        while ((q = packed_next(&it, &c, &v, &null)) > 0) {
                int k = c < ncpus ? node_of[c] : -1;
                if (k < 0 || k >= nv->nnodes)
                        continue;
                if (null)
                        nv->nc[base + (size_t)k * nv->n + b] = 1;
                else
                        nv->v[base + (size_t)k * nv->n + b] += (double)v * scales[m];
        }
        return q < 0 ? -EIO : 0;
}

int store_node_values(struct store *s, const int *metrics, size_t nmetrics, int64_t since, int64_t until,
                      int64_t bin_ns, const int *node_of, int ncpus, int nnodes, struct store_node_values *ret)
{
        struct store_node_values nv = { 0 };
        int64_t first = 0, last = -1;
        double scales[_M_MAX];
        sqlite3_stmt *st;
        int slot[_M_MAX];
        char sql[512];
        size_t o = 0;
        int r;

        if (bin_ns <= 0 || until <= since || nnodes < 1 || ncpus < 1 || nmetrics < 1 || nmetrics > 16)
                return -EINVAL;
        for (int m = 0; m < _M_MAX; m++)
                slot[m] = -1;
        for (size_t i = 0; i < nmetrics; i++) {
                if (metrics[i] < 0 || metrics[i] >= _M_MAX || metric_table[metrics[i]].scope != SCOPE_CPU)
                        return -EINVAL;
                slot[metrics[i]] = (int)i;
        }
        r = load_scales(s, scales);
        if (r < 0)
                return r;
        nv.n = (size_t)((until - since + bin_ns - 1) / bin_ns);
        nv.nnodes = nnodes;
        nv.nmetrics = nmetrics;
        nv.dur = calloc(nv.n + 1, sizeof *nv.dur);
        nv.v = calloc(nmetrics * (size_t)nnodes * (nv.n + 1), sizeof *nv.v);
        nv.nc = calloc(nmetrics * (size_t)nnodes * (nv.n + 1), sizeof *nv.nc);
        if (!nv.dur || !nv.v || !nv.nc) {
                store_node_values_free(&nv);
                return -ENOMEM;
        }
        r = node_ticks(s, since, until, bin_ns, &nv, &first, &last);
        if (r < 0 || last < 0) {
                if (r < 0)
                        store_node_values_free(&nv);
                else
                        *ret = nv;
                return r;
        }

        /* one scan of cpu_sample's key over those ticks for every metric
         * asked (their rows are interleaved: reading them one metric at
         * a time would read the pages once each) */
        strbuf_appendf(sql, sizeof sql, &o,
                       "SELECT t.t, c.metric, c.vals, t.dur FROM cpu_sample c JOIN tick t ON t.id = c.tick "
                       "WHERE c.tick >= ?1 AND c.tick <= ?2 AND t.t >= ?3 AND t.t < ?4 AND c.metric IN (");
        for (size_t i = 0; i < nmetrics; i++)
                strbuf_appendf(sql, sizeof sql, &o, "%s%lld", i ? "," : "",
                               (long long)s->metric_rowid[metrics[i]]);
        strbuf_appendf(sql, sizeof sql, &o, ")");
        if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) {
                store_node_values_free(&nv);
                return store_sqlite_error(s, "series");
        }
        sqlite3_bind_int64(st, 1, first);
        sqlite3_bind_int64(st, 2, last);
        sqlite3_bind_int64(st, 3, since);
        sqlite3_bind_int64(st, 4, until);
        while ((r = sqlite3_step(st)) == SQLITE_ROW)
                if (node_row(&nv, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 3),
                             store_metric_by_rowid(s, sqlite3_column_int64(st, 1)), sqlite3_column_blob(st, 2),
                             (size_t)sqlite3_column_bytes(st, 2), slot, scales, since, bin_ns, node_of, ncpus) < 0) {
                        snprintf(s->errmsg, sizeof s->errmsg, "corrupt cpu_sample row");
                        r = -EIO;
                        break;
                }
        sqlite3_finalize(st);
        if (r != SQLITE_DONE) {
                store_node_values_free(&nv);
                return r < 0 ? r : store_sqlite_error(s, "series");
        }
        *ret = nv;
        return 0;
}

void store_node_values_free(struct store_node_values *nv)
{
        if (!nv)
                return;
        free(nv->dur);
        free(nv->v);
        free(nv->nc);
        memset(nv, 0, sizeof *nv);
}
