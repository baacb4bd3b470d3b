/* sampler-internal.h - shared by the files of the sampler: sampler.c (the
 * tick and its life cycle), sampler-perf.c (perf groups per CPU) and
 * sampler-procfs.c (/proc/stat, /proc/vmstat, numastat).  Not for other
 * modules: they use sampler.h. */
#ifndef SCALEMON_SAMPLER_INTERNAL_H
#define SCALEMON_SAMPLER_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "evgroup.h"
#include "macro.h"
#include "metric.h"
#include "procfs.h"
#include "sampler.h"
#include "sampler-ops.h"

#define NUMA_KEYS 6

struct cpu_state {
        struct evgroup sw, hw;
        bool open;                              /* groups opened for this CPU */
        bool read_failed;                       /* its last read() failed: said once */
        uint64_t stat_prev[PROCSTAT_FIELDS];
        bool stat_primed;
        bool stat_bad;                          /* its /proc/stat line was malformed last tick: said once */
};

struct sampler {
        char *sysroot, *procroot;
        struct cpumap map;                      /* simulated with --simulate-cpus */
        const struct sampler_ops *ops;          /* the raw reads (sampler-ops.h), chosen once */
        void *ctx;                              /* their context */
        bool enabled[_M_MAX];
        bool available[_M_MAX];
        char *why[_M_MAX];                      /* reason when not available */

        /* perf tracepoints (sampler-perf.c) */
        bool mount_tracefs;                     /* sampler_config.mount_tracefs */
        char *tracefs;                          /* NULL: none */
        char *tracefs_why;
        uint64_t tp_id[_M_MAX];                 /* tracepoint ids, resolved once */
        int tp_err[_M_MAX];                     /* -errno resolving it, or 0 */

        /* the perf source (sampler-perf.c) */
        struct evspec sw_spec[EVGROUP_MAX], hw_spec[EVGROUP_MAX];
        size_t nsw, nhw;
        struct cpu_state *cpu;                  /* [map.ncpus] */

        /* the /proc and /sys sources (sampler-procfs.c) */
        struct procfile stat, vmstat;
        struct procfile *numa;                  /* [map.nnodes], fd -1 if none */
        uint64_t (*stat_vals)[PROCSTAT_FIELDS]; /* [map.ncpus], scratch */
        bool *stat_present;                     /* [map.ncpus], scratch */
        bool *stat_malformed;                   /* [map.ncpus], scratch: a line there but malformed */

        const char *vm_key[_M_MAX];
        int vm_metric[_M_MAX];
        size_t nvm;
        struct kvset vm_set;                    /* vm_key[0..nvm), made ready */
        size_t vm_want;                         /* how many of them the probe found */
        struct kvset numa_set;                  /* the numastat keys */
        size_t numa_want;
        uint64_t vm_prev[_M_MAX];
        bool vm_primed;
        bool vm_bad;                            /* its last read failed: said once */

        uint64_t (*numa_prev)[NUMA_KEYS];       /* [map.nnodes] */
        bool *numa_primed;
        bool *numa_bad;                         /* [map.nnodes]: its last read failed, said once */
        bool *numa_new;                         /* [map.nnodes], scratch: came online this tick */
        bool nodes_bad;                         /* node/online could not be read: said once */

        /* scheduler pressure (sampler-pressure.c), NULL until opened */
        struct pressure_state *pressure;
        bool simulated;                         /* --simulate-cpus: schedstat is not replayed */

        /* the tick (sampler.c) */
        bool primed;
        bool catalogue_changed;                 /* a metric stopped: tell the manager */
        int64_t last_mono, last_real;
        double clk_scale;                       /* seconds per USER_HZ tick */

        int nloc;
        int64_t *totals;                        /* [_M_MAX * nloc] */

        struct tick_profile *profile;           /* SCALEMON_TICK_PROFILE=1 (sampler.c), else NULL */
        /* every source once, then the sort: read_sources(), or with the
         * profile read_sources_profiled(), chosen in sampler_new() */
        int (*read)(struct sampler *s, struct tick *t, bool emit_ok);
        sampler_own_fn own_fn;                  /* the open runs' own cgroups (sampler_set_own()), or NULL */
        void *own_ud;


