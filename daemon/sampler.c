/* sampler.c - one tick: read every perf group, /proc/stat, /proc/vmstat
 * and each node's numastat, and emit the deltas since the last tick.
 *
 * Per online CPU there is a software group (software events and
 * tracepoints) and, where a PMU exists, a hardware group.  Availability is
 * decided on the first online CPU: a metric that does not open there is
 * unavailable, with the reason, and left out everywhere.  CPU hotplug is
 * normal: a CPU that goes offline has its groups closed; one that comes
 * back is reopened and emits nothing for its first interval.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>

#include "evgroup.h"
#include "fault.h"
#include "lockwait.h"
#include "log.h"
#include "macro.h"
#include "perf.h"
#include "procfs.h"
#include "sampler.h"
#include "simulate.h"
#include "timeutil.h"

#define NUMA_KEYS 6
#define SWAP_SIZE(a, b) do { size_t _t = (a); (a) = (b); (b) = _t; } while (0)

/* lock wait values kept per CPU: counts by lock type, wait ns, lost */
enum { LW_VAL_WAIT_NS = LW_NTYPES, LW_VAL_LOST, LW_NVALS };

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
        struct sim *sim;                        /* NULL unless simulating (simulate.c) */
        bool enabled[_M_MAX];
        bool available[_M_MAX];
        char *why[_M_MAX];                      /* reason when not available */

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

        struct lockwait *lw;                    /* BPF lock wait (lockwait.c), NULL if unavailable */
        uint64_t (*lw_prev)[LW_NVALS];          /* [map.ncpus]: running totals at the last tick */
        uint64_t *lw_max;                       /* [map.ncpus]: the longest wait of this tick */
        bool lw_primed;
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

/* ---- perf groups ---- */

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

/* evgroup_open(), except for events a test pretends are gone (fault.c),
 * or its simulated twin.  kind: 0 the software group, 1 the hardware one. */
static int open_group(struct sampler *s, struct evgroup *g, int kind, int c, const struct evspec *spec, size_t n,
                      int *err)
{
        struct evspec keep[EVGROUP_MAX] = { 0 };
        int kerr[EVGROUP_MAX], r;
        size_t idx[EVGROUP_MAX], k = 0;

        for (size_t i = 0; i < n && i < EVGROUP_MAX; i++) {
                if (fault_vanished(spec[i].metric)) {
                        err[i] = -ENOENT;
                        continue;
                }
                idx[k] = i;
                keep[k++] = spec[i];
        }
        r = s->sim ? sim_group_open(s->sim, g, kind, c, keep, k, kerr) : evgroup_open(g, c, keep, k, kerr);
        for (size_t j = 0; j < k; j++)
                err[idx[j]] = r < 0 ? r : kerr[j];
        return r;
}

