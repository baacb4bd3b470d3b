/* fakekernel.c - a fake kernel for tests: named as one.
 *
 * Much of what the daemon does needs no kernel counter: parsing its
 * arguments and configuration, the control socket and its limits, run
 * names, starting and stopping runs, reloads, the database.  Tests of
 * those run without root when the environment variable
 * SCALEMON_TEST_FAKE_KERNEL is set: the sampler's perf counters are then
 * this file's, which need no perf_event_open() and no privilege.  Software
 * events "open" on every CPU and count FAKE_KERNEL_PER_READ at each read;
 * hardware events and tracepoints fail as on a machine without a PMU or
 * tracefs access (the metrics are unavailable, with the reason).
 * Everything else (/proc, /sys, the CPU map) is read for real, under the
 * configured roots.  Compiled only with ./configure --enable-test-seams;
 * the sampler calls it only when the variable is set.
 */
#include "config.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>

#include "fakekernel.h"
#include "macro.h"

#define FAKE_KERNEL_PER_READ 1000

static int fake_refresh_online(void *ctx, struct cpumap *map)
{
        (void)ctx;
        return cpumap_refresh_online(map);
}

static void fake_begin_tick(void *ctx)
{
        (void)ctx;
}

static int fake_group_open(void *ctx, struct evgroup *g, int kind, int cpu, const struct evspec *specs, size_t n,
                           int *err)
{
        size_t want = n < EVGROUP_MAX ? n : EVGROUP_MAX;
        int r;

        (void)ctx;
        (void)kind;
        r = evgroup_alloc(g, cpu, want);        /* its arrays; every fd -1 */
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                if (specs[i].type != PERF_TYPE_SOFTWARE) {
                        err[i] = -ENOENT;
                        continue;
                }
                err[i] = 0;
                if (g->n == want)
                        continue;
                g->metric[g->n] = specs[i].metric;
                g->n++;
        }
        return (int)g->n;
}

static int fake_group_read(void *ctx, struct evgroup *g, int kind, struct evdelta *d)
{
        (void)ctx;
        (void)kind;
        *d = (struct evdelta){ .valid = g->primed, .duty = 1.0, .enabled_ns = 1 };
        for (size_t i = 0; i < g->n; i++)
                d->value[i] = FAKE_KERNEL_PER_READ;
        g->primed = true;
        return 0;
}

static int fake_procstat(void *ctx, const char *buf, size_t len, const char **ret, size_t *ret_len)
{
        (void)ctx;
        *ret = buf;
        *ret_len = len;
        return 0;
}

static int fake_numa_file(void *ctx, int n)
{
        (void)ctx;
        return n;
}

static uint64_t fake_numa_value(void *ctx, int n, int k, uint64_t raw)
{
        (void)ctx;
        (void)n;
        (void)k;
        return raw;
}

static void fake_free(void *ctx)
{
        (void)ctx;
}

static const struct sampler_ops fake_ops = {
        .name = "fake kernel (" FAKE_KERNEL_ENV ")",
        .refresh_online = fake_refresh_online,
        .begin_tick = fake_begin_tick,
        .group_open = fake_group_open,
        .group_read = fake_group_read,
        .procstat = fake_procstat,
        .numa_file = fake_numa_file,
        .numa_value = fake_numa_value,
        .free = fake_free,
};

const struct sampler_ops *fake_kernel_ops(void)
{
        const char *v = getenv(FAKE_KERNEL_ENV);
        return v && *v ? &fake_ops : NULL;
}
