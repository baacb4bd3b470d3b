/* sampler.c - one tick: read every perf group, /proc/stat, /proc/vmstat
 * and each node's numastat, and emit the deltas since the last tick.
 *
 * Per online CPU there is a software group (software events and
 * tracepoints) and, where a PMU exists, a hardware group.  Availability is
 * decided on the first online CPU: a metric that does not open there is
 * unavailable, with the reason, and left out everywhere.  CPU hotplug is
 * normal: a CPU that goes offline has its groups closed; one that comes
 * back is reopened and emits nothing for its first interval.
 *
 * Two tables keep the tick one path:
 *  - the operations (sampler-ops.h) give the raw reads: the real kernel,
 *    simulated CPUs, or either with injected faults; chosen once, in
 *    sampler_new();
 *  - the sources (sources[] below: perf, /proc/stat, /proc/vmstat,
 *    numastat) each open, reconfigure, sample and close their own files
 *    or counters; a tick is the hotplug check and then every source's
 *    sample(), in the table's order.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>

#include "evgroup.h"
#include "fault.h"
#include "log.h"
#include "macro.h"
#include "perf.h"
#include "procfs.h"
#include "sampler.h"
#include "sampler-ops.h"
#include "simulate.h"
#include "timeutil.h"

#define NUMA_KEYS 6
#define SWAP_SIZE(a, b) do { size_t _t = (a); (a) = (b); (b) = _t; } while (0)

struct cpu_state {
        struct evgroup sw, hw;
        bool open;                              /* groups opened for this CPU */
        bool read_failed;                       /* its last read() failed: said once */
        uint64_t stat_prev[PROCSTAT_FIELDS];
        bool stat_primed;
};

struct sampler {
        char *sysroot, *procroot;
        struct cpumap map;                      /* simulated with --simulate-cpus */
        const struct sampler_ops *ops;          /* the raw reads (sampler-ops.h), chosen once */
        void *ctx;                              /* their context */
        bool enabled[_M_MAX];
        bool available[_M_MAX];
        char *why[_M_MAX];                      /* reason when not available */

        bool mount_tracefs;                     /* sampler_config.mount_tracefs */
        char *tracefs;                          /* NULL: none */
        char *tracefs_why;
        uint64_t tp_id[_M_MAX];                 /* tracepoint ids, resolved once */
        int tp_err[_M_MAX];                     /* -errno resolving it, or 0 */

        struct evspec sw_spec[EVGROUP_MAX], hw_spec[EVGROUP_MAX];
        size_t nsw, nhw;
        struct cpu_state *cpu;                  /* [map.ncpus] */

        struct procfile stat, vmstat;
        struct procfile *numa;                  /* [map.nnodes], fd -1 if none */
        uint64_t (*stat_vals)[PROCSTAT_FIELDS]; /* [map.ncpus], scratch */
        bool *stat_present;                     /* [map.ncpus], scratch */

        const char *vm_key[_M_MAX];
        int vm_metric[_M_MAX];
        size_t nvm;
        uint64_t vm_prev[_M_MAX];
        bool vm_primed;

        uint64_t (*numa_prev)[NUMA_KEYS];       /* [map.nnodes] */
        bool *numa_primed;

        bool primed;
        bool catalogue_changed;                 /* a metric stopped: tell the manager */
        int64_t last_mono, last_real;
        double clk_scale;                       /* seconds per USER_HZ tick */

        int nloc;
        int64_t *totals;                        /* [_M_MAX * nloc] */

        struct sample_value *sorted;            /* spare buffer for sort_tick(), swapped with tick.v */
        size_t capsorted;
};

static const int numa_metrics[NUMA_KEYS] = { M_NUMA_HIT, M_NUMA_MISS, M_NUMA_FOREIGN,
                                             M_NUMA_LOCAL, M_NUMA_OTHER, M_INTERLEAVE_HIT };

void tick_clear(struct tick *t)
{
        free(t->v);
        free(t->mux);
        free(t->ev);
        memset(t, 0, sizeof *t);
}

static int grow(void **p, size_t *cap, size_t n, size_t size)
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

static int emit(struct sampler *s, struct tick *t, int metric, int loc, uint64_t value, bool null)
{
        if (grow((void **)&t->v, &t->capv, t->nv, sizeof *t->v) < 0)
                return -ENOMEM;
        t->v[t->nv++] = (struct sample_value){ .metric = (uint16_t)metric, .loc = loc,
                                               .value = (int64_t)value, .null = null };
        if (!null)
                s->totals[metric * s->nloc + loc] += (int64_t)value;
        return 0;
}

