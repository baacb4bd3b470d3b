/* bench-reports-gen.c - the database bench-reports.sh times scalemonctl
 * against: a month of a 256-CPU machine (4 nodes of 64) sampled at 1 s,
 * as scalemond leaves it (schema 0005): the last 7 days as raw 1 s ticks,
 * the 23 days before as 1-minute rollups, and 2,000 benchmark runs in
 * campaigns across the month, whose ticks stay raw, each closed with the
 * totals scalemond writes at a run's stop (per CPU, per node and
 * system-wide, from runs_build_totals() itself).  Everything goes through
 * the store API (store_add_tick, store_add_cpu_values, store_add_sample,
 * store_run_insert, store_run_finish), so the bytes on disk are the real
 * format; only tick.n of rollups is set with plain SQL (below).
 *
 * The machine is busy: on every CPU, every tick, about twelve cpu-scope
 * counters move (context switches, migrations, faults, lock contentions,
 * cycles, instructions, user/system/idle/softirq time), driven by a
 * per-CPU load that follows the runs (aim7 and will-it-scale sweeps
 * across 10 to 256 ways, on two kernels) and a daily background.
 *
 * Usage: bench-reports-gen PATH DAYS
 * PATH is reused if this generator version made it for DAYS days (meta
 * keys bench_reports_*); otherwise it is written as PATH.tmp and renamed.
 * DAYS scales the month down for a quick run: 7/30 of it raw, 2000 *
 * DAYS / 30 runs.  Prints the size figures either way.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cpumap.h"
#include "macro.h"
#include "runs.h"
#include "store.h"
#include "timeutil.h"

/* Bump when what is generated changes: a cached database of another
 * version is made again. */
#define GEN_VERSION     2

#define NCPU            256
#define PER_NODE        64
#define NNODE           (NCPU / PER_NODE)
#define RUNS_PER_MONTH  2000
#define BATCH_TICKS     2048    /* ticks per transaction */
#define RUN_GAP_S       20      /* between the runs of a campaign */
#define TARGET_BYTES    (10.0 * 1024 * 1024 * 1024)

/* The cpu-scope counters this machine moves (the others, kvm_*, nice,
 * steal and guest, stay 0 and get no cpu_sample row: invariant 6). */
enum { K_CTX, K_MIG, K_PF, K_PF_MINOR, K_PF_MAJOR, K_LOCK, K_CYCLES, K_INSTR,
       K_USER, K_SYSTEM, K_IDLE, K_IOWAIT, K_IRQ, K_SOFTIRQ, _K_MAX };
static const int cpu_metric[_K_MAX] = {
        [K_CTX] = M_CONTEXT_SWITCHES, [K_MIG] = M_CPU_MIGRATIONS, [K_PF] = M_PAGE_FAULTS,
        [K_PF_MINOR] = M_PAGE_FAULTS_MINOR, [K_PF_MAJOR] = M_PAGE_FAULTS_MAJOR, [K_LOCK] = M_LOCK_CONTENTIONS,
        [K_CYCLES] = M_CYCLES, [K_INSTR] = M_INSTRUCTIONS, [K_USER] = M_CPU_USER, [K_SYSTEM] = M_CPU_SYSTEM,
        [K_IDLE] = M_CPU_IDLE, [K_IOWAIT] = M_CPU_IOWAIT, [K_IRQ] = M_CPU_IRQ, [K_SOFTIRQ] = M_CPU_SOFTIRQ,
};

enum bench { B_AIM7, B_WIS };

struct run_plan {
        int64_t start_s;        /* seconds after the first tick: the run's first tick starts here */
        int len_s;              /* its ticks */
        enum bench bench;
        bool patched;           /* kernel with the patch under test, else the base one */
        bool noisy;             /* this campaign's scores vary a lot */
        int ways;
        int rep;                /* repeat of this (bench, ways), for the name */
};

struct gen {
        struct store *st;
        struct cpumap map;
        int64_t host;
        uint64_t rng;
        int64_t t0;                     /* first tick's start, ns */
        int64_t t;                      /* next tick's start, ns */
        int64_t s;                      /* next tick's start, seconds after t0 */
        int64_t last_tick;
        bool in_txn;
        int txn_ticks;
        double load[NCPU];              /* share of the CPU busy, 0..1 */
        double base[NCPU];              /* each CPU's own share of the background */
        double user_share;              /* of busy time, in user mode */
        double contention;              /* lock contention factor of the running benchmark */
        double pf_rate;                 /* page faults per busy second */
        int64_t *acc;                   /* a run's sums so far, [_M_MAX * NCPU] */
        bool accumulate;
        int64_t (*rollups)[2];          /* (tick id, n) of each rollup written */
        size_t nrollups, caprollups;
        /* what was written */
        int64_t raw_ticks, rollup_ticks, values, totals;
};

