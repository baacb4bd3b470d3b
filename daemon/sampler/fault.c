/* fault.c - faults injected for tests: a fake, named as one.
 *
 * Two failures of perf counters cannot be caused for real on a test
 * machine: a read() of a counter group that returns an error, and a
 * tracepoint that goes away while it is counted (the kernel pins a module
 * while its tracepoints are in use, so rmmod refuses).  The sampler's
 * handling of both is tested by pretending.  When the environment variable
 * SCALEMON_TEST_FAULTS names a file, it is re-read at each tick whose
 * modification time changed, and its lines say what fails:
 *
 *      read-error CPU [sw|hw]  every read() of that CPU's group fails (EIO)
 *      vanish METRIC           opening METRIC's event fails with ENOENT,
 *                              as for a tracepoint id that no longer exists
 *
 * The faults are a wrapper around the sampler's operations (sampler-ops.h),
 * put in place by sampler_new() only when the variable is set: without it
 * the sampler calls the real (or simulated) operations directly.  This
 * file is compiled only with ./configure --enable-test-seams.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "fault.h"
#include "macro.h"
#include "metric.h"

#define FAULT_MAX_CPUS 4096

static struct {
        const char *path;
        struct timespec mtime;
        bool read_error[2][FAULT_MAX_CPUS];     /* [0] sw, [1] hw */
        bool vanish[_M_MAX];
} fault;

static void fault_parse(FILE *f)
{
        char line[256];

        memset(fault.read_error, 0, sizeof fault.read_error);
        memset(fault.vanish, 0, sizeof fault.vanish);
        while (fgets(line, sizeof line, f)) {
                char what[32] = "", arg[128] = "", grp[8] = "sw";
                int n = sscanf(line, "%31s %127s %7s", what, arg, grp);
                if (n >= 2 && streq(what, "read-error")) {
                        int cpu = atoi(arg);
                        if (cpu >= 0 && cpu < FAULT_MAX_CPUS)
                                fault.read_error[streq(grp, "hw")][cpu] = true;
                } else if (n >= 2 && streq(what, "vanish")) {
                        int m = metric_id_by_name(arg);
                        if (m >= 0)
                                fault.vanish[m] = true;
                }
        }
}

static void fault_refresh(void)
{
        struct stat st;
        FILE *f;

        if (stat(fault.path, &st) < 0) {
                memset(fault.read_error, 0, sizeof fault.read_error);
                memset(fault.vanish, 0, sizeof fault.vanish);
                fault.mtime = (struct timespec){ 0 };
                return;
        }
        if (st.st_mtim.tv_sec == fault.mtime.tv_sec && st.st_mtim.tv_nsec == fault.mtime.tv_nsec)
                return;
        fault.mtime = st.st_mtim;
        f = fopen(fault.path, "re");
        if (!f)
                return;
        fault_parse(f);
        fclose(f);
}

static bool fault_read_error(int cpu, int kind)
{
        return cpu >= 0 && cpu < FAULT_MAX_CPUS && fault.read_error[kind == SAMPLER_GRP_HW][cpu];
}

static bool fault_vanished(int metric)
{
        return metric >= 0 && metric < _M_MAX && fault.vanish[metric];
}

/* ---- the wrapper ---- */

struct fault_ctx {
        const struct sampler_ops *inner;
        void *ctx;
};

static int fw_refresh_online(void *ctx, struct cpumap *map)
{
        struct fault_ctx *f = ctx;
        return f->inner->refresh_online(f->ctx, map);
}

/* The fault file is read again (if it changed) before anything else of
 * the tick. */
static void fw_begin_tick(void *ctx)
{
        struct fault_ctx *f = ctx;
        fault_refresh();
        f->inner->begin_tick(f->ctx);
}

/* The events of vanished metrics fail with ENOENT, as for a tracepoint id
 * that no longer exists; the others are opened. */
static int fw_group_open(void *ctx, struct evgroup *g, int kind, int cpu, const struct evspec *spec, size_t n,
                         int *err)
{
        struct fault_ctx *f = ctx;
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
        r = f->inner->group_open(f->ctx, g, kind, cpu, keep, k, kerr);
        for (size_t j = 0; j < k; j++)
                err[idx[j]] = r < 0 ? r : kerr[j];
        return r;
}

/* A failing read() gives EIO.  The wrapped read is still made: a read the
 * sampler makes only to prime a reopened group (its result unused) then
 * primes it as without the fault, and after a failed one the sampler
 * reopens the group, so its state does not matter. */
static int fw_group_read(void *ctx, struct evgroup *g, int kind, struct evdelta *d)
{
        struct fault_ctx *f = ctx;
        int r = f->inner->group_read(f->ctx, g, kind, d);
        return fault_read_error(g->cpu, kind) ? -EIO : r;
}

static int fw_procstat(void *ctx, const char *buf, size_t len, const char **ret, size_t *ret_len)
{
        struct fault_ctx *f = ctx;
        return f->inner->procstat(f->ctx, buf, len, ret, ret_len);
}

static int fw_numa_file(void *ctx, int n)
{
        struct fault_ctx *f = ctx;
        return f->inner->numa_file(f->ctx, n);
}

static uint64_t fw_numa_value(void *ctx, int n, int k, uint64_t raw)
{
        struct fault_ctx *f = ctx;
        return f->inner->numa_value(f->ctx, n, k, raw);
}

static void fw_free(void *ctx)
{
        struct fault_ctx *f = ctx;
        if (!f)
                return;
        f->inner->free(f->ctx);
        free(f);
}

static const struct sampler_ops fault_ops = {
        .name = "faults",
        .refresh_online = fw_refresh_online,
        .begin_tick = fw_begin_tick,
        .group_open = fw_group_open,
        .group_read = fw_group_read,
        .procstat = fw_procstat,
        .numa_file = fw_numa_file,
        .numa_value = fw_numa_value,
        .free = fw_free,
};

int fault_wrap(const struct sampler_ops **ops, void **ctx)
{
        struct fault_ctx *f;

        fault.path = getenv(FAULT_ENV);
        if (!fault.path || !*fault.path)
                return 0;
        f = calloc(1, sizeof *f);
        if (!f)
                return -ENOMEM;
        f->inner = *ops;
        f->ctx = *ctx;
        *ops = &fault_ops;
        *ctx = f;
        return 0;       /* the file is first read when the first tick begins */
}