static int emit_event(struct tick *t, const char *kind, int cpu)
{
        if (grow((void **)&t->ev, &t->capev, t->nev, sizeof *t->ev) < 0)
                return -ENOMEM;
        t->ev[t->nev++] = (struct sampler_event){ .kind = kind, .cpu = cpu };
        return 0;
}

static void set_why(struct sampler *s, int m, const char *fmt, ...) _printf_(3, 4);
static void set_why(struct sampler *s, int m, const char *fmt, ...)
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

static void clear_why(struct sampler *s, int m)
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

/* ---- perf groups ---- */

static const char *const grp_name[_SAMPLER_GRP_MAX] = { "sw", "hw" };

static void resolve_tracepoints(struct sampler *s, bool try_mount)
{
        int r = tracefs_locate(try_mount, &s->tracefs, &s->tracefs_why);

        if (r == 1)
                log_info("mounted tracefs at %s", s->tracefs);
        for (int m = 0; m < _M_MAX; m++) {
                const struct metric_def *d = &metric_table[m];
                if (d->source != SRC_TRACEPOINT)
                        continue;
                s->tp_err[m] = s->tracefs ? tracepoint_id(s->tracefs, d->tracepoint, &s->tp_id[m]) : -ENOENT;
        }
}

static void tracepoint_why(struct sampler *s, int m)
{
        const struct metric_def *d = &metric_table[m];
        int err = s->tp_err[m];

        if (!s->tracefs)
                set_why(s, m, "%s", s->tracefs_why ? s->tracefs_why : "tracefs not found");
        else if (err == -ENOENT)
                set_why(s, m, "tracepoint %s not found under %s/events (the kernel lacks it%s)", d->tracepoint,
                        s->tracefs, startswith(d->tracepoint, "kvm:") ? ", or the kvm module is not loaded" : "");
        else if (err == -EACCES || err == -EPERM)
                set_why(s, m, "cannot read the id of tracepoint %s in %s (permission denied: needs root or "
                        "CAP_DAC_READ_SEARCH)", d->tracepoint, s->tracefs);
        else
                set_why(s, m, "cannot read the id of tracepoint %s: %s", d->tracepoint, strerror(-err));
}

/* The spec lists from what is enabled and, once decided, available. */
static void build_specs(struct sampler *s, bool only_available)
{
        s->nsw = s->nhw = 0;
        for (int m = 0; m < _M_MAX; m++) {
                const struct metric_def *d = &metric_table[m];
                struct evspec sp = { .metric = m, .filter = d->filter };

                if (!metric_is_perf(d) || !s->enabled[m])
                        continue;
                if (only_available && !s->available[m])
                        continue;
                if (d->source == SRC_TRACEPOINT) {
                        if (s->tp_err[m] < 0)
                                continue;
                        sp.type = PERF_TYPE_TRACEPOINT;
                        sp.config = s->tp_id[m];
                } else {
                        sp.type = d->source == SRC_PERF_HW ? PERF_TYPE_HARDWARE : PERF_TYPE_SOFTWARE;
                        sp.config = d->perf_config;
                }
                if (d->source == SRC_PERF_HW)
                        s->hw_spec[s->nhw++] = sp;
                else
                        s->sw_spec[s->nsw++] = sp;
        }
}

static void close_cpu(struct sampler *s, int c)
{
        evgroup_close(&s->cpu[c].sw);
        evgroup_close(&s->cpu[c].hw);
        s->cpu[c].open = false;
        s->cpu[c].stat_primed = false;
}

/* Read CPU c's groups once, results unused: a group just (re)opened then
 * has its deltas start now rather than at its first tick. */
static void prime_cpu(struct sampler *s, int c)
{
        struct evdelta d;

        if (s->cpu[c].sw.n)
                s->ops->group_read(s->ctx, &s->cpu[c].sw, SAMPLER_GRP_SW, &d);
        if (s->cpu[c].hw.n)
                s->ops->group_read(s->ctx, &s->cpu[c].hw, SAMPLER_GRP_HW, &d);
}

/* Open both groups on CPU c.  Members that fail here but opened on the
 * first CPU are logged and left out on this CPU; when the groups are
 * reopened after a failed read (stop_failed), such a metric stops
 * altogether: unavailable, with the reason. */
