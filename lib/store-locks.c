/* store-locks.c - run_lock, run_lock_lost and run_lock_object
 * (schema/0006-locks.sql, 0008-lock-objects.sql), and
 * the maximum of a "max" metric (lock_wait_max_ns) over a run's ticks:
 * such a value cannot be differenced from two snapshots like a count, so
 * the run's value is the largest per-tick value stored between its start
 * and stop ticks, which are exact run boundaries. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "metric.h"
#include "packed.h"
#include "store-internal.h"
#include "store-locks.h"

static void bind_own(sqlite3_stmt *st, int col, bool has, int64_t contended, int64_t total)
{
        if (has) {
                sqlite3_bind_int64(st, col, contended);
                sqlite3_bind_int64(st, col + 1, total);
        } else {
                sqlite3_bind_null(st, col);
                sqlite3_bind_null(st, col + 1);
        }
}

int store_lock_objects_insert(struct store *s, int64_t run, const struct store_lock_obj *o, size_t n)
{
        sqlite3_stmt *st = NULL;
        int r = 0;

        if (n == 0)
                return 0;
        if (sqlite3_prepare_v2(s->db,
                               "INSERT OR REPLACE INTO run_lock_object (run, lock, name, type, contended, "
                               "total_wait_ns, max_wait_ns, callers, own_contended, own_total_wait_ns) "
                               "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                               -1, &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, "run_lock_object");
        for (size_t i = 0; i < n && r == 0; i++) {
                sqlite3_bind_int64(st, 1, run);
                sqlite3_bind_text(st, 2, o[i].lock, -1, SQLITE_STATIC);
                sqlite3_bind_text(st, 3, o[i].name, -1, SQLITE_STATIC);
                sqlite3_bind_text(st, 4, o[i].type, -1, SQLITE_STATIC);
                sqlite3_bind_int64(st, 5, o[i].contended);
                sqlite3_bind_int64(st, 6, o[i].total_wait_ns);
                sqlite3_bind_int64(st, 7, o[i].max_wait_ns);
                sqlite3_bind_int64(st, 8, o[i].callers);
                bind_own(st, 9, o[i].has_own, o[i].own_contended, o[i].own_total_wait_ns);
                if (sqlite3_step(st) != SQLITE_DONE)
                        r = store_sqlite_error(s, "run_lock_object");
                sqlite3_reset(st);
        }
        sqlite3_finalize(st);
        return r;
}

/* The rows of store_run_locks_put(), inside the caller's transaction
 * (store-internal.h: import writes them in its own). */