static uint64_t rnd(struct gen *g)
{
        /* xorshift64* */
        g->rng ^= g->rng >> 12;
        g->rng ^= g->rng << 25;
        g->rng ^= g->rng >> 27;
        return g->rng * 0x2545f4914f6cdd1dULL;
}

static double rnd_unit(struct gen *g)
{
        return (double)(rnd(g) >> 11) / 9007199254740992.0;
}

/* Normal(0, 1), Box-Muller. */
static double rnd_normal(struct gen *g)
{
        double u = rnd_unit(g), v = rnd_unit(g);
        return sqrt(-2 * log(u + 1e-300)) * cos(2 * M_PI * v);
}

/* The byte k of x as a factor 1 +- spread. */
static inline double jig(uint64_t x, int k, double spread)
{
        return 1 + spread * ((double)((x >> (8 * k)) & 0xff) / 127.5 - 1);
}

static int64_t round_pos(double v)
{
        return v <= 0 ? 0 : (int64_t)(v + 0.5);
}

static long long file_bytes(const char *path)
{
        struct stat st;
        return stat(path, &st) == 0 ? (long long)st.st_size : 0;
}

/* Rank of a CPU when a benchmark of N ways takes N of them: round robin
 * over the nodes, as the scheduler spreads them. */
static int spread_rank(int c)
{
        return (c % PER_NODE) * NNODE + c / PER_NODE;
}

/* Background load at second s: a daily swing and a slow drift per CPU. */
static void set_background(struct gen *g)
{
        double hour = fmod((double)(g->t / NSEC_PER_SEC) / 3600.0, 24.0);
        double day = 0.5 + 0.5 * sin((hour - 9) / 24 * 2 * M_PI);

        for (int c = 0; c < NCPU; c++)
                g->load[c] = MIN(0.9, g->base[c] * (0.6 + 0.8 * day) * (0.8 + 0.4 * rnd_unit(g)));
        g->user_share = 0.6;
        g->contention = 0.05;
        g->pf_rate = 4000;
}

static void set_run_load(struct gen *g, const struct run_plan *p)
{
        for (int c = 0; c < NCPU; c++)
                g->load[c] = spread_rank(c) < p->ways ? 0.90 + 0.08 * rnd_unit(g) : MIN(0.9, g->base[c] * 0.5);
        if (p->bench == B_AIM7) {
                g->user_share = 0.55;
                g->pf_rate = 12000;
        } else {
                g->user_share = 0.25;   /* page_fault2: mostly in the kernel */
                g->pf_rate = 60000;
        }
        g->contention = (double)p->ways / NCPU * (p->patched ? 0.6 : 1.0) * (p->bench == B_WIS ? 2.0 : 1.0);
}

static int flush(struct gen *g)
{
        int r = 0;
        if (g->in_txn)
                r = store_commit(g->st);
        g->in_txn = false;
        g->txn_ticks = 0;
        return r;
}

/* One tick of n merged one-second intervals (n > 1: a rollup, schema
 * 0005), every counter's value for it. */
