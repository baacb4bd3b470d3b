/* head-sql.c - the head file's ticks in SQL (head-sql.h).
 *
 * A reader loads the head's ticks into TEMP tables h_tick, h_sample, ...
 * and puts TEMP VIEWs named like the series tables in front of them:
 * SQLite looks unqualified names up in temp first, so every query reads
 * the database's rows and the head's with no change.  A view shows a head
 * row only while its tick id is past the database's last tick: a commit
 * that lands while the reader runs moves the rows from one side of the
 * UNION ALL to the other, never both.  main's own views (samples,
 * cpu_samples, ...) name main's tables, so they are made again in temp,
 * from their own SQL, where the same names find the views.
 *
 * The views cannot be flattened into a join: a query joins tick with a
 * series table through a correlated subquery (store-query.c), or bounds the
 * series table's tick ids by constants, never with a JOIN on both views
 * (SQLite would materialize the whole table).
 *
 * Compiled into libscalemon, and #included by scalemon-ext.c, where the
 * sqlite3_* calls go through the extension API's function table: one
 * source for scalemonctl and the sqlite3 shell.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "head-sql.h"
#include "macro.h"

static int head_sql_error(sqlite3 *db, char *err, size_t errlen, const char *what)
{
        snprintf(err, errlen, "%s: %s", what, sqlite3_errmsg(db));
        return -EIO;
}

static int head_sql_exec(sqlite3 *db, const char *sql, char *err, size_t errlen)
{
        char *msg = NULL;

        if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
                snprintf(err, errlen, "%s", msg ? msg : sqlite3_errmsg(db));
                sqlite3_free(msg);
                return -EIO;
        }
        return 0;
}

enum { INS_TICK, INS_SAMPLE, INS_CPU, INS_OWN, INS_MUX, INS_EVENT, _INS_MAX };

static const char *const temp_sql =
        "PRAGMA temp_store = MEMORY;"
        "CREATE TEMP TABLE h_tick (id INTEGER PRIMARY KEY, t INTEGER NOT NULL, dur INTEGER NOT NULL);"
        "CREATE TEMP TABLE h_sample (metric INTEGER NOT NULL, tick INTEGER NOT NULL, loc INTEGER NOT NULL,"
        " value INTEGER, PRIMARY KEY (tick, metric, loc)) WITHOUT ROWID;"
        "CREATE TEMP TABLE h_cpu_sample (tick INTEGER NOT NULL, metric INTEGER NOT NULL, total INTEGER,"
        " vals BLOB NOT NULL, PRIMARY KEY (tick, metric)) WITHOUT ROWID;"
        "CREATE TEMP TABLE h_run_own_sample (run INTEGER NOT NULL, tick INTEGER NOT NULL, metric INTEGER NOT NULL,"
        " value REAL NOT NULL, PRIMARY KEY (run, tick, metric)) WITHOUT ROWID;"
        "CREATE TEMP TABLE h_mux (tick INTEGER NOT NULL, cpu INTEGER NOT NULL, grp TEXT NOT NULL, duty REAL NOT NULL,"
        " PRIMARY KEY (tick, cpu, grp)) WITHOUT ROWID;"
        "CREATE TEMP TABLE h_event (id INTEGER PRIMARY KEY, t INTEGER NOT NULL, kind TEXT NOT NULL, cpu INTEGER,"
        " detail TEXT, tick INTEGER NOT NULL);";

#define AFTER "(SELECT coalesce(max(id), 0) FROM main.tick)"
static const char *const view_sql =
        "CREATE TEMP VIEW tick AS SELECT id, t, dur, n FROM main.tick"
        " UNION ALL SELECT id, t, dur, 1 FROM temp.h_tick WHERE id > " AFTER ";"
        "CREATE TEMP VIEW sample AS SELECT metric, tick, loc, value FROM main.sample"
        " UNION ALL SELECT metric, tick, loc, value FROM temp.h_sample WHERE tick > " AFTER ";"
        "CREATE TEMP VIEW cpu_sample AS SELECT tick, metric, total, vals FROM main.cpu_sample"
        " UNION ALL SELECT tick, metric, total, vals FROM temp.h_cpu_sample WHERE tick > " AFTER ";"
        "CREATE TEMP VIEW run_own_sample AS SELECT run, tick, metric, value FROM main.run_own_sample"
        " UNION ALL SELECT run, tick, metric, value FROM temp.h_run_own_sample WHERE tick > " AFTER ";"
        "CREATE TEMP VIEW mux AS SELECT tick, cpu, grp, duty FROM main.mux"
        " UNION ALL SELECT tick, cpu, grp, duty FROM temp.h_mux WHERE tick > " AFTER ";"
        "CREATE TEMP VIEW event AS SELECT id, t, kind, cpu, detail FROM main.event"
        " UNION ALL SELECT -id, t, kind, cpu, detail FROM temp.h_event WHERE tick > " AFTER ";";

/* what an earlier attach made, but main's views' copies (copy_views()) */
static const char *const drop_sql =
        "DROP VIEW IF EXISTS temp.tick; DROP VIEW IF EXISTS temp.sample; DROP VIEW IF EXISTS temp.cpu_sample;"
        "DROP VIEW IF EXISTS temp.run_own_sample; DROP VIEW IF EXISTS temp.mux; DROP VIEW IF EXISTS temp.event;"
        "DROP TABLE IF EXISTS temp.h_tick; DROP TABLE IF EXISTS temp.h_sample; DROP TABLE IF EXISTS temp.h_cpu_sample;"
        "DROP TABLE IF EXISTS temp.h_run_own_sample; DROP TABLE IF EXISTS temp.h_mux; DROP TABLE IF EXISTS temp.h_event;";

