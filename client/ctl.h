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
        int sock_fd;                    /* control socket, connected on demand, or -1 */
        int sock_errno;                 /* why the last ctl_connect() failed (errno), or 0 */
};

/* A verb: argv[0] is the verb itself; returns an exit code. */
typedef int (*verb_fn)(struct ctl *ctl, int argc, char **argv);

/* Print "scalemonctl: ..." to stderr and return code. */
int ctl_fail(int code, const char *fmt, ...) _printf_(2, 3);

/* getopt_long for verbs and main: on an unknown option, or one missing
 * its value, prints one line naming it and how to get help, and returns
 * '?'.  ctl_verb is what the hint names ("run start"). */
struct option;
extern const char *ctl_verb;
int ctl_getopt(int argc, char **argv, const char *optstring, const struct option *options);

/* The database, opened read-only the first time; NULL after printing why. */
struct store *ctl_store(struct ctl *ctl);

/* Resolve a WHEN argument (run name or time) for option opt.  is_until:
 * a run name means its end, not its start.  Returns 0, or an exit code
 * after printing why (EXIT_USAGE malformed, EXIT_FAILED unknown run). */
int ctl_when(struct ctl *ctl, const char *opt, const char *arg, bool is_until, int64_t *ret);
int ctl_duration(const char *opt, const char *arg, int64_t *ret);
int ctl_int(const char *opt, const char *arg, long min, long max, long *ret);

/* The daemon: connect (printing why not, unless quiet), and one request
 * with its reply ({"ok": true, ...}); pass_fd rides along if >= 0.
 * Returns 0, or an exit code after printing the daemon's error. */
int ctl_connect(struct ctl *ctl, bool quiet);
int ctl_request(struct ctl *ctl, json_t *req, int pass_fd, json_t **ret_reply);
/* Why a connect() failed with EACCES, as one phrase: "permission denied on
 * SOCKET: only root, scalemond's user and members of group G may use it
 * (ask to be added to the group)". */
void ctl_denied_why(const struct ctl *ctl, char *buf, size_t len);

/* The runs a verb covers: --since WHEN, --until WHEN, --tag K=V... */
struct run_select {
        const char *since_arg, *until_arg;
        struct store_kv tags[64];
        size_t ntags;
};
/* which: 's' (--since), 'u' (--until), 't' (--tag).  0 or EXIT_USAGE. */
int run_select_set(struct run_select *sel, int which, const char *arg);
void run_select_free(struct run_select *sel);
/* List the selected runs, oldest first.  Returns 0, or an exit code after
 * printing why (bad WHEN, unknown run, no runs in range). */
int run_select_list(struct ctl *ctl, const struct run_select *sel, struct run_info **ret, size_t *ret_n);
/* --metric M[,M...] into sel[]: the first one given clears the default of
 * all.  0 or EXIT_USAGE. */
int parse_metric_option(const char *arg, bool *sel, bool *given);
/* "K=V" for option opt: key and value checked, malloc'd.  0 or EXIT_USAGE. */
int parse_key_value(const char *opt, const char *arg, bool value_is_number, char **ret_key, char **ret_value);

/* A run as runs and report show it: {"name", "status", "start", "end",
 * "duration_s", "exit_status", "tags", "scores", ...}. */
json_t *run_json(const struct run_info *ri, const struct run_detail *d);
double run_duration_s(const struct run_info *ri);       /* until now while running */
void format_kvs(char *buf, size_t len, const struct store_kv *kv, size_t n);          /* k=v k=v */
void format_scores(char *buf, size_t len, const struct store_score *sc, size_t n);
void format_duration_s(double s, char *buf, size_t len);                             /* 12.34s, 3m05.0s */

/* Output: JSON documents, CSV from an array of objects, and tables. */
int output_json(json_t *doc);
int output_csv(json_t *rows);
json_t *json_time(int64_t ns);                 /* RFC 3339 string */
json_t *json_number(double v);                 /* integer when whole */
void format_number(double v, char *buf, size_t len);   /* 12345, 45.67, 0.0123 */
void format_bytes(int64_t v, char *buf, size_t len);   /* 1.5 MiB */

/* A table with these column headers (NULL-terminated); right_aligned has
 * one letter per column, 'r' for right-aligned ("lrr"), or is NULL. */
struct libscols_table *table_new(const char *const *columns, const char *right_aligned);
/* One row: exactly as many strings as columns; NULL prints "-". */
int table_row(struct libscols_table *tb, ...);
int table_print(struct libscols_table *tb);     /* prints, frees; exit code */

/* Verbs */
int verb_status(struct ctl *ctl, int argc, char **argv);
int verb_metrics(struct ctl *ctl, int argc, char **argv);
int verb_reload(struct ctl *ctl, int argc, char **argv);
int verb_query(struct ctl *ctl, int argc, char **argv);
int verb_run(struct ctl *ctl, int argc, char **argv);
int verb_runs(struct ctl *ctl, int argc, char **argv);
int verb_report(struct ctl *ctl, int argc, char **argv);
int verb_curve(struct ctl *ctl, int argc, char **argv);
int verb_plot(struct ctl *ctl, int argc, char **argv);
int verb_export(struct ctl *ctl, int argc, char **argv);
int verb_import(struct ctl *ctl, int argc, char **argv);
int verb_top(struct ctl *ctl, int argc, char **argv);          /* HOOK(top): client/top.c */

#endif
