/* verb-run-score.h - run exec's --score-from and --score-json: the option
 * values, and the scores they give into the run-stop request
 * (verb-run-score.c; the parsers are client/score.c). */
#ifndef SCALEMON_CLIENT_VERB_RUN_SCORE_H
#define SCALEMON_CLIENT_VERB_RUN_SCORE_H

#include <stdbool.h>

#include "proto.h"
#include "score.h"

/* The scores of a run-stop request, as proto_request carries them. */
struct run_scores {
        struct proto_score v[PROTO_MAX_SCORES];
        size_t n;
};
bool run_scores_has(const struct run_scores *s, const char *key);
/* A copy of key with value: 0, -E2BIG when full, -ENOMEM. */
int run_scores_add(struct run_scores *s, const char *key, double value);
void run_scores_clear(struct run_scores *s);

struct run_score_from {
        struct score_source src[8];
        size_t n;
        struct score_capture cap;       /* the command's output, for them */
};

/* --score-from FORMAT, or (json_synonym) --score-json FILE:PATH.  0, or
 * EXIT_USAGE after saying what is wrong. */
int run_score_from_add(struct run_score_from *f, bool json_synonym, const char *arg);
void run_score_from_free(struct run_score_from *f);
/* Each source's scores, read from the output or the files of the command
 * cmd (NULL-terminated), into scores, where a key a --score-regex gave
 * already stays the regex's (a line says so); " K=V" for each into sc
 * (size scsize, at *sclen) for the summary line.  A source that finds
 * nothing says why on standard error. */
void run_score_from_collect(struct run_score_from *f, char *const *cmd, struct run_scores *scores, char *sc,
                            size_t scsize, size_t *sclen);

#endif
