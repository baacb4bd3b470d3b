/* analysis.h - what scalemonctl computes from stored runs, as typed
 * results: per-run rates and spread (report), groups with score
 * statistics, baseline verdicts and explain rankings (report --group-by,
 * --baseline, --explain; plot groups), and scalability curves with their
 * USL fit (curve; plot curve).
 *
 * Nothing here prints or knows a JSON key: functions return 0 or -errno
 * and fill structs; report.c, groups.c, curve.c and plot.c format them.
 * Invariant 1: a result borrows strings (names, tags, score keys) from the
 * runs it was computed from; free it before analysis_unload() of those
 * runs.
 *
 * analysis.c: loading and per-run rates; analysis-groups.c: groups,
 * verdicts and explain; analysis-curve.c: curves. */
#ifndef SCALEMON_CLIENT_ANALYSIS_H
#define SCALEMON_CLIENT_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>

#include "metric.h"
#include "stats.h"
#include "store-locks.h"
#include "store.h"

/* ---- runs: totals turned into rates ---- */

struct mstat {
        bool have;              /* the run has totals for this metric */
        const char *why;        /* why not (static text) */
        double total, per_s;
        bool spread;            /* cpu metric with per-CPU totals */
        double cpu_min, cpu_median, cpu_max, imbalance;
        bool imbalance_ok;      /* mean > 0 */
        bool has_own;           /* the run had its own cgroup, which counted this metric */
        double own_total;       /* what the run's cgroup counted (report-own.c) */
};

/* A run's contended kernel locks (run_lock, schemas 0006 and 0008), largest total
 * wait first; lost.known is false for a run recorded without BPF. */
struct analysis_locks {
        struct store_lock *v;
        size_t n;
        struct store_lock_obj *obj;     /* the same waits by lock object (run_lock_object, schema 0008) */
        size_t nobj;
        struct store_lock_lost lost;
};

#define ANALYSIS_CPU_TIMES 8    /* user nice system idle iowait irq softirq steal */
extern const int analysis_cpu_time_metric[ANALYSIS_CPU_TIMES];
extern const char *const analysis_cpu_time_name[ANALYSIS_CPU_TIMES];

struct analysis_run {
        struct run_info info;
        struct run_detail d;
        double dur;                             /* seconds, until now while running */
        struct mstat m[_M_MAX];
        double cpu_time[ANALYSIS_CPU_TIMES];    /* seconds */
        double cpu_total;       /* CPU-seconds the run had (from /proc/stat), 0 if unknown */
        double busiest[_M_MAX]; /* rate on the busiest CPU, cpu metrics; NAN otherwise */
        char hostname[256];     /* its host's name (info.host is the id), for --group-by host */
        struct analysis_locks locks;    /* its contended kernel locks (analysis-locks.c) */
};

/* What analysis_load() keeps of each run's totals (a 256-CPU run has some
 * 5,000, nearly all per CPU). */
enum analysis_totals {
        ANALYSIS_TOTALS_SYSTEM, /* read only the system-wide ones: rates, no spread across CPUs (curves) */
        ANALYSIS_TOTALS_NODE,   /* read all for the spread, keep the node and system ones */
        ANALYSIS_TOTALS_ALL,    /* keep every one (--per cpu) */
};

/* The runs infos[0..n) with their details and rates.  0, and infos is
 * taken over (freed here); or -errno, infos left to the caller, and
 * *ret_failed the index of the run that could not be read (n: out of
 * memory).  Free with analysis_unload. */
int analysis_load(struct store *st, struct run_info *infos, size_t n, enum analysis_totals keep,
                  struct analysis_run **ret, size_t *ret_failed);
struct analysis_run *analysis_unload(struct analysis_run *runs, size_t n);

/* The run's own counters (analysis-own.c), where it had its own cgroup:
 * what the cgroup counted of metric m and its share of the machine's (NAN
 * if the machine's is 0, and for pressure: a cgroup's psi_* stall time is
 * not a part of the machine's, see analysis_own_is_part); what everything
 * else did (total - own); the busy
 * CPU time split into the benchmark's and everything else's.  False: the
 * run has no own count of it. */
