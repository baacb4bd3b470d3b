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
        size_t n;               /* ticks whose start is in [since, until), by id */
        int64_t *id, *t, *dur;  /* tick id, start and length (ns) */
        double *v;              /* v[m * n + i]: metric m in tick i, in the catalogue unit, summed
                                 * over CPUs (cpu scope) or nodes (node scope); 0 where no row */
        uint8_t *nc;            /* nc[m * n + i]: a CPU or node was not counted (v is the rest) */
        bool have[_M_MAX];      /* some row of m in the range */
};

/* -ENOMEM, -EIO (store_errmsg says why). */
int store_tick_values(struct store *s, int64_t since, int64_t until, struct store_tick_values *ret);
void store_tick_values_free(struct store_tick_values *tv);

/* A cpu-scope metric's sum per CPU c < ncpus over the ticks that start in
 * [since, until), in the catalogue unit (ret_sum[c]), and the seconds of
 * those ticks in which c was counted (ret_dur[c]); one pass, each tick's
 * blob decoded once.  -EINVAL: not a cpu-scope metric. */
int store_cpu_sums(struct store *s, const char *metric, int ncpus, int64_t since, int64_t until, double *ret_sum,
                   double *ret_dur);

#endif
