/* store-head.c - the head file (lib/head.h) meets the database.
 *
 * The daemon, at start, inserts the ticks a crash left in the head and not
 * in the database (store_head_replay).  A reader (STORE_READ) loads the
 * head's ticks into TEMP tables h_tick, h_sample, ... and puts TEMP VIEWs
 * named like the series tables in front of them: SQLite looks unqualified
 * names up in temp first, so every query of lib/store*.c reads the
 * database's rows and the head's with no change.  A view shows a head row
 * only while its tick id is past the database's last tick: a commit that
 * lands while the reader runs moves the rows from one side of the UNION
 * ALL to the other, never both.
 *
 * The views cannot be flattened into a join: a query joins tick with a
 * series table through a correlated subquery (store-query.c), or bounds the
 * series table's tick ids by constants, never with a JOIN on both views
 * (SQLite would materialize the whole table).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "head.h"
#include "macro.h"
#include "store-internal.h"

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
        "CREATE TEMP VIEW tick AS SELECT id, t, dur FROM main.tick"
        " UNION ALL SELECT id, t, dur FROM temp.h_tick WHERE id > " AFTER ";"
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

/* The statements that insert the head's rows: into main (replay) or into
 * the temp tables (a reader). */
static int prepare_inserts(struct store *s, bool temp, sqlite3_stmt **st)
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
                if (sqlite3_prepare_v2(s->db, sql[i], -1, &st[i], NULL) != SQLITE_OK)
                        return store_sqlite_error(s, "head");
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

/* Insert the rows of the head's ticks past `after`; *ret_n: ticks inserted. */
static int insert_rows(struct store *s, struct head_iter *it, bool temp, int64_t after, int64_t *ret_n)
{
        sqlite3_stmt *st[_INS_MAX] = { 0 };
        struct head_row row;
        int64_t last = after, n = 0;
        int r = prepare_inserts(s, temp, st);

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
                r = sqlite3_step(q) == SQLITE_DONE ? 0 : store_sqlite_error(s, "head");
                sqlite3_reset(q);
                sqlite3_clear_bindings(q);
        }
        if (r == -EBADMSG)
                snprintf(s->errmsg, sizeof s->errmsg, "a corrupt record in the head file");
        for (int i = 0; i < _INS_MAX; i++)
                sqlite3_finalize(st[i]);
        *ret_n = n;
        return r;
}

static int last_tick_id(struct store *s, int64_t *ret)
{
        sqlite3_stmt *st;
        int r;

        if (sqlite3_prepare_v2(s->db, "SELECT coalesce(max(id), 0) FROM main.tick", -1, &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, "tick");
        r = sqlite3_step(st) == SQLITE_ROW ? 0 : store_sqlite_error(s, "tick");
        *ret = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        return r;
}

int store_next_tick_id(struct store *s, int64_t *ret)
{
        sqlite3_stmt *st;
        int r;

        /* AUTOINCREMENT: the next id is past every id ever used */
        if (sqlite3_prepare_v2(s->db,
                               "SELECT max(coalesce((SELECT seq FROM main.sqlite_sequence WHERE name = 'tick'), 0),"
                               " (SELECT coalesce(max(id), 0) FROM main.tick)) + 1",
                               -1, &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, "tick");
        r = sqlite3_step(st) == SQLITE_ROW ? 0 : store_sqlite_error(s, "tick");
        *ret = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        return r;
}

int store_head_id(struct store *s, uint64_t *ret)
{
        _cleanup_free_ char *v = NULL;
        char buf[32];
        uint64_t id;
        int r = store_meta_get(s, "head_id", &v);

        if (r >= 0 && v) {
                *ret = strtoull(v, NULL, 16);
                return 0;
        }
        if (r != -ENOENT || s->mode != STORE_WRITE)
                return r;
        if (getrandom(&id, sizeof id, 0) != sizeof id)
                return -errno;
        snprintf(buf, sizeof buf, "%016" PRIx64, id);
        r = store_meta_set(s, "head_id", buf);
        *ret = id;
        return r;
}

int store_head_replay(struct store *s, const uint8_t *p, size_t n, int64_t *ret_n)
{
        struct head_iter it;
        uint64_t db_id, want;
        int64_t after;
        int r;

        *ret_n = 0;
        if (n <= HEAD_HEADER_SIZE)
                return 0;
        r = head_iter_init(&it, p, n, &db_id, s->errmsg, sizeof s->errmsg);
        if (r < 0)
                return r;
        r = store_head_id(s, &want);
        if (r < 0)
                return r;
        if (db_id != want)
                return -ESTALE;         /* another database's */
        r = last_tick_id(s, &after);
        if (r >= 0)
                r = store_begin(s);
        if (r < 0)
                return r;
        r = insert_rows(s, &it, false, after, ret_n);
        if (r >= 0)
                r = store_commit(s);
        if (r < 0)
                store_rollback(s);
        return r < 0 ? r : it.torn;
}

/* Load what the head holds past the database into temp tables, behind
 * views.  Only when it holds such ticks: a database no daemon writes reads
 * its tables directly. */
static int attach_rows(struct store *s, const uint8_t *p, size_t n)
{
        struct head_iter it;
        uint64_t db_id, want;
        int64_t after, loaded = 0;
        int r = head_iter_init(&it, p, n, &db_id, s->errmsg, sizeof s->errmsg);

        if (r < 0)
                return r;
        if (store_head_id(s, &want) < 0 || db_id != want)
                return 0;               /* a daemon that has not started on this database yet */
        r = last_tick_id(s, &after);
        if (r < 0)
                return r;
        r = store_exec(s, temp_sql);
        if (r >= 0)
                r = store_exec(s, "BEGIN");
        if (r >= 0)
                r = insert_rows(s, &it, true, after, &loaded);
        if (r >= 0)
                r = store_exec(s, "COMMIT");
        if (r >= 0 && loaded > 0)
                r = store_exec(s, view_sql);
        if (r < 0 && !sqlite3_get_autocommit(s->db))
                store_exec(s, "ROLLBACK");
        return r;
}

int store_head_attach(struct store *s)
{
        _cleanup_free_ uint8_t *p = NULL;
        char path[4096];
        struct stat st;
        size_t n = 0;
        int r;

        if ((size_t)snprintf(path, sizeof path, "%s" HEAD_SUFFIX, s->path) >= sizeof path)
                return 0;
        r = head_read_file(path, &p, &n);
        if (r == -ENOENT)
                return 0;
        if (r < 0) {
                /* a head with ticks in it is past its header */
                if (stat(path, &st) < 0 || st.st_size > HEAD_HEADER_SIZE)
                        snprintf(s->head_note, sizeof s->head_note,
                                 "the newest ticks are not in the database yet and their file %.300s cannot be read "
                                 "(%s): showing what the database holds", path, strerror(-r));
                return 0;
        }
        if (n <= HEAD_HEADER_SIZE)
                return 0;
        r = attach_rows(s, p, n);
        if (r < 0) {
                snprintf(s->head_note, sizeof s->head_note,
                         "the newest ticks, not in the database yet, cannot be read from %.300s: %.300s; "
                         "showing what the database holds", path, s->errmsg);
                s->errmsg[0] = 0;
        }
        return 0;
}

const char *store_head_note(struct store *s)
{
        return s->head_note[0] ? s->head_note : NULL;
}