/* evgroup_read() of one of CPU g->cpu's groups, or its simulated twin. */
static int group_read(struct sampler *s, struct evgroup *g, struct evdelta *d)
{
        if (s->sim)
                return sim_group_read(s->sim, g, g == &s->cpu[g->cpu].hw, d);
        return evgroup_read(g, d);
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
                r = open_group(s, grp[k].g, k, c, grp[k].spec, grp[k].n, err);
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
                        r = open_group(s, &g, l, first, lists[l], counts[l], err);
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

/* ---- procfs sources ---- */

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

/* Availability of the /proc and /sys sources, from one read of each. */
static int probe_procfs(struct sampler *s)
{
        const char *numa_keys[NUMA_KEYS];
        uint64_t vals[_M_MAX];
        bool found[_M_MAX];
        int r;

        for (int m = 0; m < _M_MAX; m++) {
                const struct metric_def *d = &metric_table[m];
                if (metric_is_perf(d) || metric_is_bpf(d) || !s->enabled[m])
                        continue;
                clear_why(s, m);
                if (d->source == SRC_PROCSTAT && s->stat.fd < 0)
                        set_why(s, m, "cannot read %s/stat", s->procroot);
                if (d->source == SRC_VMSTAT && s->vmstat.fd < 0)
                        set_why(s, m, "cannot read %s/vmstat", s->procroot);
        }

        setup_vmstat_keys(s);
        if (s->vmstat.fd >= 0 && s->nvm > 0) {
                r = procfile_read(&s->vmstat, NULL);
                if (r >= 0)
                        r = kv_parse(s->vmstat.buf, s->vmstat.len, s->vm_key, s->nvm, vals, found);
                for (size_t i = 0; i < s->nvm; i++) {
                        int m = s->vm_metric[i];
                        if (r < 0)
                                set_why(s, m, "cannot parse %s/vmstat: %s", s->procroot, strerror(-r));
                        else if (!found[i])
                                set_why(s, m, "%s is not in %s/vmstat (kernel built without %s)", s->vm_key[i],
                                        s->procroot,
                                        startswith(s->vm_key[i], "thp_") ? "CONFIG_TRANSPARENT_HUGEPAGE"
                                        : startswith(s->vm_key[i], "numa_") ? "CONFIG_NUMA_BALANCING"
                                                                             : "CONFIG_MIGRATION");
                }
        }

        for (int k = 0; k < NUMA_KEYS; k++)
                numa_keys[k] = metric_table[numa_metrics[k]].key;
        {
                bool any_node = false, key_found[NUMA_KEYS] = { false };
                for (int n = 0; n < s->map.nnodes; n++) {
                        if (s->numa[n].fd < 0)
                                continue;
                        any_node = true;
                        r = procfile_read(&s->numa[n], NULL);
                        if (r >= 0)
                                r = kv_parse(s->numa[n].buf, s->numa[n].len, numa_keys, NUMA_KEYS, vals, found);
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
                                set_why(s, m, "%s is not in the nodes' numastat", numa_keys[k]);
                }
        }
        return 0;
}

static int open_procfs(struct sampler *s)
{
        char path[512];

        snprintf(path, sizeof path, "%s/stat", s->procroot);
        if (procfile_open(&s->stat, path) < 0)
                s->stat.fd = -1;
        snprintf(path, sizeof path, "%s/vmstat", s->procroot);
        if (procfile_open(&s->vmstat, path) < 0)
                s->vmstat.fd = -1;
        s->numa = calloc(s->map.nnodes, sizeof *s->numa);
        if (!s->numa)
                return -ENOMEM;
        for (int n = 0; n < s->map.nnodes; n++) {
                s->numa[n].fd = -1;
                if (!s->map.has_node[n])
                        continue;
                snprintf(path, sizeof path, "%s/devices/system/node/node%d/numastat", s->sysroot,
                         s->sim ? sim_numa_source(s->sim, n) : n);
                if (procfile_open(&s->numa[n], path) < 0)
                        s->numa[n].fd = -1;
        }
        return 0;
}

/* ---- lock wait (BPF, lockwait.c) ---- */

/* Load the program if a lock wait metric is enabled and it is not loaded
 * yet; if it cannot be, every lock wait metric gets the one reason. */
static void open_lockwait(struct sampler *s)
{
        _cleanup_free_ char *why = NULL;
        bool want = false;
        int r = 0;

        for (int m = 0; m < _M_MAX; m++)
                want |= metric_is_bpf(&metric_table[m]) && s->enabled[m];
        if (want && !s->lw) {
                if (!s->lw_prev)
                        s->lw_prev = calloc((size_t)s->map.ncpus, sizeof *s->lw_prev);
                if (!s->lw_max)
                        s->lw_max = calloc((size_t)s->map.ncpus, sizeof *s->lw_max);
                r = s->lw_prev && s->lw_max ? lockwait_open(s->map.ncpus, &s->lw, &why) : -ENOMEM;
                s->lw_primed = false;
        }
        for (int m = 0; m < _M_MAX; m++) {
                if (!metric_is_bpf(&metric_table[m]) || !s->enabled[m])
                        continue;
                if (s->lw)
                        clear_why(s, m);
                else
                        set_why(s, m, "%s", why ? why : r == -ENOMEM ? "out of memory" : "not loaded");
        }
}

static int sample_lockwait(struct sampler *s, struct tick *t, bool emit_ok)
{
        int nreal;

        if (!s->lw)
                return 0;
        nreal = lockwait_ncpus(s->lw);
        for (int c = 0; c < s->map.ncpus; c++) {
                /* simulated CPUs replay the real CPU c % nreal's slot, and
                 * read their own (unused) slot, as a big machine would */
                int src = s->sim ? c % nreal : c;
                uint64_t now[LW_NVALS], max;
                struct lw_cpu v;

                if (src >= nreal)
                        continue;
                lockwait_read_cpu(s->lw, c, &v, &max);
                if (src != c) {
                        lockwait_read_cpu(s->lw, src, &v, NULL);
                        max = s->lw_max[src];   /* taken when CPU src was read, above */
                }
                s->lw_max[c] = max;
                memcpy(now, v.count, sizeof v.count);
                now[LW_VAL_WAIT_NS] = v.wait_ns;
                now[LW_VAL_LOST] = v.lost_task + v.lost_caller;
                if (emit_ok && s->lw_primed && s->map.online[c]) {
                        static const int metric[LW_NVALS] = {
                                [LW_SPINLOCK] = M_LOCK_CONTENTIONS_SPINLOCK,
                                [LW_RWLOCK] = M_LOCK_CONTENTIONS_RWLOCK,
                                [LW_MUTEX] = M_LOCK_CONTENTIONS_MUTEX,
                                [LW_RWSEM_READ] = M_LOCK_CONTENTIONS_RWSEM_READ,
                                [LW_RWSEM_WRITE] = M_LOCK_CONTENTIONS_RWSEM_WRITE,
                                [LW_PERCPU_RWSEM] = M_LOCK_CONTENTIONS_PERCPU_RWSEM,
                                [LW_RTMUTEX] = M_LOCK_CONTENTIONS_RTMUTEX,
                                [LW_OTHER] = -1,        /* in lock_wait_ns, no count of its own */
                                [LW_VAL_WAIT_NS] = M_LOCK_WAIT_NS,
                                [LW_VAL_LOST] = M_LOCK_WAIT_LOST,
                        };
                        for (int k = 0; k < LW_NVALS; k++) {
                                int m = metric[k], r;
                                if (m < 0 || !s->enabled[m] || !s->available[m])
                                        continue;
                                r = emit(s, t, m, c, now[k] >= s->lw_prev[c][k] ? now[k] - s->lw_prev[c][k] : 0,
                                         false);
                                if (r < 0)
                                        return r;
                        }
                        if (s->enabled[M_LOCK_WAIT_MAX_NS] && s->available[M_LOCK_WAIT_MAX_NS] &&
                            emit(s, t, M_LOCK_WAIT_MAX_NS, c, max, false) < 0)
                                return -ENOMEM;
                }
                memcpy(s->lw_prev[c], now, sizeof now);
        }
        s->lw_primed = true;
        return 0;
}

struct lockwait *sampler_lockwait(const struct sampler *s)
{
        return s->lw;
}

/* ---- life cycle ---- */

struct sampler *sampler_free(struct sampler *s)
{
        if (!s)
                return NULL;
        if (s->cpu)
                close_perf(s);
        free(s->cpu);
        procfile_close(&s->stat);
        procfile_close(&s->vmstat);
        for (int n = 0; s->numa && n < s->map.nnodes; n++)
                procfile_close(&s->numa[n]);
        free(s->numa);
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
        lockwait_free(s->lw);
        free(s->lw_prev);
        free(s->lw_max);
        free(s->sysroot);
        free(s->procroot);
        sim_free(s->sim);
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

        if (cfg->simulate_cpus > 0) {
                r = sim_new(s->sysroot, cfg->simulate_cpus, &s->sim);
                if (r >= 0)
                        r = cpumap_simulate(cfg->simulate_cpus, SIM_CPUS_PER_NODE, &s->map);
                if (r < 0) {
                        if (asprintf(ret_err, "cannot simulate %d CPUs from the CPUs online in "
                                     "%s/devices/system/cpu: %s", cfg->simulate_cpus, s->sysroot, strerror(-r)) < 0)
                                *ret_err = NULL;
                        goto fail;
                }
        } else
                r = cpumap_read(s->sysroot, &s->map);
        if (r < 0) {
                if (asprintf(ret_err, "cannot read the CPU map from %s/devices/system/cpu: %s", s->sysroot,
                             strerror(-r)) < 0)
                        *ret_err = NULL;
                goto fail;
        }
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

        resolve_tracepoints(s, cfg->mount_tracefs);
        r = open_procfs(s);
        if (r < 0)
                goto fail;
        r = probe_procfs(s);
        if (r < 0)
                goto fail;
        r = open_perf(s, ret_err);
        if (r < 0)
                goto fail;
        open_lockwait(s);
        mark_disabled(s);
        *ret = s;
        return 0;
fail:
        sampler_free(s);
        return r;
}

int sampler_reconfigure(struct sampler *s, const bool *enabled, char **ret_err)
{
        bool perf_changed = false;
        int r;

        for (int m = 0; m < _M_MAX; m++)
                if (metric_is_perf(&metric_table[m]) && enabled[m] != s->enabled[m])
                        perf_changed = true;
        memcpy(s->enabled, enabled, sizeof s->enabled);
        r = probe_procfs(s);
        if (r < 0)
                return r;
        open_lockwait(s);
        if (perf_changed) {
                close_perf(s);
                r = open_perf(s, ret_err);
                if (r < 0)
                        return r;
                /* Prime the new groups now, so the next tick has deltas
                 * from this moment rather than a lost interval. */
                for (int c = 0; c < s->map.ncpus; c++) {
                        struct evdelta d;
                        if (!s->cpu[c].open)
                                continue;
                        if (s->cpu[c].sw.n)
                                group_read(s, &s->cpu[c].sw, &d);
                        if (s->cpu[c].hw.n)
                                group_read(s, &s->cpu[c].hw, &d);
                }
        }
        mark_disabled(s);
        return 0;
}

/* ---- the tick ---- */

static int sample_hotplug(struct sampler *s, struct tick *t)
{
        int r = s->sim ? sim_refresh_online(s->sim, &s->map) : cpumap_refresh_online(&s->map);

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

static int sample_group(struct sampler *s, struct tick *t, struct evgroup *g, const char *name, bool *stale)
{
        struct evdelta d;
        int r;

        if (g->n == 0)
                return 0;
        r = fault_read_error(g->cpu, name) ? -EIO : group_read(s, g, &d);
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
                t->mux[t->nmux++] = (struct mux_value){ .cpu = g->cpu, .grp = name, .duty = d.duty };
        }
        return 0;
}

/* A group whose read() fails (not for an offline CPU): its metrics are
 * not measured on that CPU this interval (NULL), and the CPU's groups are
 * reopened; an event that cannot be reopened stops, with the reason, and
 * the others go on. */
static int read_failed(struct sampler *s, struct tick *t, int c, struct evgroup *g, const char *name, int err)
{
        bool stat_primed = s->cpu[c].stat_primed;
        int r;

        if (!s->cpu[c].read_failed)
                log_cpu(LOG_WARNING, c, "cpu %d: reading its %s counters failed (%s); reopening them", c, name,
                        strerror(-err));
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

static int sample_perf(struct sampler *s, struct tick *t)
{
        if (s->sim)
                sim_begin_tick(s->sim);
        for (int c = 0; c < s->map.ncpus; c++) {
                struct cpu_state *cs = &s->cpu[c];
                bool stale = false, failed = false;
                int r;

                if (!cs->open)
                        continue;
                r = sample_group(s, t, &cs->sw, "sw", &stale);
                if (r < 0 && r != -ENODEV && r != -ENOMEM) {
                        r = read_failed(s, t, c, &cs->sw, "sw", r);
                        failed = true;
                }
                if (r >= 0 && cs->open && !failed) {
                        r = sample_group(s, t, &cs->hw, "hw", &stale);
                        if (r < 0 && r != -ENODEV && r != -ENOMEM) {
                                r = read_failed(s, t, c, &cs->hw, "hw", r);
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
                struct evdelta d;
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
                if (s->cpu[c].sw.n)
                        group_read(s, &s->cpu[c].sw, &d);
                if (s->cpu[c].hw.n)
                        group_read(s, &s->cpu[c].hw, &d);
        }
        return 0;
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
        buf = s->stat.buf;
        len = s->stat.len;
        if (s->sim) {
                r = sim_procstat(s->sim, s->stat.buf, s->stat.len, &buf, &len);
                if (r < 0)
                        return r;
        }
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
                        if (s->sim)
                                vals[k] = sim_numa_vary(s->sim, n, k, vals[k]);
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

int sampler_sample(struct sampler *s, struct tick *t)
{
        int64_t mono = now_monotonic_ns(), real = now_realtime_ns();
        bool emit_ok = s->primed;
        int r;

        t->nv = t->nmux = t->nev = 0;
        fault_refresh();
        r = sample_hotplug(s, t);
        if (r >= 0)
                r = sample_perf(s, t);
        if (r >= 0 && s->catalogue_changed)
                r = respec(s);
        if (r >= 0)
                r = sample_lockwait(s, t, emit_ok);
        if (r >= 0)
                r = sample_procstat(s, t, emit_ok);
        if (r >= 0)
                r = sample_vmstat(s, t, emit_ok);
        if (r >= 0)
                r = sample_numastat(s, t, emit_ok);
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