static int open_cpu_groups(struct sampler *s, int c, bool stop_failed)
{
        struct {
                struct evgroup *g;
                const struct evspec *spec;
                size_t n;
        } grp[2] = { { &s->cpu[c].sw, s->sw_spec, s->nsw }, { &s->cpu[c].hw, s->hw_spec, s->nhw } };
        int err[EVGROUP_MAX], r;
        char why[256];

        for (int k = 0; k < 2; k++) {
                r = s->ops->group_open(s->ctx, grp[k].g, k, c, grp[k].spec, grp[k].n, err);
                if (r < 0) {
                        if (k == 1)
                                evgroup_close(&s->cpu[c].sw);
                        return r;
                }
                for (size_t i = 0; i < grp[k].n; i++) {
                        int m = grp[k].spec[i].metric;
                        if (err[i] == 0 || perf_classify(err[i]) == PERF_ERR_OFFLINE)
                                continue;
                        perf_why(err[i], why, sizeof why);
                        if (!stop_failed || !s->available[m]) {
                                log_cpu(LOG_WARNING, c, "cpu %d: %s not opened: %s", c, metric_table[m].name, why);
                                continue;
                        }
                        set_why(s, m, "stopped counting: after a failed read on cpu %d it could not be reopened: %s",
                                c, why);
                        s->available[m] = false;
                        s->catalogue_changed = true;
                        log_metric(LOG_ERR, metric_table[m].name, "%s stopped: %s", metric_table[m].name, s->why[m]);
                }
        }
        s->cpu[c].open = true;
        s->cpu[c].stat_primed = false;
        return 0;
}

static int open_cpu(struct sampler *s, int c)
{
        return open_cpu_groups(s, c, false);
}

static int open_perf(struct sampler *s, char **ret_err)
{
        int first = -1, err[EVGROUP_MAX], r;
        size_t nperf = 0, nopen = 0, nperm = 0;
        char why[256], first_why[320] = "";

        for (int m = 0; m < _M_MAX; m++) {
                if (!metric_is_perf(&metric_table[m]))
                        continue;
                if (!s->enabled[m])
                        continue;
                nperf++;
                clear_why(s, m);
                if (metric_table[m].source == SRC_TRACEPOINT && s->tp_err[m] < 0)
                        tracepoint_why(s, m);
        }
        for (int c = 0; c < s->map.ncpus && first < 0; c++)
                if (s->map.online[c])
                        first = c;
        if (first < 0) {
                *ret_err = strdup("no CPU is online (read /sys/devices/system/cpu/online)");
                return -ENODEV;
        }

        /* Decide availability on the first online CPU, spec by spec. */
        build_specs(s, false);
        {
                struct evspec *lists[2] = { s->sw_spec, s->hw_spec };
                size_t counts[2] = { s->nsw, s->nhw };
                for (int l = 0; l < 2; l++) {
                        struct evgroup g;
                        r = s->ops->group_open(s->ctx, &g, l, first, lists[l], counts[l], err);
                        if (r < 0) {
                                perf_why(r, why, sizeof why);
                                *ret_err = strdup(why);
                                return r;
                        }
                        evgroup_close(&g);
                        for (size_t i = 0; i < counts[l]; i++) {
                                int m = lists[l][i].metric;
                                if (err[i] == 0) {
                                        nopen++;
                                        continue;
                                }
                                perf_why(err[i], why, sizeof why);
                                if (perf_classify(err[i]) == PERF_ERR_PERMISSION)
                                        nperm++;
                                if (metric_table[m].filter && err[i] == -EINVAL)
                                        set_why(s, m, "the kernel refused the exit-reason filter on %s (%s)",
                                                metric_table[m].tracepoint, strerror(-err[i]));
                                else if (metric_table[m].source == SRC_PERF_HW &&
                                         perf_classify(err[i]) != PERF_ERR_PERMISSION)
                                        set_why(s, m, "no hardware PMU for this event (perf_event_open: %s)",
                                                strerror(-err[i]));
                                else
                                        set_why(s, m, "%s", why);
                                if (!first_why[0])
                                        snprintf(first_why, sizeof first_why, "%s: %s", metric_table[m].name, why);
                        }
                }
        }
        /* Nothing opened because we may not: that is a set-up problem the
         * user must fix, not a machine without counters. */
        if (nperf > 0 && nopen == 0 && nperm > 0) {
                /* first_why is "metric: reason"; the reason names the
                 * sysctl and the capability */
                const char *reason = strstr(first_why, ": ");
                if (asprintf(ret_err, "cannot open any perf counter: %s", reason ? reason + 2 : first_why) < 0)
                        *ret_err = NULL;
                return -EACCES;
        }

        build_specs(s, true);
        for (int c = 0; c < s->map.ncpus; c++) {
                if (!s->map.online[c])
                        continue;
                r = open_cpu(s, c);
                if (r < 0) {
                        perf_why(r, why, sizeof why);
                        *ret_err = strdup(why);
                        return r;
                }
        }
        return 0;
}

