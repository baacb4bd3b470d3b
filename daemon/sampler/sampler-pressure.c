/* sampler-pressure.c - the sampler's scheduler-pressure sources:
 *  - "psi": /proc/pressure/{cpu,memory,io}, the total= of their "some" and
 *    "full" lines (microseconds during which some task, or every non-idle
 *    task, stalled on the resource), as system counters;
 *  - "schedstat": /proc/schedstat's cpuN lines, field 8 (run_delay: the
 *    nanoseconds tasks spent runnable on that CPU's run queue), as a cpu
 *    counter.  The kernel adds to it at every switch, in the scheduler's
 *    own clock (sched_info_arrive/depart), so one pread() per tick reads
 *    the exact sum that a BPF program on sched_wakeup/sched_switch would
 *    rebuild at the cost of two events per switch.  It needs
 *    CONFIG_SCHEDSTATS; unlike most schedstat fields it counts without the
 *    kernel.sched_schedstats sysctl (those are yld_count .. ttwu_local).
 *    Without the file (no CONFIG_SCHEDSTATS), and only then, the same sum
 *    is rebuilt from the tasks' own run_delay by BPF on sched_switch
 *    (runqwait.c), at the cost of one program run per switch; it is
 *    loaded only while runqueue_wait_ns is enabled, and only for the real
 *    /proc.
 * Both read under sampler_config.procroot and are kept open, as the files
 * of sampler-procfs.c; tests/unit/test-sampler.c runs them on a fixture tree.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "runqwait.h"
#include "sampler-internal.h"

#define PSI_FILES 3

struct pressure_state {
        struct procfile psi[PSI_FILES];
        uint64_t psi_prev[PSI_FILES][2];
        bool psi_primed[PSI_FILES];

        struct procfile schedstat;
        struct runqwait *rq_bpf;                /* without schedstat: BPF, or NULL */
        uint64_t *rq_prev, *rq_vals;            /* [map.ncpus] */
        bool *rq_primed, *rq_present;
};

static const char *const psi_names[PSI_FILES] = { "cpu", "memory", "io" };

static int psi_index(const char *key)
{
        for (int i = 0; i < PSI_FILES; i++)
                if (streq(psi_names[i], key))
                        return i;
        return -1;
}

static void open_file(struct procfile *f, const char *root, const char *name)
{
        char path[512];

        snprintf(path, sizeof path, "%s/%s", root, name);
        if (procfile_open(f, path) < 0)
                f->fd = -1;
}

static struct pressure_state *state_new(int ncpus)
{
        struct pressure_state *p = calloc(1, sizeof *p);

        if (!p)
                return NULL;
        for (int i = 0; i < PSI_FILES; i++)
                p->psi[i].fd = -1;
        p->schedstat.fd = -1;
        p->rq_prev = calloc(ncpus, sizeof *p->rq_prev);
        p->rq_vals = calloc(ncpus, sizeof *p->rq_vals);
        p->rq_primed = calloc(ncpus, sizeof *p->rq_primed);
        p->rq_present = calloc(ncpus, sizeof *p->rq_present);
        if (!p->rq_prev || !p->rq_vals || !p->rq_primed || !p->rq_present) {
                free(p->rq_prev);
                free(p->rq_vals);
                free(p->rq_primed);
                free(p->rq_present);
                free(p);
                return NULL;
        }
        return p;
}

/* ---- psi ---- */

/* A pressure file is "some ...\nfull ...\n": read no further than the
 * full line (one read, with no second one to see the end of the file);
 * a kernel without one (cpu, before 5.13) is read to the end. */
static bool psi_done(const char *buf, size_t len, void *userdata)
{
        return (len > 5 && memcmp(buf, "full ", 5) == 0) || memmem(buf, len, "\nfull ", 6);
}