struct analysis_own_cpu {
        double busy_s;                  /* CPU-seconds neither idle nor iowait */
        double own_s, user_s, system_s; /* the benchmark's cgroup's cpu.stat */
        bool self_known;                /* the run recorded scalemond's own CPU time (scalemond_cpu) */
        double self_s;                  /* scalemond's own CPU time, 0 where not known */
        double others_s;                /* busy - own - self, never negative */
        double excess_s;                /* own - busy where own is the larger, else 0: the cgroup's
                                         * cpu.stat is the scheduler's exact run time, /proc/stat's
                                         * busy time is sampled at the timer tick (and over the run's
                                         * whole ticks), so for a benchmark that runs in short bursts
                                         * it can count less than the cgroup did */
};
bool analysis_own_share(const struct analysis_run *r, int m, double *ret_own, double *ret_share);
/* Is the cgroup's count of m a part of the machine's?  Not for PSI: the
 * kernel averages stall time over the CPUs weighted by the non-idle time
 * of the group's own tasks, so a benchmark stalled on one busy CPU can
 * have more "some" time than the whole machine. */
bool analysis_own_is_part(int m);
/* What everything else counted of m: the machine's total less the
 * cgroup's, for counts that add up over tasks (not PSI; not cpu_user and
 * cpu_system, whose split is analysis_own_cpu's others_s). */
bool analysis_own_others(const struct analysis_run *r, int m, double *ret);
bool analysis_own_cpu(const struct analysis_run *r, struct analysis_own_cpu *ret);
/* The CPU time split in the words report and explain both use: "cpu time
 * busy: B CPU-s, the benchmark O (user U, system S), everything else E
 * CPU-s (scalemond's own D CPU-s taken out)", or "... everything else not
 * measurable (...)" where the cgroup's exact count exceeds /proc/stat's
 * busy time.  A run recorded without scalemond_cpu says nothing of it. */
void analysis_own_cpu_words(const struct analysis_own_cpu *c, char *buf, size_t len);

/* Rates, spread across CPUs and CPU time of one run, from its totals. */
void analysis_compute(struct analysis_run *r);
/* From the run's ticks (CLOCK_MONOTONIC), or the wall-clock times where
 * the ticks are not all there; until now while running; never negative. */
double analysis_duration_s(const struct run_info *ri);
const char *analysis_context_value(const struct run_detail *d, const char *key);
const char *analysis_tag_value(const struct run_detail *d, const char *key);
/* The run's value of a --group-by key, or NULL if it has none (group-keys.c:
 * its sources, in order, are a table there). */
const char *analysis_group_value(const struct analysis_run *r, const char *key);
/* The run's tag key as a number > 0 (threads, vcpus, ways)? */
bool analysis_numeric_tag(const struct analysis_run *r, const char *key, double *ret);
const struct store_score *analysis_find_score(const struct run_detail *d, const char *key);
/* The run report compares a run with (VS_FIRST, vs_first_pct): the first
 * of runs[0..i] with exactly the same tags; runs[i] itself when none
 * before it has them (nothing to compare). */
const struct analysis_run *analysis_first_same_tags(const struct analysis_run *runs, size_t i);
/* Change from base to x in %; false if base is 0. */
bool analysis_pct_change(double base, double x, double *ret);

/* Context that differs between runs: for each such key (first-seen
 * order), each run's value (NULL where not recorded). */
struct context_differ {
        const char *key;
        const char **value;     /* [nruns] */
};
struct context_differs {
        struct context_differ *keys;
        size_t nkeys, nruns;
};
int analysis_context_differs(const struct analysis_run *runs, size_t n, struct context_differs *ret);
void context_differs_free(struct context_differs *cd);

/* The score to analyse: the one given (checked), or the only one the runs
 * have.  With by, some run must have it and a numeric tag by.  0;
 * -EINVAL (several scores: choose one), -ENOENT (no score, or no usable
 * run), with why filled. */
int analysis_pick_score(const struct analysis_run *runs, size_t n, const char *by, const char *score,
                        const char **ret, char *why, size_t whylen);

/* ---- lock wait (analysis-locks.c) ---- */

/* Read run r's locks (none for a run without them). */
int analysis_locks_load(struct store *st, struct analysis_run *r);
void analysis_locks_free(struct analysis_locks *l);
/* Lock wait as a share of CPU time: lock_wait_ns over the CPU time of
 * /proc/stat (user + nice + system + idle + iowait + irq + softirq +
 * steal), for the system (loc 0), a node or a CPU; false if the run has
 * no lock wait or no CPU time there.  Above 1 on a CPU is possible: a
 * sleeping waiter's time counts in full. */
