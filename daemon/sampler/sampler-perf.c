/* sampler-perf.c - the sampler's perf source: a software group (software
 * events and tracepoints) and, where a PMU exists, a hardware group per
 * online CPU, opened and read through the sampler's operations
 * (sampler-ops.h).
 *
 * Availability is decided on the first online CPU: a metric that does not
 * open there is unavailable, with the reason, and left out everywhere.
 * CPU hotplug is normal: a CPU that goes offline has its groups closed;
 * one that comes back is reopened and emits nothing for its first
 * interval.  A group whose read() fails is reopened; an event that cannot
 * be reopened stops, with the reason.
 */
#include "config.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "perf.h"
#include "sampler-internal.h"

static int emit_event(struct tick *t, const char *kind, int cpu)
{
        if (sampler_grow((void **)&t->ev, &t->capev, t->nev, sizeof *t->ev) < 0)
                return -ENOMEM;
        t->ev[t->nev++] = (struct sampler_event){ .kind = kind, .cpu = cpu };
        return 0;
}

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
                sampler_set_why(s, m, "%s", s->tracefs_why ? s->tracefs_why : "tracefs not found");
        else if (err == -ENOENT)
                sampler_set_why(s, m, "tracepoint %s not found under %s/events (the kernel lacks it%s)", d->tracepoint,
                        s->tracefs, startswith(d->tracepoint, "kvm:") ? ", or the kvm module is not loaded" : "");
        else if (err == -EACCES || err == -EPERM)
                sampler_set_why(s, m, "cannot read the id of tracepoint %s in %s (permission denied: needs root or "
                        "CAP_DAC_READ_SEARCH)", d->tracepoint, s->tracefs);
        else
                sampler_set_why(s, m, "cannot read the id of tracepoint %s: %s", d->tracepoint, strerror(-err));
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
                        sampler_set_why(s, m, "stopped counting: after a failed read on cpu %d it could not be reopened: %s",
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

/* Why metric m did not open (err: its -errno; why: perf_why() of it). */
static void open_why(struct sampler *s, int m, int err, const char *why)
{
        const struct metric_def *d = &metric_table[m];

        if (d->filter && err == -EINVAL)
                sampler_set_why(s, m, "the kernel refused the filter '%s' on %s (%s)", d->filter, d->tracepoint,
                                strerror(-err));
        else if (d->source == SRC_PERF_HW && perf_classify(err) != PERF_ERR_PERMISSION)
                sampler_set_why(s, m, "no hardware PMU for this event (perf_event_open: %s)", strerror(-err));
        else
                sampler_set_why(s, m, "%s", why);
}

/* Decide availability on CPU first, spec by spec: each group is opened
 * there once and closed.  Counts the events that opened (*nopen) and
 * those refused for permission (*nperm); first_why gets "metric: reason"
 * of the first that failed. */
static int probe_first_cpu(struct sampler *s, int first, size_t *nopen, size_t *nperm, char *first_why, size_t len,
                           char **ret_err)
{
        const struct evspec *lists[_SAMPLER_GRP_MAX];
        size_t counts[_SAMPLER_GRP_MAX];
        int err[EVGROUP_MAX], r;
        char why[256];

        build_specs(s, false);
        lists[SAMPLER_GRP_SW] = s->sw_spec;
        counts[SAMPLER_GRP_SW] = s->nsw;
        lists[SAMPLER_GRP_HW] = s->hw_spec;
        counts[SAMPLER_GRP_HW] = s->nhw;
        for (int l = 0; l < _SAMPLER_GRP_MAX; l++) {
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
                                (*nopen)++;
                                continue;
                        }
                        perf_why(err[i], why, sizeof why);
                        if (perf_classify(err[i]) == PERF_ERR_PERMISSION)
                                (*nperm)++;
                        open_why(s, m, err[i], why);
                        if (!first_why[0])
                                snprintf(first_why, len, "%s: %s", metric_table[m].name, why);
                }
        }
        return 0;
}

static int open_perf(struct sampler *s, char **ret_err)
{
        int first = -1, r;
        size_t nperf = 0, nopen = 0, nperm = 0;
        char why[256], first_why[320] = "";

        for (int m = 0; m < _M_MAX; m++) {
                if (!metric_is_perf(&metric_table[m]) || !s->enabled[m])
                        continue;
                nperf++;
                sampler_clear_why(s, m);
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
        r = probe_first_cpu(s, first, &nopen, &nperm, first_why, sizeof first_why, ret_err);
        if (r < 0)
                return r;
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
static int perf_source_open(struct sampler *s, char **ret_err)
{
        resolve_tracepoints(s, s->mount_tracefs);
        return open_perf(s, ret_err);
}

/* Groups are reopened only if the perf metrics changed, and primed at
 * once, so the next tick has deltas from this moment rather than a lost
 * interval. */
static int perf_source_reconfigure(struct sampler *s, const bool *was_enabled, char **ret_err)
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

static void perf_source_close(struct sampler *s)
{
        if (s->cpu)
                close_perf(s);
}

/* ---- sampling ---- */

int sampler_hotplug(struct sampler *s, struct tick *t)
{
        int r = s->ops->refresh_online(s->ctx, &s->map);

        if (r <= 0)
                return r;
        for (int c = 0; c < s->map.ncpus; c++) {
                if (!s->map.online[c] && s->cpu[c].open) {
                        close_cpu(s, c);
                        sampler_cpu_changed(s, c, false);
                        log_cpu(LOG_NOTICE, c, "cpu %d went offline, skipping it", c);
                        r = emit_event(t, "cpu-offline", c);
                } else if (s->map.online[c] && !s->cpu[c].open) {
                        sampler_cpu_changed(s, c, true);        /* the other sources' baselines */
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
                r = sampler_emit(s, t, g->metric[i], g->cpu, d.value[i], d.not_counted);
                if (r < 0)
                        return r;
        }
        if (d.duty < 1.0) {
                if (sampler_grow((void **)&t->mux, &t->capmux, t->nmux, sizeof *t->mux) < 0)
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
                r = sampler_emit(s, t, g->metric[i], c, 0, true);
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

static int perf_source_sample(struct sampler *s, struct tick *t, bool emit_ok)
{
        int r = sample_cpus(s, t);

        if (r >= 0 && s->catalogue_changed)
                r = respec(s);
        return r;
}


const struct sampler_source sampler_perf_source = {
        "perf", perf_source_open, perf_source_reconfigure, perf_source_sample, perf_source_close,
        NULL,   /* sampler_hotplug() closes and reopens its groups itself */
};
