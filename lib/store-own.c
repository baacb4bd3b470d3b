/* store-own.c - a run's own cgroup's values per tick (run_own_sample,
 * schema 0007), read back in bins of time (explain's interference
 * window). */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "store-internal.h"
#include "store-series.h"

int store_own_bins(struct store *s, int64_t run, enum metric_id m, int64_t since, int64_t bin_ns, size_t nbins,
                   double *ret)
{
        int64_t mid = s->metric_rowid[m];
        sqlite3_stmt *st;
        int r;

        if (bin_ns <= 0)
                return -EINVAL;
        memset(ret, 0, nbins * sizeof *ret);
        if (!mid)
                return 0;
        if (sqlite3_prepare_v2(s->db,
                               "SELECT t.t, t.dur, o.value FROM run_own_sample o JOIN tick t ON t.id = o.tick "
                               "WHERE o.run = ?1 AND o.metric = ?2",
                               -1, &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, "run_own_sample");
        sqlite3_bind_int64(st, 1, run);
        sqlite3_bind_int64(st, 2, mid);
        while ((r = sqlite3_step(st)) == SQLITE_ROW) {
                /* the bin its middle falls in, as store_tick_values() */
                int64_t mid_t = sqlite3_column_int64(st, 0) + sqlite3_column_int64(st, 1) / 2 - since;
                if (mid_t >= 0 && (uint64_t)(mid_t / bin_ns) < nbins)
                        ret[mid_t / bin_ns] += sqlite3_column_double(st, 2);
        }
        sqlite3_finalize(st);
        return r == SQLITE_DONE ? 0 : store_sqlite_error(s, "run_own_sample");
}