bool analysis_lock_share(const struct analysis_run *r, enum total_level level, int loc, double *ret);
/* Highest node or CPU with a lock_wait_ns total, -1 if none. */
int analysis_lock_max_loc(const struct analysis_run *r, enum total_level level);

/* The two counts of one run's lock waits side by side: lock_contentions
 * (the perf counter, every lock:contention_begin) and the waits BPF timed
 * (at their end).  They differ by the second begins of one wait (nested:
 * a mutex that spins, then sleeps), the waits the maps could not time,
 * and the waits open across the run's start or stop (edges, the rest:
 * positive when more began than ended).  False without both counts. */
struct lock_counts {
        double begins, waits;
        bool nested_known;      /* a run from before schema 0008 has no nested count */
        double nested, untimed, edges;
};
bool analysis_lock_counts(const struct analysis_run *r, struct lock_counts *ret);

/* A lock (caller, type) in a group against its baseline group: mean
 * total wait per run. */
struct lock_change {
        char caller[128], type[24];
        double total_ns, baseline_total_ns;
        bool has_change;                /* baseline_total_ns > 0 */
        double change_pct;
};
/* Every lock of either group, the largest increase first. */
int analysis_lock_changes(const struct analysis_run *runs, const size_t *gidx, size_t gn, const size_t *bidx,
                          size_t bn, struct lock_change **ret, size_t *ret_n);

/* ---- pools: runs of one group that differ in other tags (analysis-pools.c) ---- */

struct pool_value {
        const char *value;      /* borrowed from a run */
        size_t runs;            /* how many of the group's runs carry it */
};
struct pool_tag {
        const char *key;        /* borrowed from a run */
        struct pool_value *v;   /* first-seen order */
        size_t nv;
};
/* The tags a group pools: each key, not one of the grouping keys (nor
 * lower_is_better), whose value is not the same in all of the group's
 * runs (a run without it differs from one with it), with the values
 * carried and their runs; none when the runs agree. */
struct pools {
        struct pool_tag *tags;  /* first-seen order */
        size_t ntags;
};
/* The pools of runs idx[0..n), grouped by keys[0..nkeys) (NULL entries
 * ignored).  0 or -ENOMEM.  Free with pools_free. */
int analysis_pools(const struct analysis_run *runs, const size_t *idx, size_t n, const char *const *keys, size_t nkeys,
                   struct pools *ret);
void pools_free(struct pools *p);

/* ---- groups: --group-by, --baseline, --explain ---- */

#define GROUP_MAX_TAGS   16
#define EXPLAIN_TOP      5
#define EXPLAIN_MIN_N    4      /* below this, no ranking at all */
#define EXPLAIN_HINT_N   8      /* below this, say the ranking is only a hint */

struct group_opts {
        char *by[GROUP_MAX_TAGS];               /* grouping tag keys */
        size_t nby;
        struct store_kv baseline[GROUP_MAX_TAGS];
        size_t nbaseline;
        bool explain;
        double cv_limit;        /* HIGH VARIANCE above this CV (0.05) */
        double minmax_limit;    /* or with min/max below this (0.75) */
        double alpha;           /* significance level of the verdicts (0.05) */
        char *lower_better[GROUP_MAX_TAGS];     /* scores where lower is better */
        size_t nlower_better;
        const char *score;      /* --score for --explain, or NULL: every score */
};
#define GROUP_OPTS_DEFAULT { .cv_limit = 0.05, .minmax_limit = 0.75, .alpha = 0.05 }
void group_opts_free(struct group_opts *go);
bool group_opts_lower_is_better(const struct group_opts *go, const char *key);

/* One score of a group. */
struct group_score {
        const char *key;
        struct summary s;
};

/* A score of a group against its baseline group. */
struct score_verdict {
        const char *key;
        bool has_change;
        double change_pct;      /* of the mean */
        bool has_p;
        double p_value;         /* Welch's t-test */
        const char *verdict;    /* "improvement", "regression", "no significant change", "too few runs" */
        const char *why;        /* or NULL */
};

enum run_time { RUN_TIME_WALL, RUN_TIME_USER, RUN_TIME_SYS, _RUN_TIME_MAX };
extern const char *const analysis_run_time_name[_RUN_TIME_MAX];    /* wall_s user_s sys_s */

struct time_ratio {
        bool have;              /* both sides recorded times */
        double mean, baseline_mean;
        bool has_ratio;         /* baseline_mean > 0 */
        double ratio;
};