static void close_perf(struct sampler *s)
{
        for (int c = 0; c < s->map.ncpus; c++)
                close_cpu(s, c);
}

/* The perf source: open (decide availability, open every online CPU's
 * groups), reconfigure, close.  Its tick is perf_sample() below. */
static int perfsrc_open(struct sampler *s, char **ret_err)
{
        resolve_tracepoints(s, s->mount_tracefs);
        return open_perf(s, ret_err);
}

/* Groups are reopened only if the perf metrics changed, and primed at
 * once, so the next tick has deltas from this moment rather than a lost
 * interval. */
static int perfsrc_reconfigure(struct sampler *s, const bool *was_enabled, char **ret_err)
{
        bool changed = false;
        int r;

        for (int m = 0; m < _M_MAX; m++)
                if (metric_is_perf(&metric_table[m]) && was_enabled[m] != s->enabled[m])
                        changed = true;
        if (!changed)
                return 0;
        close_perf(s);
        r = open_perf(s, ret_err);
        if (r < 0)
                return r;
        for (int c = 0; c < s->map.ncpus; c++)
                if (s->cpu[c].open)
                        prime_cpu(s, c);
        return 0;
}

static void perfsrc_close(struct sampler *s)
{
        if (s->cpu)
                close_perf(s);
}

/* ---- the /proc and /sys sources ---- */

/* Mark the enabled metrics of source src available, before a probe says
 * otherwise. */
static void clear_source(struct sampler *s, enum metric_source src)
{
        for (int m = 0; m < _M_MAX; m++)
                if (metric_table[m].source == src && s->enabled[m])
                        clear_why(s, m);
}

static int open_file(struct procfile *f, const char *root, const char *name)
{
        char path[512];

        snprintf(path, sizeof path, "%s/%s", root, name);
        if (procfile_open(f, path) < 0)
                f->fd = -1;
        return 0;
}

static int procstat_probe(struct sampler *s, const bool *was_enabled, char **ret_err)
{
        clear_source(s, SRC_PROCSTAT);
        for (int m = 0; m < _M_MAX; m++)
                if (metric_table[m].source == SRC_PROCSTAT && s->enabled[m] && s->stat.fd < 0)
                        set_why(s, m, "cannot read %s/stat", s->procroot);
        return 0;
}

static int procstat_open(struct sampler *s, char **ret_err)
{
        open_file(&s->stat, s->procroot, "stat");
        return procstat_probe(s, NULL, ret_err);
}

static void procstat_close(struct sampler *s)
{
        procfile_close(&s->stat);
}

static void setup_vmstat_keys(struct sampler *s)
{
        s->nvm = 0;
        for (int m = 0; m < _M_MAX; m++)
                if (metric_table[m].source == SRC_VMSTAT && s->enabled[m]) {
                        s->vm_key[s->nvm] = metric_table[m].key;
                        s->vm_metric[s->nvm] = m;
                        s->nvm++;
                }
        s->vm_primed = false;
}

/* Availability of the /proc/vmstat metrics, from one read. */
static int vmstat_probe(struct sampler *s, const bool *was_enabled, char **ret_err)
{
        uint64_t vals[_M_MAX];
        bool found[_M_MAX];
        int r;

        clear_source(s, SRC_VMSTAT);
        for (int m = 0; m < _M_MAX; m++)
                if (metric_table[m].source == SRC_VMSTAT && s->enabled[m] && s->vmstat.fd < 0)
                        set_why(s, m, "cannot read %s/vmstat", s->procroot);
        setup_vmstat_keys(s);
        if (s->vmstat.fd < 0 || s->nvm == 0)
                return 0;
        r = procfile_read(&s->vmstat, NULL);
        if (r >= 0)
                r = kv_parse(s->vmstat.buf, s->vmstat.len, s->vm_key, s->nvm, vals, found);
        for (size_t i = 0; i < s->nvm; i++) {
                int m = s->vm_metric[i];
                if (r < 0)
                        set_why(s, m, "cannot parse %s/vmstat: %s", s->procroot, strerror(-r));
                else if (!found[i])
                        set_why(s, m, "%s is not in %s/vmstat (kernel built without %s)", s->vm_key[i], s->procroot,
                                startswith(s->vm_key[i], "thp_") ? "CONFIG_TRANSPARENT_HUGEPAGE"
                                : startswith(s->vm_key[i], "numa_") ? "CONFIG_NUMA_BALANCING"
                                                                     : "CONFIG_MIGRATION");
        }
        return 0;
}

static int vmstat_open(struct sampler *s, char **ret_err)
{
        open_file(&s->vmstat, s->procroot, "vmstat");
        return vmstat_probe(s, NULL, ret_err);
}

