/* simulate.h - scalemond --simulate-cpus N: the real sampler-to-store path
 * for more CPUs than this machine has.  For benchmarks and tests only. */
#ifndef SCALEMON_SIMULATE_H
#define SCALEMON_SIMULATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "evgroup.h"
#include "sampler-ops.h"

#define SIM_MIN_CPUS      1
#define SIM_MAX_CPUS      8192
#define SIM_CPUS_PER_NODE 64

struct sim;

/* Simulate ncpus CPUs from the CPUs online under sysroot now. */
int sim_new(const char *sysroot, int ncpus, struct sim **ret);
struct sim *sim_free(struct sim *sim);
int sim_real_cpus(const struct sim *sim);

struct cpumap;
/* Refresh the real CPUs' online set and mirror it on the simulated map:
 * CPU c is online while the real CPU it replays is.  Returns like
 * cpumap_refresh_online(). */
int sim_refresh_online(struct sim *sim, struct cpumap *map);

/* Start a tick: every real group is read again, once, on first use. */
void sim_begin_tick(struct sim *sim);

/* evgroup_open() for simulated CPU c: the real group of the CPU it
 * replays is (re)opened when c is the first simulated CPU to replay it
 * (c < the number of real CPUs), else shared; g gets the same members
 * with ids of its own and no fds.  kind: 0 the software group, 1 the
 * hardware group.  Returns like evgroup_open(). */
int sim_group_open(struct sim *sim, struct evgroup *g, int kind, int c, const struct evspec *specs, size_t n,
                   int *err);
/* evgroup_read() for a simulated group: a read buffer built from the real
 * group's latest raw values, each varied by a fixed per-(CPU, metric)
 * factor, decoded by evgroup_decode(). */
int sim_group_read(struct sim *sim, struct evgroup *g, int kind, struct evdelta *d);

/* The text of a /proc/stat with ncpus cpuN lines, from the real one in
 * buf[0..len).  *ret points into sim's buffer, valid until the next call. */
int sim_procstat(struct sim *sim, const char *buf, size_t len, const char **ret, size_t *ret_len);

/* The real node whose numastat simulated node n replays, and the value
 * of key k (0..5) of node n from the real value. */
int sim_numa_source(const struct sim *sim, int n);
uint64_t sim_numa_vary(const struct sim *sim, int n, int k, uint64_t real);

/* The factor (Q16: 65536 = 1.0) of simulated CPU c for series k: 1.0 for
 * the first copy of each real CPU, else in [0.5, 1.5). */
uint32_t sim_factor(const struct sim *sim, int c, int k);

/* The sampler's operations (sampler-ops.h) over the functions above;
 * ctx is a struct sim, which sim_ops.free frees. */
extern const struct sampler_ops sim_ops;

#endif
