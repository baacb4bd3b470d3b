/* runlocks.h - what runs.c does for lock wait at a run's stop: store the
 * run's contended locks, and give "max" metrics (lock_wait_max_ns) their
 * run value, which is a maximum over the run's ticks, not a difference. */
#ifndef SCALEMON_RUNLOCKS_H
#define SCALEMON_RUNLOCKS_H

#include <stdint.h>

#include "lockwait.h"
#include "store.h"

/* Stop run's lock accounting: its rows by caller and by lock (the run is
 * freed, whatever the result; lw_result_clear() frees *ret). */
int runlocks_stop(struct lockwait_run *run, struct lw_result *ret);
/* The run's own tasks' lock_wait_ns as a 'cgroup' level total, appended
 * to *rows, where the run had its own cgroup. */
int runlocks_own_total(const struct lw_result *res, struct store_total **rows, size_t *n);
/* Write them for run id. */
int runlocks_put(struct store *st, int64_t id, const struct lw_result *res);

/* For every metric with .max: vals[m * nloc + cpu] = the largest value
 * stored for that CPU in ticks (after_tick, upto_tick]. */
int runlocks_max_values(struct store *st, int64_t after_tick, int64_t upto_tick, double *vals, int nloc);

#endif
