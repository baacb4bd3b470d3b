/* proto-tick.h - the line a subscription is pushed each tick
 * (daemon/subscribe.c encodes it, client/ipc/sub.c decodes it):
 *
 *   {"tick": {"start", "end", "start_ns", "end_ns", "interval_s"},
 *    "values": {METRIC: [v, ...] | v},
 *    "runs": [{"name", "start", "elapsed_s", "mark": {"text", "time"}}]}
 *
 * start, end and the runs' times are RFC 3339 with milliseconds; a value
 * is an integer where the metric's unit is its raw count, else a number
 * of 10 significant digits; null where there is none. */
#ifndef SCALEMON_PROTO_TICK_H
#define SCALEMON_PROTO_TICK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Decoded: the strings and arrays are owned (proto_tick_clear()); to
 * encode, they are the caller's. */
struct proto_tick_metric {
        const char *name;
        bool scalar;                    /* one value, v[0] (system), not an array of n */
        bool integer;                   /* encode as integers (decoded: false) */
        size_t n;
        double *v;                      /* [n], the interval's deltas in the catalogue unit */
        bool *null;                     /* [n], no value: offline, not counted */
};

struct proto_tick_run {
        const char *name;
        int64_t start_ns;               /* realtime, to the millisecond */
        double elapsed_s;               /* at the tick's end */
        const char *mark;               /* the last mark's text, or NULL */
        int64_t mark_ns;
};

struct proto_tick {
        int64_t start_ns, end_ns;
        double interval_s;              /* encoded as (end_ns - start_ns) / 1e9 */
        struct proto_tick_metric *metrics;
        size_t nmetrics;
        struct proto_tick_run *runs;
        size_t nruns;
};

/* The line, without its newline, to free; NULL if out of memory. */
char *proto_tick_line(const struct proto_tick *t, size_t *ret_len);
/* Returns 0; -ENOMSG when line is a JSON object but not a tick (a
 * reply: the caller reads it); -EPROTO with *ret_err (if ret_err), or
 * -ENOMEM.  On error *ret is empty. */
int proto_tick_decode(const char *line, size_t len, struct proto_tick *ret, char **ret_err);
void proto_tick_clear(struct proto_tick *t);

#endif
