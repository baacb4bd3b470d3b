/* sub.h - the client's side of a subscription: scalemond pushes each
 * tick's deltas on a connection of its own (daemon/subscribe.c); used by
 * `scalemonctl top` and the live line of `run exec`. */
#ifndef SCALEMON_SUB_H
#define SCALEMON_SUB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli.h"

struct sub;

enum sub_loc { SUB_LOC_CPU, SUB_LOC_NODE, SUB_LOC_SYSTEM };

struct sub_metric {
        char name[64];
        char unit[32];
        enum sub_loc loc;               /* the shape of its values */
        bool available;
        char why[160];                  /* when not available */
};

/* What the daemon answered to the request. */
struct sub_info {
        enum sub_loc per;
        double interval_s;
        int ncpus, nnodes;
        int nloc;                       /* max(ncpus, nnodes, 1): the stride of sub_tick.v */
        int *node_of;                   /* [ncpus] */
        bool *online;                   /* [ncpus] */
        struct sub_metric *metrics;     /* in the order asked */
        size_t nmetrics;
};

struct sub_run {
        char name[132];
        int64_t start_ns;
        double elapsed_s;               /* at the tick's end */
        bool has_mark;
        char mark[256];                 /* the last mark's text, cut to fit */
        int64_t mark_ns;
};

/* One tick as pushed: v[i * nloc + l] is metric i's delta at location l
 * (a CPU, a node, or 0 for system values), in the catalogue unit. */
struct sub_tick {
        int64_t start_ns, end_ns;
        double interval_s;
        double *v;
        bool *null;                     /* no value: offline, not counted, unavailable */
        struct sub_run *runs;
        size_t nruns;
};

enum sub_event { SUB_NONE, SUB_INFO, SUB_TICK };

/* Connect to the daemon on a connection of its own (printing why not,
 * unless quiet).  Returns 0, or an exit code. */
int sub_open(struct ctl *ctl, bool quiet, struct sub **ret);
struct sub *sub_close(struct sub *s);
int sub_fd(const struct sub *s);

/* Ask for metrics (names) per cpu, node or system; again to change. */
int sub_request(struct sub *s, const char *const *metrics, size_t n, enum sub_loc per);

/* The next line already received, without blocking.  Returns 0 with *ev
 * SUB_INFO (the reply: sub_info() changed), SUB_TICK (sub_tick()) or
 * SUB_NONE (nothing complete yet: poll sub_fd()); or -ECONNRESET (the
 * daemon closed the connection), -EPROTO with *ret_err (an error reply or
 * a line that is not one), another -errno. */
int sub_next(struct sub *s, enum sub_event *ev, char **ret_err);
const struct sub_info *sub_info(const struct sub *s);
const struct sub_tick *sub_tick(const struct sub *s);
/* Index of a metric in sub_info(), or -1. */
int sub_metric_index(const struct sub *s, const char *name);

#endif
