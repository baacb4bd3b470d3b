/* scalemon-ext.c - scalemon.so, the SQL functions of packed-sql.c as a
 * loadable extension for the sqlite3 shell and other programs:
 *
 *   sqlite3 -readonly scalemon.db -cmd '.load /usr/lib/scalemon/scalemon'
 *
 * The same source, built against the extension API's function table.
 */
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1

#include "packed-sql.c"

__attribute__((visibility("default")))
int sqlite3_scalemon_init(sqlite3 *db, char **err, const sqlite3_api_routines *api);
__attribute__((visibility("default")))
int sqlite3_scalemon_init(sqlite3 *db, char **err, const sqlite3_api_routines *api)
{
        SQLITE_EXTENSION_INIT2(api);
        return packed_sql_register(db);
}