static int emit_tick(struct gen *g, int n)
{
        static int64_t v[_K_MAX][NCPU];
        int64_t node_pf[NNODE] = { 0 }, sum_pf = 0, dur = 0, id;
        int r;

        for (int i = 0; i < n; i++)
                dur += NSEC_PER_SEC + (int64_t)(rnd(g) % 40001) - 20000;     /* +-20 us of timer slack */
        if (!g->in_txn) {
                r = store_begin(g->st);
                if (r < 0)
                        return r;
                g->in_txn = true;
        }
        r = store_add_tick(g->st, g->t, dur, &id);
        if (r < 0)
                return r;

        for (int c = 0; c < NCPU; c++) {
                uint64_t x = rnd(g), y = rnd(g);
                double u = g->load[c], busy = u * 100 * n, ipc;
                int64_t user, sys, soft, irq, iow, idle, major, pf;

                user = round_pos(busy * g->user_share * jig(x, 0, 0.08));
                sys = round_pos(busy * (1 - g->user_share) * 0.97 * jig(x, 1, 0.08));
                soft = round_pos((0.6 + 2 * u) * n * jig(x, 2, 0.5));
                irq = n > 1 ? round_pos(n / 50.0 * jig(x, 3, 0.5)) : (y & 63) == 0;
                iow = n > 1 ? round_pos(n / 200.0 * jig(x, 3, 0.9)) : ((y >> 6) & 255) == 0;
                if (user + sys + soft + irq + iow > 100 * n)
                        sys = MAX(0, 100 * n - user - soft - irq - iow);
                idle = 100 * n - user - sys - soft - irq - iow;
                major = n > 1 ? round_pos(n / 300.0 * jig(y, 2, 0.9)) : ((y >> 14) % 300) == 0;
                pf = round_pos((30 + g->pf_rate * u) * n * jig(x, 4, 0.15)) + major;
                ipc = 1.7 - 0.9 * MIN(1.0, g->contention * u);
                v[K_USER][c] = user;
                v[K_SYSTEM][c] = sys;
                v[K_SOFTIRQ][c] = soft;
                v[K_IRQ][c] = irq;
                v[K_IOWAIT][c] = iow;
                v[K_IDLE][c] = idle;
                v[K_PF_MAJOR][c] = major;
                v[K_PF][c] = pf;
                v[K_PF_MINOR][c] = pf - major;
                v[K_CTX][c] = round_pos((150 + 9000 * u) * n * jig(x, 5, 0.15));
                v[K_MIG][c] = round_pos((3 + 120 * u) * n * jig(x, 6, 0.3));
                v[K_LOCK][c] = round_pos((1 + 6000 * u * u * g->contention) * n * jig(x, 7, 0.3));
                v[K_CYCLES][c] = round_pos(2.45e9 * (0.04 + 0.96 * u) * n * jig(y, 3, 0.02));
                v[K_INSTR][c] = round_pos((double)v[K_CYCLES][c] * ipc * jig(y, 4, 0.05));
                node_pf[c / PER_NODE] += pf;
                sum_pf += pf;
        }
        for (int k = 0; k < _K_MAX; k++) {
                r = store_add_cpu_values(g->st, id, cpu_metric[k], v[k], NULL, NCPU);
                if (r < 0)
                        return r;
                for (int c = 0; c < NCPU; c++) {
                        g->values += v[k][c] != 0;
                        if (g->accumulate)
                                g->acc[cpu_metric[k] * NCPU + c] += v[k][c];
                }
        }

        /* node counters (numastat) and system ones (vmstat), from the faults */
        {
                uint64_t x = rnd(g), y = rnd(g);
                int64_t thp = round_pos((double)sum_pf / 600 * jig(x, 0, 0.3));
                int64_t hint = round_pos((double)sum_pf / 25 * jig(x, 1, 0.3));
                int64_t moved = round_pos((double)hint * 0.04 * jig(x, 2, 0.5));
                int64_t sysv[_M_MAX] = {
                        [M_THP_FAULT_ALLOC] = thp,
                        [M_THP_FAULT_FALLBACK] = round_pos((double)thp / 40 * jig(x, 3, 0.9)),
                        [M_THP_SPLIT_PAGE] = n > 1 ? round_pos(n / 30.0 * jig(x, 4, 0.5)) : (y & 31) == 0,
                        [M_THP_SPLIT_PMD] = round_pos((double)thp / 15 * jig(x, 5, 0.5)),
                        [M_THP_DEFERRED_SPLIT_PAGE] = round_pos((double)thp / 10 * jig(x, 6, 0.5)),
                        [M_THP_COLLAPSE_ALLOC] = n > 1 ? round_pos(n / 10.0 * 4 * jig(x, 7, 0.5))
                                                       : g->s % 10 == 0 ? (int64_t)(y >> 60) : 0,
                        [M_NUMA_HINT_FAULTS] = hint,
                        [M_NUMA_HINT_FAULTS_LOCAL] = round_pos((double)hint * 0.85),
                        [M_NUMA_PAGES_MIGRATED] = moved,
                        [M_PGMIGRATE_SUCCESS] = moved + (int64_t)((y >> 8) & 3),
                };
                for (int nd = 0; nd < NNODE; nd++) {
                        uint64_t z = rnd(g);
                        int64_t hit = round_pos((double)node_pf[nd] * 1.05 * jig(z, 0, 0.05));
                        int64_t local = round_pos((double)hit * 0.96 * jig(z, 1, 0.01));
                        int64_t miss = round_pos((double)hit * 0.01 * jig(z, 2, 0.5));
                        int64_t nv[_M_MAX] = {
                                [M_NUMA_HIT] = hit,
                                [M_NUMA_MISS] = miss,
                                [M_NUMA_FOREIGN] = round_pos((double)miss * jig(z, 3, 0.3)),
                                [M_NUMA_LOCAL] = MIN(local, hit),
                                [M_NUMA_OTHER] = hit - MIN(local, hit),
                                [M_INTERLEAVE_HIT] = nd == 0 ? round_pos(n * 0.5 * jig(z, 4, 1)) : 0,
                        };
                        for (int m = 0; m < _M_MAX; m++) {
                                if (metric_table[m].scope != SCOPE_NODE)
                                        continue;
                                r = store_add_sample(g->st, id, m, nd, nv[m], false);
                                if (r < 0)
                                        return r;
                                g->values += nv[m] != 0;
                                if (g->accumulate)
                                        g->acc[m * NCPU + nd] += nv[m];
                        }
                }
                for (int m = 0; m < _M_MAX; m++) {
                        if (metric_table[m].scope != SCOPE_SYSTEM)
                                continue;
                        r = store_add_sample(g->st, id, m, 0, sysv[m], false);
                        if (r < 0)
                                return r;
                        g->values += sysv[m] != 0;
                        if (g->accumulate)
                                g->acc[m * NCPU] += sysv[m];
                }
        }

        if (n > 1) {
                if (g->nrollups == g->caprollups) {
                        size_t cap = g->caprollups ? g->caprollups * 2 : 4096;
                        void *p = realloc(g->rollups, cap * sizeof *g->rollups);
                        if (!p)
                                return -ENOMEM;
                        g->rollups = p;
                        g->caprollups = cap;
                }
                g->rollups[g->nrollups][0] = id;
                g->rollups[g->nrollups][1] = n;
                g->nrollups++;
                g->rollup_ticks++;
        } else
                g->raw_ticks++;
        g->last_tick = id;
        g->t += dur;
        g->s += n;
        if (++g->txn_ticks >= BATCH_TICKS)
                r = flush(g);
        return r;
}