/* The statements that insert the head's rows: into main (replay) or into
 * the temp tables (a reader). */
static int prepare_inserts(sqlite3 *db, bool temp, sqlite3_stmt **st, char *err, size_t errlen)
{
        const char *sql[_INS_MAX] = {
                [INS_TICK] = temp ? "INSERT INTO temp.h_tick (id, t, dur) VALUES (?1, ?2, ?3)"
                                  : "INSERT INTO main.tick (id, t, dur) VALUES (?1, ?2, ?3)",
                [INS_SAMPLE] = temp ? "INSERT OR IGNORE INTO temp.h_sample (tick, metric, loc, value) VALUES (?1, ?2, ?3, ?4)"
                                    : "INSERT OR IGNORE INTO main.sample (tick, metric, loc, value) VALUES (?1, ?2, ?3, ?4)",
                [INS_CPU] = temp ? "INSERT OR IGNORE INTO temp.h_cpu_sample (tick, metric, total, vals) VALUES (?1, ?2, ?3, ?4)"
                                 : "INSERT OR IGNORE INTO main.cpu_sample (tick, metric, total, vals) VALUES (?1, ?2, ?3, ?4)",
                /* a run deleted since: its rows go with it */
                [INS_OWN] = temp ? "INSERT OR IGNORE INTO temp.h_run_own_sample (tick, run, metric, value) "
                                   "SELECT ?1, ?2, ?3, ?4 WHERE EXISTS (SELECT 1 FROM main.run WHERE id = ?2)"
                                 : "INSERT OR IGNORE INTO main.run_own_sample (tick, run, metric, value) "
                                   "SELECT ?1, ?2, ?3, ?4 WHERE EXISTS (SELECT 1 FROM main.run WHERE id = ?2)",
                [INS_MUX] = temp ? "INSERT OR IGNORE INTO temp.h_mux (tick, cpu, grp, duty) VALUES (?1, ?2, ?3, ?4)"
                                 : "INSERT OR IGNORE INTO main.mux (tick, cpu, grp, duty) VALUES (?1, ?2, ?3, ?4)",
                [INS_EVENT] = temp ? "INSERT INTO temp.h_event (tick, t, kind, cpu, detail) VALUES (?1, ?2, ?3, ?4, ?5)"
                                   : "INSERT INTO main.event (t, kind, cpu, detail) VALUES (?2, ?3, ?4, ?5)",
        };

        for (int i = 0; i < _INS_MAX; i++)
                if (sqlite3_prepare_v2(db, sql[i], -1, &st[i], NULL) != SQLITE_OK)
                        return head_sql_error(db, err, errlen, "head");
        return 0;
}

