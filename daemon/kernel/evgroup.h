/* evgroup.h - one perf group on one CPU, read with a single read(). */
#ifndef SCALEMON_EVGROUP_H
#define SCALEMON_EVGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EVGROUP_MAX 16

struct evspec {
        int metric;             /* enum metric_id */
        uint32_t type;          /* PERF_TYPE_* */
        uint64_t config;
        const char *filter;     /* tracepoint filter, or NULL */
};

/* The members' arrays live in one allocation with the read buffer, sized
 * for the members asked for (evgroup_alloc), so that a closed group (a
 * CPU's hardware group where there is no PMU) costs nothing: a machine
 * of 1024 CPUs keeps two per CPU. */
struct evgroup {
        int cpu;
        size_t n;                       /* members open; 0 = group closed */
        int *fd;                        /* [n]: fd[0] is the leader */
        uint64_t *id;                   /* [n]: kernel ids, to match the read buffer */
        int *metric;                    /* [n] */
        uint64_t *prev;                 /* [n]: raw values at the last read */
        uint64_t prev_enabled, prev_running;
        bool primed;                    /* prev[] hold a read */
        uint64_t *buf;                  /* read buffer: 3 + 2 * n u64; the allocation's start */
};

struct evdelta {
        bool valid;                     /* false on the first read after open */
        bool not_counted;               /* running did not move: values unknown */
        double duty;                    /* running / enabled over the interval */
        uint64_t enabled_ns;            /* time enabled over the interval; 0: the
                                         * events were detached (CPU went away) */
        uint64_t value[EVGROUP_MAX];    /* scaled deltas, by member */
};

/* Zero g and give it room for n members (fds -1, n left 0): for
 * evgroup_open() and for copies that fill the members themselves. */
int evgroup_alloc(struct evgroup *g, int cpu, size_t n);
/* Open specs[] as one group on cpu.  err[i] gets 0 or the -errno of spec i;
 * specs that fail are left out and the next one that opens becomes the
 * leader.  Returns the number of members open (0 if none), or a fatal
 * -errno (out of fds or memory). */
int evgroup_open(struct evgroup *g, int cpu, const struct evspec *specs, size_t nspecs, int *err);
/* One read() of the whole group; scales each delta by enabled/running. */
int evgroup_read(struct evgroup *g, struct evdelta *d);
void evgroup_close(struct evgroup *g);

/* Decode a PERF_FORMAT_GROUP|TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING|ID
 * buffer into the group's deltas.  Split out so that tests can replay
 * multiplexed and not-counted reads that this machine cannot produce. */
int evgroup_decode(struct evgroup *g, const uint64_t *buf, size_t nwords, struct evdelta *d);

#endif
