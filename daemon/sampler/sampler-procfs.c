/* sampler-procfs.c - the sampler's sources in /proc and /sys: the cpuN
 * lines of /proc/stat, /proc/vmstat, and each node's numastat.  The files
 * are read under the configured roots (sampler_config.procroot, .sysroot),
 * so tests run them on a fixture tree (tests/unit/test-sampler.c).  Each file
 * is kept open and re-read from its start every tick.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "sampler-internal.h"

static const int numa_metrics[NUMA_KEYS] = { M_NUMA_HIT, M_NUMA_MISS, M_NUMA_FOREIGN,
                                             M_NUMA_LOCAL, M_NUMA_OTHER, M_INTERLEAVE_HIT };

/* ---- the /proc and /sys sources ---- */

/* Mark the enabled metrics of source src available, before a probe says
 * otherwise. */
static void clear_source(struct sampler *s, enum metric_source src)
{
        for (int m = 0; m < _M_MAX; m++)
                if (metric_table[m].source == src && s->enabled[m])
                        sampler_clear_why(s, m);
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
                        sampler_set_why(s, m, "cannot read %s/stat", s->procroot);
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

static int setup_vmstat_keys(struct sampler *s)
{
        s->nvm = 0;
        for (int m = 0; m < _M_MAX; m++)
                if (metric_table[m].source == SRC_VMSTAT && s->enabled[m]) {
                        s->vm_key[s->nvm] = metric_table[m].key;
                        s->vm_metric[s->nvm] = m;
                        s->nvm++;
                }
        s->vm_primed = false;
        s->vm_want = 0;
        s->vmstat.ask = 0;
        return kvset_init(&s->vm_set, s->vm_key, s->nvm);      /* -E2BIG: raise KVSET_MAX */
}

/* One keyed read of a "name value" file: the file is read until the lines
 * of the `want` keys found by the probe are in (usually one read that
 * ends there), and parsed once. */
struct kv_read {
        const struct kvset *set;
        uint64_t *vals;
        bool *found;
        size_t want;
        int r;                  /* kvset_parse()'s result on buf[0..parsed) */
        size_t parsed, end;
};

static bool kv_done(const char *buf, size_t len, void *userdata)
{
        struct kv_read *x = userdata;

        x->r = kvset_parse(x->set, buf, len, x->vals, x->found, &x->end);
        x->parsed = len;
        return x->r < 0 || (size_t)x->r >= x->want;
}

/* Returns the number of keys found, or a negative errno.  With
 * learn_ask, the next read asks for about as much as held them. */
static int kv_read(struct procfile *f, const struct kvset *set, size_t want, bool learn_ask, uint64_t *vals,
                   bool *found)
{
        struct kv_read x = { .set = set, .vals = vals, .found = found, .want = want, .r = -1, .parsed = SIZE_MAX };
        int r = procfile_read_until(f, kv_done, &x);

        if (r < 0)
                return r;
        if (x.parsed != f->len)         /* the end of the file came first */
                x.r = kvset_parse(set, f->buf, f->len, vals, found, &x.end);
        if (learn_ask && x.r >= 0 && (size_t)x.r >= want && want > 0)
                f->ask = (x.end + 256 + 63) & ~(size_t)63;     /* room for the values to grow */
        return x.r;
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
                        sampler_set_why(s, m, "cannot read %s/vmstat", s->procroot);
        r = setup_vmstat_keys(s);
        if (r < 0) {
                if (asprintf(ret_err, "%zu /proc/vmstat metrics, more than KVSET_MAX", s->nvm) < 0)
                        *ret_err = NULL;
                return r;
        }
        if (s->vmstat.fd < 0 || s->nvm == 0)
                return 0;
        r = kv_read(&s->vmstat, &s->vm_set, s->nvm, false, vals, found);
        if (r >= 0)
                s->vm_want = (size_t)r;
        for (size_t i = 0; i < s->nvm; i++) {
                int m = s->vm_metric[i];
                if (r < 0)
                        sampler_set_why(s, m, "cannot parse %s/vmstat: %s", s->procroot, strerror(-r));
                else if (!found[i])
                        sampler_set_why(s, m, "%s is not in %s/vmstat (kernel built without %s)", s->vm_key[i], s->procroot,
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
        kvset_init(&s->numa_set, keys, NUMA_KEYS);     /* NUMA_KEYS <= KVSET_MAX */
        for (int n = 0; n < s->map.nnodes; n++) {
                if (s->numa[n].fd < 0)
                        continue;
                any_node = true;
                r = kv_read(&s->numa[n], &s->numa_set, NUMA_KEYS, false, vals, found);
                if (r < 0)
                        continue;
                for (int k = 0; k < NUMA_KEYS; k++)
                        key_found[k] |= found[k];
        }
        s->numa_want = 0;
        for (int k = 0; k < NUMA_KEYS; k++)
                s->numa_want += key_found[k];
        for (int k = 0; k < NUMA_KEYS; k++) {
                int m = numa_metrics[k];
                if (!s->enabled[m])
                        continue;
                if (!any_node)
                        sampler_set_why(s, m, "no node numastat under %s/devices/system/node (kernel without CONFIG_NUMA)",
                                s->sysroot);
                else if (!key_found[k])
                        sampler_set_why(s, m, "%s is not in the nodes' numastat", keys[k]);
        }
        return 0;
}

static void open_numastat(struct sampler *s, int n)
{
        char name[64];

        snprintf(name, sizeof name, "devices/system/node/node%d/numastat", s->ops->numa_file(s->ctx, n));
        open_file(&s->numa[n], s->sysroot, name);
}

/* The nodes of the map at start; one that comes online later is opened
 * by sample_numastat(). */
static int numastat_open(struct sampler *s, char **ret_err)
{
        s->numa = calloc(s->map.nnodes, sizeof *s->numa);
        s->numa_bad = calloc(s->map.nnodes, sizeof *s->numa_bad);
        s->numa_new = calloc(s->map.nnodes, sizeof *s->numa_new);
        if (!s->numa || !s->numa_bad || !s->numa_new)
                return -ENOMEM;
        for (int n = 0; n < s->map.nnodes; n++) {
                s->numa[n].fd = -1;
                if (s->map.has_node[n])
                        open_numastat(s, n);
        }
        return numastat_probe(s, NULL, ret_err);
}

static void numastat_close(struct sampler *s)
{
        for (int n = 0; s->numa && n < s->map.nnodes; n++)
                procfile_close(&s->numa[n]);
        free(s->numa);
        free(s->numa_bad);
        free(s->numa_new);
        s->numa = NULL;
        s->numa_bad = s->numa_new = NULL;
}

/* CPU c's /proc/stat line was malformed: its values are not measured
 * this interval (NULL), and its baseline is kept, so the next interval's
 * delta carries both and its totals stay exact.  Said once until it parses
 * again. */
static int procstat_malformed(struct sampler *s, struct tick *t, int c, bool emit_ok)
{
        struct cpu_state *cs = &s->cpu[c];

        if (!cs->stat_bad)
                log_cpu(LOG_WARNING, c, "cpu %d: its line in %s/stat is malformed; its cpu_* values are not measured "
                        "until it parses again", c, s->procroot);
        cs->stat_bad = true;
        if (!emit_ok || !cs->stat_primed)
                return 0;
        for (int m = M_CPU_USER; m <= M_CPU_GUEST; m++)
                if (s->enabled[m] && s->available[m]) {
                        int r = sampler_emit(s, t, m, c, 0, true);
                        if (r < 0)
                                return r;
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
        r = s->ops->procstat(s->ctx, s->stat.buf, s->stat.len, &buf, &len);
        if (r < 0)
                return r;
        r = procstat_parse(buf, len, s->map.ncpus, s->stat_vals, s->stat_present, s->stat_malformed);
        if (r < 0)
                return r;
        for (int c = 0; c < s->map.ncpus; c++) {
                struct cpu_state *cs = &s->cpu[c];
                if (s->stat_malformed[c]) {
                        r = procstat_malformed(s, t, c, emit_ok);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (!s->stat_present[c]) {
                        cs->stat_primed = false;
                        continue;
                }
                if (cs->stat_bad) {
                        log_cpu(LOG_NOTICE, c, "cpu %d: its line in %s/stat parses again", c, s->procroot);
                        cs->stat_bad = false;
                }
                if (emit_ok && cs->stat_primed)
                        for (int m = M_CPU_USER; m <= M_CPU_GUEST; m++) {
                                int f = metric_table[m].field;
                                uint64_t now = s->stat_vals[c][f], prev = cs->stat_prev[f];
                                if (!s->enabled[m] || !s->available[m])
                                        continue;
                                r = sampler_emit(s, t, m, c, now >= prev ? now - prev : 0, false);
                                if (r < 0)
                                        return r;
                        }
                memcpy(cs->stat_prev, s->stat_vals[c], sizeof cs->stat_prev);
                cs->stat_primed = true;
        }
        return 0;
}

/* Emit NULL (not measured) for the enabled, available metrics in ms[0..n)
 * at loc, when a delta would have been emitted. */
static int emit_nulls(struct sampler *s, struct tick *t, const int *ms, size_t n, int loc)
{
        for (size_t i = 0; i < n; i++)
                if (s->enabled[ms[i]] && s->available[ms[i]]) {
                        int r = sampler_emit(s, t, ms[i], loc, 0, true);
                        if (r < 0)
                                return r;
                }
        return 0;
}

/* A read or parse of /proc/vmstat that failed loses only its values for
 * the interval: they are NULL, the baseline is kept (the next interval's
 * deltas carry both), said once until it reads again. */
static int sample_vmstat(struct sampler *s, struct tick *t, bool emit_ok)
{
        uint64_t vals[_M_MAX];
        bool found[_M_MAX];
        int r;

        if (s->vmstat.fd < 0 || s->nvm == 0)
                return 0;
        r = kv_read(&s->vmstat, &s->vm_set, s->vm_want, true, vals, found);
        if (r < 0) {
                if (!s->vm_bad)
                        log_warning("cannot read %s/vmstat (%s); its values are not measured until it reads again",
                                    s->procroot, strerror(-r));
                s->vm_bad = true;
                return emit_ok && s->vm_primed ? emit_nulls(s, t, s->vm_metric, s->nvm, 0) : 0;
        }
        if (s->vm_bad)
                log_notice("%s/vmstat reads again", s->procroot);
        s->vm_bad = false;
        for (size_t i = 0; i < s->nvm; i++) {
                int m = s->vm_metric[i];
                if (!found[i])
                        continue;
                if (emit_ok && s->vm_primed && s->available[m]) {
                        r = sampler_emit(s, t, m, 0, vals[i] >= s->vm_prev[i] ? vals[i] - s->vm_prev[i] : 0, false);
                        if (r < 0)
                                return r;
                }
                s->vm_prev[i] = vals[i];
        }
        s->vm_primed = true;
        return 0;
}

/* Nodes that came online since the last tick (node/online): their
 * numastat opened, primed this tick, counted from the next. */
static void numastat_new_nodes(struct sampler *s)
{
        int r = cpumap_refresh_nodes(&s->map, s->sysroot, s->numa_new);

        if (r < 0) {
                if (!s->nodes_bad)
                        log_warning("cannot follow the nodes in %s/devices/system/node/online (%s); "
                                    "a node that comes online is not counted", s->sysroot, strerror(-r));
                s->nodes_bad = true;
                return;
        }
        s->nodes_bad = false;
        for (int n = 0; r > 0 && n < s->map.nnodes; n++)
                if (s->numa_new[n]) {
                        open_numastat(s, n);
                        s->numa_primed[n] = false;
                        log_notice("node %d came online, counting its numastat%s", n,
                                   s->numa[n].fd < 0 ? " (but it has none)" : "");
                }
}

/* One node's numastat; a read or parse that failed loses only that
 * node's values for the interval, as for /proc/vmstat. */
static int sample_node(struct sampler *s, struct tick *t, bool emit_ok, int n)
{
        uint64_t vals[NUMA_KEYS];
        bool found[NUMA_KEYS];
        int r = kv_read(&s->numa[n], &s->numa_set, s->numa_want, false, vals, found);

        if (r < 0) {
                if (!s->numa_bad[n])
                        log_warning("cannot read node %d's numastat (%s); its values are not measured until it reads "
                                    "again", n, strerror(-r));
                s->numa_bad[n] = true;
                return emit_ok && s->numa_primed[n] ? emit_nulls(s, t, numa_metrics, NUMA_KEYS, n) : 0;
        }
        if (s->numa_bad[n])
                log_notice("node %d's numastat reads again", n);
        s->numa_bad[n] = false;
        for (int k = 0; k < NUMA_KEYS; k++) {
                int m = numa_metrics[k];
                if (!found[k])
                        continue;
                vals[k] = s->ops->numa_value(s->ctx, n, k, vals[k]);
                if (emit_ok && s->numa_primed[n] && s->enabled[m] && s->available[m]) {
                        uint64_t p = s->numa_prev[n][k];
                        r = sampler_emit(s, t, m, n, vals[k] >= p ? vals[k] - p : 0, false);
                        if (r < 0)
                                return r;
                }
                s->numa_prev[n][k] = vals[k];
        }
        s->numa_primed[n] = true;
        return 0;
}

static int sample_numastat(struct sampler *s, struct tick *t, bool emit_ok)
{
        numastat_new_nodes(s);
        for (int n = 0; n < s->map.nnodes; n++) {
                int r;
                if (s->numa[n].fd < 0)
                        continue;
                r = sample_node(s, t, emit_ok, n);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Order a tick's values by (metric, loc), the store's key order after
 * the tick: each flush then appends to the sample b-tree instead of
 * seeking back and forth across metrics.  Emitted CPU by CPU, they are
 * already by loc within a metric, so a stable counting sort by metric
 * does it in one pass. */

const struct sampler_source sampler_procstat_source = {
        "procstat", procstat_open, procstat_probe, sample_procstat, procstat_close,
        NULL,   /* its per-CPU baselines are reset with the CPU's perf groups (close_cpu, open_cpu) */
};
const struct sampler_source sampler_vmstat_source = {
        "vmstat", vmstat_open, vmstat_probe, sample_vmstat, vmstat_close, NULL,
};
const struct sampler_source sampler_numastat_source = {
        "numastat", numastat_open, numastat_probe, sample_numastat, numastat_close, NULL,
};