static void vmstat_close(struct sampler *s)
{
        procfile_close(&s->vmstat);
}

static void numa_keys(const char **keys)
{
        for (int k = 0; k < NUMA_KEYS; k++)
                keys[k] = metric_table[numa_metrics[k]].key;
}

/* Availability of the numastat metrics, from one read of each node's. */
static int numastat_probe(struct sampler *s, const bool *was_enabled, char **ret_err)
{
        const char *keys[NUMA_KEYS];
        uint64_t vals[NUMA_KEYS];
        bool found[NUMA_KEYS], any_node = false, key_found[NUMA_KEYS] = { false };
        int r;

        clear_source(s, SRC_NUMASTAT);
        numa_keys(keys);
        for (int n = 0; n < s->map.nnodes; n++) {
                if (s->numa[n].fd < 0)
                        continue;
                any_node = true;
                r = procfile_read(&s->numa[n], NULL);
                if (r >= 0)
                        r = kv_parse(s->numa[n].buf, s->numa[n].len, keys, NUMA_KEYS, vals, found);
                if (r < 0)
                        continue;
                for (int k = 0; k < NUMA_KEYS; k++)
                        key_found[k] |= found[k];
        }
        for (int k = 0; k < NUMA_KEYS; k++) {
                int m = numa_metrics[k];
                if (!s->enabled[m])
                        continue;
                if (!any_node)
                        set_why(s, m, "no node numastat under %s/devices/system/node (kernel without CONFIG_NUMA)",
                                s->sysroot);
                else if (!key_found[k])
                        set_why(s, m, "%s is not in the nodes' numastat", keys[k]);
        }
        return 0;
}

/* The nodes are those of the map at start: one that appears later is
 * not read. */
static int numastat_open(struct sampler *s, char **ret_err)
{
        char name[64];

        s->numa = calloc(s->map.nnodes, sizeof *s->numa);
        if (!s->numa)
                return -ENOMEM;
        for (int n = 0; n < s->map.nnodes; n++) {
                s->numa[n].fd = -1;
                if (!s->map.has_node[n])
                        continue;
                snprintf(name, sizeof name, "devices/system/node/node%d/numastat", s->ops->numa_file(s->ctx, n));
                open_file(&s->numa[n], s->sysroot, name);
        }
        return numastat_probe(s, NULL, ret_err);
}

static void numastat_close(struct sampler *s)
{
        for (int n = 0; s->numa && n < s->map.nnodes; n++)
                procfile_close(&s->numa[n]);
        free(s->numa);
        s->numa = NULL;
}

/* ---- sampling ---- */

static int sample_hotplug(struct sampler *s, struct tick *t)
{
        int r = s->ops->refresh_online(s->ctx, &s->map);

        if (r <= 0)
                return r;
        for (int c = 0; c < s->map.ncpus; c++) {
                if (!s->map.online[c] && s->cpu[c].open) {
                        close_cpu(s, c);
                        log_cpu(LOG_NOTICE, c, "cpu %d went offline, skipping it", c);
                        r = emit_event(t, "cpu-offline", c);
                } else if (s->map.online[c] && !s->cpu[c].open) {
                        r = open_cpu(s, c);
                        if (r == -ENODEV)
                                continue;
                        if (r < 0)
                                return r;
                        log_cpu(LOG_NOTICE, c, "cpu %d came online, counting it again", c);
                        r = emit_event(t, "cpu-online", c);
                }
                if (r < 0)
                        return r;
        }
        return 0;
}

static int sample_group(struct sampler *s, struct tick *t, struct evgroup *g, int kind, bool *stale)
{
        struct evdelta d;
        int r;

        if (g->n == 0)
                return 0;
        r = s->ops->group_read(s->ctx, g, kind, &d);
        if (r < 0)
                return r;
        if (!d.valid)
                return 0;
        if (d.enabled_ns == 0) {        /* detached by a quick offline/online */
                *stale = true;
                return 0;
        }
        for (size_t i = 0; i < g->n; i++) {
                r = emit(s, t, g->metric[i], g->cpu, d.value[i], d.not_counted);
                if (r < 0)
                        return r;
        }
        if (d.duty < 1.0) {
                if (grow((void **)&t->mux, &t->capmux, t->nmux, sizeof *t->mux) < 0)
                        return -ENOMEM;
                t->mux[t->nmux++] = (struct mux_value){ .cpu = g->cpu, .grp = grp_name[kind], .duty = d.duty };
        }
        return 0;
}

