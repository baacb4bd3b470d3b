/* report.h - what report, the group analysis and curve share: runs with
 * their stored totals turned into rates. */
#ifndef SCALEMON_REPORT_H
#define SCALEMON_REPORT_H

#include "ctl.h"

enum per { PER_SYSTEM, PER_NODE, PER_CPU };

struct mstat {
        bool have;              /* the run has totals for this metric */
        const char *why;        /* why not */
        double total, per_s;
        bool spread;            /* cpu metric with per-CPU totals */
        double cpu_min, cpu_median, cpu_max, imbalance;
        bool imbalance_ok;      /* mean > 0 */
};

struct rrun {
        struct run_info info;
        struct run_detail d;
        double dur;
        struct mstat m[_M_MAX];
        double cpu_time[8];     /* user nice system idle iowait irq softirq steal, seconds */
        double cpu_total;       /* CPU-seconds the run had (from /proc/stat), 0 if unknown */
        double busiest[_M_MAX]; /* rate on the busiest CPU, cpu metrics */
        struct run_locks *locks; /* its contended kernel locks (locks.c), or NULL */
};


/* What report_load() keeps of each run's totals (a 256-CPU run has some
 * 5,000, nearly all per CPU). */
enum report_totals {
        REPORT_TOTALS_SYSTEM,   /* read only the system-wide ones: rates, no spread across CPUs (curves) */
        REPORT_TOTALS_NODE,     /* read all for the spread, keep the node and system ones */
        REPORT_TOTALS_ALL,      /* keep every one (--per cpu) */
};

/* The selected runs with their details and rates; 0, or an exit code
 * after printing why.  Free with report_unload. */
int report_load(struct ctl *ctl, const struct run_select *sel, enum report_totals keep, struct rrun **ret,
                size_t *ret_n);
void report_unload(struct rrun *runs, size_t n);

/* Curves (curve.c): the score to use (given, or the only one the runs
 * have; NULL after printing why, *ret_exit set), and the series as in
 * curve's JSON: [{"value", "points": [...], "usl": {...}}]. */
const char *curve_pick_score(const struct rrun *runs, size_t n, const char *by, const char *score, int *ret_exit);
json_t *curve_series(struct rrun *runs, size_t n, const char *by, const char *series, const char *score,
                     const bool *shown, bool print_tables);

/* Rates, spread across CPUs and CPU time of one run, from its totals. */
void report_compute(struct rrun *r);
const char *report_context_value(const struct run_detail *d, const char *key);
const struct store_score *report_find_score(const struct run_detail *d, const char *key);
/* Change from base to x in %; false if base is 0. */
bool report_pct_change(double base, double x, double *ret);

/* Group analysis (groups.c): --group-by, --baseline, --explain. */
struct group_opts {
        char *by[16];           /* grouping tag keys */
        size_t nby;
        struct store_kv baseline[16];
        size_t nbaseline;
        bool explain;
        double cv_limit;        /* HIGH VARIANCE above this CV (0.05) */
        double minmax_limit;    /* or with min/max below this (0.75) */
        double alpha;           /* significance level of the verdicts (0.05) */
        char *lower_better[16]; /* scores where lower is better */
        size_t nlower_better;
        const char *score;      /* --score for --explain, or NULL: every score */
};
void group_opts_free(struct group_opts *go);
int group_opts_parse_by(struct group_opts *go, const char *arg);
int group_opts_parse_baseline(struct group_opts *go, const char *arg);
/* Build the groups (JSON as in DESIGN.md) and, with --explain, the
 * ranking across all runs (*ret_all). */
int report_groups(struct rrun *runs, size_t n, const struct group_opts *go, json_t **ret_groups, json_t **ret_all);
void report_print_groups(json_t *groups, json_t *all, const struct group_opts *go);

#endif
