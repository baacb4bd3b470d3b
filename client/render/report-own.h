/* report-own.h - the run's own counters in report (report-own.c). */
#ifndef SCALEMON_REPORT_OWN_H
#define SCALEMON_REPORT_OWN_H

#include <jansson.h>

#include "analysis.h"

/* "own_total" and "own_share" (0..1, null if the machine's total is 0)
 * into a metric's JSON object, where the run had its own cgroup. */
void report_own_json(const struct analysis_run *r, int m, json_t *jm);
/* The table report's lines: each counted metric's share that was the
 * benchmark's, and the CPU time split into the benchmark's and the rest. */
void report_own_print(const struct analysis_run *r);

#endif
