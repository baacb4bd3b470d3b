/* store-head.c - the head file (lib/head.h) meets the store.
 *
 * The daemon, at start, inserts the ticks a crash left in the head and not
 * in the database (store_head_replay).  A reader (STORE_READ) puts the
 * head's ticks behind TEMP views named like the series tables
 * (store_head_attach): the SQL of both is head-sql.c's, which scalemon.so
 * shares for the sqlite3 shell.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "head-sql.h"
#include "macro.h"
#include "store-internal.h"

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
        r = head_sql_last_tick(s->db, &after, s->errmsg, sizeof s->errmsg);
        if (r >= 0)
                r = store_begin(s);
        if (r < 0)
                return r;
        r = head_sql_insert(s->db, &it, false, after, ret_n, s->errmsg, sizeof s->errmsg);
        if (r >= 0)
                r = store_commit(s);
        if (r < 0)
                store_rollback(s);
        return r < 0 ? r : it.torn;
}

int store_head_attach(struct store *s)
{
        head_sql_attach(s->db, s->path, s->head_note, sizeof s->head_note);
        return 0;
}

const char *store_head_note(struct store *s)
{
        return s->head_note[0] ? s->head_note : NULL;
}
