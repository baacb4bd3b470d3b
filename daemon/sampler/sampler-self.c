/* sampler-self.c - scalemond's own CPU time as a metric (scalemond_cpu):
 * the process's CLOCK_PROCESS_CPUTIME_ID, user and system time of all
 * its threads (the sampler, the writer, the socket's clients), as a
 * per-tick delta in ns (scale 1e-9: seconds, as cpu_user).
 *
 * The client takes it out of everything else's CPU time (the machine's
 * busy time less the benchmark's cgroup's): what scalemond spends on
 * measuring is not interference.  What the kernel spends on the perf and
 * BPF counters runs in the tasks they count, not here.
 */
#include "config.h"

#include <string.h>
#include <time.h>

#include "sampler-internal.h"

static int self_cpu_ns(int64_t *ret)
{
        struct timespec ts;

        if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) < 0)
                return -errno;
        *ret = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
        return 0;
}

static int self_probe(struct sampler *s, const bool *was_enabled, char **ret_err)
{
        int64_t ns;
        int r;

        if (!s->enabled[M_SCALEMOND_CPU])
                return 0;
        r = self_cpu_ns(&ns);
        if (r < 0)
                sampler_set_why(s, M_SCALEMOND_CPU, "cannot read CLOCK_PROCESS_CPUTIME_ID: %s", strerror(-r));
        else
                sampler_clear_why(s, M_SCALEMOND_CPU);
        return 0;
}

static int self_open(struct sampler *s, char **ret_err)
{
        s->self_primed = false;
        return self_probe(s, NULL, ret_err);
}

/* The baseline is kept every tick, enabled or not, so that a metric
 * enabled later gets the delta of one tick, never of the time between. */
static int sample_self(struct sampler *s, struct tick *t, bool emit_ok)
{
        int64_t now = 0;
        int r = self_cpu_ns(&now);

        if (r < 0) {
                s->self_primed = false;
                return 0;
        }
        if (emit_ok && s->self_primed && s->enabled[M_SCALEMOND_CPU] && s->available[M_SCALEMOND_CPU]) {
                uint64_t d = now > s->self_prev_ns ? (uint64_t)(now - s->self_prev_ns) : 0;
                r = sampler_emit(s, t, M_SCALEMOND_CPU, 0, d, false);
                if (r < 0)
                        return r;
        }
        s->self_prev_ns = now;
        s->self_primed = true;
        return 0;
}

static void self_close(struct sampler *s)
{
        s->self_primed = false;
}

const struct sampler_source sampler_self_source = {
        "self", self_open, self_probe, sample_self, self_close, NULL,
};
