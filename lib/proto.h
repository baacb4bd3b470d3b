/* proto.h - the control protocol: one JSON object per line each way.
 *
 * Requests are validated here, before the daemon acts on them: size,
 * required fields, types, and the shape of names, tags and scores.
 */
#ifndef SCALEMON_PROTO_H
#define SCALEMON_PROTO_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define PROTO_MAX_LINE    (64 * 1024)  /* bytes in one request, newline included */
#define PROTO_MAX_NAME    128
#define PROTO_MAX_KEY     64
#define PROTO_MAX_VALUE   256
#define PROTO_MAX_TAGS    64
#define PROTO_MAX_SCORES  64
#define PROTO_MAX_TEXT    1024
#define PROTO_MAX_COMMAND 4096
#define PROTO_MAX_METRICS 64            /* names in one subscribe request */

enum proto_cmd {
        CMD_STATUS,     /* anyone: the daemon's state and open runs */
        CMD_RUN_START,  /* name, tags, command */
        CMD_RUN_STOP,   /* [name], scores, exit_status, wall_s/user_s/sys_s */
        CMD_RUN_MARK,   /* [name], text */
        CMD_RELOAD,     /* re-read the configuration */
        CMD_IMPORT,     /* an export document, passed as a file descriptor */
        CMD_RUN_DELETE, /* name: a finished run and what belongs to it */
        CMD_SUBSCRIBE,  /* anyone: metrics, per; then each tick is pushed (daemon/subscribe.c) */
        CMD_TOTALS,     /* anyone: running totals since start, and health (daemon/totals.c) */
        _CMD_MAX,
};

struct proto_kv {
        char *key;
        char *value;
};

struct proto_score {
        char *key;
        double value;
};

/* run-start when a run of that name exists. */
enum proto_if_exists {
        PROTO_IF_EXISTS_REFUSE,         /* the default: an error */
        PROTO_IF_EXISTS_NUMBER,         /* NAME-2, NAME-3...: the first free */
        PROTO_IF_EXISTS_REPLACE,        /* delete the finished run, record the new one */
};

struct proto_request {
        enum proto_cmd cmd;
        char *name;                     /* run name; NULL where optional and absent */
        struct proto_kv *tags;
        size_t ntags;
        struct proto_score *scores;
        size_t nscores;
        char *text;                     /* run-mark */
        char *command;                  /* run-start: what run exec runs */
        enum proto_if_exists if_exists; /* run-start */
        char *cgroup;                   /* run-start: "new", or a cgroup v2 directory (the run's own counters) */
        bool has_exit_status;
        int exit_status;
        bool has_times;
        double wall_s, user_s, sys_s;   /* run-stop, from run exec */
        char **metrics;                 /* subscribe: metric names (checked by the daemon) */
        size_t nmetrics;
        char *per;                      /* subscribe: "cpu", "node" or "system"; NULL: "cpu" */
        bool has_switches;              /* run-stop, from run exec's wait4() */
        int64_t voluntary_switches, involuntary_switches;
};

const char *proto_cmd_name(enum proto_cmd cmd);
/* Does cmd change state (and so need a permitted peer)? */
bool proto_cmd_changes_state(enum proto_cmd cmd);
/* Does cmd turn its connection into a stream of pushed lines (subscribe)? */
bool proto_cmd_is_stream(enum proto_cmd cmd);

/* Parse and validate one request line (without its newline).  On error
 * *ret_err says what is wrong in one line; req is left empty. */
int proto_parse_request(const char *line, size_t len, struct proto_request *req, char **ret_err);
void proto_request_free(struct proto_request *req);
/* The JSON a client sends for req (the inverse of proto_parse_request).
 * A client's request may borrow its strings: one it built itself is not
 * given to proto_request_free(). */
json_t *proto_request_to_json(const struct proto_request *req);
/* The same as one line, newline included (free() it); NULL: no memory. */
char *proto_request_line(const struct proto_request *req);

/* Shapes of user-chosen strings.  On false, *why (static) says why. */
bool proto_valid_name(const char *s, const char **why);
bool proto_valid_key(const char *s, const char **why);
bool proto_valid_value(const char *s, const char **why);
bool proto_valid_text(const char *s, size_t max, const char **why);
/* Bytes in the character at s if a text may hold it (valid UTF-8, no
 * control character but tab), else 0. */
size_t proto_utf8_char(const char *s);

#endif
