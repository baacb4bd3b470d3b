/* simulate.c - scalemond --simulate-cpus N, for benchmarks and tests.
 *
 * Users run 80 to 256 CPUs and more; a test machine has a few.  To measure
 * and test the daemon at that scale, the sampler runs on a simulated CPU
 * map of N CPUs, CPU c on node c / 64, and everything after the raw reads
 * is the real code: evgroup_decode() (deltas, multiplexing scale, not
 * counted), procstat_parse(), emit, totals, batching and the store.
 *
 * The raw reads are the real ones, replayed:
 *
 *  - perf: the real groups stay open on the real online CPUs, one read()
 *    each per tick.  Simulated CPU c replays real CPU c % R (R real CPUs
 *    online at start): its group has the same members, ids of its own and
 *    no fds, and each tick gets a PERF_FORMAT_GROUP|TOTAL_TIME_ENABLED|
 *    TOTAL_TIME_RUNNING|ID buffer built from the real group's raw values
 *    (members in reverse order, so the id matching is exercised), each
 *    value multiplied by a fixed factor of (c, metric) in [0.5, 1.5).
 *    The times are the real ones, so is the duty cycle.
 *  - /proc/stat: the text of one with N cpuN lines, each field of CPU c
 *    from the real CPU's, times a factor of (c, field).
 *  - numastat: simulated node n reads a real node's file (n modulo the
 *    real nodes), times a factor of (n, key).  /proc/vmstat is real.
 *
 * Invariants:
 *  1. A factor is fixed for the life of the daemon and a raw value only
 *     grows, so a simulated raw value only grows: deltas are the real
 *     CPU's delta times the factor (to within one).
 *  2. The first copy of each real CPU (c < R) and of each real node has
 *     factor 1: simulated CPU c < R is real CPU c's twin, so tests can
 *     compare any simulated CPU with the CPU it replays.
 *
 * Real CPU hotplug is followed: when a real CPU goes offline, so do the
 * simulated CPUs that replay it, and they come back with it (a CPU that
 * was offline at start is not replayed).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "cpumap.h"
#include "macro.h"
#include "procfs.h"
#include "simulate.h"

#define KEY_STAT 100    /* factor series of /proc/stat field f: KEY_STAT + f */
#define KEY_NUMA 200    /* of numastat key k: KEY_NUMA + k */
#define STAT_LINE_MAX (5 + 4 + PROCSTAT_FIELDS * 21 + 1)

struct sim_real {
        int cpu;                                /* real CPU number */
        struct evgroup g[2];                    /* the real groups: sw, hw */
        uint32_t epoch[2];                      /* bumped at every reopen */
        uint64_t read_gen[2];                   /* tick of the last read(); 0: not read */
        int read_err[2];                        /* its result */
        int err_metric[2][EVGROUP_MAX];         /* errors of the last open, by metric */
        int err_val[2][EVGROUP_MAX];
        size_t nerr[2];
        bool offline[2];                        /* the last open found the CPU offline */
};

struct sim {
        int ncpus;                              /* simulated */
        int nreal;                              /* real CPUs replayed, R */
        struct sim_real *real;                  /* [nreal] */
        uint32_t *epoch;                        /* [ncpus * 2]: real epoch its group copies */
        uint64_t gen;                           /* ticks begun, from 1 */

        struct cpumap real_map;                 /* the real CPUs, refreshed for hotplug */
        int real_ncpus;                         /* possible real CPUs */
        uint64_t (*stat_vals)[PROCSTAT_FIELDS]; /* [real_ncpus], the real /proc/stat */
        bool *stat_present;                     /* [real_ncpus] */
        char *stat_buf;                         /* the simulated /proc/stat */
        size_t stat_cap;

        int nreal_nodes;
        int *real_node;                         /* [nreal_nodes], existing node numbers */
};

static uint64_t splitmix64(uint64_t x)
{
        x += 0x9e3779b97f4a7c15ULL;
        x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
        x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
        return x ^ (x >> 31);
}

static uint32_t factor_of(int first_copies, int c, int k)
{
        if (c < first_copies)                   /* invariant 2 */
                return 1u << 16;
        return (1u << 15) + (uint32_t)(splitmix64(((uint64_t)c << 16) | (uint64_t)k) & 0xffff);
}

uint32_t sim_factor(const struct sim *sim, int c, int k)
{
        return factor_of(sim->nreal, c, k);
}

static uint64_t vary(uint64_t v, uint32_t f)
{
        return (uint64_t)(((unsigned __int128)v * f) >> 16);   /* monotonic in v: invariant 1 */
}

struct sim *sim_free(struct sim *sim)
{
        if (!sim)
                return NULL;
        for (int i = 0; sim->real && i < sim->nreal; i++) {
                evgroup_close(&sim->real[i].g[0]);
                evgroup_close(&sim->real[i].g[1]);
        }
        free(sim->real);
        free(sim->epoch);
        free(sim->stat_vals);
        free(sim->stat_present);
        free(sim->stat_buf);
        free(sim->real_node);
        cpumap_clear(&sim->real_map);
        free(sim);
        return NULL;
}