static int bind_row(sqlite3_stmt **st, const struct head_row *r, sqlite3_stmt **ret)
{
        sqlite3_stmt *q;

        switch (r->kind) {
        case HEAD_TICK:
                q = st[INS_TICK];
                sqlite3_bind_int64(q, 2, r->t);
                sqlite3_bind_int64(q, 3, r->dur);
                break;
        case HEAD_SAMPLE:
        case HEAD_CPU:
                q = st[r->kind == HEAD_SAMPLE ? INS_SAMPLE : INS_CPU];
                sqlite3_bind_int64(q, 2, r->metric);
                if (r->kind == HEAD_SAMPLE)
                        sqlite3_bind_int(q, 3, r->loc);
                else
                        sqlite3_bind_blob(q, 4, r->blob, (int)r->blob_len, SQLITE_STATIC);
                if (r->null)
                        sqlite3_bind_null(q, r->kind == HEAD_SAMPLE ? 4 : 3);
                else
                        sqlite3_bind_int64(q, r->kind == HEAD_SAMPLE ? 4 : 3, r->value);
                break;
        case HEAD_OWN:
                q = st[INS_OWN];
                sqlite3_bind_int64(q, 2, r->run);
                sqlite3_bind_int64(q, 3, r->metric);
                sqlite3_bind_double(q, 4, r->dval);
                break;
        case HEAD_MUX:
                q = st[INS_MUX];
                sqlite3_bind_int(q, 2, r->loc);
                sqlite3_bind_text(q, 3, r->text, -1, SQLITE_STATIC);
                sqlite3_bind_double(q, 4, r->dval);
                break;
        case HEAD_EVENT:
                q = st[INS_EVENT];
                sqlite3_bind_int64(q, 2, r->t);
                sqlite3_bind_text(q, 3, r->text, -1, SQLITE_STATIC);
                if (r->loc >= 0)
                        sqlite3_bind_int(q, 4, r->loc);
                else
                        sqlite3_bind_null(q, 4);
                if (r->text2)
                        sqlite3_bind_text(q, 5, r->text2, -1, SQLITE_STATIC);
                else
                        sqlite3_bind_null(q, 5);
                break;
        default:
                return -EBADMSG;
        }
        sqlite3_bind_int64(q, 1, r->tick);
        *ret = q;
        return 0;
}

int head_sql_insert(sqlite3 *db, struct head_iter *it, bool temp, int64_t after, int64_t *ret_n, char *err,
                    size_t errlen)
{
        sqlite3_stmt *st[_INS_MAX] = { 0 };
        struct head_row row;
        int64_t last = after, n = 0;
        int r = prepare_inserts(db, temp, st, err, errlen);

        while (r >= 0 && (r = head_iter_next(it, &row)) > 0) {
                sqlite3_stmt *q;
                if (row.tick <= after)
                        continue;
                if (row.kind == HEAD_TICK) {
                        if (row.tick <= last) {         /* ids only grow */
                                r = -EBADMSG;
                                break;
                        }
                        last = row.tick;
                        n++;
                }
                r = bind_row(st, &row, &q);
                if (r < 0)
                        break;
                r = sqlite3_step(q) == SQLITE_DONE ? 0 : head_sql_error(db, err, errlen, "head");
                sqlite3_reset(q);
                sqlite3_clear_bindings(q);
        }
        if (r == -EBADMSG)
                snprintf(err, errlen, "a corrupt record in the head file");
        for (int i = 0; i < _INS_MAX; i++)
                sqlite3_finalize(st[i]);
        *ret_n = n;
        return r;
}


int head_sql_last_tick(sqlite3 *db, int64_t *ret, char *err, size_t errlen)
{
        sqlite3_stmt *st;
        int r;

        if (sqlite3_prepare_v2(db, "SELECT coalesce(max(id), 0) FROM main.tick", -1, &st, NULL) != SQLITE_OK)
                return head_sql_error(db, err, errlen, "tick");
        r = sqlite3_step(st) == SQLITE_ROW ? 0 : head_sql_error(db, err, errlen, "tick");
        *ret = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        return r;
}

/* The database's head_id (meta): false when it has none (no daemon has
 * started on it yet, or not a scalemon database). */
static bool db_head_id(sqlite3 *db, uint64_t *ret)
{
        sqlite3_stmt *st;
        bool found = false;

        if (sqlite3_prepare_v2(db, "SELECT value FROM main.meta WHERE key = 'head_id'", -1, &st, NULL) != SQLITE_OK)
                return false;
        if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0)) {
                *ret = strtoull((const char *)sqlite3_column_text(st, 0), NULL, 16);
                found = true;
        }
        sqlite3_finalize(st);
        return found;
}

/* main's views again in temp, from their own SQL ("CREATE VIEW name AS
 * ..."), after dropping the copies an earlier attach made; with none = true
 * only the drops. */
