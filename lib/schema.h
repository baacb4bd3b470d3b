/* schema.h - the SQL migrations under schema/, embedded at build time. */
#ifndef SCALEMON_SCHEMA_H
#define SCALEMON_SCHEMA_H

struct schema_migration {
        int version;            /* PRAGMA user_version after it is applied */
        const char *name;       /* file name under schema/ */
        const char *sql;
};

extern const struct schema_migration schema_migrations[];
extern const unsigned schema_n_migrations;

#endif