/* A group whose read() fails (not for an offline CPU): its metrics are
 * not measured on that CPU this interval (NULL), and the CPU's groups are
 * reopened; an event that cannot be reopened stops, with the reason, and
 * the others go on. */
static int read_failed(struct sampler *s, struct tick *t, int c, struct evgroup *g, int kind, int err)
{
        bool stat_primed = s->cpu[c].stat_primed;
        int r;

        if (!s->cpu[c].read_failed)
                log_cpu(LOG_WARNING, c, "cpu %d: reading its %s counters failed (%s); reopening them", c,
                        grp_name[kind], strerror(-err));
        s->cpu[c].read_failed = true;
        for (size_t i = 0; i < g->n; i++) {
                r = emit(s, t, g->metric[i], c, 0, true);
                if (r < 0)
                        return r;
        }
        close_cpu(s, c);
        r = open_cpu_groups(s, c, true);
        s->cpu[c].stat_primed = stat_primed;   /* /proc/stat is not affected */
        return r == -ENODEV ? 0 : r;
}

static int sample_cpus(struct sampler *s, struct tick *t)
{
        for (int c = 0; c < s->map.ncpus; c++) {
                struct cpu_state *cs = &s->cpu[c];
                bool stale = false, failed = false;
                int r;

                if (!cs->open)
                        continue;
                r = sample_group(s, t, &cs->sw, SAMPLER_GRP_SW, &stale);
                if (r < 0 && r != -ENODEV && r != -ENOMEM) {
                        r = read_failed(s, t, c, &cs->sw, SAMPLER_GRP_SW, r);
                        failed = true;
                }
                if (r >= 0 && cs->open && !failed) {
                        r = sample_group(s, t, &cs->hw, SAMPLER_GRP_HW, &stale);
                        if (r < 0 && r != -ENODEV && r != -ENOMEM) {
                                r = read_failed(s, t, c, &cs->hw, SAMPLER_GRP_HW, r);
                                failed = true;
                        }
                }
                if (r >= 0 && !failed && cs->read_failed) {
                        log_cpu(LOG_NOTICE, c, "cpu %d: its counters read again", c);
                        cs->read_failed = false;
                }
                if (r == -ENODEV || stale) {
                        close_cpu(s, c);
                        r = open_cpu(s, c);
                        if (r == -ENODEV)
                                r = 0;
                }
                if (r < 0)
                        return r;
        }
        return 0;
}

/* A metric stopped during this tick: leave it out of every CPU's groups.
 * The groups are reopened and read once at once, so the next interval's
 * deltas start now. */
static int respec(struct sampler *s)
{
        build_specs(s, true);
        for (int c = 0; c < s->map.ncpus; c++) {
                bool stat_primed = s->cpu[c].stat_primed;
                int r;

                if (!s->cpu[c].open)
                        continue;
                close_cpu(s, c);
                r = open_cpu(s, c);
                s->cpu[c].stat_primed = stat_primed;
                if (r == -ENODEV)
                        continue;
                if (r < 0)
                        return r;
                prime_cpu(s, c);
        }
        return 0;
}

static int perfsrc_sample(struct sampler *s, struct tick *t, bool emit_ok)
{
        int r = sample_cpus(s, t);

        if (r >= 0 && s->catalogue_changed)
                r = respec(s);
        return r;
}

static int sample_procstat(struct sampler *s, struct tick *t, bool emit_ok)
{
        const char *buf;
        size_t len;
        int r;

        if (s->stat.fd < 0)
                return 0;
        r = procfile_read(&s->stat, "cpu");
        if (r < 0)
                return r;
        r = s->ops->procstat(s->ctx, s->stat.buf, s->stat.len, &buf, &len);
        if (r < 0)
                return r;
        r = procstat_parse(buf, len, s->map.ncpus, s->stat_vals, s->stat_present);
        if (r < 0)
                return r;
        for (int c = 0; c < s->map.ncpus; c++) {
                struct cpu_state *cs = &s->cpu[c];
                if (!s->stat_present[c]) {
                        cs->stat_primed = false;
                        continue;
                }
                if (emit_ok && cs->stat_primed)
                        for (int m = M_CPU_USER; m <= M_CPU_GUEST; m++) {
                                int f = metric_table[m].field;
                                uint64_t now = s->stat_vals[c][f], prev = cs->stat_prev[f];
                                if (!s->enabled[m] || !s->available[m])
                                        continue;
                                r = emit(s, t, m, c, now >= prev ? now - prev : 0, false);
                                if (r < 0)
                                        return r;
                        }
                memcpy(cs->stat_prev, s->stat_vals[c], sizeof cs->stat_prev);
                cs->stat_primed = true;
        }
        return 0;
}

