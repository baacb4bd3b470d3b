/* sampler.h - read every source once per tick and turn counters into
 * per-interval deltas. */
#ifndef SCALEMON_SAMPLER_H
#define SCALEMON_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpumap.h"
#include "metric.h"

struct sampler;

struct sample_value {           /* 16 bytes: a 1024-CPU tick holds tens of thousands */
        int64_t value;          /* delta in the raw unit (scaled for multiplexing) */
        int32_t loc;            /* cpu, node, or 0 */
        uint16_t metric;        /* enum metric_id */
        bool null;              /* not counted */
};

struct mux_value {
        int cpu;
        const char *grp;        /* "sw" or "hw" */
        double duty;
};

struct sampler_event {
        const char *kind;       /* "cpu-offline", "cpu-online" */
        int cpu;
};

/* One interval's worth of deltas. */
/* One delta of a run's own cgroup (daemon/sampler/owncg.c), in the catalogue unit. */
struct own_value {
        int64_t run;            /* run id */
        uint16_t metric;        /* enum metric_id */
        double value;
};

struct tick {
        int64_t t;              /* start, ns since the epoch */
        int64_t dur;            /* length, ns */
        struct sample_value *v;
        size_t nv, capv;
        struct mux_value *mux;
        size_t nmux, capmux;
        struct sampler_event *ev;
        size_t nev, capev;
        struct own_value *own;  /* the open runs' own cgroups (sampler_set_own()) */
        size_t nown, capown;
};
void tick_clear(struct tick *t);        /* free memory */

struct sampler_config {
        bool enabled[_M_MAX];
        const char *sysroot;    /* "/sys" */
        const char *procroot;   /* "/proc" */
        bool mount_tracefs;     /* try to mount tracefs if missing */
        int simulate_cpus;      /* 0, or simulate this many CPUs (simulate.h) */
};

/* Open every enabled source.  A metric that cannot be read is marked
 * unavailable with a reason.  Fails (-EACCES, with *ret_err) only if no perf
 * counter at all could be opened, or on fatal errors. */
int sampler_new(const struct sampler_config *cfg, struct sampler **ret, char **ret_err);
struct sampler *sampler_free(struct sampler *s);

/* Change the enabled set: groups are reopened only if the perf metrics
 * changed.  Returns like sampler_new. */
int sampler_reconfigure(struct sampler *s, const bool *enabled, char **ret_err);

/* Read everything now.  The first call after sampler_new only primes;
 * later ones fill *out (reset first) with the deltas since the previous
 * call.  Returns 1 if *out holds a tick, 0 after priming. */
int sampler_sample(struct sampler *s, struct tick *out);

/* The open runs' own cgroups (daemon/runs.c, owncg_sample()): fn is the
 * tick's last source, called in every tick that emits, to add their
 * deltas to t->own.  0 or -ENOMEM. */
typedef int (*sampler_own_fn)(void *userdata, struct tick *t);
void sampler_set_own(struct sampler *s, sampler_own_fn fn, void *userdata);

const struct cpumap *sampler_cpumap(const struct sampler *s);
bool sampler_available(const struct sampler *s, int metric);
bool sampler_enabled(const struct sampler *s, int metric);
const char *sampler_why(const struct sampler *s, int metric);   /* NULL if available */
/* True once after a metric stopped while sampling (its counter failed). */
bool sampler_take_catalogue_change(struct sampler *s);
/* CLOCK_MONOTONIC time of the last sample (the end of the last tick). */
int64_t sampler_last_mono(const struct sampler *s);
/* Per-metric factor from stored value to the catalogue unit. */
double sampler_scale(const struct sampler *s, int metric);
/* The tracepoint id of a SRC_TRACEPOINT metric, as the perf source
 * resolved it (for daemon/sampler/owncg.c); -ENOENT without tracefs. */
int sampler_tracepoint(const struct sampler *s, int metric, uint64_t *ret_id);
int sampler_count_available(const struct sampler *s);

/* Totals since the sampler was created, per (metric, loc): the sum of
 * every delta it has produced.  Differences of two snapshots are exact run
 * totals.  nloc = max(ncpus, nnodes, 1). */
int sampler_nloc(const struct sampler *s);

/* The BPF lock wait source, for run boundaries (lockwait.h); NULL if
 * its metrics are unavailable. */
struct lockwait *sampler_lockwait(const struct sampler *s);
const int64_t *sampler_totals(const struct sampler *s);

#endif