static int copy_views(sqlite3 *db, bool none, char *err, size_t errlen)
{
        static const char prefix[] = "CREATE VIEW ";
        sqlite3_stmt *st;
        char *sql = sqlite3_mprintf("%s", "");
        int r;

        if (sqlite3_prepare_v2(db, "SELECT name, sql FROM main.sqlite_master WHERE type = 'view'", -1, &st, NULL) !=
            SQLITE_OK) {
                sqlite3_free(sql);
                return head_sql_error(db, err, errlen, "views");
        }
        while (sql && sqlite3_step(st) == SQLITE_ROW) {
                const char *name = (const char *)sqlite3_column_text(st, 0);
                const char *def = (const char *)sqlite3_column_text(st, 1);
                if (!name || !def || strncmp(def, prefix, sizeof prefix - 1) != 0)
                        continue;
                sql = sqlite3_mprintf("%z DROP VIEW IF EXISTS temp.\"%w\";", sql, name);
                if (!none && sql)
                        sql = sqlite3_mprintf("%z CREATE TEMP VIEW %s;", sql, def + sizeof prefix - 1);
        }
        sqlite3_finalize(st);
        if (!sql) {
                snprintf(err, errlen, "views: out of memory");
                return -ENOMEM;
        }
        r = head_sql_exec(db, sql, err, errlen);
        sqlite3_free(sql);
        return r;
}

/* Load what the head holds past the database into temp tables, behind
 * views.  Only when it holds such ticks: a database no daemon writes reads
 * its tables directly. */
static int attach_rows(sqlite3 *db, const uint8_t *p, size_t n, int64_t *ret_n, char *err, size_t errlen)
{
        struct head_iter it;
        uint64_t db_id, want;
        int64_t after;
        int r = head_iter_init(&it, p, n, &db_id, err, errlen);

        *ret_n = 0;
        if (r < 0)
                return r;
        if (!db_head_id(db, &want) || db_id != want)
                return 0;               /* a daemon that has not started on this database yet */
        r = head_sql_last_tick(db, &after, err, errlen);
        if (r >= 0)
                r = copy_views(db, true, err, errlen);
        if (r >= 0)
                r = head_sql_exec(db, drop_sql, err, errlen);
        if (r >= 0)
                r = head_sql_exec(db, temp_sql, err, errlen);
        if (r >= 0)
                r = head_sql_exec(db, "BEGIN", err, errlen);
        if (r >= 0)
                r = head_sql_insert(db, &it, true, after, ret_n, err, errlen);
        if (r >= 0)
                r = head_sql_exec(db, "COMMIT", err, errlen);
        if (r >= 0 && *ret_n > 0)
                r = head_sql_exec(db, view_sql, err, errlen);
        if (r >= 0 && *ret_n > 0)
                r = copy_views(db, false, err, errlen);
        if (r < 0 && !sqlite3_get_autocommit(db)) {
                char ignored[8];
                head_sql_exec(db, "ROLLBACK", ignored, sizeof ignored);
        }
        return r;
}

int64_t head_sql_attach(sqlite3 *db, const char *db_path, char *note, size_t notelen)
{
        _cleanup_free_ uint8_t *p = NULL;
        char path[4096], err[512] = "";
        struct stat st;
        int64_t loaded = 0;
        size_t n = 0;
        int r;

        note[0] = 0;
        if (!db_path || !db_path[0] || (size_t)snprintf(path, sizeof path, "%s" HEAD_SUFFIX, db_path) >= sizeof path)
                return 0;
        r = head_read_file(path, &p, &n);
        if (r == -ENOENT)
                return 0;
        if (r < 0) {
                /* a head with ticks in it is past its header */
                if (stat(path, &st) < 0 || st.st_size > HEAD_HEADER_SIZE)
                        snprintf(note, notelen,
                                 "the newest ticks are not in the database yet and their file %.300s cannot be read "
                                 "(%s): showing what the database holds", path, strerror(-r));
                return 0;
        }
        if (n <= HEAD_HEADER_SIZE)
                return 0;
        r = attach_rows(db, p, n, &loaded, err, sizeof err);
        if (r < 0) {
                snprintf(note, notelen,
                         "the newest ticks, not in the database yet, cannot be read from %.300s: %.300s; "
                         "showing what the database holds", path, err);
                return 0;
        }
        return loaded;
}