static int sample_vmstat(struct sampler *s, struct tick *t, bool emit_ok)
{
        uint64_t vals[_M_MAX];
        bool found[_M_MAX];
        int r;

        if (s->vmstat.fd < 0 || s->nvm == 0)
                return 0;
        r = procfile_read(&s->vmstat, NULL);
        if (r >= 0)
                r = kv_parse(s->vmstat.buf, s->vmstat.len, s->vm_key, s->nvm, vals, found);
        if (r < 0)
                return r;
        for (size_t i = 0; i < s->nvm; i++) {
                int m = s->vm_metric[i];
                if (!found[i])
                        continue;
                if (emit_ok && s->vm_primed && s->available[m]) {
                        r = emit(s, t, m, 0, vals[i] >= s->vm_prev[i] ? vals[i] - s->vm_prev[i] : 0, false);
                        if (r < 0)
                                return r;
                }
                s->vm_prev[i] = vals[i];
        }
        s->vm_primed = true;
        return 0;
}

static int sample_numastat(struct sampler *s, struct tick *t, bool emit_ok)
{
        const char *keys[NUMA_KEYS];
        uint64_t vals[NUMA_KEYS];
        bool found[NUMA_KEYS];
        int r;

        for (int k = 0; k < NUMA_KEYS; k++)
                keys[k] = metric_table[numa_metrics[k]].key;
        for (int n = 0; n < s->map.nnodes; n++) {
                if (s->numa[n].fd < 0)
                        continue;
                r = procfile_read(&s->numa[n], NULL);
                if (r >= 0)
                        r = kv_parse(s->numa[n].buf, s->numa[n].len, keys, NUMA_KEYS, vals, found);
                if (r < 0)
                        return r;
                for (int k = 0; k < NUMA_KEYS; k++) {
                        int m = numa_metrics[k];
                        if (!found[k])
                                continue;
                        vals[k] = s->ops->numa_value(s->ctx, n, k, vals[k]);
                        if (emit_ok && s->numa_primed[n] && s->enabled[m] && s->available[m]) {
                                uint64_t p = s->numa_prev[n][k];
                                r = emit(s, t, m, n, vals[k] >= p ? vals[k] - p : 0, false);
                                if (r < 0)
                                        return r;
                        }
                        s->numa_prev[n][k] = vals[k];
                }
                s->numa_primed[n] = true;
        }
        return 0;
}

/* Order a tick's values by (metric, loc), the store's key order after
 * the tick: each flush then appends to the sample b-tree instead of
 * seeking back and forth across metrics.  Emitted CPU by CPU, they are
 * already by loc within a metric, so a stable counting sort by metric
 * does it in one pass. */
static int sort_tick(struct sampler *s, struct tick *t)
{
        size_t start[_M_MAX + 1] = { 0 };
        struct sample_value *v;

        if (t->nv < 2)
                return 0;
        if (s->capsorted < t->capv) {
                v = realloc(s->sorted, t->capv * sizeof *v);
                if (!v)
                        return -ENOMEM;
                s->sorted = v;
                s->capsorted = t->capv;
        }
        for (size_t i = 0; i < t->nv; i++)
                start[t->v[i].metric + 1]++;
        for (int m = 0; m < _M_MAX; m++)
                start[m + 1] += start[m];
        for (size_t i = 0; i < t->nv; i++)
                s->sorted[start[t->v[i].metric]++] = t->v[i];
        v = t->v;
        t->v = s->sorted;
        s->sorted = v;
        SWAP_SIZE(t->capv, s->capsorted);
        return 0;
}

/* ---- the sources ---- */

/* A source of metrics.  Each keeps its state in struct sampler and owns
 * the metrics of its enum metric_source values.  To add one: its state
 * below struct sampler's, these four functions, and an entry in
 * sources[]; its raw reads, if a simulation or a test must replace them,
 * go through struct sampler_ops. */
struct source {
        const char *name;
        /* Open its files or counters and decide which of its enabled
         * metrics are available (set_why() for the others).  Fails only
         * on errors that must stop the daemon, with *ret_err. */
        int (*open)(struct sampler *s, char **ret_err);
        /* s->enabled changed (was_enabled: before): decide again. */
        int (*reconfigure)(struct sampler *s, const bool *was_enabled, char **ret_err);
        /* One tick: emit() the deltas since the last call, when emit_ok. */
        int (*sample)(struct sampler *s, struct tick *t, bool emit_ok);
        /* Close what open() opened; also after a failed or partial open. */
        void (*close)(struct sampler *s);
};