/* store_add_tick() writes one interval (n = 1, the column's default);
 * a rollup's n is set here, with plain SQL on a second connection, the
 * one thing the store API has no call for (the daemon's rollup code
 * will).  One transaction for all of them. */
static int set_rollup_n(struct gen *g, const char *path)
{
        sqlite3 *db = NULL;
        sqlite3_stmt *st = NULL;
        int r = -EIO;

        if (flush(g) < 0)
                return -EIO;
        if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
                goto out;
        sqlite3_busy_timeout(db, 5000);
        if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK ||
            sqlite3_prepare_v2(db, "UPDATE tick SET n = ?2 WHERE id = ?1", -1, &st, NULL) != SQLITE_OK)
                goto out;
        for (size_t i = 0; i < g->nrollups; i++) {
                sqlite3_bind_int64(st, 1, g->rollups[i][0]);
                sqlite3_bind_int64(st, 2, g->rollups[i][1]);
                if (sqlite3_step(st) != SQLITE_DONE)
                        goto out;
                sqlite3_reset(st);
        }
        if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK)
                r = 0;
        g->nrollups = 0;
out:
        if (r < 0)
                fprintf(stderr, "bench-reports-gen: setting tick.n: %s\n", db ? sqlite3_errmsg(db) : "cannot open");
        sqlite3_finalize(st);
        sqlite3_close(db);
        return r;
}

static double usl(double n, double lambda, double sigma, double kappa)
{
        return lambda * n / (1 + sigma * (n - 1) + kappa * n * (n - 1));
}

