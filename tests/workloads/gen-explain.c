/* gen-explain.c - a database with a known phase for `scalemonctl explain`:
 * what bench/bench-explain.sh times and tests/unit/explain-synthetic.sh checks.
 * By default a 256-CPU machine (4 nodes of 64) sampled at 100 ms, three
 * runs of 10 minutes each (6,000 ticks) with the same tags, written
 * through the store API as scalemond writes them (store_add_tick,
 * store_add_cpu_values, store_add_sample, store_run_insert,
 * store_run_finish with runs_build_totals()' totals).
 *
 * Ten cpu-scope counters move on every CPU every tick, with noise; two
 * node counters and one system counter too.  The third run ("bx-slow",
 * the lowest score) has a lock storm on node 1 (CPUs 64-127) from 30% of
 * the run to 60% (+3m00s for 3m00s): lock contentions 9x there (3x
 * machine-wide), context switches 2x.
 *
 * Usage: gen-explain PATH [CPUS TICKS]
 * Without CPUS and TICKS, PATH is reused if this version made it.  CPUS
 * is a multiple of 4 (4 nodes), TICKS per run at least 20.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpumap.h"
#include "macro.h"
#include "runs.h"
#include "store.h"
#include "timeutil.h"

#define GEN_VERSION     2
#define MAX_CPU         1024
#define NNODE           4
#define TICK_NS         (100 * NSEC_PER_MSEC)

static int NCPU = 256, PER_NODE = 64, RUN_TICKS = 6000, STORM_FROM = 1800, STORM_TO = 3600;

static const int cpu_metric[] = { M_CONTEXT_SWITCHES, M_CPU_MIGRATIONS, M_PAGE_FAULTS, M_PAGE_FAULTS_MINOR,
                                  M_LOCK_CONTENTIONS, M_CYCLES,         M_INSTRUCTIONS, M_CPU_USER,
                                  M_CPU_SYSTEM,       M_CPU_IDLE };
/* per CPU per 100 ms tick (CPU times in 1/100 s) */
static const double cpu_base[] = { 900, 12, 2500, 2500, 300, 2.5e8, 3.0e8, 3, 5, 2 };

struct gen {
        struct store *st;
        struct cpumap map;
        int64_t t, host, last_tick;
        uint64_t rng;
        double acc[_M_MAX * MAX_CPU];      /* a run's sums per (metric, cpu), in the catalogue unit */
        bool accumulate;
};

static double rnd_unit(struct gen *g)
{
        g->rng ^= g->rng << 13;
        g->rng ^= g->rng >> 7;
        g->rng ^= g->rng << 17;
        return (double)(g->rng >> 11) / 9007199254740992.0;
}

/* about N(1, sd): the sum of 4 uniforms, centred and scaled */
static double jitter(struct gen *g, double sd)
{
        double s = rnd_unit(g) + rnd_unit(g) + rnd_unit(g) + rnd_unit(g) - 2;
        return fmax(0.01, 1 + sd * s * 1.7320508);
}

static int emit_tick(struct gen *g, bool storm)
{
        static int64_t v[MAX_CPU];
        int64_t id, nodev[NNODE] = { 0 };
        int r;

        r = store_add_tick(g->st, g->t, TICK_NS, &id);
        if (r < 0)
                return r;
        for (size_t k = 0; k < ELEMENTSOF(cpu_metric); k++) {
                int m = cpu_metric[k];
                for (int c = 0; c < NCPU; c++) {
                        double x = cpu_base[k] * jitter(g, 0.15);
                        if (storm && c / PER_NODE == 1 && m == M_LOCK_CONTENTIONS)
                                x *= 9;
                        if (storm && c / PER_NODE == 1 && m == M_CONTEXT_SWITCHES)
                                x *= 2;
                        v[c] = (int64_t)(x + 0.5);
                        if (g->accumulate)
                                g->acc[m * NCPU + c] += (double)v[c] * (metric_table[m].source == SRC_PROCSTAT ? 0.01 : 1);
                }
                r = store_add_cpu_values(g->st, id, m, v, NULL, NCPU);
                if (r < 0)
                        return r;
        }
        for (int n = 0; n < NNODE; n++) {
                nodev[n] = (int64_t)(40000 * jitter(g, 0.1));
                r = store_add_sample(g->st, id, M_NUMA_HIT, n, nodev[n], false);
                if (r >= 0)
                        r = store_add_sample(g->st, id, M_NUMA_MISS, n, (int64_t)(400 * jitter(g, 0.2)), false);
                if (r < 0)
                        return r;
        }
        r = store_add_sample(g->st, id, M_NUMA_HINT_FAULTS, 0, (int64_t)(3000 * jitter(g, 0.2)), false);
        if (r < 0)
                return r;
        g->last_tick = id;
        g->t += TICK_NS;
        return 0;
}