static int psi_probe(struct sampler *s, const bool *was_enabled, char **ret_err)
{
        struct pressure_state *p = s->pressure;
        uint64_t totals[PSI_FILES][2];
        bool found[PSI_FILES][2] = { { false } };
        int err[PSI_FILES];

        for (int i = 0; i < PSI_FILES; i++) {
                err[i] = -ENOENT;
                if (p->psi[i].fd < 0)
                        continue;
                err[i] = procfile_read(&p->psi[i], NULL);
                if (err[i] >= 0)
                        err[i] = psi_parse(p->psi[i].buf, p->psi[i].len, totals[i], found[i]);
                p->psi_primed[i] = false;
        }
        for (int m = 0; m < _M_MAX; m++) {
                const struct metric_def *d = &metric_table[m];
                int i;

                if (d->source != SRC_PSI || !s->enabled[m])
                        continue;
                i = psi_index(d->key);
                if (p->psi[i].fd < 0)
                        sampler_set_why(s, m, "no %s/pressure/%s: kernel without CONFIG_PSI, or PSI off "
                                        "(psi=0 on the kernel command line, or CONFIG_PSI_DEFAULT_DISABLED without psi=1)",
                                        s->procroot, d->key);
                else if (err[i] < 0)
                        sampler_set_why(s, m, "cannot parse %s/pressure/%s: %s", s->procroot, d->key, strerror(-err[i]));
                else if (!found[i][d->field])
                        sampler_set_why(s, m, "no \"%s\" line in %s/pressure/%s", d->field ? "full" : "some",
                                        s->procroot, d->key);
                else
                        sampler_clear_why(s, m);
        }
        return 0;
}

static int psi_open(struct sampler *s, char **ret_err)
{
        char name[64];

        if (!s->pressure) {
                s->pressure = state_new(s->map.ncpus);
                if (!s->pressure)
                        return -ENOMEM;
        }
        for (int i = 0; i < PSI_FILES; i++) {
                snprintf(name, sizeof name, "pressure/%s", psi_names[i]);
                open_file(&s->pressure->psi[i], s->procroot, name);
        }
        return psi_probe(s, NULL, ret_err);
}

static int psi_sample(struct sampler *s, struct tick *t, bool emit_ok)
{
        struct pressure_state *p = s->pressure;
        uint64_t totals[PSI_FILES][2];
        bool found[PSI_FILES][2];
        int r;

        for (int i = 0; i < PSI_FILES; i++) {
                found[i][0] = found[i][1] = false;
                if (p->psi[i].fd < 0)
                        continue;
                r = procfile_read_until(&p->psi[i], psi_done, NULL);
                if (r >= 0)
                        r = psi_parse(p->psi[i].buf, p->psi[i].len, totals[i], found[i]);
                if (r < 0)
                        return r;
        }
        for (int m = 0; m < _M_MAX; m++) {
                const struct metric_def *d = &metric_table[m];
                int i, f;
                uint64_t now, prev;

                if (d->source != SRC_PSI)
                        continue;
                i = psi_index(d->key);
                f = d->field;
                if (!found[i][f])
                        continue;
                now = totals[i][f];
                prev = p->psi_prev[i][f];
                if (emit_ok && p->psi_primed[i] && s->enabled[m] && s->available[m]) {
                        r = sampler_emit(s, t, m, 0, now >= prev ? now - prev : 0, false);
                        if (r < 0)
                                return r;
                }
        }
        for (int i = 0; i < PSI_FILES; i++)
                if (p->psi[i].fd >= 0) {
                        memcpy(p->psi_prev[i], totals[i], sizeof p->psi_prev[i]);
                        p->psi_primed[i] = found[i][0] || found[i][1];
                }
        return 0;
}

static void psi_close(struct sampler *s)
{
        if (!s->pressure)
                return;
        for (int i = 0; i < PSI_FILES; i++)
                procfile_close(&s->pressure->psi[i]);
}

/* ---- schedstat ---- */

/* Where /proc/schedstat is missing: the BPF program, loaded while the
 * metric is enabled (and unloaded when it is not, to stop its cost).
 * Returns 0 with it loaded, else a negative errno and *ret_why. */
static int rq_bpf_want(struct sampler *s, bool want, char **ret_why)
{
        struct pressure_state *p = s->pressure;

        if (!want) {
                p->rq_bpf = runqwait_free(p->rq_bpf);
                return 0;
        }
        if (p->rq_bpf)
                return 0;
        return runqwait_open(s->map.ncpus, &p->rq_bpf, ret_why);
}

/* Read the running totals into rq_vals/rq_present: the file's, or the
 * program's. */
static int rq_read(struct sampler *s)
{
        struct pressure_state *p = s->pressure;
        int r;

        if (p->rq_bpf) {
                int nreal = runqwait_ncpus(p->rq_bpf);
                for (int c = 0; c < s->map.ncpus; c++) {
                        p->rq_present[c] = c < nreal;
                        p->rq_vals[c] = runqwait_read_cpu(p->rq_bpf, c);
                }
                return 0;
        }
        r = procfile_read(&p->schedstat, NULL);
        if (r >= 0)
                r = schedstat_parse(p->schedstat.buf, p->schedstat.len, s->map.ncpus, SCHEDSTAT_RUN_DELAY,
                                    p->rq_vals, p->rq_present);
        return r;
}