static int run_one(struct gen *g, const struct run_plan *p, int idx)
{
        char name[64], ways[16], cmd[128], iv[16];
        const char *wkey = p->bench == B_AIM7 ? "ways" : "threads";
        const char *kernel = p->patched ? "6.1.0-qspin3+" : "6.1.0-13-amd64";
        const char *cmdline = p->patched ? "BOOT_IMAGE=/vmlinuz-6.1.0-qspin3+ root=/dev/md0 ro quiet"
                                         : "BOOT_IMAGE=/vmlinuz-6.1.0-13-amd64 root=/dev/md0 ro quiet";
        struct store_kv tags[4], ctx[24];
        struct store_score score;
        struct store_total *tot = NULL;
        size_t ntot = 0, nctx = 0;
        double vals[_M_MAX * NCPU], x, wall;
        bool cpus[NCPU], metrics[_M_MAX];
        int64_t id, start_tick, start_t;
        int r;

        /* the tick the run's start snapshot closes: the last before it */
        r = emit_tick(g, 1);
        if (r < 0)
                return r;
        start_tick = g->last_tick;
        start_t = g->t;
        r = flush(g);
        if (r < 0)
                return r;

        snprintf(name, sizeof name, "%s-%s%d-r%d", p->bench == B_AIM7 ? "aim7" : "wis", wkey, p->ways, p->rep);
        snprintf(ways, sizeof ways, "%d", p->ways);
        if (p->bench == B_AIM7)
                snprintf(cmd, sizeof cmd, "./reaim -f workfile.shared -s %d -e %d -i %d -t", p->ways, p->ways,
                         p->ways);
        else
                snprintf(cmd, sizeof cmd, "./page_fault2_threads -t %d -s %d", p->ways, p->len_s);
        tags[0] = (struct store_kv){ "bench", p->bench == B_AIM7 ? "aim7" : "will-it-scale" };
        tags[1] = (struct store_kv){ "config", p->patched ? "qspin" : "base" };
        tags[2] = (struct store_kv){ (char *)wkey, ways };
        tags[3] = (struct store_kv){ "campaign", p->noisy ? "variance-check" : "sweep" };
        duration_format(NSEC_PER_SEC, iv, sizeof iv);
        /* what context_capture() records, sorted by key */
        ctx[nctx++] = (struct store_kv){ "arch", "x86_64" };
        ctx[nctx++] = (struct store_kv){ "cmdline", (char *)cmdline };
        ctx[nctx++] = (struct store_kv){ "cpufreq_governor", "performance" };
        ctx[nctx++] = (struct store_kv){ "cpus_online", "0-255" };
        ctx[nctx++] = (struct store_kv){ "interval", iv };
        ctx[nctx++] = (struct store_kv){ "kernel", (char *)kernel };
        ctx[nctx++] = (struct store_kv){ "kernel_version", p->patched ? "#3 SMP PREEMPT_DYNAMIC"
                                                                      : "#1 SMP PREEMPT_DYNAMIC Debian 6.1.55-1" };
        ctx[nctx++] = (struct store_kv){ "kvm.halt_poll_ns", "200000" };
        ctx[nctx++] = (struct store_kv){ "kvm_amd.avic", "0" };
        ctx[nctx++] = (struct store_kv){ "kvm_amd.npt", "1" };
        ctx[nctx++] = (struct store_kv){ "kvm_amd.pause_filter_count", "3000" };
        ctx[nctx++] = (struct store_kv){ "kvm_amd.pause_filter_thresh", "128" };
        ctx[nctx++] = (struct store_kv){ "metrics_unavailable", "none" };
        ctx[nctx++] = (struct store_kv){ "nodes_online", "0-3" };
        ctx[nctx++] = (struct store_kv){ "numa_balancing", "1" };
        ctx[nctx++] = (struct store_kv){ "perf_event_paranoid", "2" };
        ctx[nctx++] = (struct store_kv){ "scalemond_version", PACKAGE_VERSION };
        ctx[nctx++] = (struct store_kv){ "sched_autogroup", "1" };
        ctx[nctx++] = (struct store_kv){ "smt", "on" };
        ctx[nctx++] = (struct store_kv){ "thp_defrag", "madvise" };
        ctx[nctx++] = (struct store_kv){ "thp_enabled", "always" };

        r = store_run_insert(g->st, &(struct run_new){ .name = name, .host = g->host, .start = start_t,
                                                       .start_tick = start_tick, .command = cmd, .tags = tags,
                                                       .ntags = 4, .context = ctx, .ncontext = nctx },
                             &id);
        if (r < 0)
                return r;
        if (idx % 5 == 0) {
                r = store_run_add_mark(g->st, id, start_t + 5 * NSEC_PER_SEC, "warmup done");
                if (r < 0)
                        return r;
        }

        memset(g->acc, 0, (size_t)_M_MAX * NCPU * sizeof *g->acc);
        g->accumulate = true;
        set_run_load(g, p);
        for (int k = 0; k < p->len_s; k++) {
                r = emit_tick(g, 1);
                if (r < 0)
                        return r;
        }
        g->accumulate = false;
        r = flush(g);
        if (r < 0)
                return r;

        /* the totals, as runs.c's finish() makes them */
        for (int m = 0; m < _M_MAX; m++) {
                double scale = metric_table[m].source == SRC_PROCSTAT ? 0.01 : 1;
                for (int l = 0; l < NCPU; l++)
                        vals[m * NCPU + l] = (double)g->acc[m * NCPU + l] * scale;
                metrics[m] = true;
        }
        for (int c = 0; c < NCPU; c++)
                cpus[c] = true;
        r = runs_build_totals(vals, NCPU, &g->map, cpus, metrics, &tot, &ntot);
        if (r < 0)
                return r;

        /* jobs per minute (aim7) or operations per second (will-it-scale),
         * on the Universal Scalability Law; the patched kernel contends less */
        if (p->bench == B_AIM7)
                x = usl(p->ways, 2800, p->patched ? 0.012 : 0.02, p->patched ? 0.00012 : 0.0002);
        else
                x = usl(p->ways, 380000, p->patched ? 0.03 : 0.05, p->patched ? 0.0001 : 0.00025);
        x *= 1 + rnd_normal(g) * (p->noisy && p->patched ? 0.09 : 0.012);
        score = (struct store_score){ p->bench == B_AIM7 ? "jobs_per_min" : "ops_per_s", round(x * 10) / 10 };
        wall = (double)p->len_s + 0.05 * rnd_unit(g);
        {
                bool failed = idx % 97 == 42;
                r = store_run_finish(g->st, id,
                                     &(struct run_end){ .status = failed ? "failed" : "done", .end = g->t,
                                                        .end_tick = g->last_tick, .has_exit_status = true,
                                                        .exit_status = failed, .has_times = true, .wall_s = wall,
                                                        .user_s = wall * p->ways * g->user_share * 0.93,
                                                        .sys_s = wall * p->ways * (1 - g->user_share) * 0.93,
                                                        .length_ns = g->t - start_t,
                                                        .scores = &score, .nscores = failed ? 0 : 1,
                                                        .totals = tot, .ntotals = ntot });
        }
        g->totals += (int64_t)ntot;
        g->values += (int64_t)ntot;
        free(tot);
        set_background(g);
        return r;
}

