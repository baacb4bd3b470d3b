/* packed-sql.h - SQL functions over cpu_sample's packed blobs, for the
 * store's connections and the loadable extension (scalemon.so). */
#ifndef SCALEMON_PACKED_SQL_H
#define SCALEMON_PACKED_SQL_H

#include <sqlite3.h>

/* Register on db:
 *   scalemon_cpu(vals, cpu)      one CPU's value: NULL if not counted
 *   scalemon_cpus(vals)          table: (cpu, value) for every CPU whose
 *                                value is not 0 (NULL: not counted)
 *   scalemon_pack(cpu, value)    aggregate: the blob of a group's rows
 * Returns an SQLite result code. */
int packed_sql_register(sqlite3 *db);

#endif
