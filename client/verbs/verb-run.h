/* verb-run.h - what `run start` (verb-run.c) and `run exec`
 * (verb-run-exec.c) share: the options that become a run-start request. */
#ifndef SCALEMON_CLIENT_VERB_RUN_H
#define SCALEMON_CLIENT_VERB_RUN_H

#include <jansson.h>
#include <regex.h>
#include <stdbool.h>

#include "cli.h"
#include "proto.h"
#include "verb-run-score.h"

/* --score-regex K=REGEX (or K=last:REGEX): the last match's capture;
 * K=sum:REGEX and K=mean:REGEX: the sum or the mean of every match's
 * capture (per-thread figures, several matches on a line count each). */
enum score_mode { SCORE_LAST, SCORE_SUM, SCORE_MEAN };

struct score_regex {
        char *key;
        regex_t re;
        enum score_mode mode;
        bool matched;
        char value[64];         /* the last capture; the result for sum and mean */
        double sum;             /* sum and mean: of the captures so far */
        size_t count;
        bool not_number;        /* sum and mean: a capture that is not a number, in value */
};

struct exec_opts {
        const char *name;
        const char *if_exists;          /* NULL (refuse), "number" (--name-suffix), "replace" (--replace) */
        const char *cgroup;             /* the run's own cgroup: NULL none, "new" (run exec), or a directory */
        struct store_kv tags[PROTO_MAX_TAGS];
        size_t ntags;
        struct score_regex rx[PROTO_MAX_SCORES];
        size_t nrx;
        struct run_score_from from;     /* --score-from, --score-json (verb-run-score.c) */
};

void exec_opts_free(struct exec_opts *o);
/* These return 0, or EXIT_USAGE after saying what is wrong. */
int run_check_name(const char *name);
int run_add_tag(struct store_kv *tags, size_t *n, const char *arg);
int run_add_lower_tag(struct store_kv *tags, size_t *n, const char *arg);
int run_set_if_exists(struct exec_opts *o, int c);
/* The run-start request for NAME (command: NULL for run start). */
json_t *run_start_request(const struct exec_opts *o, const char *name, const char *command);
/* reply.OBJ.KEY as a string, or "?" */
const char *run_reply_str(json_t *reply, const char *obj, const char *key);

int run_exec(struct ctl *ctl, int argc, char **argv);

#endif
