/* store-series.h - every metric's machine-wide value per tick over a time
 * range, in one pass over the range's rows (store-series.c). */
#ifndef SCALEMON_STORE_SERIES_H
#define SCALEMON_STORE_SERIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metric.h"
#include "store.h"

struct store_tick_values {
        size_t n;               /* bins: [since + i * bin_ns, since + (i + 1) * bin_ns), each tick in the
                                 * one its middle falls in */
        int64_t *dur;           /* the length (ns) of the ticks in bin i; 0: none */
        double *v;              /* v[m * n + i]: metric m over those ticks, in the catalogue unit, summed
                                 * over CPUs (cpu scope) or nodes (node scope) */
        uint8_t *nc;            /* nc[m * n + i]: in one of them a CPU or node was not counted */
        bool have[_M_MAX];      /* some row of m in the range */
        int64_t *id_;           /* (the ticks' ids and bins, while reading) */
        size_t *bin_, nticks_;
};

/* The ticks that start in [since, until), summed into bins of bin_ns
 * (> 0).  -EINVAL, -ENOMEM, -EIO (store_errmsg says why). */
int store_tick_values(struct store *s, int64_t since, int64_t until, int64_t bin_ns, struct store_tick_values *ret);
void store_tick_values_free(struct store_tick_values *tv);

/* A cpu-scope metric's sum per CPU c < ncpus over the ticks that start in
 * [since, until), in the catalogue unit (ret_sum[c]), and the seconds of
 * those ticks in which c was counted (ret_dur[c]); one pass, each tick's
 * blob decoded once.  -EINVAL: not a cpu-scope metric. */
int store_cpu_sums(struct store *s, const char *metric, int ncpus, int64_t since, int64_t until, double *ret_sum,
                   double *ret_dur);

/* Cpu-scope metrics (catalogue ids) summed per node (node_of[c] for CPU
 * c < ncpus) in bins of bin_ns over the ticks that start in [since,
 * until): one scan of their rows, each blob decoded once.  -EINVAL (not
 * cpu-scope, more than 16), -ENOMEM, -EIO. */
struct store_node_values {
        size_t n;               /* bins */
        int nnodes;
        size_t nmetrics;
        int64_t *dur;           /* per bin, ns of ticks */
        double *v;              /* v[(i * nnodes + node) * n + bin]: metrics[i], in the catalogue unit */
        uint8_t *nc;            /* the same places: a CPU of the node not counted */
};
int store_node_values(struct store *s, const int *metrics, size_t nmetrics, int64_t since, int64_t until,
                      int64_t bin_ns, const int *node_of, int ncpus, int nnodes, struct store_node_values *ret);
void store_node_values_free(struct store_node_values *nv);

/* Run run's own cgroup's metric m (run_own_sample) summed into bins of
 * bin_ns from since, each tick in the bin its middle falls in, ret[0..nbins)
 * (0 where none is stored) (store-own.c).  -EINVAL, -EIO. */
int store_own_bins(struct store *s, int64_t run, enum metric_id m, int64_t since, int64_t bin_ns, size_t nbins,
                   double *ret);

#endif
