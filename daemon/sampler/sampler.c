/* sampler.c - one tick: every source read once, the deltas since the last
 * tick emitted, sorted for the store.
 *
 * Two tables keep the tick one path:
 *  - the operations (sampler-ops.h) give the raw reads: the real kernel
 *    (sampler_real_ops, below), simulated CPUs (simulate.c), or either
 *    with injected faults (fault.c, only in a --enable-test-seams build);
 *    chosen once, in sampler_new();
 *  - the sources (sources[] below: perf in sampler-perf.c; lock wait, BPF,
 *    in sampler-lockwait.c; /proc/stat, /proc/vmstat and numastat in
 *    sampler-procfs.c) each open, reconfigure,
 *    sample and close their own counters or files.  A tick is the hotplug
 *    check and then every source's sample(), in the table's order.
 */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fakekernel.h"
#include "fault.h"
#include "log.h"
#include "perf.h"
#include "sampler-internal.h"
#include "simulate.h"
#include "timeutil.h"


void tick_clear(struct tick *t)
{
        free(t->v);
        free(t->mux);
        free(t->ev);
        free(t->own);
        memset(t, 0, sizeof *t);
}


int sampler_grow(void **p, size_t *cap, size_t n, size_t size)
{
        void *q;
        if (n < *cap)
                return 0;
        q = realloc(*p, (*cap ? *cap * 2 : 64) * size);
        if (!q)
                return -ENOMEM;
        *p = q;
        *cap = *cap ? *cap * 2 : 64;
        return 0;
}


void sampler_set_why(struct sampler *s, int m, const char *fmt, ...)
{
        va_list ap;
        char *w = NULL;

        va_start(ap, fmt);
        if (vasprintf(&w, fmt, ap) < 0)
                w = NULL;
        va_end(ap);
        free(s->why[m]);
        s->why[m] = w;
        s->available[m] = false;
}

void sampler_clear_why(struct sampler *s, int m)
{
        free(s->why[m]);
        s->why[m] = NULL;
        s->available[m] = true;
}


/* ---- the real operations: this machine's kernel ---- */

static int real_refresh_online(void *ctx, struct cpumap *map) { return cpumap_refresh_online(map); }
static void real_begin_tick(void *ctx) { }
static int real_group_read(void *ctx, struct evgroup *g, int kind, struct evdelta *d) { return evgroup_read(g, d); }
static int real_numa_file(void *ctx, int n) { return n; }
static uint64_t real_numa_value(void *ctx, int n, int k, uint64_t raw) { return raw; }
static void real_free(void *ctx) { }

static int real_group_open(void *ctx, struct evgroup *g, int kind, int cpu, const struct evspec *specs, size_t n,
                           int *err)
{
        return evgroup_open(g, cpu, specs, n, err);
}

static int real_procstat(void *ctx, const char *buf, size_t len, const char **ret, size_t *ret_len)
{
        *ret = buf;
        *ret_len = len;
        return 0;
}

const struct sampler_ops sampler_real_ops = {
        .name = "real",
        .refresh_online = real_refresh_online,
        .begin_tick = real_begin_tick,
        .group_open = real_group_open,
        .group_read = real_group_read,
        .procstat = real_procstat,
        .numa_file = real_numa_file,
        .numa_value = real_numa_value,
        .free = real_free,
};

/* The tick's values grouped by metric, in place (a counting sort that
 * moves each value straight to its metric's bucket: no second buffer,
 * half a MiB at 1024 CPUs).  The order within a metric is not kept: the
 * store and the subscribers place a value by its location. */
static int sort_tick(struct sampler *s, struct tick *t)
{
        size_t next[_M_MAX + 1] = { 0 }, end[_M_MAX];

        (void)s;
        if (t->nv < 2)
                return 0;
        for (size_t i = 0; i < t->nv; i++)
                next[t->v[i].metric + 1]++;
        for (int m = 0; m < _M_MAX; m++) {
                next[m + 1] += next[m];
                end[m] = next[m + 1];
        }
        for (int m = 0; m < _M_MAX; m++)
                while (next[m] < end[m]) {
                        struct sample_value v = t->v[next[m]];
                        /* carry v to its bucket, taking the value there, until
                         * one that belongs here comes back */
                        while (v.metric != m) {
                                struct sample_value w = t->v[next[v.metric]];
                                t->v[next[v.metric]++] = v;
                                v = w;
                        }
                        t->v[next[m]++] = v;
                }
        return 0;
}

/* ---- the sources ---- */

/* The open runs' own cgroups, through the hook their owner set
 * (sampler_set_own()): a source like the others, read last. */
static int own_none(struct sampler *s, char **ret_err)
{
        return 0;
}