        /* lock wait, BPF (sampler-lockwait.c) */
        struct lockwait *lw;                    /* NULL: its metrics unavailable */
        uint64_t *lw_prev;                      /* [map.ncpus * its values]: totals at the last tick */
        uint64_t *lw_max;                       /* [map.ncpus]: the longest wait of this tick */
        bool *lw_cpu_primed;                    /* [map.ncpus]: lw_prev[c] is a baseline of an online CPU */
        int *lw_src;                            /* [map.ncpus]: the CPU whose slot c replays (c, or c % real) */
        bool lw_primed;

        /* scalemond's own CPU time (sampler-self.c) */
        int64_t self_prev_ns;                   /* CLOCK_PROCESS_CPUTIME_ID at the last tick */
        bool self_primed;
};

int sampler_grow(void **p, size_t *cap, size_t n, size_t size);
void sampler_set_why(struct sampler *s, int m, const char *fmt, ...) _printf_(3, 4);
void sampler_clear_why(struct sampler *s, int m);

/* Add one value to the tick, and to the totals unless it is NULL. */
static inline int sampler_emit(struct sampler *s, struct tick *t, int metric, int loc, uint64_t value, bool null)
{
        if (t->nv >= t->capv && sampler_grow((void **)&t->v, &t->capv, t->nv, sizeof *t->v) < 0)
                return -ENOMEM;
        t->v[t->nv++] = (struct sample_value){ .metric = (uint16_t)metric, .loc = loc,
                                               .value = (int64_t)value, .null = null };
        if (!null)
                s->totals[metric * s->nloc + loc] += (int64_t)value;
        return 0;
}

/* A source of metrics.  Each keeps its state in struct sampler and owns
 * the metrics of its enum metric_source values.  To add one: a file
 * sampler-NAME.c with these four functions and its const struct
 * sampler_source, its state in struct sampler, its extern below, and an
 * entry in sampler.c's sources[]; cpu_changed() if it keeps per-CPU
 * baselines; raw reads that a simulation or a test
 * must replace go through struct sampler_ops. */
struct sampler_source {
        const char *name;
        /* Open its files or counters and decide which of its enabled
         * metrics are available (sampler_set_why() for the others).  Fails only
         * on errors that must stop the daemon, with *ret_err. */
        int (*open)(struct sampler *s, char **ret_err);
        /* s->enabled changed (was_enabled: before): decide again. */
        int (*reconfigure)(struct sampler *s, const bool *was_enabled, char **ret_err);
        /* One tick: sampler_emit() the deltas since the last call, when emit_ok. */
        int (*sample)(struct sampler *s, struct tick *t, bool emit_ok);
        /* Close what open() opened; also after a failed or partial open. */
        void (*close)(struct sampler *s);
        /* Optional (NULL: no per-CPU state).  sampler_hotplug() saw CPU cpu
         * go offline or come back (online), in this tick, before any
         * sample(): forget its baseline, so that it gets no delta for the
         * interval it came back in (a delta across an offline period is
         * not that interval's), as the perf and /proc/stat sources do. */
        void (*cpu_changed)(struct sampler *s, int cpu, bool online);
};

/* The sources, in sampler.c's sources[] */
extern const struct sampler_source sampler_perf_source;         /* sampler-perf.c */
extern const struct sampler_source sampler_procstat_source;     /* sampler-procfs.c */
extern const struct sampler_source sampler_vmstat_source;
extern const struct sampler_source sampler_numastat_source;
extern const struct sampler_source sampler_psi_source;          /* sampler-pressure.c */
extern const struct sampler_source sampler_schedstat_source;
extern const struct sampler_source sampler_lockwait_source;     /* sampler-lockwait.c */
extern const struct sampler_source sampler_self_source;         /* sampler-self.c */

/* Refresh the CPU map's online set; if it changed, close the groups of
 * CPUs that went offline and reopen those that came back, with an event
 * for each (sampler-perf.c).  Called first in every tick. */
int sampler_hotplug(struct sampler *s, struct tick *t);
/* Tell every source's cpu_changed() that CPU cpu went (!online) or came
 * back (sampler.c; called by sampler_hotplug()). */
void sampler_cpu_changed(struct sampler *s, int cpu, bool online);

#endif
