/* head-sql.h - the head file's ticks (head.h) in SQL, on any connection:
 * the store's (store-head.c) and the loadable extension's (scalemon.so,
 * built against the extension API from the same source). */
#ifndef SCALEMON_HEAD_SQL_H
#define SCALEMON_HEAD_SQL_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "head.h"

/* The id of main's last tick (0: none).  0, or -EIO with err set. */
int head_sql_last_tick(sqlite3 *db, int64_t *ret, char *err, size_t errlen);

/* Insert the rows of the head's ticks past `after` into main's series
 * tables (temp false: a restarted daemon's replay) or into the readers'
 * TEMP tables (temp true); *ret_n: ticks inserted.  0, -EBADMSG (a corrupt
 * record) or -EIO, with err set. */
int head_sql_insert(sqlite3 *db, struct head_iter *it, bool temp, int64_t after, int64_t *ret_n, char *err,
                    size_t errlen);

/* A reader: load the ticks of db_path's head file (db_path HEAD_SUFFIX)
 * that main does not hold yet into TEMP tables, behind TEMP views named
 * like the series tables (tick, sample, cpu_sample, run_own_sample, mux,
 * event), and main's own views again in temp so that they read those.
 * Called again, it drops what it made and loads the head anew.  No head
 * file, one of another database, or no ticks past main's: nothing made.
 * Returns the ticks loaded; when the head holds ticks it cannot read,
 * note says so in one line (else note is ""). */
int64_t head_sql_attach(sqlite3 *db, const char *db_path, char *note, size_t notelen);

#endif
