/* runs.h - benchmark runs on the daemon's side: open, close, recover. */
#ifndef SCALEMON_RUNS_H
#define SCALEMON_RUNS_H

#include <jansson.h>
#include <stdint.h>

#include "proto.h"
#include "sampler.h"
#include "store.h"

struct runs;

int runs_new(struct runs **ret);
struct runs *runs_free(struct runs *rs);
size_t runs_count(const struct runs *rs);
/* Names and start times of the open runs, as a JSON array. */
json_t *runs_open_json(const struct runs *rs);

/* Where a snapshot was taken: the last tick written, and its end. */
struct snapshot_point {
        int64_t tick;
        int64_t time;
        int64_t mono;           /* CLOCK_MONOTONIC at the tick's end */
};

/* Close the runs a previous daemon left open as interrupted, with totals
 * summed from the samples up to the last tick written.  Logs each. */
int runs_recover(struct store *st, const struct sampler *sm);

/* The request handlers: the caller has just taken a snapshot at pt
 * (sampled and flushed).  They return the reply, or NULL and *ret_err. */
json_t *runs_start(struct runs *rs, struct store *st, const struct sampler *sm, int64_t host, int64_t interval_ns,
                   const struct snapshot_point *pt, const struct proto_request *req, char **ret_err);
json_t *runs_stop(struct runs *rs, struct store *st, const struct sampler *sm, const struct snapshot_point *pt,
                  const struct proto_request *req, char **ret_err);
json_t *runs_mark(struct runs *rs, struct store *st, const struct proto_request *req, char **ret_err);
/* Which open run a request means: by name, or the only one. */
int runs_pick(const struct runs *rs, const char *name, char **ret_err);

/* Close every open run as interrupted at pt (clean shutdown). */
int runs_interrupt_all(struct runs *rs, struct store *st, const struct sampler *sm, const struct snapshot_point *pt);

/* The totals rows of a run from per-(metric, loc) values in the
 * catalogue unit (vals[m * nloc + loc]), for the CPUs in cpus[]. */
int runs_build_totals(const double *vals, int nloc, const struct cpumap *map, const bool *cpus, const bool *metrics,
                      struct store_total **ret, size_t *ret_n);

#endif