static int run_one(struct gen *g, const char *name, double score, bool slow)
{
        struct store_kv tags[] = { { "bench", "aim7" }, { "ways", "256" } };
        struct store_kv ctx[] = { { "kernel", "6.1.0-13-amd64" }, { "thp_enabled", "always" } };
        struct store_score sc = { "jobs_per_min", score };
        struct store_total *tot = NULL;
        static double vals[_M_MAX * MAX_CPU];
        bool cpus[MAX_CPU], metrics[_M_MAX];
        int64_t id, start_t;
        size_t ntot = 0;
        int r;

        r = store_begin(g->st);
        if (r >= 0)
                r = emit_tick(g, false);
        if (r >= 0)
                r = store_commit(g->st);
        if (r < 0)
                return r;
        start_t = g->t;
        r = store_run_insert(g->st, &(struct run_new){ .name = name, .host = g->host, .start = start_t,
                                                       .start_tick = g->last_tick, .tags = tags, .ntags = 2,
                                                       .context = ctx, .ncontext = 2 },
                             &id);
        if (r < 0)
                return r;
        memset(g->acc, 0, sizeof g->acc);
        g->accumulate = true;
        for (int k = 0; k < RUN_TICKS && r >= 0; k++) {
                if (k % 1000 == 0)
                        r = store_begin(g->st);
                if (r >= 0)
                        r = emit_tick(g, slow && k >= STORM_FROM && k < STORM_TO);
                if (r >= 0 && (k % 1000 == 999 || k == RUN_TICKS - 1))
                        r = store_commit(g->st);
        }
        g->accumulate = false;
        if (r < 0)
                return r;
        for (int m = 0; m < _M_MAX; m++) {
                metrics[m] = false;
                for (size_t k = 0; k < ELEMENTSOF(cpu_metric); k++)
                        metrics[m] |= cpu_metric[k] == m;
                for (int c = 0; c < NCPU; c++)
                        vals[m * NCPU + c] = g->acc[m * NCPU + c];
        }
        for (int c = 0; c < NCPU; c++)
                cpus[c] = true;
        r = runs_build_totals(vals, NCPU, &g->map, cpus, metrics, &tot, &ntot);
        if (r < 0)
                return r;
        r = store_run_finish(g->st, id,
                                     &(struct run_end){ .status = "done", .end = g->t, .end_tick = g->last_tick,
                                                        .has_exit_status = true, .exit_status = 0,
                                                        .length_ns = g->t - start_t, .scores = &sc, .nscores = 1,
                                                        .totals = tot, .ntotals = ntot });
        free(tot);
        return r;
}

int main(int argc, char **argv)
{
        struct gen g = { .rng = 0x5ca1e3019e3779b9ULL };
        struct host_info h = { .machine_id = "bench-explain-256", .hostname = "epyc-2s-256",
                               .kernel = "6.1.0-13-amd64", .cpu_model = "AMD EPYC 7763 64-Core Processor",
                               .nnodes = NNODE };
        bool avail[_M_MAX], online[MAX_CPU];
        double scale[_M_MAX];
        int node_of[MAX_CPU], r;
        char tmp[4096], *err = NULL;
        int64_t v;

        if (argc != 2 && argc != 4) {
                fprintf(stderr, "usage: gen-explain PATH [CPUS TICKS]\n");
                return 2;
        }
        if (argc == 4) {
                NCPU = atoi(argv[2]);
                RUN_TICKS = atoi(argv[3]);
                if (NCPU < 4 || NCPU > MAX_CPU || NCPU % 4 || RUN_TICKS < 20) {
                        fprintf(stderr, "gen-explain: CPUS a multiple of 4 up to %d, TICKS at least 20\n", MAX_CPU);
                        return 2;
                }
                PER_NODE = NCPU / NNODE;
                STORM_FROM = RUN_TICKS * 3 / 10;
                STORM_TO = RUN_TICKS * 6 / 10;
                unlink(argv[1]);
        } else if (store_open(argv[1], STORE_READ, &g.st, NULL) == 0) {
                bool same = store_meta_get_int(g.st, "bench_explain_version", &v) == 0 && v == GEN_VERSION;
                g.st = store_close(g.st);
                if (same) {
                        printf("gen-explain: reusing %s\n", argv[1]);
                        return 0;
                }
        }
        h.ncpus = NCPU;
        snprintf(tmp, sizeof tmp, "%s.tmp", argv[1]);
        unlink(tmp);
        if (cpumap_simulate(NCPU, PER_NODE, &g.map) < 0)
                return 1;
        if (store_open(tmp, STORE_WRITE, &g.st, &err) < 0) {
                fprintf(stderr, "gen-explain: %s\n", err ? err : "cannot open");
                return 1;
        }
        for (int m = 0; m < _M_MAX; m++) {
                avail[m] = true;
                scale[m] = metric_table[m].source == SRC_PROCSTAT ? 0.01 : 1;
        }
        for (int c = 0; c < NCPU; c++) {
                node_of[c] = c / PER_NODE;
                online[c] = true;
        }
        g.t = (now_realtime_ns() / NSEC_PER_SEC - 3 * 700) * NSEC_PER_SEC;
        r = store_metrics_sync(g.st, avail, NULL, scale);
        if (r >= 0)
                r = store_host_update(g.st, &h, g.t, &g.host);
        if (r >= 0)
                r = store_topology_set(g.st, NCPU, node_of, online);
        if (r >= 0)
                r = store_meta_set_int(g.st, "interval_ns", TICK_NS);
        if (r >= 0)
                r = run_one(&g, "bx-r1", 41000, false);
        if (r >= 0)
                r = run_one(&g, "bx-r2", 40200, false);
        if (r >= 0)
                r = run_one(&g, "bx-slow", 29000, true);
        if (r >= 0)
                r = store_meta_set_int(g.st, "bench_explain_version", GEN_VERSION);
        if (r < 0)
                fprintf(stderr, "gen-explain: %s\n", store_errmsg(g.st));
        g.st = store_close(g.st);
        cpumap_clear(&g.map);
        if (r < 0 || rename(tmp, argv[1]) < 0) {
                fprintf(stderr, "gen-explain: failed: %s\n", r < 0 && g.st ? store_errmsg(g.st) : strerror(r < 0 ? -r : errno));
                return 1;
        }
        printf("gen-explain: wrote %s\n", argv[1]);
        return 0;
}