int store_locks_insert(struct store *s, int64_t run, const struct store_lock *v, size_t n,
                       const struct store_lock_lost *lost)
{
        sqlite3_stmt *st = NULL;
        int r = 0;

        if (sqlite3_prepare_v2(s->db,
                               "INSERT OR REPLACE INTO run_lock (run, caller, type, contended, total_wait_ns, "
                               "max_wait_ns, min_wait_ns, locks, own_contended, own_total_wait_ns) "
                               "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                               -1, &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, "run_lock");
        for (size_t i = 0; i < n && r == 0; i++) {
                sqlite3_bind_int64(st, 1, run);
                sqlite3_bind_text(st, 2, v[i].caller, -1, SQLITE_STATIC);
                sqlite3_bind_text(st, 3, v[i].type, -1, SQLITE_STATIC);
                sqlite3_bind_int64(st, 4, v[i].contended);
                sqlite3_bind_int64(st, 5, v[i].total_wait_ns);
                sqlite3_bind_int64(st, 6, v[i].max_wait_ns);
                sqlite3_bind_int64(st, 7, v[i].min_wait_ns);
                sqlite3_bind_int64(st, 8, v[i].locks);
                bind_own(st, 9, v[i].has_own, v[i].own_contended, v[i].own_total_wait_ns);
                if (sqlite3_step(st) != SQLITE_DONE)
                        r = store_sqlite_error(s, "run_lock");
                sqlite3_reset(st);
        }
        sqlite3_finalize(st);
        if (r < 0 || !lost || !lost->known)
                return r;
        if (sqlite3_prepare_v2(s->db,
                               "INSERT OR REPLACE INTO run_lock_lost (run, untimed, unattributed, unattributed_ns, nested) "
                               "VALUES (?1, ?2, ?3, ?4, ?5)", -1, &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, "run_lock_lost");
        sqlite3_bind_int64(st, 1, run);
        sqlite3_bind_int64(st, 2, lost->untimed);
        sqlite3_bind_int64(st, 3, lost->unattributed);
        sqlite3_bind_int64(st, 4, lost->unattributed_ns);
        if (lost->nested >= 0)
                sqlite3_bind_int64(st, 5, lost->nested);
        else
                sqlite3_bind_null(st, 5);
        r = sqlite3_step(st) == SQLITE_DONE ? 0 : store_sqlite_error(s, "run_lock_lost");
        sqlite3_finalize(st);
        return r;
}

int store_run_locks_put(struct store *s, int64_t run, const struct store_lock *v, size_t n,
                        const struct store_lock_obj *o, size_t no, const struct store_lock_lost *lost)
{
        int r = store_exec(s, "BEGIN IMMEDIATE");

        if (r < 0)
                return r;
        r = store_locks_insert(s, run, v, n, lost);
        if (r >= 0)
                r = store_lock_objects_insert(s, run, o, no);
        if (r < 0) {
                store_exec(s, "ROLLBACK");
                return r;
        }
        return store_exec(s, "COMMIT");
}

int store_run_locks_get(struct store *s, int64_t run, struct store_lock **ret, size_t *ret_n,
                        struct store_lock_lost *ret_lost)
{
        _cleanup_free_ struct store_lock *v = NULL;
        size_t n = 0, cap = 0;
        struct store_lock_lost lost = { 0 };
        sqlite3_stmt *st;
        int r;

        /* a database from before 0006 has neither table: no locks */
        if (sqlite3_prepare_v2(s->db,
                               "SELECT caller, type, contended, total_wait_ns, max_wait_ns, min_wait_ns, locks, "
                               "own_contended, own_total_wait_ns FROM run_lock "
                               "WHERE run = ?1 ORDER BY total_wait_ns DESC, contended DESC, caller",
                               -1, &st, NULL) != SQLITE_OK) {
                *ret = NULL;
                *ret_n = 0;
                *ret_lost = lost;
                return 0;
        }
        sqlite3_bind_int64(st, 1, run);
        while ((r = sqlite3_step(st)) == SQLITE_ROW) {
                struct store_lock *l;
                if (n == cap) {
                        struct store_lock *t = realloc(v, (cap = cap ? cap * 2 : 16) * sizeof *t);
                        if (!t) {
                                sqlite3_finalize(st);
                                return -ENOMEM;
                        }
                        v = t;
                }
                l = &v[n++];
                memset(l, 0, sizeof *l);
                snprintf(l->caller, sizeof l->caller, "%s", (const char *)sqlite3_column_text(st, 0));
                snprintf(l->type, sizeof l->type, "%s", (const char *)sqlite3_column_text(st, 1));
                l->contended = sqlite3_column_int64(st, 2);
                l->total_wait_ns = sqlite3_column_int64(st, 3);
                l->max_wait_ns = sqlite3_column_int64(st, 4);
                l->min_wait_ns = sqlite3_column_int64(st, 5);
                l->locks = sqlite3_column_int64(st, 6);
                l->has_own = sqlite3_column_type(st, 7) != SQLITE_NULL;
                l->own_contended = sqlite3_column_int64(st, 7);
                l->own_total_wait_ns = sqlite3_column_int64(st, 8);
        }
        sqlite3_finalize(st);
        if (r != SQLITE_DONE)
                return store_sqlite_error(s, "run_lock");
        if (sqlite3_prepare_v2(s->db, "SELECT untimed, unattributed, unattributed_ns, nested FROM run_lock_lost "
                               "WHERE run = ?1", -1, &st, NULL) == SQLITE_OK) {
                sqlite3_bind_int64(st, 1, run);
                if (sqlite3_step(st) == SQLITE_ROW)
                        lost = (struct store_lock_lost){ .known = true, .untimed = sqlite3_column_int64(st, 0),
                                                         .unattributed = sqlite3_column_int64(st, 1),
                                                         .unattributed_ns = sqlite3_column_int64(st, 2),
                                                         .nested = sqlite3_column_type(st, 3) == SQLITE_NULL
                                                                           ? -1 : sqlite3_column_int64(st, 3) };
                sqlite3_finalize(st);
        }
        *ret = TAKE_PTR(v);
        *ret_n = n;
        *ret_lost = lost;
        return 0;
}

int store_run_lock_objects_get(struct store *s, int64_t run, struct store_lock_obj **ret, size_t *ret_n)
{
        _cleanup_free_ struct store_lock_obj *v = NULL;
        size_t n = 0, cap = 0;
        sqlite3_stmt *st;
        int r;

        *ret = NULL;
        *ret_n = 0;
        /* a database from before 0008 has no such table: no objects */
        if (sqlite3_prepare_v2(s->db,
                               "SELECT lock, name, type, contended, total_wait_ns, max_wait_ns, callers, own_contended, "
                               "own_total_wait_ns FROM run_lock_object WHERE run = ?1 "
                               "ORDER BY total_wait_ns DESC, contended DESC, lock",
                               -1, &st, NULL) != SQLITE_OK)
                return 0;
        sqlite3_bind_int64(st, 1, run);
        while ((r = sqlite3_step(st)) == SQLITE_ROW) {
                struct store_lock_obj *o;
                if (n == cap) {
                        struct store_lock_obj *t = realloc(v, (cap = cap ? cap * 2 : 16) * sizeof *t);
                        if (!t) {
                                sqlite3_finalize(st);
                                return -ENOMEM;
                        }
                        v = t;
                }
                o = &v[n++];
                memset(o, 0, sizeof *o);
                snprintf(o->lock, sizeof o->lock, "%s", (const char *)sqlite3_column_text(st, 0));
                snprintf(o->name, sizeof o->name, "%s", (const char *)sqlite3_column_text(st, 1));
                snprintf(o->type, sizeof o->type, "%s", (const char *)sqlite3_column_text(st, 2));
                o->contended = sqlite3_column_int64(st, 3);
                o->total_wait_ns = sqlite3_column_int64(st, 4);
                o->max_wait_ns = sqlite3_column_int64(st, 5);
                o->callers = sqlite3_column_int64(st, 6);
                o->has_own = sqlite3_column_type(st, 7) != SQLITE_NULL;
                o->own_contended = sqlite3_column_int64(st, 7);
                o->own_total_wait_ns = sqlite3_column_int64(st, 8);
        }
        sqlite3_finalize(st);
        if (r != SQLITE_DONE)
                return store_sqlite_error(s, "run_lock_object");
        *ret = TAKE_PTR(v);
        *ret_n = n;
        return 0;
}

int store_cpu_max(struct store *s, int metric, int64_t after_tick, int64_t upto_tick, double *out, int nout)
{
        double scale = 1;
        sqlite3_stmt *st;
        int r;

        for (int c = 0; c < nout; c++)
                out[c] = 0;
        if (metric < 0 || metric >= _M_MAX || s->metric_rowid[metric] == 0)
                return 0;
        if (sqlite3_prepare_v2(s->db, "SELECT scale FROM metric WHERE id = ?1", -1, &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, "metric");
        sqlite3_bind_int64(st, 1, s->metric_rowid[metric]);
        if (sqlite3_step(st) == SQLITE_ROW)
                scale = sqlite3_column_double(st, 0);
        sqlite3_finalize(st);
        if (sqlite3_prepare_v2(s->db, "SELECT vals FROM cpu_sample WHERE metric = ?1 AND tick > ?2 AND tick <= ?3", -1,
                               &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, "cpu_sample");
        sqlite3_bind_int64(st, 1, s->metric_rowid[metric]);
        sqlite3_bind_int64(st, 2, after_tick);
        sqlite3_bind_int64(st, 3, upto_tick);
        while ((r = sqlite3_step(st)) == SQLITE_ROW) {
                struct packed_iter it;
                int64_t v;
                bool null;
                int c;

                packed_iter_init(&it, sqlite3_column_blob(st, 0), (size_t)sqlite3_column_bytes(st, 0));
                while (packed_next(&it, &c, &v, &null) > 0)
                        if (!null && c >= 0 && c < nout && (double)v * scale > out[c])
                                out[c] = (double)v * scale;
        }
        sqlite3_finalize(st);
        return r == SQLITE_DONE ? 0 : store_sqlite_error(s, "cpu_sample");
}
