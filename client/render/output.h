/* output.h - how scalemonctl prints: JSON documents, CSV from an array of
 * objects, aligned tables (libsmartcols), numbers, and its one-line
 * errors with the exit codes (output.c). */
#ifndef SCALEMON_CLIENT_OUTPUT_H
#define SCALEMON_CLIENT_OUTPUT_H

#include <jansson.h>
#include <libsmartcols.h>
#include <stdint.h>

#include "macro.h"

/* Exit codes: the contract in doc/DESIGN.md. */
#define EXIT_OK      0
#define EXIT_FAILED  1      /* the request failed: unknown run, no daemon, nothing in range */
#define EXIT_USAGE   2      /* bad usage */

/* Print "scalemonctl: ..." to stderr (one line: control characters in
 * what it quotes shown as \xNN) and return code. */
int ctl_fail(int code, const char *fmt, ...) _printf_(2, 3);

enum output_format { FORMAT_TABLE, FORMAT_JSON, FORMAT_CSV };

int output_json(json_t *doc);
int output_csv(json_t *rows);
json_t *json_time(int64_t ns);                 /* RFC 3339 string */
json_t *json_number(double v);                 /* integer when whole */
void format_number(double v, char *buf, size_t len);   /* 12345, 45.67, 0.0123 */
void format_bytes(int64_t v, char *buf, size_t len);   /* 1.5 MiB */
/* A change in %, signed, one decimal; more where one decimal would print
 * a change that is not there (-100.0% for a rate that fell to 0.02%: -99.98%;
 * +0.0% for +0.004%: +0.004%; at most 4 decimals). */
void format_pct(double pct, char *buf, size_t len);

/* A table with these column headers (NULL-terminated); right_aligned has
 * one letter per column, 'r' for right-aligned ("lrr"), or is NULL. */
struct libscols_table *table_new(const char *const *columns, const char *right_aligned);
/* One row: exactly as many strings as columns; NULL prints "-". */
int table_row(struct libscols_table *tb, ...);
int table_print(struct libscols_table *tb);     /* prints, frees; exit code */

#endif
