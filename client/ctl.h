/* ctl.h - what scalemonctl's verb files share. */
#ifndef SCALEMON_CTL_H
#define SCALEMON_CTL_H

#include <jansson.h>
#include <libsmartcols.h>
#include <stdbool.h>
#include <stdint.h>

#include "macro.h"
#include "store.h"

enum output_format { FORMAT_TABLE, FORMAT_JSON, FORMAT_CSV };

/* Exit codes: the contract in DESIGN.md. */
#define EXIT_OK      0
#define EXIT_FAILED  1      /* the request failed: unknown run, no daemon, nothing in range */
#define EXIT_USAGE   2      /* bad usage */

struct ctl {
        const char *db_path;
        const char *socket_path;
        enum output_format format;
        struct store *store;            /* opened on demand by ctl_store() */
};

/* A verb: argv[0] is the verb itself; returns an exit code. */
typedef int (*verb_fn)(struct ctl *ctl, int argc, char **argv);

/* Print "scalemonctl: ..." to stderr and return code. */
int ctl_fail(int code, const char *fmt, ...) _printf_(2, 3);

/* The database, opened read-only the first time; NULL after printing why. */
struct store *ctl_store(struct ctl *ctl);

/* Resolve a WHEN argument (run name or time) for option opt.  is_until:
 * a run name means its end, not its start.  Returns 0, or an exit code
 * after printing why (EXIT_USAGE malformed, EXIT_FAILED unknown run). */
int ctl_when(struct ctl *ctl, const char *opt, const char *arg, bool is_until, int64_t *ret);
int ctl_duration(const char *opt, const char *arg, int64_t *ret);
int ctl_int(const char *opt, const char *arg, long min, long max, long *ret);

/* Output: JSON documents, CSV from an array of objects, and tables. */
int output_json(json_t *doc);
int output_csv(json_t *rows);
json_t *json_time(int64_t ns);                 /* RFC 3339 string */
json_t *json_number(double v);                 /* integer when whole */
void format_number(double v, char *buf, size_t len);   /* 12345, 45.67, 0.0123 */
void format_bytes(int64_t v, char *buf, size_t len);   /* 1.5 MiB */

/* A table with these column headers (NULL-terminated); right_aligned
 * lists column indexes as digits ("23": the third and fourth). */
struct libscols_table *table_new(const char *const *columns, const char *right_aligned);
/* One row: exactly as many strings as columns; NULL prints "-". */
int table_row(struct libscols_table *tb, ...);
int table_print(struct libscols_table *tb);     /* prints, frees; exit code */

/* Verbs */
int verb_status(struct ctl *ctl, int argc, char **argv);
int verb_metrics(struct ctl *ctl, int argc, char **argv);
int verb_query(struct ctl *ctl, int argc, char **argv);

#endif
