/* runs.h - benchmark runs on the daemon's side: open, close, recover.
 *
 * Typed calls: the control protocol is decoded and the replies encoded in
 * requests.c; nothing here knows JSON.  Errors: a negative errno, and
 * where a user needs to know more, a one-line *ret_err (freed by the
 * caller; NULL if out of memory). */
#ifndef SCALEMON_RUNS_H
#define SCALEMON_RUNS_H

#include <stdbool.h>
#include <stdint.h>

#include "proto.h"
#include "sampler.h"
#include "store.h"
#include "writer.h"

struct runs;

int runs_new(struct runs **ret);
struct runs *runs_free(struct runs *rs);
size_t runs_count(const struct runs *rs);
/* The name and start time of open run i < runs_count(). */
const char *runs_name(const struct runs *rs, size_t i, int64_t *ret_start);

/* Close the runs a previous daemon left open as interrupted, with totals
 * summed from the samples up to the last tick written.  Logs each. */
int runs_recover(struct store *st, const struct sampler *sm);

/* Where runs_start() and runs_stop() find what they need besides their
 * arguments: the store, the sampler's totals, and the snapshot the caller
 * has just taken (sampled and written). */
struct runs_env {
        struct store *store;
        const struct sampler *sampler;
        int64_t host;                   /* host id of this machine */
        int64_t interval_ns;
        const char *sysroot, *procroot; /* where a run's context is read */
        struct snapshot_point pt;
};

struct run_start_args {
        const char *name;
        const struct store_kv *tags;
        size_t ntags;
        const char *command;            /* or NULL */
        enum proto_if_exists if_exists; /* when a run of that name exists */
        /* The run's own cgroup (daemon/sampler/owncg.c): NULL none, "new" one
         * scalemond makes (run exec), else a directory of the cgroup2 mount */
        const char *cgroup;
};

struct run_stop_args {
        const char *name;               /* NULL: the only open run */
        const struct store_score *scores;
        size_t nscores;
        bool has_exit_status;
        int exit_status;
        bool has_times;
        double wall_s, user_s, sys_s;
        bool has_switches;              /* the run's tasks' own, from run exec */
        int64_t voluntary_switches, involuntary_switches;
};

/* What a start or a stop did. */
struct run_result {
        char *name;
        const char *status;             /* "running", "done", "failed" */
        int64_t start, end;             /* ns since the epoch; end 0 while running */
        double duration_s;              /* on CLOCK_MONOTONIC */
        char *cgroup;                   /* start: the run's own cgroup directory, or NULL */
        char *cgroup_why;               /* start: why it has none though one was asked for */
};
void run_result_clear(struct run_result *r);

int runs_start(struct runs *rs, const struct runs_env *env, const struct run_start_args *a, struct run_result *ret,
               char **ret_err);
int runs_stop(struct runs *rs, const struct runs_env *env, const struct run_stop_args *a, struct run_result *ret,
              char **ret_err);
/* A mark in an open run, at *ret_time (now). */
int runs_mark(struct runs *rs, struct store *st, const char *name, const char *text, const char **ret_run,
              int64_t *ret_time, char **ret_err);
/* A finished run and what belongs to it: -EBUSY if it is open, -ENOENT if
 * there is none of that name. */
int runs_delete(struct runs *rs, struct store *st, const char *name, char **ret_err);
/* Which open run a request means: by name, or the only one.  -ENOENT
 * (with *ret_err only when name is NULL) or -EINVAL (several are open). */
int runs_pick(const struct runs *rs, const char *name, char **ret_err);

/* Each open run's own cgroup, as someone else may have changed it
 * (removed, frozen, thawed): a change is logged and recorded as a mark on
 * the run, once.  Called every tick. */
void runs_watch_own(struct runs *rs, struct store *st);
/* The writer's hook on every tick: each open run's own cgroup's deltas
 * into t->own (owncg.c).  0 or -ENOMEM. */
int runs_own_sample(struct runs *rs, struct tick *t);

/* Close every open run as interrupted at pt (clean shutdown). */
int runs_interrupt_all(struct runs *rs, struct store *st, const struct sampler *sm, const struct snapshot_point *pt);

/* The totals rows of a run from per-(metric, loc) values in the
 * catalogue unit (vals[m * nloc + loc]), for the CPUs in cpus[]. */
int runs_build_totals(const double *vals, int nloc, const struct cpumap *map, const bool *cpus, const bool *metrics,
                      struct store_total **ret, size_t *ret_n);

#endif