/* Campaigns: a benchmark on one kernel, swept over five N, three repeats
 * each (or one N fifteen times: a variance check; on the patched kernel
 * its scores scatter), one campaign in each slot of the month. */
static size_t plan_runs(struct gen *g, int64_t span_s, int nruns, struct run_plan **ret)
{
        static const int aim7_ways[] = { 10, 20, 40, 80, 160 };
        static const int wis_threads[] = { 16, 32, 64, 128, 256 };
        struct run_plan *v = calloc((size_t)nruns + 32, sizeof *v);
        int rep[2][257] = { { 0 } }, per = 15, ncamp = MAX(1, (nruns + per - 1) / per);
        int64_t slot = span_s / ncamp;
        size_t n = 0;

        if (!v)
                return 0;
        for (int k = 0; k < ncamp && (int)n < nruns; k++) {
                enum bench b = rnd(g) % 10 < 7 ? B_AIM7 : B_WIS;
                bool patched = k % 2 == 1, noisy = k % 8 == 5;
                int64_t len = (int64_t)per * (65 + RUN_GAP_S + 2);
                int64_t s = (int64_t)k * slot + 120 + (int64_t)(rnd(g) % (uint64_t)MAX(1, slot - len - 240));
                for (int i = 0; i < per && (int)n < nruns; i++) {
                        struct run_plan *p = &v[n++];
                        p->bench = b;
                        p->patched = patched;
                        p->noisy = noisy;
                        p->ways = noisy ? (b == B_AIM7 ? 80 : 64) : b == B_AIM7 ? aim7_ways[i / 3] : wis_threads[i / 3];
                        p->rep = ++rep[b][p->ways];
                        p->len_s = 55 + (int)(rnd(g) % 11);
                        p->start_s = s;
                        s += p->len_s + RUN_GAP_S + 1;
                }
        }
        *ret = v;
        return n;
}

static int read_meta(struct store *st, const char *key, long long *ret)
{
        int64_t v;
        int r = store_meta_get_int(st, key, &v);
        if (r >= 0)
                *ret = v;
        return r;
}

/* The database at path, if this version made it for these days. */
static bool cached(const char *path, int days)
{
        struct store *st;
        long long v = 0, d = 0, done = 0;
        bool ok;

        if (access(path, F_OK) < 0 || store_open(path, STORE_READ, &st, NULL) < 0)
                return false;
        ok = read_meta(st, "bench_reports_generator", &v) >= 0 && v == GEN_VERSION &&
             read_meta(st, "bench_reports_days", &d) >= 0 && d == days &&
             read_meta(st, "bench_reports_complete", &done) >= 0 && done == 1;
        store_close(st);
        return ok;
}

static void fmt_bytes(double b, char *buf, size_t len)
{
        if (b >= 1024.0 * 1024 * 1024)
                snprintf(buf, len, "%.2f GiB", b / (1024.0 * 1024 * 1024));
        else
                snprintf(buf, len, "%.1f MiB", b / (1024.0 * 1024));
}

/* A line as bench-reports.sh prints its own: figure, value, target,
 * verdict. */
static void figure(const char *what, const char *value, const char *target, const char *verdict)
{
        if (*target)
                printf("  %-46s %16s  %-12s %s\n", what, value, target, verdict);
        else
                printf("  %-46s %16s\n", what, value);
}

