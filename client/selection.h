/* selection.h - the runs a verb covers, the options that choose and
 * group them, and how a run is shown (selection.c). */
#ifndef SCALEMON_CLIENT_SELECTION_H
#define SCALEMON_CLIENT_SELECTION_H

#include <jansson.h>
#include <stdbool.h>

#include "analysis.h"
#include "cli.h"
#include "store.h"

/* The runs a verb covers: --since WHEN, --until WHEN, --tag K=V...,
 * --host NAME */
struct run_select {
        const char *since_arg, *until_arg;
        const char *host;                       /* --host: a host's name */
        struct store_kv tags[64];
        size_t ntags;
};
/* which: 's' (--since), 'u' (--until), 't' (--tag), 'H' (--host).  0 or
 * EXIT_USAGE. */
int run_select_set(struct run_select *sel, int which, const char *arg);
void run_select_free(struct run_select *sel);
/* List the selected runs, oldest first.  Returns 0, or an exit code after
 * printing why (bad WHEN, unknown run, no runs in range). */
int run_select_list(struct ctl *ctl, const struct run_select *sel, struct run_info **ret, size_t *ret_n);
/* The selected runs loaded for analysis (analysis_load); 0, or an exit
 * code after printing why.  Free with analysis_unload. */
int run_select_load(struct ctl *ctl, const struct run_select *sel, enum analysis_totals keep,
                    struct analysis_run **ret, size_t *ret_n);
/* analysis_pick_score(), printing why not: 0, or an exit code. */
int run_select_score(const struct analysis_run *runs, size_t n, const char *by, const char *score, const char **ret);

/* --metric M[,M...] into sel[]: the first one given clears the default of
 * all.  0 or EXIT_USAGE. */
int parse_metric_option(const char *arg, bool *sel, bool *given);
/* "K=V" for option opt: key and value checked, malloc'd.  0 or EXIT_USAGE. */
int parse_key_value(const char *opt, const char *arg, bool value_is_number, char **ret_key, char **ret_value);
/* --group-by TAG[,TAG...] and --baseline K=V[,K=V...] into go.  0 or EXIT_USAGE. */
int parse_group_by(struct group_opts *go, const char *arg);
int parse_baseline(struct group_opts *go, const char *arg);
/* opt --variance-cv PCT, --variance-minmax R or --alpha P into go; and
 * --lower-is-better K[,K...].  0 or an exit code after saying why. */
int parse_group_limit(struct group_opts *go, const char *opt, const char *arg);
int parse_lower_is_better(struct group_opts *go, const char *arg);
/* After loading: every --group-by key is one some run has, and every
 * --baseline K=V a value some run has; else EXIT_USAGE after naming the
 * keys (or values) there are, with "did you mean" (group-keys.c).  opt
 * names the option in the message ("--group-by"). */
int run_select_check_groups(const struct analysis_run *runs, size_t n, const struct group_opts *go, const char *opt);
/* The same for one key (curve --by, --series). */
int run_select_check_key(const struct analysis_run *runs, size_t n, const char *key, const char *opt);

/* A run as runs and report show it: {"name", "status", "start", "end",
 * "duration_s", "exit_status", "tags", "scores", ...}. */
json_t *run_json(const struct run_info *ri, const struct run_detail *d);
void format_kvs(char *buf, size_t len, const struct store_kv *kv, size_t n);          /* k=v k=v */
void format_scores(char *buf, size_t len, const struct store_score *sc, size_t n);
void format_duration_s(double s, char *buf, size_t len);                             /* 12.34s, 3m05.0s */

#endif
