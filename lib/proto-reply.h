/* proto-reply.h - the control protocol's replies: one struct per reply,
 * one encoder (the daemon's, *_to_json) and one decoder (the client's and
 * the exporter's, *_from_json), in proto-reply.c and proto-totals.c.
 *
 * A reply is one JSON object on one line: the reply's fields and "ok":
 * true, or {"ok": false, "error": "what is wrong"}.  Times are RFC 3339
 * strings as the daemon writes them (in its time zone), kept as text.
 *
 * Strings: a decoded struct owns its strings (free it with its _clear);
 * the daemon may fill one with borrowed strings to encode it, and then
 * does not clear it.
 */
#ifndef SCALEMON_PROTO_REPLY_H
#define SCALEMON_PROTO_REPLY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metric.h"

#define PROTO_TIME_LEN 40       /* an RFC 3339 time, NUL included */

/* ---- framing ---- */

/* body with "ok": true added (body itself; NULL stays NULL). */
json_t *proto_reply_ok(json_t *body);
/* {"ok": false, "error": msg}. */
json_t *proto_reply_error(const char *msg);
/* One reply line: 0 and the object in *ret ("ok" taken out); -EPROTO when
 * the daemon refused (*ret_err: its error, or NULL when it gave none);
 * -EINVAL when the line is not a JSON object (*ret_err: why); -ENOMEM. */
int proto_reply_parse(const char *line, json_t **ret, char **ret_err);

/* ---- run-start, run-stop: {"run": {...}} ---- */
struct proto_run_reply {
        char *name;                     /* the run's name (run-start: maybe NAME-2...) */
        char *status;                   /* run-stop: how it ended; NULL for run-start */
        char start[PROTO_TIME_LEN];
        char end[PROTO_TIME_LEN];       /* run-stop; "" for run-start */
        double duration_s;              /* run-stop */
        char *cgroup;                   /* run-start: the run's own cgroup, or */
        char *cgroup_why;               /*   why it has none; both NULL: not asked */
};
json_t *proto_run_reply_to_json(const struct proto_run_reply *r);
int proto_run_reply_from_json(json_t *o, struct proto_run_reply *ret);
void proto_run_reply_clear(struct proto_run_reply *r);

/* ---- run-mark: {"mark": {"run", "time", "text"}} ---- */
struct proto_mark_reply {
        char *run;
        char time[PROTO_TIME_LEN];
        char *text;
};
json_t *proto_mark_reply_to_json(const struct proto_mark_reply *m);
int proto_mark_reply_from_json(json_t *o, struct proto_mark_reply *ret);
void proto_mark_reply_clear(struct proto_mark_reply *m);

/* ---- run-delete: {"deleted": NAME} ---- */
json_t *proto_delete_reply_to_json(const char *name);

/* ---- import: {"imported", "skipped", "renamed"} ---- */
struct proto_import_reply {
        int64_t imported, skipped, renamed;
};
json_t *proto_import_reply_to_json(const struct proto_import_reply *c);
int proto_import_reply_from_json(json_t *o, struct proto_import_reply *ret);

/* ---- reload: {"status", "not_applied": [{"key", "value", "running", "why"}]} ---- */
struct proto_not_applied {
        char *key, *value, *running, *why;
};
struct proto_reload_reply {
        char *status;
        struct proto_not_applied *not_applied;
        size_t nnot_applied;
};
json_t *proto_reload_reply_to_json(const struct proto_reload_reply *r);
int proto_reload_reply_from_json(json_t *o, struct proto_reload_reply *ret);
void proto_reload_reply_clear(struct proto_reload_reply *r);

/* ---- status ---- */
struct proto_open_run {
        char *name;
        char start[PROTO_TIME_LEN];
};

struct proto_total {
        char *name;                     /* a catalogue metric */
        double value;                   /* system-wide since start, in its unit */
};

struct proto_status_reply {
        int pid;
        char *version;
        char *status;                   /* one line: what the daemon does */
        double interval_s;
        int cpus_online, cpus;
        char *database;
        struct proto_open_run *open_runs;
        size_t nopen_runs;
        char sampled_at[PROTO_TIME_LEN];        /* "" before the first interval */
        int64_t sampled_at_ns;
        struct proto_total *totals;
        size_t ntotals;
        bool has_memory;
        struct {
                int64_t sqlite_bytes, held_intervals, held_bytes;
        } memory;
        bool has_retention;
        struct {
                int64_t merged_intervals, deleted_intervals, step_max_us, tick_late_max_us, db_bytes;
        } retention;
        char *access;                   /* who may change state; NULL: not said */
};
json_t *proto_status_reply_to_json(const struct proto_status_reply *s);
int proto_status_reply_from_json(json_t *o, struct proto_status_reply *ret);
void proto_status_reply_clear(struct proto_status_reply *s);
/* The total of metric name, or NULL. */
const struct proto_total *proto_status_total(const struct proto_status_reply *s, const char *name);
/* The memory and retention objects as status --format json shows them. */
json_t *proto_status_memory_to_json(const struct proto_status_reply *s);
json_t *proto_status_retention_to_json(const struct proto_status_reply *s);

/* ---- totals (scalemon-exporter; proto-totals.c) ----
 *   {"started_ns", "sampled_at_ns", "interval_s", "ticks", "tick_late_max_us",
 *    "held_intervals", "cpus", "cpu_node": [N], "nodes": [N],
 *    "metrics": [{"name", "scope", "unit", "scale", "values": [N]}],
 *    "unavailable": [{"name", "why"}]}
 * values are raw totals (multiply by scale for the catalogue unit): one
 * per CPU 0..cpus-1 for cpu metrics, one per node for node metrics, one
 * for system metrics. */
struct proto_totals_metric {
        char name[64];
        enum metric_scope scope;
        char unit[32];
        double scale;                   /* raw total * scale = catalogue unit */
        int64_t *values;                /* per CPU, per node or one */
        int nvalues;
};

struct proto_totals_unavailable {
        char name[64];
        char *why;
};

struct proto_totals {
        int64_t started_ns;             /* the daemon's start, realtime; 0 if unknown */
        int64_t sampled_at_ns;          /* end of the last interval in the totals */
        double interval_s;
        int64_t ticks;
        int64_t tick_late_max_us;
        int64_t held_intervals;
        int ncpus;
        int *cpu_node;                  /* [ncpus] */
        int *nodes;                     /* existing node numbers */
        int nnodes;
        struct proto_totals_metric *metrics;
        size_t nmetrics;
        struct proto_totals_unavailable *unavailable;
        size_t nunavailable;
};
json_t *proto_totals_to_json(const struct proto_totals *t);
/* A whole reply line, "ok" included; a metric the catalogue does not know
 * (a newer daemon's) is left out.  On error *ret_err says why. */
int proto_totals_decode(const char *line, struct proto_totals *ret, char **ret_err);
void proto_totals_clear(struct proto_totals *t);

#endif