static int report(const char *path, bool reused)
{
        struct store *st;
        long long days = 0, gen_ms = 0, raw_bytes = 0, raw_s = 0, rollup_s = 0, values = 0, raw_ticks = 0,
                  rollup_ticks = 0, totals = 0, nruns = 0, created = 0;
        char *err = NULL, v[64], when[40];
        double size = (double)file_bytes(path), cpu_h, raw_cpu_h, per_cpu_h, raw_per_cpu_h, proj_raw, proj_kept;
        size_t len = strlen(path) + 8;
        _cleanup_free_ char *wal = malloc(len);

        if (wal) {
                snprintf(wal, len, "%s-wal", path);
                size += (double)file_bytes(wal);
        }
        if (store_open(path, STORE_READ, &st, &err) < 0) {
                fprintf(stderr, "bench-reports-gen: %s\n", err);
                free(err);
                return 1;
        }
        read_meta(st, "bench_reports_days", &days);
        read_meta(st, "bench_reports_gen_ms", &gen_ms);
        read_meta(st, "bench_reports_raw_bytes", &raw_bytes);
        read_meta(st, "bench_reports_raw_s", &raw_s);
        read_meta(st, "bench_reports_rollup_s", &rollup_s);
        read_meta(st, "bench_reports_values", &values);
        read_meta(st, "bench_reports_raw_ticks", &raw_ticks);
        read_meta(st, "bench_reports_rollup_ticks", &rollup_ticks);
        read_meta(st, "bench_reports_totals", &totals);
        read_meta(st, "bench_reports_runs", &nruns);
        read_meta(st, "bench_reports_created", &created);
        store_close(st);

        time_format_local(created, when, sizeof when);
        printf("bench-reports: %d CPUs (%d nodes of %d) at 1 s, %lld days: %.1f d raw, %.1f d of 1-min rollups, "
               "%lld runs\n", NCPU, NNODE, PER_NODE, days, raw_s / 86400.0, rollup_s / 86400.0, nruns);
        printf("  %s, generator v%d: %s; generation took %.1f s\n", path, GEN_VERSION,
               reused ? "reused from the cache" : "generated now", gen_ms / 1000.0);
        printf("  %lld raw ticks, %lld rollup ticks, %lld non-zero values stored (%lld of them run totals); made %s\n",
               raw_ticks, rollup_ticks, values, totals, when);

        cpu_h = (double)(raw_s + rollup_s) / 3600.0 * NCPU;
        raw_cpu_h = (double)raw_s / 3600.0 * NCPU;
        per_cpu_h = size / cpu_h;
        raw_per_cpu_h = raw_cpu_h > 0 ? (double)raw_bytes / raw_cpu_h : 0;
        /* 30 days of 256 CPUs: at the raw era's rate throughout, and as
         * kept (this database's mix, scaled to 30 days) */
        proj_raw = raw_per_cpu_h * 30 * 24 * NCPU;
        proj_kept = per_cpu_h * 30 * 24 * NCPU;

        figure("figure", "value", "target", "verdict");
        snprintf(v, sizeof v, "%.0f", size);
        figure("database size, bytes (file + WAL)", v, "", "");
        fmt_bytes(size, v, sizeof v);
        figure("database size", v, "", "");
        snprintf(v, sizeof v, "%.2f", values ? size / (double)values : 0);
        figure("bytes per stored value (non-zero)", v, "", "");
        snprintf(v, sizeof v, "%.0f", per_cpu_h);
        figure("bytes per CPU-hour, whole database", v, "", "");
        snprintf(v, sizeof v, "%.0f", raw_per_cpu_h);
        figure("bytes per CPU-hour, raw 1 s era (runs incl.)", v, "", "");
        fmt_bytes(proj_kept, v, sizeof v);
        figure("30 d x 256 CPUs, 7 d raw + 1-min rollups", v, "<= 10 GiB", proj_kept <= TARGET_BYTES ? "PASS" : "MISS");
        fmt_bytes(proj_raw, v, sizeof v);
        figure("30 d x 256 CPUs, all raw at 1 s (projected)", v, "<= 10 GiB",
               proj_raw <= TARGET_BYTES ? "PASS" : "MISS");
        return 0;
}

