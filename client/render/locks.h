/* locks.h - report's lock wait: the share of CPU time beside the CPU time
 * line, the contended locks table shaped like perf lock contention's, and
 * their JSON; the locks compared with a baseline group.  Formatters over
 * analysis.h's results (analysis-locks.c). */
#ifndef SCALEMON_CLIENT_LOCKS_H
#define SCALEMON_CLIENT_LOCKS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "analysis.h"

/* The "lock wait" line(s) beside "cpu time": system, and per node (per
 * node and per CPU) with per_node (per_cpu). */
void locks_print_share(const struct analysis_run *r, bool per_node, bool per_cpu);
/* The table by caller (by_lock: by lock object), at most max_rows rows
 * (0: all), and what was lost.  Machine-wide, with the benchmark's own
 * share in OWN columns where the run had its cgroup. */
void locks_print(const struct analysis_run *r, size_t max_rows, bool by_lock);
/* Into run's JSON: "locks": [{"caller", "type", "contended",
 * "total_wait_ns", "max_wait_ns", "avg_wait_ns", "min_wait_ns", "locks",
 * "scope", "own_contended", "own_total_wait_ns"}] (largest total first),
 * "locks_by_lock": [{"lock", "name", "type", "contended",
 * "total_wait_ns", "max_wait_ns", "callers", "scope", "own_contended",
 * "own_total_wait_ns"}]; scope is "machine" (every task's waits; own_*
 * the run's cgroup's share, null without one), "lock_wait_share": {"system", "per_node", "per_cpu"} or
 * null, and "locks_lost" {"untimed", "unattributed",
 * "unattributed_wait_ns"} or "locks_why". */
void locks_add_json(const struct analysis_run *r, bool per_node, bool per_cpu, json_t *run);
/* A group against its baseline: "locks_vs_baseline": [{"caller", "type",
 * "total_wait_ns", "baseline_total_wait_ns", "change_pct"}] (means per
 * run, the largest increase first); and the lines of those that grew. */
json_t *locks_changes_json(const struct lock_change *v, size_t n);
void locks_print_changes(const struct lock_change *v, size_t n);

#endif
