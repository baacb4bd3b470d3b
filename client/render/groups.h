/* groups.h - report --group-by/--baseline/--explain results as JSON, CSV
 * rows and tables (groups.c); the numbers come from analysis_groups(). */
#ifndef SCALEMON_CLIENT_GROUPS_H
#define SCALEMON_CLIENT_GROUPS_H

#include <jansson.h>
#include <stdbool.h>

#include "analysis.h"

/* The groups as in doc/DESIGN.md: [{"tags", "n", "runs", "pools", "high_variance",
 * "scores", "metrics", "baseline" | "baseline_tags", "vs_baseline",
 * "times_vs_baseline", "metrics_vs_baseline", "explain"}].  csv: one flat
 * row per group, without runs, metrics, metrics_vs_baseline and explain. */
json_t *groups_json(const struct group_result *gr, const struct analysis_run *runs, bool csv);
/* --explain across all runs: [{"score", "n", "ranking", "note"}]. */
json_t *groups_explain_json(const struct explain_result *e, size_t n);
/* The groups table, each group against its baseline, the explanations. */
void groups_print(const struct group_result *gr);
/* "config=2 ways=80": the group's tags, "(none)" where a run lacks one. */
void groups_label(const struct group_result *gr, const struct group *g, char *buf, size_t len);

/* What a group pools, as JSON: {"TAG": {"VALUE": RUNS}}. */
json_t *groups_pools_json(const struct pools *p);
/* What a group pools, in one line: "LABEL pools study=noisy (3 runs) and
 * observer=perf (1 run): add --tag or OPTION study" (OPTION --group-by,
 * --series; NULL: "add --tag study=noisy"); "" when it pools nothing. */
void groups_pools_line(const char *label, const struct pools *p, const char *option, char *buf, size_t len);

#endif
