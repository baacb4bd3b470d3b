/* explain.h - `scalemonctl explain RUN`: why this run differs from its
 * siblings (the other runs of its group, or those named), in context, in
 * its counters' rates, in time (phases) and in place (CPUs, nodes).
 *
 * explain_run_compute() (explain.c, where the method is described; the
 * phases in explain-time.c) fills a typed result; explain-text.c writes
 * it: summary, tables, JSON, the lines report gives a group. */
#ifndef SCALEMON_EXPLAIN_H
#define SCALEMON_EXPLAIN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "analysis.h"
#include "metric.h"
#include "store.h"

#define EXPLAIN_MAX_AGAINST     64
#define EXPLAIN_PHASE_METRICS   10      /* counters listed per phase */

struct explain_run_opts {
        const char *against[EXPLAIN_MAX_AGAINST];       /* --against, or none: the run's group */
        size_t nagainst;
        const char *score;                              /* --score K, or NULL: the run's first score */
        size_t keep_series;                             /* keep the per-tick series of this many top counters (plot) */
        const struct analysis_run *runs;                /* or NULL: the runs to find the run, its group and
                                                         * the stable groups in, already loaded (report's);
                                                         * borrowed.  NULL: every run of the database */
        size_t nruns;
};

#define EXPLAIN_KEEP_MAX        4
#define EXPLAIN_SERIES_POINTS   300     /* kept series are averaged down to this many points */

/* A top counter over time, for `plot explain`: in units of the siblings'
 * mean rate over the run (1 = their average). */
struct explain_run_series {
        enum metric_id metric;
        size_t n;
        double *x;                      /* seconds since the start */
        double *run, *lo, *hi;          /* the run, and the siblings' range at that offset */
};

/* A context key whose value is not the same in the run and every sibling. */
struct explain_run_ctx {
        char *key;
        char *run;              /* NULL: not recorded for the run */
        char **sib;             /* per sibling (explain_result.siblings order); NULL: not recorded */
};

/* Families: counters that measure one thing, said as one cause. */
enum explain_family {
        FAM_OTHERS,             /* another process's CPU time (interference) */
        FAM_CPU_TIME,
        FAM_PAGE_FAULTS,
        FAM_CONTEXT_SWITCHES,
        FAM_MIGRATIONS,
        FAM_LOCKS,
        FAM_PRESSURE,
        FAM_NUMA,
        FAM_THP,
        FAM_KVM,
        FAM_PMU,
        _FAM_MAX,
};
extern const char *const explain_family_name[_FAM_MAX];

#define EXPLAIN_CAUSE_METRICS   8
#define EXPLAIN_CAUSE_CALLERS   3

/* A lock caller whose wait grew most against the siblings. */
struct explain_cause_caller {
        char caller[128], type[24];
        double run_ms, sib_ms;          /* total wait over the run; the siblings' mean */
};

/* The lock object the run waited for most (its lock table by lock): its
 * name where known ("mmap_lock"), address and type. */
struct explain_cause_lock {
        bool have;
        char lock[24], name[96], type[24];
        double wait_ms;
        int64_t contended, callers;
};

/* A distinct cause: a family whose head passes the floors, with its
 * members that pass too. */
struct explain_cause {
        enum explain_family family;
        const char *part;               /* "own", "others" or "machine" */
        const char *metrics[EXPLAIN_CAUSE_METRICS];     /* counter keys, the head first */
        size_t nmetrics;
        double value;                   /* the head's excess: seconds (unit "s") or per second ("/s") */
        const char *unit;
        double share;                   /* the cost, as a share of the run's CPU-seconds */
        double cost_s;
        int phase;                      /* index in phases of the phase it shows in, or -1 */
        struct explain_cause_caller callers[EXPLAIN_CAUSE_CALLERS];
        size_t ncallers;
        struct explain_cause_lock lock; /* locks: the lock most waited for */
        bool own_known;                 /* others: the benchmark's own CPU time and stall, from its cgroup */
        double own_cpu_delta_s;         /* its own CPU-s minus the siblings' median */
        double own_stall_s;             /* its tasks' CPU pressure (cpu.pressure some), s */
        char text[768];                 /* the plain-words line */
};

/* What a counter counts: the machine's (every catalogue metric), or
 * "everything else" (interference), where the run and its siblings had
 * their own cgroup: the machine's count of a metric the cgroup counted
 * too minus the cgroup's, or the busy CPU time minus the cgroup's
 * cpu.stat (analysis-own.c). */
enum explain_part {
        EXPLAIN_MACHINE,
        EXPLAIN_OTHERS,         /* metric: total - own */
        EXPLAIN_OTHERS_CPU,     /* CPU-seconds neither idle nor iowait, minus the run's own (metric: M_CPU_USER) */
        EXPLAIN_OWN,            /* the run's cgroup's: cpu_user, cpu_system (cpu.stat, in place of the
                                 * machine's), the PSI counters (its tasks' stalls, beside the machine's) */
};

