/* sampler-lockwait.c - the lock wait source: BPF on lock:contention_begin/
 * end (lockwait.c loads the program), whose per-CPU running totals become
 * per-tick deltas like any counter's: lock_wait_ns, lock_wait_max_ns (the
 * longest wait of the interval, taken and reset each tick), the waits by
 * lock type (lock_contentions_<type>) and lock_wait_lost.
 *
 * The program is loaded while one of these metrics is enabled, and
 * unloaded by a reconfiguration that disables them all; if it cannot be
 * loaded, every one of them is unavailable with the one reason.  Simulated
 * CPU c (--simulate-cpus) replays real CPU c % n (lw_src, chosen when the
 * source opens) and reads its own, unused slot too, as a machine that big
 * would. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "lockwait.h"
#include "log.h"
#include "sampler-internal.h"

/* the values kept per CPU: waits by lock type, their length, the lost */
enum { LW_VAL_WAIT_NS = LW_NTYPES, LW_VAL_LOST, LW_NVALS };

static const int lw_metric[LW_NVALS] = {
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

/* Load the program if a lock wait metric is enabled and it is not loaded
 * yet, unload it if none is (a reload that excludes them all: nothing of
 * it stays in the kernel); decide the metrics' availability. */
static int lockwait_open_source(struct sampler *s, char **ret_err)
{
        _cleanup_free_ char *why = NULL;
        bool want = false, was = s->lw != NULL;
        int r = 0;

        for (int m = 0; m < _M_MAX; m++)
                want |= metric_is_bpf(&metric_table[m]) && s->enabled[m];
        if (!want && s->lw) {
                s->lw = lockwait_free(s->lw);
                log_info("lock wait: BPF program unloaded (no lock wait metric is enabled)");
        }
        if (want && !s->lw) {
                if (!s->lw_prev)
                        s->lw_prev = calloc((size_t)s->map.ncpus * LW_NVALS, sizeof *s->lw_prev);
                if (!s->lw_max)
                        s->lw_max = calloc((size_t)s->map.ncpus, sizeof *s->lw_max);
                if (!s->lw_cpu_primed)
                        s->lw_cpu_primed = calloc((size_t)s->map.ncpus, sizeof *s->lw_cpu_primed);
                if (!s->lw_src)
                        s->lw_src = calloc((size_t)s->map.ncpus, sizeof *s->lw_src);
                r = s->lw_prev && s->lw_max && s->lw_cpu_primed && s->lw_src ? lockwait_open(s->map.ncpus, &s->lw, &why)
                                                                             : -ENOMEM;
                /* the slot each CPU replays, chosen once: its own, or a
                 * simulated CPU's real one */
                for (int c = 0; s->lw && c < s->map.ncpus; c++)
                        s->lw_src[c] = c % lockwait_ncpus(s->lw);
                s->lw_primed = false;
                if (s->lw && !was && s->primed)
                        log_info("lock wait: BPF program loaded again");
        }
        for (int m = 0; m < _M_MAX; m++) {
                if (!metric_is_bpf(&metric_table[m]) || !s->enabled[m])
                        continue;
                if (s->lw)
                        sampler_clear_why(s, m);
                else
                        sampler_set_why(s, m, "%s", why ? why : r == -ENOMEM ? "out of memory" : "not loaded");
        }
        return 0;
}

static int lockwait_reconfigure(struct sampler *s, const bool *was_enabled, char **ret_err)
{
        return lockwait_open_source(s, ret_err);
}

static int lockwait_sample(struct sampler *s, struct tick *t, bool emit_ok)
{
        if (!s->lw)
                return 0;
        for (int c = 0; c < s->map.ncpus; c++) {
                int src = s->lw_src[c];         /* c itself, but for simulated CPUs */
                uint64_t now[LW_NVALS], max, *prev = &s->lw_prev[(size_t)c * LW_NVALS];
                struct lw_cpu v;

                lockwait_read_cpu(s->lw, c, &v, &max);
                if (src != c) {
                        lockwait_read_cpu(s->lw, src, &v, NULL);
                        max = s->lw_max[src];   /* taken when CPU src was read, above */
                }
                s->lw_max[c] = max;
                memcpy(now, v.count, sizeof v.count);
                now[LW_VAL_WAIT_NS] = v.wait_ns;
                now[LW_VAL_LOST] = v.lost_task + v.lost_caller;
                if (emit_ok && s->lw_primed && s->lw_cpu_primed[c] && s->map.online[c]) {
                        for (int k = 0; k < LW_NVALS; k++) {
                                int m = lw_metric[k], r;
                                if (m < 0 || !s->enabled[m] || !s->available[m])
                                        continue;
                                r = sampler_emit(s, t, m, c, now[k] >= prev[k] ? now[k] - prev[k] : 0, false);
                                if (r < 0)
                                        return r;
                        }
                        if (s->enabled[M_LOCK_WAIT_MAX_NS] && s->available[M_LOCK_WAIT_MAX_NS] &&
                            sampler_emit(s, t, M_LOCK_WAIT_MAX_NS, c, max, false) < 0)
                                return -ENOMEM;
                }
                memcpy(prev, now, sizeof now);
                s->lw_cpu_primed[c] = s->map.online[c];
        }
        s->lw_primed = true;
        return 0;
}

static void lockwait_close(struct sampler *s)
{
        s->lw = lockwait_free(s->lw);
        free(s->lw_prev);
        s->lw_prev = NULL;
        free(s->lw_max);
        s->lw_max = NULL;
        free(s->lw_cpu_primed);
        s->lw_cpu_primed = NULL;
        free(s->lw_src);
        s->lw_src = NULL;
}

/* CPU c went or came back: its per-CPU totals did not move while it was
 * away, but the interval it comes back in is not all counted (the perf
 * source has no delta for it), so it gets none from here either; the
 * next read is its baseline. */
static void lockwait_cpu_changed(struct sampler *s, int c, bool online)
{
        if (s->lw_cpu_primed)
                s->lw_cpu_primed[c] = false;
}

const struct sampler_source sampler_lockwait_source = {
        .name = "lockwait",
        .open = lockwait_open_source,
        .reconfigure = lockwait_reconfigure,
        .sample = lockwait_sample,
        .close = lockwait_close,
        .cpu_changed = lockwait_cpu_changed,
};

struct lockwait *sampler_lockwait(const struct sampler *s)
{
        return s->lw;
}
