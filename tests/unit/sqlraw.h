/* sqlraw.h - the unit tests' own look at a database file, through SQLite
 * alone (the packed-value functions registered), beside what the code
 * under test reads. */
#ifndef SCALEMON_TEST_SQLRAW_H
#define SCALEMON_TEST_SQLRAW_H

#include <sqlite3.h>
#include <stdint.h>

#include "packed-sql.h"

/* The first column of the first row of sql on db, as int64; -1 on error. */
static inline int64_t raw_int(const char *db, const char *sql)
{
        sqlite3 *h;
        sqlite3_stmt *st;
        int64_t v = -1;

        if (sqlite3_open(db, &h) != SQLITE_OK)
                return -1;
        packed_sql_register(h);
        if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK) {
                if (sqlite3_step(st) == SQLITE_ROW)
                        v = sqlite3_column_int64(st, 0);
                sqlite3_finalize(st);
        }
        sqlite3_close(h);
        return v;
}

#endif