/* A metric's mean rate below this on both sides is "negligible": listed
 * apart, never ranked.  A time (unit s, us or ns: CPU time, PSI, run-queue
 * and lock wait) below 1% of one CPU, 0.01 s per second (10 ms/s), in its
 * own unit; every other unit (events, pages, faults, ...) 10 per second. */
#define ANALYSIS_NEGLIGIBLE_CPU_S  0.01
#define ANALYSIS_NEGLIGIBLE_PER_S  10.0
double analysis_negligible_floor(int metric);

/* How a metric's change against the baseline ranks, first to last. */
enum change_rank {
        CHANGE_SIGNIFICANT,     /* Welch's t-test on the per-run rates, p < alpha */
        CHANGE_NOT_SIGNIFICANT, /* tested, p >= alpha */
        CHANGE_UNTESTED,        /* fewer than 2 runs on a side */
        CHANGE_MAXIMUM,         /* a maximum (lock_wait_max_ns): the largest against the largest, never tested */
        CHANGE_NEGLIGIBLE,      /* both mean rates below the floor */
};

struct metric_change {
        int metric;
        double per_s, baseline_per_s;   /* mean rates */
        bool has_change;                /* false: the baseline's rate is 0 ("new") */
        double change_pct;
        enum change_rank rank;
        bool has_p;                     /* tested */
        double p_value, t;              /* Welch's t of the per-run rates; |t| orders a rank */
        double max, baseline_max;       /* CHANGE_MAXIMUM: the largest of the runs' maxima; per_s 0 */
};

/* A metric's mean rate over a group's runs that have it. */
struct group_metric {
        bool have;                      /* some run has it */
        bool is_max;                    /* a maximum: only max is set, never summed nor averaged */
        double max;                     /* the largest of the runs' maxima */
        struct summary per_s;
        bool has_per_cpu_s;             /* every such run recorded CPU time */
        struct summary per_cpu_s;       /* per CPU-second */
};

/* Which of a counter's two views ranked it: its rate per second, or its
 * rate per unit of score (rate / score: per unit of work).  A counter is
 * ranked by the weaker of its two correlations with the score, and the
 * view that gave that one is named: a counter merely proportional to the
 * work (constant per unit of score, |rho| high only per second) and one
 * with a constant rate (|rho| high only per unit of score, by the
 * division) both rank low; one whose rate per unit of work changes with
 * the score ranks high in both. */
enum explain_view { EXPLAIN_PER_S, EXPLAIN_PER_SCORE };
extern const char *const explain_view_name[2];  /* "per second", "per unit of score" */

struct explain_row {
        char name[96];          /* "lock_contentions/s", "... on the busiest CPU", "... on node 1" */
        double rho, p_value;    /* Spearman, of the rate per second */
        size_t n;
        bool has_per_score;     /* every score > 0 */
        double rho_per_score, p_per_score;      /* of rate / score */
        enum explain_view ranked_by;            /* the view whose |rho| ranked it (the weaker) */
        double rank_rho;        /* that rho */
};

/* Which counters move with one score over some runs. */
struct explain_result {
        const char *score;
        size_t n;                       /* runs with the score */
        struct explain_row rows[EXPLAIN_TOP];   /* largest |rank_rho| first */
        size_t nrows;
        char note[256];                 /* "" or why the ranking is absent or a hint */
};

struct group {
        const char *val[GROUP_MAX_TAGS];        /* value of each grouping tag, "" if missing */
        size_t *idx;                    /* its runs, indexes into the runs */
        size_t n;
        bool high_variance;
        struct pools pools;             /* the other tags on which its runs differ */
        struct group_score *scores;     /* in first-seen order */
        size_t nscores;
        struct group_metric metrics[_M_MAX];
        bool is_baseline;
        /* not the baseline: */
        bool has_baseline;              /* a baseline group with the same other tags */
        size_t baseline;                /* its index, if has_baseline */
        struct score_verdict *vs;       /* per score, if has_baseline */
        size_t nvs;
        struct time_ratio times[_RUN_TIME_MAX];
        struct metric_change *changes;  /* by rank, then |t| (untested: |change|, "new" first) */
        size_t nchanges;
        struct lock_change *lock_changes;       /* the locks of both, largest increase first */
        size_t nlock_changes;
        /* --explain: per score, only in a HIGH VARIANCE group */
        struct explain_result *explain;
        size_t nexplain;
};