struct explain_run_counter {
        enum metric_id metric;          /* EXPLAIN_MACHINE/OTHERS: the catalogue metric */
        enum explain_part part;
        char name[64];                  /* text: "lock_wait_ns", "everything else: cpu time" */
        char key[64];                   /* JSON "metric": "lock_wait_ns", "everything_else:cpu_time" */
        double run_rate;                /* per second over the run */
        double sib_min, sib_max;        /* the siblings' range of it */
        bool has_per_score;             /* the run and a sibling have the score */
        double run_per_score, sib_ps_min, sib_ps_max;
        double excess;                  /* ln distance outside the siblings' range: > 0 above, < 0 below, 0 inside */
        double spread;                  /* the counter's own spread (SD of ln rate) it is measured in */
        const char *spread_from;        /* "stable groups", "siblings", "floor" or "counting noise" */
        double score;                   /* excess / spread */
        int consistent;                 /* 1 yes, 0 no, -1 cannot tell (no score) */
        int direction;                  /* -1: more of it with a lower score; +1: with a higher one */
        size_t agree, nruns;            /* runs whose rank by the counter matches their rank by score */
        enum explain_family family;
        bool time_like;                 /* counts time (s, us, ns): its cost is itself */
        double excess_rate;             /* run's rate minus the edge of the siblings' range, per second, in
                                         * the counter's unit (0 inside the range) */
        double cost_s;                  /* what the excess cost over the run, in seconds (events: at their
                                         * nominal cost, doc/EXPLAIN.md) */
        double share;                   /* cost_s over the run's CPU-seconds (wall time x CPUs) */
        bool passes;                    /* above every floor: a cause, or a member of one */
};

struct explain_run_phase_metric {
        enum metric_id metric;
        int node;                       /* -1: machine-wide; else found on this node alone */
        double ratio;                   /* run / siblings' median over the phase (on that node) */
};

struct explain_run_phase {
        double start_s, dur_s;          /* offset from the run's start, length */
        struct explain_run_phase_metric m[EXPLAIN_PHASE_METRICS];
        size_t nm;
        int place_metric;               /* the cpu counter cpus/nodes are from, or -1 */
        int *cpus, *nodes;              /* that carry the difference */
        size_t ncpus, nnodes;
};

struct explain_run_result {
        char *run;
        double run_dur_s;
        double run_score;               /* NAN if none */
        char **siblings;
        size_t nsib;
        bool siblings_given;            /* --against, not the group */
        char *score_key;                /* NULL: no score */
        struct explain_run_ctx *ctx;
        size_t nctx;
        struct explain_run_counter *counters;       /* largest |score| first */
        size_t ncounters;
        double cpu_s;                   /* the run's CPU-seconds: wall time x CPUs (/proc/stat) */
        struct explain_cause *causes;   /* distinct causes, largest first */
        size_t ncauses;
        char others_words[320];         /* everything else's CPU time, in report's words ("" if no cgroup) */
        bool have_others_window;        /* when another process's CPU time rose (explain_others_window()) */
        double others_from_s, others_to_s;
        const char *spread_note;        /* how the spreads were found */
        bool have_series;               /* per-tick series for the run and a sibling */
        char phases_why[160];           /* why there is no time analysis */
        double tick_s;
        struct explain_run_phase *phases;   /* by start */
        size_t nphases;
        int place_metric;               /* the top counter, for the whole run's place, or -1 */
        int *cpus, *nodes;
        size_t ncpus, nnodes;
        char *summary;
        struct explain_run_series series[EXPLAIN_KEEP_MAX];        /* with opts.keep_series */
        size_t nseries;
};

/* Explain run against its siblings.  Errors (with a one-line message in
 * *ret_err): -ENOENT the run or an --against run does not exist; -EBUSY
 * the run is still running; -ENODATA no siblings; -EINVAL the run named
 * in its own --against; -ENOMEM; other -errno from the store. */
int explain_run_compute(struct store *s, const char *run, const struct explain_run_opts *o, struct explain_run_result *ret,
                    char **ret_err);
void explain_run_free(struct explain_run_result *r);

/* The summary paragraph of r (malloc'd); -ENOMEM. */
int explain_run_summary(const struct explain_run_result *r, char **ret);

/* {"run", "siblings", "context_differs", "counters", "phases", "summary", ...}: DESIGN.md */
json_t *explain_run_json(const struct explain_run_result *r);

/* For report --group-by: the lowest-scoring of the runs runs[idx[0..n)]
 * (by score_key) explained against the others of them, with runs[0..nruns)
 * (report's, loaded) for the stable groups.  -ENODATA: fewer than two of
 * them have the score. */
int explain_run_lowest(struct store *s, const struct analysis_run *runs, size_t nruns, const size_t *idx, size_t n,
                       const char *score_key, struct explain_run_result *ret, char **ret_err);

/* {"run", "siblings", "summary", "lines": [TEXT], "counters": [the first
 * three, as in explain_run_json()], "phases": [...]} */
json_t *explain_run_brief_json(const struct explain_run_result *r);

/* The result in one or two lines, for report --group-by: the context
 * that differs and the top counters (line1), the strongest phase (line2,
 * empty if none). */
void explain_run_brief(const struct explain_run_result *r, char *line1, size_t len1, char *line2, size_t len2);

/* --against RUN[,RUN...] into o (arg is cut in place and must outlive
 * o); 0, or EXIT_USAGE after printing why. */
int explain_run_parse_against(struct explain_run_opts *o, char *arg);

/* "0-3,8" */
void explain_run_format_cpus(const int *c, size_t n, char *buf, size_t len);

#endif
