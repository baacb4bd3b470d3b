/* verb-curve.h - what `curve` and `plot curve` share (curve.c): the score's
 * direction, and the refusal when a time has no throughput. */
#ifndef SCALEMON_CLIENT_CURVE_H
#define SCALEMON_CLIENT_CURVE_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis.h"

/* Which counters `curve` shows per unit of work: m[] (every one in JSON,
 * what --metric named), given (--metric), all (--all-metrics: every one
 * in the table too, not only the heads of the families). */
struct curve_show {
        bool m[_M_MAX];
        bool given, all;
};

/* What point k of series j pools, in one line (groups_pools_line), or
 * "" when it pools nothing. */
void curve_pool_line(const struct curve_result *cr, size_t j, size_t k, char *buf, size_t len);

/* Is score lower-is-better: in the comma-separated list (--lower-is-better,
 * may be NULL), or recorded with the runs (tag lower_is_better)? */
bool curve_lower_is_better(const char *list, const struct analysis_run *runs, size_t n, const char *score);
/* --lower-is-better K[,K...]: 0, or EXIT_USAGE after saying which K is
 * not a score key. */
int curve_check_lower(const char *arg);
/* The usage error when score is a time and --work was not given (exit 2). */
int curve_refuse_time(const char *score);

#endif