int sim_new(const char *sysroot, int ncpus, struct sim **ret)
{
        struct cpumap map = { .online_fd = -1, .node_online_fd = -1 };
        struct sim *sim;
        int r, k;

        if (ncpus < SIM_MIN_CPUS || ncpus > SIM_MAX_CPUS)
                return -ERANGE;
        r = cpumap_read(sysroot, &map);
        if (r < 0)
                return r;
        sim = calloc(1, sizeof *sim);
        if (!sim) {
                cpumap_clear(&map);
                return -ENOMEM;
        }
        sim->real_map = map;
        sim->ncpus = ncpus;
        sim->gen = 1;
        sim->nreal = cpumap_online_count(&map);
        sim->real_ncpus = map.ncpus;
        sim->real = calloc(MAX(sim->nreal, 1), sizeof *sim->real);
        sim->epoch = calloc((size_t)ncpus * 2, sizeof *sim->epoch);
        sim->stat_vals = calloc(map.ncpus, sizeof *sim->stat_vals);
        sim->stat_present = calloc(map.ncpus, sizeof *sim->stat_present);
        sim->stat_cap = (size_t)ncpus * STAT_LINE_MAX + 1;
        sim->stat_buf = malloc(sim->stat_cap);
        sim->real_node = calloc(map.nnodes, sizeof *sim->real_node);
        if (!sim->real || !sim->epoch || !sim->stat_vals || !sim->stat_present || !sim->stat_buf ||
            !sim->real_node) {
                sim_free(sim);
                return -ENOMEM;
        }
        if (sim->nreal == 0) {
                sim_free(sim);
                return -ENODEV;
        }
        k = 0;
        for (int c = 0; c < map.ncpus; c++)
                if (map.online[c])
                        sim->real[k++].cpu = c;         /* groups closed: n 0, no fds */
        for (int n = 0; n < map.nnodes; n++)
                if (map.has_node[n])
                        sim->real_node[sim->nreal_nodes++] = n;
        if (sim->nreal_nodes == 0)
                sim->real_node[sim->nreal_nodes++] = 0;
        *ret = sim;
        return 0;
}

int sim_real_cpus(const struct sim *sim)
{
        return sim->nreal;
}

int sim_refresh_online(struct sim *sim, struct cpumap *map)
{
        int r = cpumap_refresh_online(&sim->real_map);

        if (r <= 0)
                return r;
        for (int c = 0; c < map->ncpus; c++)
                map->online[c] = sim->real_map.online[sim->real[c % sim->nreal].cpu];
        return 1;
}

void sim_begin_tick(struct sim *sim)
{
        sim->gen++;
}

/* Make g a copy of the real group rg: same members, its own ids, no fds.
 * g is overwritten, like evgroup_open() does. */
static int sim_copy(struct sim *sim, struct evgroup *g, int kind, int c, const struct sim_real *rs)
{
        const struct evgroup *rg = &rs->g[kind];

        int r;

        sim->epoch[(size_t)c * 2 + kind] = rs->epoch[kind];
        r = evgroup_alloc(g, c, rg->n);
        if (r < 0 || rg->n == 0)
                return r;
        g->n = rg->n;
        for (size_t m = 0; m < g->n; m++) {
                g->metric[m] = rg->metric[m];
                /* ids like the kernel's: unique, never 0 */
                g->id[m] = ((uint64_t)c * 2 + (uint64_t)kind) * EVGROUP_MAX + m + 1;
        }
        return (int)g->n;
}

int sim_group_open(struct sim *sim, struct evgroup *g, int kind, int c, const struct evspec *specs, size_t n,
                   int *err)
{
        struct sim_real *rs = &sim->real[c % sim->nreal];
        int r;

        if (c < sim->nreal) {
                /* the first copy opens the real group, anew */
                struct evgroup *rg = &rs->g[kind];

                evgroup_close(rg);
                r = evgroup_open(rg, rs->cpu, specs, n, err);
                rs->epoch[kind]++;
                rs->read_gen[kind] = 0;
                if (r < 0)
                        return r;
                rs->nerr[kind] = 0;
                rs->offline[kind] = false;
                for (size_t i = 0; i < n && i < EVGROUP_MAX; i++) {
                        rs->err_metric[kind][rs->nerr[kind]] = specs[i].metric;
                        rs->err_val[kind][rs->nerr[kind]++] = err[i];
                        if (r == 0 && err[i] == -ENODEV)
                                rs->offline[kind] = true;
                }
        } else
                for (size_t i = 0; i < n && i < EVGROUP_MAX; i++) {
                        err[i] = -ENOENT;
                        for (size_t k = 0; k < rs->nerr[kind]; k++)
                                if (rs->err_metric[kind][k] == specs[i].metric)
                                        err[i] = rs->err_val[kind][k];
                }
        r = sim_copy(sim, g, kind, c, rs);
        return r >= 0 && rs->offline[kind] ? -ENODEV : r;  /* as evgroup_open() on an offline CPU */
}

