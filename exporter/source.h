/* source.h - what the exporter reads: scalemond's running totals over the
 * control socket ({"cmd":"totals"}, daemon/totals.c) and recent runs from
 * the database, read-only.  Both as plain structs for collect.c. */
#ifndef SCALEMON_EXPORTER_SOURCE_H
#define SCALEMON_EXPORTER_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metric.h"
#include "store.h"

struct src_metric {
        char name[64];
        enum metric_scope scope;
        char unit[32];
        double scale;                   /* raw total * scale = catalogue unit */
        int64_t *values;                /* per CPU, per node or one */
        int nvalues;
};

struct src_unavailable {
        char name[64];
        char *why;
};

struct src_totals {
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
        struct src_metric *metrics;
        size_t nmetrics;
        struct src_unavailable *unavailable;
        size_t nunavailable;
};
void src_totals_clear(struct src_totals *t);

/* Ask scalemond at socket_path; wait at most timeout_ms in all.  On error
 * *ret_err says why in one line. */
int src_totals_fetch(const char *socket_path, int timeout_ms, struct src_totals *ret, char **ret_err);
/* Decode a reply (exposed for the tests). */
int src_totals_decode(const char *json, struct src_totals *ret, char **ret_err);

struct src_run {
        char name[160];
        char status[16];
        int64_t start, end;             /* ns since the epoch; end 0 while running */
        struct store_kv *tags;
        size_t ntags;
        struct store_score *scores;
        size_t nscores;
};
void src_runs_free(struct src_run *r, size_t n);

/* The newest max_runs runs that started at or after since_ns, and any
 * still running. */
int src_runs_read(struct store *st, int64_t since_ns, size_t max_runs, struct src_run **ret, size_t *ret_n);

#endif
