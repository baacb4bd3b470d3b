/* score.h - a run's scores from what the benchmarks people run print,
 * without a regex: stress-ng's metrics table or YAML file, perf bench's
 * result lines, fio's JSON, and a number at a path in any JSON document
 * (`run exec --score-from`).  Scores are named as the tool names them.
 * The parsers are pure functions over text; score_collect() picks the
 * text (the command's output, or the file its arguments name). */
#ifndef SCALEMON_CLIENT_SCORE_H
#define SCALEMON_CLIENT_SCORE_H

#include <stdbool.h>
#include <stddef.h>

#include "proto.h"

enum score_format {
        SCORE_STRESS_NG,        /* --metrics-brief / --metrics table, or --yaml FILE */
        SCORE_PERF_BENCH,       /* Total time, usecs/op, ops/sec, operations/sec, GB/sec */
        SCORE_FIO,              /* --output-format=json (or json+), on stdout or --output FILE */
        SCORE_JSON,             /* json:FILE:PATH */
};

/* What `--score-from` names.  file and path: json only (file "-": the
 * command's standard output). */
struct score_source {
        enum score_format format;
        char *file;
        char *path;
};

struct score_value {
        char key[PROTO_MAX_KEY + 1];
        double value;
};

struct score_list {
        struct score_value v[PROTO_MAX_SCORES];
        size_t n;
        size_t dropped;         /* found past PROTO_MAX_SCORES, left out */
};

/* "stress-ng", "perf-bench", "fio" or "json:FILE:PATH" (split at the last
 * ':').  0, or -EINVAL with *ret_err saying what is wrong. */
int score_source_parse(const char *arg, struct score_source *ret, char **ret_err);
void score_source_clear(struct score_source *src);
/* "stress-ng", "perf-bench", "fio", "json" */
const char *score_format_name(enum score_format f);

/* The file the scores come from for a command with arguments argv
 * (NULL-terminated): json's FILE, stress-ng's --yaml/-Y FILE, fio's
 * --output FILE; NULL when they come from the command's output. */
const char *score_source_file(const struct score_source *src, char *const *argv);

/* The parsers.  Each adds what it finds to out (a key seen again: the
 * later value) and returns 0; -ENOENT when the text has nothing of its
 * kind, -EINVAL when it is malformed; *ret_err then says what to do. */
int score_parse_stress_ng(const char *text, struct score_list *out, char **ret_err);
int score_parse_stress_ng_yaml(const char *text, struct score_list *out, char **ret_err);
int score_parse_perf_bench(const char *text, struct score_list *out, char **ret_err);
int score_parse_fio(const char *text, size_t len, struct score_list *out, char **ret_err);
int score_parse_json_path(const char *text, size_t len, const char *path, struct score_list *out, char **ret_err);

/* What a command printed, kept for the parsers: [0] standard output, [1]
 * standard error, each up to SCORE_CAPTURE_MAX bytes (past that, the rest
 * is dropped and counted in overflow). */
#define SCORE_CAPTURE_MAX (64u << 20)
struct score_capture {
        char *buf[2];
        size_t len[2], size[2];
        size_t overflow;
};
/* 0, or -ENOMEM (what did not fit is then counted in overflow). */
int score_capture_add(struct score_capture *c, int stream, const char *data, size_t n);
void score_capture_free(struct score_capture *c);

/* src's scores into out, from the file it names (read after the command
 * ended) or from the captured output: JSON from standard output, the
 * line-oriented formats from standard output then standard error. */
int score_collect(const struct score_source *src, char *const *argv, const struct score_capture *cap,
                  struct score_list *out, char **ret_err);

#endif
