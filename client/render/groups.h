/* groups.h - report --group-by/--baseline/--explain results as JSON, CSV
 * rows and tables (groups.c); the numbers come from analysis_groups(). */
#ifndef SCALEMON_CLIENT_GROUPS_H
#define SCALEMON_CLIENT_GROUPS_H

#include <jansson.h>
#include <stdbool.h>

#include "analysis.h"

/* The groups as in doc/DESIGN.md: [{"tags", "n", "runs", "high_variance",
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

#endif