static int schedstat_probe(struct sampler *s, const bool *was_enabled, char **ret_err)
{
        struct pressure_state *p = s->pressure;
        _cleanup_free_ char *why = NULL;
        bool real = streq(s->procroot, "/proc");
        int r = -ENOENT;

        (void)rq_bpf_want(s, s->enabled[M_RUNQUEUE_WAIT] && !s->simulated && p->schedstat.fd < 0 && real, &why);
        if (!s->enabled[M_RUNQUEUE_WAIT])
                return 0;
        if ((p->schedstat.fd >= 0 || p->rq_bpf) && !s->simulated)
                r = rq_read(s);
        for (int c = 0; c < s->map.ncpus; c++)
                p->rq_primed[c] = false;
        if (s->simulated)
                sampler_set_why(s, M_RUNQUEUE_WAIT, "not simulated: --simulate-cpus replays /proc/stat and perf, "
                                "not %s/schedstat", s->procroot);
        else if (p->schedstat.fd < 0 && !p->rq_bpf)
                sampler_set_why(s, M_RUNQUEUE_WAIT, "no %s/schedstat: kernel without CONFIG_SCHEDSTATS%s%s",
                                s->procroot, why ? "; and " : "", why ? why : "");
        else if (r == -EPROTONOSUPPORT)
                sampler_set_why(s, M_RUNQUEUE_WAIT, "%s/schedstat is not of version %d to %d, whose cpuN lines "
                                "scalemon knows", s->procroot, SCHEDSTAT_VERSION_MIN, SCHEDSTAT_VERSION_MAX);
        else if (r < 0)
                sampler_set_why(s, M_RUNQUEUE_WAIT, "cannot parse %s/schedstat: %s", s->procroot, strerror(-r));
        else
                sampler_clear_why(s, M_RUNQUEUE_WAIT);
        return 0;
}

static int schedstat_open(struct sampler *s, char **ret_err)
{
        if (!s->pressure) {
                s->pressure = state_new(s->map.ncpus);
                if (!s->pressure)
                        return -ENOMEM;
        }
        open_file(&s->pressure->schedstat, s->procroot, "schedstat");
        return schedstat_probe(s, NULL, ret_err);
}

static int schedstat_sample(struct sampler *s, struct tick *t, bool emit_ok)
{
        struct pressure_state *p = s->pressure;
        int r;

        if ((p->schedstat.fd < 0 && !p->rq_bpf) || !s->enabled[M_RUNQUEUE_WAIT] || !s->available[M_RUNQUEUE_WAIT])
                return 0;
        r = rq_read(s);
        if (r < 0)
                return r;
        for (int c = 0; c < s->map.ncpus; c++) {
                if (!p->rq_present[c] || !s->map.online[c]) {   /* offline: no line, and no delta across its absence */
                        p->rq_primed[c] = false;
                        continue;
                }
                if (emit_ok && p->rq_primed[c]) {
                        uint64_t now = p->rq_vals[c], prev = p->rq_prev[c];
                        r = sampler_emit(s, t, M_RUNQUEUE_WAIT, c, now >= prev ? now - prev : 0, false);
                        if (r < 0)
                                return r;
                }
                p->rq_prev[c] = p->rq_vals[c];
                p->rq_primed[c] = true;
        }
        return 0;
}

/* CPU c went or came back: no run-queue delta for the interval it comes
 * back in, even if /proc/schedstat listed it at both ends (it went and
 * came back between two reads, or the file and cpu/online disagreed for
 * a moment): the sum across its absence is not that interval's. */
static void schedstat_cpu_changed(struct sampler *s, int c, bool online)
{
        if (s->pressure)
                s->pressure->rq_primed[c] = false;
}

/* The last of the two to close frees the state. */
static void schedstat_close(struct sampler *s)
{
        struct pressure_state *p = s->pressure;

        if (!p)
                return;
        procfile_close(&p->schedstat);
        runqwait_free(p->rq_bpf);
        for (int i = 0; i < PSI_FILES; i++)
                procfile_close(&p->psi[i]);
        free(p->rq_prev);
        free(p->rq_vals);
        free(p->rq_primed);
        free(p->rq_present);
        free(p);
        s->pressure = NULL;
}

const struct sampler_source sampler_psi_source = {
        "psi", psi_open, psi_probe, psi_sample, psi_close, NULL,
};
const struct sampler_source sampler_schedstat_source = {
        "schedstat", schedstat_open, schedstat_probe, schedstat_sample, schedstat_close, schedstat_cpu_changed,
};
