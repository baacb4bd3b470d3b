/* locks.h - a run's contended kernel locks and lock wait share in
 * `scalemonctl report` (scalemond's BPF lock wait: scalemond(8)). */
#ifndef SCALEMON_CLIENT_LOCKS_H
#define SCALEMON_CLIENT_LOCKS_H

#include <jansson.h>

#include "report.h"

struct run_locks;

/* Read run r's locks (nothing for a run without them); 0 or -errno. */
int locks_load(struct ctl *ctl, struct rrun *r);
void locks_free(struct rrun *r);

/* Lock wait as a share of CPU time (lock_wait_ns / CPU time from
 * /proc/stat), system-wide, per node and (with --per cpu) per CPU; false
 * if the run has no lock wait or no CPU time. */
bool locks_share(const struct rrun *r, enum total_level level, int loc, double *ret);

/* The "lock wait" lines beside "cpu time" (system, and per node / per
 * CPU with --per) ... */
void locks_print_share(const struct rrun *r, enum per per);
/* ... and the table shaped like perf lock contention's (at most max_rows
 * rows; 0: all). */
void locks_print(const struct rrun *r, size_t max_rows);
/* "locks": [{"caller", "type", "contended", "total_wait_ns", "max_wait_ns",
 * "avg_wait_ns", "min_wait_ns"}], largest total first, and beside it
 * "lock_wait_share" {"system", "per_node": {N: share}, "per_cpu": ...}
 * and "locks_lost" {"untimed", "unattributed", "unattributed_wait_ns"}. */
void locks_add_json(const struct rrun *r, enum per per, json_t *run);

/* For --group-by: mean total wait per run of each (caller, type) over
 * the runs in idx[0..n), as {"CALLER TYPE": ns}. */
json_t *locks_group_json(const struct rrun *runs, const size_t *idx, size_t n);
/* Group g against its baseline b: [{"caller", "type", "total_wait_ns",
 * "baseline_total_wait_ns", "change_pct"}] (means per run), the largest
 * increase first; and its lines in the table output (those that grew). */
json_t *locks_compare_json(const struct rrun *runs, const size_t *gidx, size_t gn, const size_t *bidx, size_t bn);
void locks_print_compare(json_t *rows);

#endif
