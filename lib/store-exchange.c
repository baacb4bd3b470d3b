/* store-exchange.c - the SQL of export and import (exchange.c owns the
 * document's format and its validation; this only reads and writes rows).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "macro.h"
#include "store-internal.h"

static char *column_dup(sqlite3_stmt *st, int col)
{
        const char *v = (const char *)sqlite3_column_text(st, col);
        return v ? strdup(v) : NULL;
}

int store_host_by_id(struct store *s, int64_t id, struct host_info *ret)
{
        struct host_info h = {};
        sqlite3_stmt *st;
        int r = 0;

        if (sqlite3_prepare_v2(s->db,
                               "SELECT machine_id, hostname, kernel, ncpus, nnodes, cpu_model FROM host WHERE id = ?1",
                               -1, &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, "host");
        sqlite3_bind_int64(st, 1, id);
        if (sqlite3_step(st) != SQLITE_ROW)
                r = store_sqlite_error(s, "host of a run");
        else {
                h.machine_id = column_dup(st, 0);
                h.hostname = column_dup(st, 1);
                h.kernel = column_dup(st, 2);
                h.ncpus = sqlite3_column_int(st, 3);
                h.nnodes = sqlite3_column_int(st, 4);
                h.cpu_model = column_dup(st, 5);
                if (!h.machine_id || !h.hostname || !h.kernel || (sqlite3_column_text(st, 5) && !h.cpu_model)) {
                        host_info_clear(&h);
                        r = -ENOMEM;
                }
        }
        sqlite3_finalize(st);
        if (r >= 0)
                *ret = h;
        return r;
}

int store_import_begin(struct store *s)
{
        return store_exec(s, "BEGIN IMMEDIATE");
}

int store_import_commit(struct store *s)
{
        return store_exec(s, "COMMIT");
}

int store_host_import(struct store *s, const struct host_info *h, int64_t first, int64_t *ret_id)
{
        sqlite3_stmt *st;
        int r = 0;

        if (sqlite3_prepare_v2(s->db,
                               "INSERT INTO host (machine_id, hostname, kernel, ncpus, nnodes, cpu_model, first_seen, last_seen) "
                               "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7) ON CONFLICT (machine_id) DO UPDATE SET "
                               "first_seen = min(first_seen, ?7) RETURNING id",
                               -1, &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, "host");
        sqlite3_bind_text(st, 1, h->machine_id, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, h->hostname, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, h->kernel, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 4, h->ncpus);
        sqlite3_bind_int(st, 5, h->nnodes);
        if (h->cpu_model)
                sqlite3_bind_text(st, 6, h->cpu_model, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 7, first);
        if (sqlite3_step(st) == SQLITE_ROW)
                *ret_id = sqlite3_column_int64(st, 0);
        else
                r = store_sqlite_error(s, "host");
        sqlite3_finalize(st);
        return r;
}

int store_metric_import(struct store *s, const char *name, const char *scope, const char *unit)
{
        sqlite3_stmt *st;
        int r;

        if (sqlite3_prepare_v2(s->db,
                               "INSERT OR IGNORE INTO metric (name, scope, unit, source, available, why) "
                               "VALUES (?1, ?2, ?3, 'imported', 0, 'imported from another database, not sampled here')",
                               -1, &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, "metric");
        sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, scope, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, unit, -1, SQLITE_STATIC);
        r = sqlite3_step(st) == SQLITE_DONE ? 0 : store_sqlite_error(s, "metric");
        sqlite3_finalize(st);
        return r;
}

static void bind_opt_real(sqlite3_stmt *st, int col, double v)
{
        if (isnan(v))
                sqlite3_bind_null(st, col);
        else
                sqlite3_bind_double(st, col, v);
}

static int insert_pairs(struct store *s, const char *sql, int64_t run, const struct store_kv *kv,
                        const struct store_score *sc, size_t n)
{
        sqlite3_stmt *st;
        int r = 0;

        if (n == 0)
                return 0;
        if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, sql);
        for (size_t i = 0; i < n; i++) {
                sqlite3_bind_int64(st, 1, run);
                if (kv) {
                        sqlite3_bind_text(st, 2, kv[i].key, -1, SQLITE_STATIC);
                        sqlite3_bind_text(st, 3, kv[i].value, -1, SQLITE_STATIC);
                } else {
                        sqlite3_bind_text(st, 2, sc[i].key, -1, SQLITE_STATIC);
                        sqlite3_bind_double(st, 3, sc[i].value);
                }
                if (sqlite3_step(st) != SQLITE_DONE) {
                        r = store_sqlite_error(s, sql);
                        break;
                }
                sqlite3_reset(st);
        }
        sqlite3_finalize(st);
        return r;
}

/* The run's context, as a shared set (schema 0003). */
static int insert_context(struct store *s, int64_t run, const struct store_kv *kv, size_t n)
{
        sqlite3_stmt *st;
        int64_t ctx;
        int r;

        if (n == 0)
                return 0;
        r = store_context_put(s, kv, n, &ctx);
        if (r < 0)
                return r;
        if (sqlite3_prepare_v2(s->db, "UPDATE run SET context = ?1 WHERE id = ?2", -1, &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, "run");
        sqlite3_bind_int64(st, 1, ctx);
        sqlite3_bind_int64(st, 2, run);
        r = sqlite3_step(st) == SQLITE_DONE ? 0 : store_sqlite_error(s, "run");
        sqlite3_finalize(st);
        return r;
}

static int insert_totals(struct store *s, int64_t run, const struct store_total *t, size_t n)
{
        sqlite3_stmt *st;
        int r = 0;

        if (n == 0)
                return 0;
        if (sqlite3_prepare_v2(s->db,
                               "INSERT INTO run_total (run, metric, level, loc, value) "
                               "VALUES (?1, (SELECT id FROM metric WHERE name = ?2), ?3, ?4, ?5)",
                               -1, &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, "run_total");
        for (size_t i = 0; i < n; i++) {
                sqlite3_bind_int64(st, 1, run);
                sqlite3_bind_text(st, 2, t[i].metric, -1, SQLITE_STATIC);
                sqlite3_bind_text(st, 3, total_level_name(t[i].level), -1, SQLITE_STATIC);
                sqlite3_bind_int(st, 4, t[i].loc);
                sqlite3_bind_double(st, 5, t[i].value);
                if (sqlite3_step(st) != SQLITE_DONE) {
                        r = store_sqlite_error(s, "run_total");
                        break;
                }
                sqlite3_reset(st);
        }
        sqlite3_finalize(st);
        return r;
}

int store_run_import(struct store *s, const struct run_import *ri, int64_t *ret_id)
{
        sqlite3_stmt *st;
        int64_t id;
        int e;

        if (sqlite3_prepare_v2(s->db,
                               "INSERT INTO run (name, host, status, start, end, exit_status, wall_s, user_s, sys_s, "
                               "command, imported, length_ns, voluntary_switches, involuntary_switches) "
                               "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 1, ?11, ?12, ?13)",
                               -1, &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, "run");
        sqlite3_bind_text(st, 1, ri->name, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, ri->host);
        sqlite3_bind_text(st, 3, ri->status, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 4, ri->start);
        sqlite3_bind_int64(st, 5, ri->end);
        if (ri->has_exit_status)
                sqlite3_bind_int(st, 6, ri->exit_status);
        bind_opt_real(st, 7, ri->wall_s);
        bind_opt_real(st, 8, ri->user_s);
        bind_opt_real(st, 9, ri->sys_s);
        if (ri->command)
                sqlite3_bind_text(st, 10, ri->command, -1, SQLITE_STATIC);
        if (ri->has_length)
                sqlite3_bind_int64(st, 11, ri->length_ns);
        if (ri->has_switches) {
                sqlite3_bind_int64(st, 12, ri->voluntary_switches);
                sqlite3_bind_int64(st, 13, ri->involuntary_switches);
        }
        e = sqlite3_step(st);
        sqlite3_finalize(st);
        if (e != SQLITE_DONE) {
                if (sqlite3_extended_errcode(s->db) == SQLITE_CONSTRAINT_UNIQUE) {
                        snprintf(s->errmsg, sizeof s->errmsg, "run '%s' already exists", ri->name);
                        return -EEXIST;
                }
                return store_sqlite_error(s, "run");
        }
        id = sqlite3_last_insert_rowid(s->db);
        e = ri->nlocks || ri->locks_lost ? store_locks_insert(s, id, ri->locks, ri->nlocks, ri->locks_lost) : 0;
        if (e >= 0 && ri->nlock_objects)
                e = store_lock_objects_insert(s, id, ri->lock_objects, ri->nlock_objects);
        if (e >= 0)
                e = insert_pairs(s, "INSERT INTO run_tag (run, key, value) VALUES (?1, ?2, ?3)", id, ri->tags, NULL, ri->ntags);
        if (e >= 0)
                e = insert_pairs(s, "INSERT INTO run_score (run, key, value) VALUES (?1, ?2, ?3)", id, NULL, ri->scores,
                                 ri->nscores);
        if (e >= 0)
                e = insert_context(s, id, ri->context, ri->ncontext);
        for (size_t i = 0; e >= 0 && i < ri->nmarks; i++)
                e = store_run_add_mark(s, id, ri->marks[i].t, ri->marks[i].text);
        if (e >= 0)
                e = insert_totals(s, id, ri->totals, ri->ntotals);
        if (e >= 0)
                *ret_id = id;
        return e;
}
