/* runlocks.h - what runs.c does for lock wait at a run's stop: store the
 * run's contended locks, and give "max" metrics (lock_wait_max_ns) their
 * run value, which is a maximum over the run's ticks, not a difference. */
#ifndef SCALEMON_RUNLOCKS_H
#define SCALEMON_RUNLOCKS_H

#include <stdint.h>

#include "lockwait.h"
#include "store.h"

/* Stop run's lock accounting and write its rows for run id (the run is
 * freed, whatever the result). */
int runlocks_store(struct store *st, int64_t id, struct lockwait_run *run);

/* For every metric with .max: vals[m * nloc + cpu] = the largest value
 * stored for that CPU in ticks (after_tick, upto_tick]. */
int runlocks_max_values(struct store *st, int64_t after_tick, int64_t upto_tick, double *vals, int nloc);

#endif