struct group_result {
        const struct group_opts *go;    /* borrowed */
        struct group *groups;           /* none without --group-by */
        size_t ngroups;
        bool has_all;                   /* --explain: */
        struct explain_result *all;     /* across all runs, per score */
        size_t nall;
};

/* analysis-changes.c: a group's metrics (x, w: room for g->n values),
 * and their changes against its baseline b, ranked, into g->changes
 * (room for _M_MAX). */
void analysis_group_metrics(const struct analysis_run *runs, struct group *g, double *x, double *w);
int analysis_metric_changes(const struct analysis_run *runs, struct group *g, const struct group *b,
                            const struct group_opts *go);

/* Group the runs by go->by, compare with the baselines, explain.  0 or
 * -ENOMEM.  Free with group_result_free. */
int analysis_groups(const struct analysis_run *runs, size_t n, const struct group_opts *go,
                    struct group_result **ret);
struct group_result *group_result_free(struct group_result *gr);
const struct group_score *group_find_score(const struct group *g, const char *key);
const struct score_verdict *group_find_verdict(const struct group *g, const char *key);
/* The ranking of the counters against score over runs idx[0..n). */
int analysis_explain(const struct analysis_run *runs, const size_t *idx, size_t n, const char *score,
                     struct explain_result *ret);

/* ---- curves: --by N [--series TAG] ---- */

/* The tag that records, with a run, the scores where lower is better
 * (a time): "lower_is_better=seconds[,K...]" (run start/exec
 * --lower-is-better K sets it). */
#define ANALYSIS_LOWER_TAG "lower_is_better"
/* Does some run of runs[0..n) record key as lower-is-better? */
bool analysis_recorded_lower(const struct analysis_run *runs, size_t n, const char *key);

/* How much work one run does, for a score where lower is better (a
 * time): a curve turns each run's time into throughput, work per second. */
enum curve_work {
        CURVE_WORK_UNKNOWN,     /* not said: a time-like score has no curve */
        CURVE_WORK_FIXED,       /* the same work at every N: throughput = 1 / time */
        CURVE_WORK_PER_N,       /* work grows with N (perf bench sched messaging -g N): throughput = N / time */
};
struct curve_opts {
        bool lower_is_better;   /* given, or recorded with the runs */
        enum curve_work work;
};

/* A USL fit is shown as a result only with at least this many distinct N
 * and at least this r2; below, "no meaningful fit" and why. */
#define CURVE_USL_MIN_N  3
#define CURVE_USL_MIN_R2 0.90

struct curve_point {
        double n;
        size_t nruns;
        double mean, min, max;          /* of the score */
        double x, xmin, xmax;           /* throughput: the score, or work / time; mean, min, max */
        double speedup;                 /* x / x at the series' base N; if has_speedup */
        double efficiency;              /* speedup * base N / N */
        double per_score[_M_MAX];       /* mean of metric rate / throughput of each run (no maximum) */
        bool has_per_score[_M_MAX];
        double busy_per_score;          /* busy CPU-seconds per second / throughput: CPU-s per unit */
        bool has_busy_per_score;        /* every run recorded CPU time */
        struct pools pools;             /* the tags, other than by and the series tag, its runs differ in */
};

struct curve_series {
        const char *value;              /* of the series tag; NULL without --series */
        struct curve_point *pts;        /* by N */
        size_t npts;
        bool has_speedup;               /* at least 2 distinct N */
        double base_n;                  /* the smallest N: speedup 1 there */
        bool has_usl;                   /* the fit converged (npts >= 3) */
        struct usl usl;
        bool usl_ok;                    /* has_usl, npts >= CURVE_USL_MIN_N and r2 >= CURVE_USL_MIN_R2 */
        char usl_why[160];              /* why not, when !usl_ok */
};

struct curve_result {
        const char *by, *series_by, *score;     /* borrowed from the caller */
        struct curve_opts opts;
        struct curve_series *series;
        size_t nseries;
};

/* The curve of score by tag by, one series per value of tag series_by
 * (first-seen order) or one.  0, -ENOMEM, or -EDOM when co says lower is
 * better and not how the work changes with N (nothing to compute
 * throughput from).  Free with curve_result_free. */
int analysis_curve(const struct analysis_run *runs, size_t n, const char *by, const char *series_by,
                   const char *score, const struct curve_opts *co, struct curve_result **ret);
struct curve_result *curve_result_free(struct curve_result *cr);

#endif