static int own_reconfigure(struct sampler *s, const bool *was_enabled, char **ret_err)
{
        return 0;
}

static int own_sample(struct sampler *s, struct tick *t, bool emit_ok)
{
        return emit_ok && s->own_fn ? s->own_fn(s->own_ud, t) : 0;
}

static void own_close(struct sampler *s)
{
}

static const struct sampler_source own_source = {
        .name = "own",
        .open = own_none,
        .reconfigure = own_reconfigure,
        .sample = own_sample,
        .close = own_close,
};

void sampler_set_own(struct sampler *s, sampler_own_fn fn, void *userdata)
{
        s->own_fn = fn;
        s->own_ud = userdata;
}

/* Sampled in this order: perf first, since a CPU whose groups it has to
 * reopen (-ENODEV) also loses its /proc/stat baseline.  Opened and
 * reconfigured from the last to the first: the files' availability is
 * decided before perf, which may fail. */
static const struct sampler_source *const sources[] = {
        &sampler_perf_source,
        &sampler_lockwait_source,
        &sampler_procstat_source,
        &sampler_vmstat_source,
        &sampler_numastat_source,
        &sampler_psi_source,            /* before schedstat: schedstat's close frees their state */
        &sampler_schedstat_source,
        &own_source,                    /* the runs' own cgroups */
        &sampler_self_source,           /* last: the tick's reads so far in its delta */
};
#define NSOURCES (sizeof sources / sizeof sources[0])

static int read_sources(struct sampler *s, struct tick *t, bool emit_ok);
static int read_sources_profiled(struct sampler *s, struct tick *t, bool emit_ok);

/* ---- the tick's profile (SCALEMON_TICK_PROFILE=1): the thread's CPU
 * time in each source's sample() and in the sort, summed, logged when the
 * sampler is freed.  Chosen once, in sampler_new(): read_sources_profiled()
 * instead of read_sources(). ---- */

#define PROFILE_ENV "SCALEMON_TICK_PROFILE"

struct tick_profile {
        uint64_t ticks;
        int64_t ns[NSOURCES + 2];               /* sources, hotplug check, sort */
};

