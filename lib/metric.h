/* metric.h - the metric catalogue: every counter scalemon knows by name.
 *
 * Names, scopes and units are part of the product contract
 * (doc/DESIGN.md, "Names other programs rely on"):
 * they are stored in databases and used by scripts, so they never change.
 */
#ifndef SCALEMON_METRIC_H
#define SCALEMON_METRIC_H

#include <stdbool.h>
#include <stdint.h>

enum metric_scope {
        SCOPE_CPU,      /* one value per CPU; also summed per node and system-wide */
        SCOPE_NODE,     /* one value per NUMA node */
        SCOPE_SYSTEM,   /* one value for the machine */
};

enum metric_source {
        SRC_PERF_SW,    /* perf software event, .perf_config = PERF_COUNT_SW_* */
        SRC_TRACEPOINT, /* perf tracepoint .tracepoint ("system:event"), optional .filter */
        SRC_PERF_HW,    /* hardware PMU, .perf_config = PERF_COUNT_HW_* */
        SRC_PROCSTAT,   /* /proc/stat cpuN line, .field = column index (0 = user) */
        SRC_NUMASTAT,   /* /sys/devices/system/node/nodeN/numastat, .key */
        SRC_VMSTAT,     /* /proc/vmstat, .key */
        SRC_PSI,        /* /proc/pressure/.key, .field 0 = some, 1 = full (sampler-pressure.c) */
        SRC_SCHEDSTAT,  /* /proc/schedstat cpuN line, .field (1 = first number) */
        SRC_BPF,        /* BPF on lock:contention_begin/end (daemon/kernel/lockwait.c) */
        SRC_SELF,       /* scalemond's own CPU time, CLOCK_PROCESS_CPUTIME_ID (sampler-self.c) */
};

enum metric_id {
        M_CONTEXT_SWITCHES,
        M_CPU_MIGRATIONS,
        M_PAGE_FAULTS,
        M_PAGE_FAULTS_MINOR,
        M_PAGE_FAULTS_MAJOR,
        M_LOCK_CONTENTIONS,
        M_KVM_EXITS,
        M_KVM_PAUSE_EXITS,
        M_KVM_PLE_WINDOW_UPDATES,
        M_CYCLES,
        M_INSTRUCTIONS,
        M_CPU_USER,
        M_CPU_NICE,
        M_CPU_SYSTEM,
        M_CPU_IDLE,
        M_CPU_IOWAIT,
        M_CPU_IRQ,
        M_CPU_SOFTIRQ,
        M_CPU_STEAL,
        M_CPU_GUEST,
        M_NUMA_HIT,
        M_NUMA_MISS,
        M_NUMA_FOREIGN,
        M_NUMA_LOCAL,
        M_NUMA_OTHER,
        M_INTERLEAVE_HIT,
        M_THP_FAULT_ALLOC,
        M_THP_FAULT_FALLBACK,
        M_THP_SPLIT_PAGE,
        M_THP_SPLIT_PMD,
        M_THP_DEFERRED_SPLIT_PAGE,
        M_THP_COLLAPSE_ALLOC,
        M_NUMA_HINT_FAULTS,
        M_NUMA_HINT_FAULTS_LOCAL,
        M_NUMA_PAGES_MIGRATED,
        M_PGMIGRATE_SUCCESS,
        M_PSI_CPU_SOME,         /* scheduler pressure (sampler-pressure.c) */
        M_PSI_MEMORY_SOME,
        M_PSI_MEMORY_FULL,
        M_PSI_IO_SOME,
        M_PSI_IO_FULL,
        M_RUNQUEUE_WAIT,
        /* lock wait (BPF): appended, so that earlier ids keep their values */
        M_LOCK_WAIT_NS,
        M_LOCK_WAIT_MAX_NS,
        M_LOCK_CONTENTIONS_SPINLOCK,    /* one per enum lw_type, in its order */
        M_LOCK_CONTENTIONS_RWLOCK,
        M_LOCK_CONTENTIONS_MUTEX,
        M_LOCK_CONTENTIONS_RWSEM_READ,
        M_LOCK_CONTENTIONS_RWSEM_WRITE,
        M_LOCK_CONTENTIONS_PERCPU_RWSEM,
        M_LOCK_CONTENTIONS_RTMUTEX,
        M_LOCK_WAIT_LOST,
        M_VOLUNTARY_SWITCHES,           /* sched:sched_switch, filtered on prev_state (metric.c) */
        M_INVOLUNTARY_SWITCHES,
        M_PGFAULT,                      /* /proc/vmstat: the machine's faults, no event on the fault path */
        M_PGMAJFAULT,
        M_SCALEMOND_CPU,                /* the daemon's own CPU time, to take out of everything else's */
        _M_MAX,
};

struct metric_def {
        const char *name;          /* stable snake_case name */
        enum metric_scope scope;
        const char *unit;          /* unit of one stored count after scaling */
        enum metric_source source;
        const char *source_name;   /* what the catalogue shows as the source */
        const char *description;   /* one line for `scalemonctl metrics` */
        uint64_t perf_config;      /* SRC_PERF_SW / SRC_PERF_HW */
        const char *tracepoint;    /* SRC_TRACEPOINT: "system:event" */
        const char *filter;        /* SRC_TRACEPOINT: ftrace filter, or NULL */
        const char *key;           /* SRC_NUMASTAT / SRC_VMSTAT / SRC_PSI */
        int field;                 /* SRC_PROCSTAT column, 0 = user; SRC_PSI, SRC_SCHEDSTAT */
        bool max;                  /* a maximum per interval, not a count: intervals,
                                    * CPUs and runs combine by max, never by sum */
};

extern const struct metric_def metric_table[_M_MAX];

const struct metric_def *metric_by_name(const char *name);
int metric_id_by_name(const char *name);   /* enum metric_id, or -ENOENT */
const char *metric_scope_name(enum metric_scope scope);

/* Is this metric read through perf_event_open (one fd per CPU)? */
static inline bool metric_is_perf(const struct metric_def *m)
{
        return m->source == SRC_PERF_SW || m->source == SRC_TRACEPOINT ||
               m->source == SRC_PERF_HW;
}

static inline bool metric_is_bpf(const struct metric_def *m)
{
        return m->source == SRC_BPF;
}

#endif