int sim_group_read(struct sim *sim, struct evgroup *g, int kind, struct evdelta *d)
{
        struct sim_real *rs = &sim->real[g->cpu % sim->nreal];
        struct evgroup *rg = &rs->g[kind];
        const uint64_t *raw;
        int r;

        memset(d, 0, sizeof *d);
        if (rs->read_gen[kind] != sim->gen) {
                struct evdelta rd;
                rs->read_err[kind] = rg->n ? evgroup_read(rg, &rd) : -ENODEV;
                rs->read_gen[kind] = sim->gen;
        }
        if (rs->read_err[kind] < 0)
                return rs->read_err[kind];
        if (sim->epoch[(size_t)g->cpu * 2 + kind] != rs->epoch[kind]) {
                /* the real group was reopened since g copied it: copy it
                 * again; this read only primes, like a reopened group */
                evgroup_close(g);
                r = sim_copy(sim, g, kind, g->cpu, rs);
                if (r <= 0)
                        return r;
        }

        raw = rg->buf;
        g->buf[0] = g->n;
        g->buf[1] = raw[1];
        g->buf[2] = raw[2];
        for (size_t m = 0; m < g->n; m++) {
                size_t slot = g->n - 1 - m, k = m;
                if (raw[3 + 2 * k + 1] != rg->id[m])
                        for (k = 0; k < rg->n && raw[3 + 2 * k + 1] != rg->id[m]; k++)
                                ;
                if (k == rg->n)
                        return -EIO;
                g->buf[3 + 2 * slot] = vary(raw[3 + 2 * k], sim_factor(sim, g->cpu, g->metric[m]));
                g->buf[3 + 2 * slot + 1] = g->id[m];
        }
        return evgroup_decode(g, g->buf, 3 + 2 * g->n, d);
}

static char *put_u64(char *p, uint64_t v)
{
        char tmp[20];
        size_t k = 0;

        do {
                tmp[k++] = (char)('0' + v % 10);
                v /= 10;
        } while (v);
        while (k)
                *p++ = tmp[--k];
        return p;
}

int sim_procstat(struct sim *sim, const char *buf, size_t len, const char **ret, size_t *ret_len)
{
        char *p = sim->stat_buf;
        int r;

        r = procstat_parse(buf, len, sim->real_ncpus, sim->stat_vals, sim->stat_present, NULL);
        if (r < 0)
                return r;
        for (int c = 0; c < sim->ncpus; c++) {
                int rc = sim->real[c % sim->nreal].cpu;

                if (!sim->stat_present[rc])     /* offline: no line, as the kernel does */
                        continue;
                p = put_u64(stpcpy(p, "cpu"), (uint64_t)c);
                for (int f = 0; f < PROCSTAT_FIELDS; f++) {
                        *p++ = ' ';
                        p = put_u64(p, vary(sim->stat_vals[rc][f], sim_factor(sim, c, KEY_STAT + f)));
                }
                *p++ = '\n';
        }
        *p = 0;
        *ret = sim->stat_buf;
        *ret_len = (size_t)(p - sim->stat_buf);
        return 0;
}

int sim_numa_source(const struct sim *sim, int n)
{
        return sim->real_node[n % sim->nreal_nodes];
}

uint64_t sim_numa_vary(const struct sim *sim, int n, int k, uint64_t real)
{
        return vary(real, factor_of(sim->nreal_nodes, n, KEY_NUMA + k));
}

/* ---- the sampler's operations ---- */

static int ops_refresh_online(void *ctx, struct cpumap *map) { return sim_refresh_online(ctx, map); }
static void ops_begin_tick(void *ctx) { sim_begin_tick(ctx); }
static int ops_numa_file(void *ctx, int n) { return sim_numa_source(ctx, n); }
static uint64_t ops_numa_value(void *ctx, int n, int k, uint64_t v) { return sim_numa_vary(ctx, n, k, v); }
static void ops_free(void *ctx) { sim_free(ctx); }

static int ops_group_open(void *ctx, struct evgroup *g, int kind, int c, const struct evspec *specs, size_t n,
                          int *err)
{
        return sim_group_open(ctx, g, kind, c, specs, n, err);
}

static int ops_group_read(void *ctx, struct evgroup *g, int kind, struct evdelta *d)
{
        return sim_group_read(ctx, g, kind, d);
}

static int ops_procstat(void *ctx, const char *buf, size_t len, const char **ret, size_t *ret_len)
{
        return sim_procstat(ctx, buf, len, ret, ret_len);
}

const struct sampler_ops sim_ops = {
        .name = "simulated",
        .refresh_online = ops_refresh_online,
        .begin_tick = ops_begin_tick,
        .group_open = ops_group_open,
        .group_read = ops_group_read,
        .procstat = ops_procstat,
        .numa_file = ops_numa_file,
        .numa_value = ops_numa_value,
        .free = ops_free,
};