static int generate(const char *path, int days)
{
        const int64_t span_s = (int64_t)days * 86400, raw_s = span_s * 7 / 30;
        int64_t now = now_realtime_ns(), start_ns = now_monotonic_ns(), raw_from_s, mid_bytes = 0;
        struct gen g = { .rng = 0x5ca1e3019e3779b9ULL };
        struct run_plan *plan = NULL;
        struct host_info h = { .machine_id = "bench-reports-256", .hostname = "epyc-2s-256",
                               .kernel = "6.1.0-13-amd64", .cpu_model = "AMD EPYC 7763 64-Core Processor",
                               .ncpus = NCPU, .nnodes = NNODE };
        bool avail[_M_MAX], online[NCPU];
        double scale[_M_MAX];
        int node_of[NCPU], nruns = (int)((int64_t)RUNS_PER_MONTH * days / 30);
        size_t np, next = 0;
        char *err = NULL;
        int r;

        g.t0 = (now / (60 * NSEC_PER_SEC) - span_s / 60) * 60 * NSEC_PER_SEC;    /* on a minute */
        g.t = g.t0;
        raw_from_s = span_s - raw_s;
        g.acc = calloc((size_t)_M_MAX * NCPU, sizeof *g.acc);
        if (!g.acc || cpumap_simulate(NCPU, PER_NODE, &g.map) < 0)
                return -ENOMEM;
        /* each CPU's share of the background; the first of a node also
         * takes interrupts and kernel threads */
        for (int c = 0; c < NCPU; c++)
                g.base[c] = 0.06 + 0.10 * rnd_unit(&g) + (c % PER_NODE == 0 ? 0.15 : 0);
        np = plan_runs(&g, span_s - 600, nruns, &plan);
        if (!plan)
                return -ENOMEM;

        unlink(path);
        if (store_open(path, STORE_WRITE, &g.st, &err) < 0) {
                fprintf(stderr, "bench-reports-gen: %s\n", err);
                free(err);
                return -EIO;
        }
        for (int m = 0; m < _M_MAX; m++) {
                avail[m] = true;
                scale[m] = metric_table[m].source == SRC_PROCSTAT ? 0.01 : 1;      /* USER_HZ 100 */
        }
        for (int c = 0; c < NCPU; c++) {
                node_of[c] = c / PER_NODE;
                online[c] = true;
        }
        r = store_metrics_sync(g.st, avail, NULL, scale);
        if (r >= 0)
                r = store_host_update(g.st, &h, g.t0, &g.host);
        if (r >= 0)
                r = store_topology_set(g.st, NCPU, node_of, online);
        if (r >= 0)
                r = store_meta_set_int(g.st, "interval_ns", NSEC_PER_SEC);
        if (r >= 0)
                r = store_add_event(g.st, g.t0, "start", -1, PACKAGE_VERSION);
        set_background(&g);

        while (r >= 0 && g.s < span_s) {
                int64_t run_at = next < np ? plan[next].start_s - 1 : INT64_MAX;       /* its start tick */

                if (g.s >= run_at) {
                        r = run_one(&g, &plan[next], (int)next);
                        next++;
                        continue;
                }
                if (g.s % 60 == 0)
                        set_background(&g);
                if (g.s < raw_from_s) {
                        /* a rollup: to the next minute, the next run's
                         * start tick or the raw era, whichever is first */
                        int64_t end = MIN(MIN((g.s / 60 + 1) * 60, run_at), raw_from_s);
                        r = emit_tick(&g, (int)(end - g.s));
                        continue;
                }
                if (!mid_bytes) {
                        /* the rollup era is written: its size, to tell
                         * the raw era's bytes from it at the end */
                        r = set_rollup_n(&g, path);
                        if (r >= 0)
                                r = store_checkpoint(g.st, true);
                        mid_bytes = file_bytes(path);
                        if (r < 0)
                                break;
                }
                r = emit_tick(&g, 1);
        }
        if (r >= 0)
                r = flush(&g);
        if (r >= 0 && g.nrollups)
                r = set_rollup_n(&g, path);
        if (r >= 0)
                r = store_checkpoint(g.st, true);
        if (r >= 0) {
                int64_t end_bytes = file_bytes(path);
                struct { const char *key; int64_t v; } meta[] = {
                        { "bench_reports_generator", GEN_VERSION },
                        { "bench_reports_days", days },
                        { "bench_reports_raw_s", raw_s },
                        { "bench_reports_rollup_s", span_s - raw_s },
                        { "bench_reports_raw_bytes", end_bytes - mid_bytes },
                        { "bench_reports_values", g.values },
                        { "bench_reports_raw_ticks", g.raw_ticks },
                        { "bench_reports_rollup_ticks", g.rollup_ticks },
                        { "bench_reports_totals", g.totals },
                        { "bench_reports_runs", (int64_t)np },
                        { "bench_reports_created", now },
                        { "bench_reports_gen_ms", (now_monotonic_ns() - start_ns) / NSEC_PER_MSEC },
                        { "bench_reports_complete", 1 },
                };
                for (size_t i = 0; i < ELEMENTSOF(meta) && r >= 0; i++)
                        r = store_meta_set_int(g.st, meta[i].key, meta[i].v);
        }
        if (r < 0)
                fprintf(stderr, "bench-reports-gen: writing %s: %s\n", path, store_errmsg(g.st));
        store_close(g.st);
        cpumap_clear(&g.map);
        free(g.acc);
        free(g.rollups);
        free(plan);
        return r;
}

int main(int argc, char **argv)
{
        static const char *const sfx[] = { "", "-wal", "-shm" };
        const char *path;
        _cleanup_free_ char *tmp = NULL;
        int days;

        if (argc != 3 || (days = atoi(argv[2])) < 1 || days > 365) {
                fprintf(stderr, "usage: bench-reports-gen PATH DAYS (1..365)\n");
                return 2;
        }
        path = argv[1];
        if (cached(path, days))
                return report(path, true);
        if (asprintf(&tmp, "%s.tmp", path) < 0)
                return 1;
        /* a stale one goes first: room for one database, not two */
        for (size_t i = 0; i < ELEMENTSOF(sfx); i++) {
                char old[4096];
                snprintf(old, sizeof old, "%s%s", path, sfx[i]);
                unlink(old);
        }
        fprintf(stderr, "bench-reports-gen: generating %s (%d days of %d CPUs; minutes at 30 days)...\n", path, days,
                NCPU);
        if (generate(tmp, days) < 0)
                return 1;
        if (rename(tmp, path) < 0) {
                fprintf(stderr, "bench-reports-gen: renaming %s: %s\n", tmp, strerror(errno));
                return 1;
        }
        return report(path, false);
}