/* Sampled in this order: perf first, since a CPU whose groups it has to
 * reopen (-ENODEV) also loses its /proc/stat baseline.  Opened and
 * reconfigured from the last to the first: the files' availability is
 * decided before perf, which may fail. */
static const struct source sources[] = {
        { "perf", perfsrc_open, perfsrc_reconfigure, perfsrc_sample, perfsrc_close },
        { "procstat", procstat_open, procstat_probe, sample_procstat, procstat_close },
        { "vmstat", vmstat_open, vmstat_probe, sample_vmstat, vmstat_close },
        { "numastat", numastat_open, numastat_probe, sample_numastat, numastat_close },
};
#define NSOURCES (sizeof sources / sizeof sources[0])

/* ---- life cycle ---- */

struct sampler *sampler_free(struct sampler *s)
{
        if (!s)
                return NULL;
        for (size_t i = 0; i < NSOURCES; i++)
                sources[i].close(s);
        free(s->cpu);
        free(s->numa_prev);
        free(s->numa_primed);
        free(s->stat_vals);
        free(s->stat_present);
        for (int m = 0; m < _M_MAX; m++)
                free(s->why[m]);
        free(s->tracefs);
        free(s->tracefs_why);
        free(s->totals);
        free(s->sorted);
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
        for (int m = 0; m < _M_MAX; m++)
                if (!s->enabled[m])
                        set_why(s, m, "disabled in the configuration");
}

/* The raw reads and the CPU map: the machine's, or simulated; then,
 * in a build with test seams, faults wrapped around them if asked for. */
static int choose_ops(struct sampler *s, const struct sampler_config *cfg, char **ret_err)
{
        struct sim *sim = NULL;
        int r;

        if (cfg->simulate_cpus > 0) {
                r = sim_new(s->sysroot, cfg->simulate_cpus, &sim);
                if (r >= 0) {
                        s->ops = &sim_ops;
                        s->ctx = sim;
                        r = cpumap_simulate(cfg->simulate_cpus, SIM_CPUS_PER_NODE, &s->map);
                }
                if (r < 0) {
                        if (asprintf(ret_err, "cannot simulate %d CPUs from the CPUs online in "
                                     "%s/devices/system/cpu: %s", cfg->simulate_cpus, s->sysroot, strerror(-r)) < 0)
                                *ret_err = NULL;
                        return r;
                }
        } else {
                s->ops = &sampler_real_ops;
                s->ctx = NULL;
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

int sampler_new(const struct sampler_config *cfg, struct sampler **ret, char **ret_err)
{
        struct sampler *s = calloc(1, sizeof *s);
        long hz;
        int r;

        if (!s)
                return -ENOMEM;
        s->stat.fd = s->vmstat.fd = -1;
        s->map.online_fd = -1;
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
        s->numa_prev = calloc(s->map.nnodes, sizeof *s->numa_prev);
        s->numa_primed = calloc(s->map.nnodes, sizeof *s->numa_primed);
        s->totals = calloc((size_t)_M_MAX * s->nloc, sizeof *s->totals);
        if (!s->cpu || !s->stat_vals || !s->stat_present || !s->numa_prev || !s->numa_primed || !s->totals) {
                r = -ENOMEM;
                goto fail;
        }
        hz = sysconf(_SC_CLK_TCK);
        s->clk_scale = 1.0 / (double)(hz > 0 ? hz : 100);

        for (size_t i = NSOURCES; i-- > 0;) {
                r = sources[i].open(s, ret_err);
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
                r = sources[i].reconfigure(s, was, ret_err);
                if (r < 0)
                        return r;
        }
        mark_disabled(s);
        return 0;
}

/* ---- the tick ---- */

int sampler_sample(struct sampler *s, struct tick *t)
{
        int64_t mono = now_monotonic_ns(), real = now_realtime_ns();
        bool emit_ok = s->primed;
        int r;

        t->nv = t->nmux = t->nev = 0;
        s->ops->begin_tick(s->ctx);
        r = sample_hotplug(s, t);
        for (size_t i = 0; i < NSOURCES && r >= 0; i++)
                r = sources[i].sample(s, t, emit_ok);
        if (r >= 0)
                r = sort_tick(s, t);
        if (r < 0)
                return r;
        t->t = s->last_real;
        t->dur = mono - s->last_mono;
        s->last_mono = mono;
        s->last_real = real;
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
        return metric_table[m].source == SRC_PROCSTAT ? s->clk_scale : 1.0;
}

int sampler_count_available(const struct sampler *s)
{
        int k = 0;
        for (int m = 0; m < _M_MAX; m++)
                k += s->available[m];
        return k;
}
