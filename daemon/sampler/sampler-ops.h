/* sampler-ops.h - where the sampler's raw reads come from.
 *
 * The sampler turns raw reads into deltas; what gives it the raw reads is
 * chosen once, in sampler_new(), as a table of operations and its context:
 *
 *   sampler_real_ops (sampler.c)   perf_event_open() on the machine's CPUs,
 *                                  /proc and /sys under the configured roots
 *   sim_ops (simulate.c)           --simulate-cpus N: the real reads,
 *                                  replayed for N CPUs
 *   fake_kernel_ops() (fakekernel.c)  a fake kernel's software counters,
 *                                  for tests that need none of the
 *                                  machine's; only with test seams
 *   fault_wrap() (fault.c)         any of them, with injected faults;
 *                                  only in a --enable-test-seams build
 *
 * The tick calls through the table and never asks which one it has.
 */
#ifndef SCALEMON_SAMPLER_OPS_H
#define SCALEMON_SAMPLER_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "cpumap.h"
#include "evgroup.h"

/* The groups of a CPU, by kind. */
enum { SAMPLER_GRP_SW = 0, SAMPLER_GRP_HW = 1, _SAMPLER_GRP_MAX };

struct sampler_ops {
        const char *name;
        /* Refresh map->online: 1 if it changed, 0 if not, or -errno. */
        int (*refresh_online)(void *ctx, struct cpumap *map);
        /* A tick begins, before anything is read. */
        void (*begin_tick)(void *ctx);
        /* evgroup_open() of CPU cpu's group of this kind (SAMPLER_GRP_*). */
        int (*group_open)(void *ctx, struct evgroup *g, int kind, int cpu, const struct evspec *specs, size_t n,
                          int *err);
        /* evgroup_read() of a group opened by group_open(). */
        int (*group_read)(void *ctx, struct evgroup *g, int kind, struct evdelta *d);
        /* The /proc/stat text to parse, from the text read in buf[0..len):
         * *ret stays valid until the next call. */
        int (*procstat)(void *ctx, const char *buf, size_t len, const char **ret, size_t *ret_len);
        /* The node directory whose numastat node n reads, and the value to
         * use for key k (0..5) of node n given the one read. */
        int (*numa_file)(void *ctx, int n);
        uint64_t (*numa_value)(void *ctx, int n, int k, uint64_t raw);
        /* Free ctx (may be NULL). */
        void (*free)(void *ctx);
};

extern const struct sampler_ops sampler_real_ops;       /* ctx: NULL */

#endif
