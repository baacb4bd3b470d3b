/* scalemon-ext.c - scalemon.so, the SQL functions of packed-sql.c as a
 * loadable extension for the sqlite3 shell and other programs, which also
 * shows the ticks not committed yet (head-sql.c), as scalemonctl does:
 *
 *   sqlite3 -readonly scalemon.db -cmd '.load /usr/lib/scalemon/scalemon'
 *
 * The same sources, built against the extension API's function table.
 */
#include "config.h"

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1

#include <stdio.h>

#include "head-sql.c"
#include "packed-sql.c"

__attribute__((visibility("default")))
int sqlite3_scalemon_init(sqlite3 *db, char **err, const sqlite3_api_routines *api);
__attribute__((visibility("default")))
int sqlite3_scalemon_init(sqlite3 *db, char **err, const sqlite3_api_routines *api)
{
        char note[768];
        int r;

        SQLITE_EXTENSION_INIT2(api);
        (void)err;
        r = packed_sql_register(db);
        if (r != SQLITE_OK)
                return r;
        /* The functions stay registered whatever the head holds: a failed
         * load would unload the code they point to. */
        head_sql_attach(db, sqlite3_db_filename(db, "main"), note, sizeof note);
        if (note[0])
                fprintf(stderr, "scalemon: %s\n", note);
        return SQLITE_OK;
}