static int64_t thread_cpu_ns(void)
{
        struct timespec ts;

        if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
                return 0;
        return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void profile_log(const struct sampler *s)
{
        const struct tick_profile *p = s->profile;
        char buf[512];
        size_t k = 0;
        int64_t sum = 0;

        if (!p || p->ticks == 0)
                return;
        for (size_t i = 0; i < NSOURCES + 2; i++)
                sum += p->ns[i];
        for (size_t i = 0; i < NSOURCES + 2 && k < sizeof buf; i++)
                k += (size_t)snprintf(buf + k, sizeof buf - k, " %s %.1f", i < NSOURCES ? sources[i]->name
                                      : i == NSOURCES ? "hotplug" : "sort",
                                      (double)p->ns[i] / 1e3 / (double)p->ticks);
        log_info("tick profile: %" PRIu64 " ticks, sampler %.1f us of CPU per tick:%s (us per tick)", p->ticks,
                 (double)sum / 1e3 / (double)p->ticks, buf);
}

void sampler_cpu_changed(struct sampler *s, int cpu, bool online)
{
        for (size_t i = 0; i < NSOURCES; i++)
                if (sources[i]->cpu_changed)
                        sources[i]->cpu_changed(s, cpu, online);
}

/* ---- life cycle ---- */

struct sampler *sampler_free(struct sampler *s)
{
        if (!s)
                return NULL;
        profile_log(s);
        free(s->profile);
        for (size_t i = 0; i < NSOURCES; i++)
                sources[i]->close(s);
        free(s->cpu);
        free(s->numa_prev);
        free(s->numa_primed);
        free(s->stat_vals);
        free(s->stat_present);
        free(s->stat_malformed);
        for (int m = 0; m < _M_MAX; m++)
                free(s->why[m]);
        free(s->tracefs);
        free(s->tracefs_why);
        free(s->totals);
        free(s->sysroot);
        free(s->procroot);
        if (s->ops)
                s->ops->free(s->ctx);
        cpumap_clear(&s->map);
        free(s);
        return NULL;
}

static void mark_disabled(struct sampler *s)
{
        for (int m = 0; m < _M_MAX; m++) {
                if (s->enabled[m])
                        continue;
                if (m == M_PAGE_FAULTS || m == M_PAGE_FAULTS_MINOR || m == M_PAGE_FAULTS_MAJOR)
                        sampler_set_why(s, m, "disabled: per-CPU fault events cost every page fault; "
                                        "per_cpu_faults = yes in scalemon.conf counts them (pgfault, pgmajfault: the machine's)");
                else
                        sampler_set_why(s, m, "disabled in the configuration");
        }
}

/* The raw reads and the CPU map: the machine's, or simulated; in a build
 * with test seams, a fake kernel's counters instead of perf's
 * (fakekernel.c) and faults wrapped around them, if asked for. */
static int choose_ops(struct sampler *s, const struct sampler_config *cfg, char **ret_err)
{
        struct sim *sim = NULL;
        int r;

        if (cfg->simulate_cpus > 0) {
                r = sim_new(s->sysroot, cfg->simulate_cpus, &sim);
                if (r >= 0) {
                        s->ops = &sim_ops;
                        s->ctx = sim;
                        s->simulated = true;
                        r = cpumap_simulate(cfg->simulate_cpus, SIM_CPUS_PER_NODE, &s->map);
                }
                if (r < 0) {
                        if (asprintf(ret_err, "cannot simulate %d CPUs from the CPUs online in "
                                     "%s/devices/system/cpu: %s", cfg->simulate_cpus, s->sysroot, strerror(-r)) < 0)
                                *ret_err = NULL;
                        return r;
                }
        } else {
                s->ops = fake_kernel_ops() ?: &sampler_real_ops;
                s->ctx = NULL;
                if (s->ops != &sampler_real_ops)
                        log_warning("perf counters from a %s: its counts are not the machine's", s->ops->name);
                r = cpumap_read(s->sysroot, &s->map);
                if (r < 0) {
                        if (asprintf(ret_err, "cannot read the CPU map from %s/devices/system/cpu: %s", s->sysroot,
                                     strerror(-r)) < 0)
                                *ret_err = NULL;
                        return r;
                }
        }
        return fault_wrap(&s->ops, &s->ctx);
}

/* Mount tracefs if it is nowhere (a fresh boot); the perf source says
 * why when it is still missing. */
static void mount_tracefs_once(void)
{
        _cleanup_free_ char *path = NULL, *why = NULL;

        if (tracefs_locate(true, &path, &why) == 1)
                log_info("mounted tracefs at %s", path);
}

int sampler_new(const struct sampler_config *cfg, struct sampler **ret, char **ret_err)
{
        struct sampler *s = calloc(1, sizeof *s);
        long hz;
        int r;

        if (!s)
                return -ENOMEM;
        s->stat.fd = s->vmstat.fd = -1;
        s->map.online_fd = s->map.node_online_fd = -1;
        s->sysroot = strdup(cfg->sysroot ? cfg->sysroot : "/sys");
        s->procroot = strdup(cfg->procroot ? cfg->procroot : "/proc");
        if (!s->sysroot || !s->procroot) {
                r = -ENOMEM;
                goto fail;
        }
        memcpy(s->enabled, cfg->enabled, sizeof s->enabled);
        s->mount_tracefs = cfg->mount_tracefs;

        r = choose_ops(s, cfg, ret_err);
        if (r < 0)
                goto fail;
        s->nloc = MAX(MAX(s->map.ncpus, s->map.nnodes), 1);
        s->cpu = calloc(s->map.ncpus, sizeof *s->cpu);
        s->stat_vals = calloc(s->map.ncpus, sizeof *s->stat_vals);
        s->stat_present = calloc(s->map.ncpus, sizeof *s->stat_present);
        s->stat_malformed = calloc(s->map.ncpus, sizeof *s->stat_malformed);
        s->numa_prev = calloc(s->map.nnodes, sizeof *s->numa_prev);
        s->numa_primed = calloc(s->map.nnodes, sizeof *s->numa_primed);
        s->totals = calloc((size_t)_M_MAX * s->nloc, sizeof *s->totals);
        if (!s->cpu || !s->stat_vals || !s->stat_present || !s->stat_malformed || !s->numa_prev || !s->numa_primed ||
            !s->totals) {
                r = -ENOMEM;
                goto fail;
        }
        s->read = read_sources;
        if (getenv(PROFILE_ENV) && streq(getenv(PROFILE_ENV), "1")) {
                s->profile = calloc(1, sizeof *s->profile);
                if (!s->profile) {
                        r = -ENOMEM;
                        goto fail;
                }
                s->read = read_sources_profiled;
        }
        hz = sysconf(_SC_CLK_TCK);
        s->clk_scale = 1.0 / (double)(hz > 0 ? hz : 100);

        /* tracefs before any source opens: the lock-wait source's BPF
         * tracepoints are looked up there too, and it opens before perf */
        if (s->mount_tracefs)
                mount_tracefs_once();
        for (size_t i = NSOURCES; i-- > 0;) {
                r = sources[i]->open(s, ret_err);
                if (r < 0)
                        goto fail;
        }
        mark_disabled(s);
        *ret = s;
        return 0;
fail:
        sampler_free(s);
        return r;
}

int sampler_reconfigure(struct sampler *s, const bool *enabled, char **ret_err)
{
        bool was[_M_MAX];
        int r;

        memcpy(was, s->enabled, sizeof was);
        memcpy(s->enabled, enabled, sizeof s->enabled);
        for (size_t i = NSOURCES; i-- > 0;) {
                r = sources[i]->reconfigure(s, was, ret_err);
                if (r < 0)
                        return r;
        }
        mark_disabled(s);
        return 0;
}

/* ---- the tick ---- */

/* Every source once, after the hotplug check, then the sort. */
static int read_sources(struct sampler *s, struct tick *t, bool emit_ok)
{
        int r = sampler_hotplug(s, t);

        for (size_t i = 0; i < NSOURCES && r >= 0; i++)
                r = sources[i]->sample(s, t, emit_ok);
        if (r >= 0)
                r = sort_tick(s, t);
        return r;
}

/* The same, with the thread's CPU time of each step added up. */
static int read_sources_profiled(struct sampler *s, struct tick *t, bool emit_ok)
{
        int64_t c0 = thread_cpu_ns(), c1;
        int r = sampler_hotplug(s, t);

        c1 = thread_cpu_ns();
        s->profile->ns[NSOURCES] += c1 - c0;
        for (size_t i = 0; i < NSOURCES && r >= 0; i++) {
                c0 = c1;
                r = sources[i]->sample(s, t, emit_ok);
                c1 = thread_cpu_ns();
                s->profile->ns[i] += c1 - c0;
        }
        if (r >= 0)
                r = sort_tick(s, t);
        s->profile->ns[NSOURCES + 1] += thread_cpu_ns() - c1;
        s->profile->ticks++;
        return r;
}

#define TILE_RESYNC_NS  NSEC_PER_MSEC  /* see sampler_sample() */

int sampler_sample(struct sampler *s, struct tick *t)
{
        int64_t mono = now_monotonic_ns(), real = now_realtime_ns();
        bool emit_ok = s->primed;
        int r;

        t->nv = t->nmux = t->nev = t->nown = 0;
        s->ops->begin_tick(s->ctx);
        r = s->read(s, t, emit_ok);
        if (r < 0)
                return r;
        t->t = s->last_real;
        t->dur = mono - s->last_mono;
        s->last_mono = mono;
        /* The ticks tile time: the next starts where this one ends, t +
         * dur, not at the wall-clock time read apart from the monotonic
         * one (the two reads differ by some 20 ns from tick to tick, more
         * under NTP slewing).  A run's bounds are its snapshot ticks' ends;
         * with the raw read, the tick after a run's end started up to tens
         * of ns before it, so that a query for the run's ticks by time
         * found that tick too once it was written, and explain's answer
         * changed seconds after the run.  The wall clock is followed again
         * when it moved away by more than TILE_RESYNC_NS (a step, or
         * slewing adding up). */
        s->last_real = llabs(real - (t->t + t->dur)) <= TILE_RESYNC_NS ? t->t + t->dur : real;
        s->primed = true;
        return emit_ok ? 1 : 0;
}

const struct cpumap *sampler_cpumap(const struct sampler *s) { return &s->map; }
bool sampler_available(const struct sampler *s, int m) { return s->available[m]; }
bool sampler_enabled(const struct sampler *s, int m) { return s->enabled[m]; }
const char *sampler_why(const struct sampler *s, int m) { return s->available[m] ? NULL : s->why[m]; }
int sampler_nloc(const struct sampler *s) { return s->nloc; }
int64_t sampler_last_mono(const struct sampler *s) { return s->last_mono; }

bool sampler_take_catalogue_change(struct sampler *s)
{
        bool changed = s->catalogue_changed;
        s->catalogue_changed = false;
        return changed;
}
const int64_t *sampler_totals(const struct sampler *s) { return s->totals; }

double sampler_scale(const struct sampler *s, int m)
{
        return metric_table[m].source == SRC_PROCSTAT ? s->clk_scale : metric_table[m].source == SRC_SELF ? 1e-9 : 1.0;
}

int sampler_tracepoint(const struct sampler *s, int m, uint64_t *ret_id)
{
        if (metric_table[m].source != SRC_TRACEPOINT || !s->tracefs || !s->available[m])
                return -ENOENT;
        if (s->tp_err[m] < 0)
                return s->tp_err[m];
        *ret_id = s->tp_id[m];
        return 0;
}

int sampler_count_available(const struct sampler *s)
{
        int k = 0;
        for (int m = 0; m < _M_MAX; m++)
                k += s->available[m];
        return k;
}

