/* store-sums.c - what a run's totals are made of: the sums of the samples
 * between two ticks, per CPU, per node and system-wide, taken when a run
 * ends (and the last tick, where the sums stop).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "macro.h"
#include "packed.h"
#include "store-internal.h"

int store_last_tick(struct store *s, int64_t *ret_id, int64_t *ret_end)
{
        sqlite3_stmt *st;
        int r;

        if (sqlite3_prepare_v2(s->db, "SELECT id, t + dur FROM tick ORDER BY id DESC LIMIT 1", -1, &st, NULL) !=
            SQLITE_OK)
                return store_sqlite_error(s, "tick");
        r = sqlite3_step(st);
        if (r == SQLITE_ROW) {
                *ret_id = sqlite3_column_int64(st, 0);
                *ret_end = sqlite3_column_int64(st, 1);
                r = 0;
        } else
                r = r == SQLITE_DONE ? -ENOENT : store_sqlite_error(s, "tick");
        sqlite3_finalize(st);
        return r;
}

/* The cpu_sample half of store_sum_samples: every blob in the range
 * decoded and summed per (metric, CPU) in memory. */
static int sum_cpu_samples(struct store *s, int64_t after_tick, int64_t upto_tick,
                           int (*fn)(void *userdata, int metric, int loc, double value), void *userdata)
{
        _cleanup_free_ int64_t *sum = NULL;       /* [metric * ncpu + cpu] */
        _cleanup_free_ bool *seen = NULL;         /* a non-zero value was there */
        double scale[_M_MAX];
        int ncpu = 0, r;
        sqlite3_stmt *st;

        for (int m = 0; m < _M_MAX; m++)
                scale[m] = 1;
        if (sqlite3_prepare_v2(s->db, "SELECT id, scale FROM metric", -1, &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, "metric");
        while (sqlite3_step(st) == SQLITE_ROW) {
                int m = store_metric_by_rowid(s, sqlite3_column_int64(st, 0));
                if (m >= 0)
                        scale[m] = sqlite3_column_double(st, 1);
        }
        sqlite3_finalize(st);

        if (sqlite3_prepare_v2(s->db, "SELECT metric, vals FROM cpu_sample WHERE tick > ?1 AND tick <= ?2", -1, &st,
                               NULL) != SQLITE_OK)
                return store_sqlite_error(s, "cpu_sample");
        sqlite3_bind_int64(st, 1, after_tick);
        sqlite3_bind_int64(st, 2, upto_tick);
        while ((r = sqlite3_step(st)) == SQLITE_ROW) {
                int m = store_metric_by_rowid(s, sqlite3_column_int64(st, 0)), c;
                struct packed_iter it;
                int64_t v;
                bool null;

                if (m < 0)
                        continue;
                packed_iter_init(&it, sqlite3_column_blob(st, 1), (size_t)sqlite3_column_bytes(st, 1));
                while ((r = packed_next(&it, &c, &v, &null)) > 0) {
                        if (null)
                                continue;       /* not counted: not in the sum, as sum() skips NULL */
                        if (c >= ncpu) {
                                int n = MAX(c + 1, ncpu ? ncpu * 2 : 64);
                                int64_t *ps = calloc((size_t)_M_MAX * n, sizeof *ps);
                                bool *pb = calloc((size_t)_M_MAX * n, sizeof *pb);
                                if (!ps || !pb) {
                                        free(ps);
                                        free(pb);
                                        r = -ENOMEM;
                                        break;
                                }
                                for (int k = 0; k < _M_MAX; k++)
                                        for (int j = 0; j < ncpu; j++) {
                                                ps[k * n + j] = sum[k * ncpu + j];
                                                pb[k * n + j] = seen[k * ncpu + j];
                                        }
                                free(sum);
                                free(seen);
                                sum = ps;
                                seen = pb;
                                ncpu = n;
                        }
                        sum[m * ncpu + c] = (int64_t)((uint64_t)sum[m * ncpu + c] + (uint64_t)v);
                        seen[m * ncpu + c] = true;
                }
                if (r < 0)
                        break;
        }
        sqlite3_finalize(st);
        if (r == -EBADMSG)
                snprintf(s->errmsg, sizeof s->errmsg, "corrupt cpu_sample row between ticks %lld and %lld",
                         (long long)after_tick, (long long)upto_tick);
        if (r < 0)
                return r;
        if (r != SQLITE_DONE)
                return store_sqlite_error(s, "cpu_sample");
        for (int m = 0; m < _M_MAX; m++)
                for (int c = 0; c < ncpu; c++)
                        if (seen[m * ncpu + c]) {
                                r = fn(userdata, m, c, (double)sum[m * ncpu + c] * scale[m]);
                                if (r < 0)
                                        return r;
                        }
        return 0;
}

int store_sum_samples(struct store *s, int64_t after_tick, int64_t upto_tick,
                      int (*fn)(void *userdata, int metric, int loc, double value), void *userdata)
{
        sqlite3_stmt *st;
        int r;

        r = sum_cpu_samples(s, after_tick, upto_tick, fn, userdata);
        if (r < 0)
                return r;
        if (sqlite3_prepare_v2(s->db,
                               "SELECT m.name, s.loc, sum(s.value) * m.scale FROM sample s JOIN metric m ON m.id = s.metric "
                               "WHERE s.tick > ?1 AND s.tick <= ?2 GROUP BY s.metric, s.loc",
                               -1, &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, "sample");
        sqlite3_bind_int64(st, 1, after_tick);
        sqlite3_bind_int64(st, 2, upto_tick);
        while ((r = sqlite3_step(st)) == SQLITE_ROW) {
                int m = metric_id_by_name((const char *)sqlite3_column_text(st, 0));
                if (m < 0 || sqlite3_column_type(st, 2) == SQLITE_NULL)
                        continue;
                r = fn(userdata, m, sqlite3_column_int(st, 1), sqlite3_column_double(st, 2));
                if (r < 0)
                        break;
        }
        sqlite3_finalize(st);
        if (r < 0)
                return r;
        return r == SQLITE_DONE ? 0 : store_sqlite_error(s, "sample");
}
