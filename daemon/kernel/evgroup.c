/* evgroup.c - a perf group per CPU, the way perf reads its own.
 *
 * The leader's fd is the group_fd of every member; read_format is
 * GROUP|TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING|ID, so one read() returns
 *
 *      { nr, time_enabled, time_running, { value, id } x nr }
 *
 * for all members at the same instant.  When the PMU multiplexes, a group
 * runs only part of the time: the delta is scaled by enabled/running and
 * the duty cycle kept, and a group that did not run at all is "not
 * counted", never divided by zero.
 */
#include "config.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <math.h>
#include <string.h>
#include <sys/ioctl.h>

#include "evgroup.h"
#include "macro.h"
#include "perf.h"

#define READ_FORMAT (PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID)

int evgroup_alloc(struct evgroup *g, int cpu, size_t n)
{
        uint64_t *p;

        memset(g, 0, sizeof *g);
        g->cpu = cpu;
        if (n == 0)
                return 0;
        /* buf [3 + 2n], id [n], prev [n], then fd [n], metric [n] */
        p = calloc(1, (3 + 4 * n) * sizeof(uint64_t) + 2 * n * sizeof(int));
        if (!p)
                return -ENOMEM;
        g->buf = p;
        g->id = p + 3 + 2 * n;
        g->prev = g->id + n;
        g->fd = (int *)(g->prev + n);
        g->metric = g->fd + n;
        for (size_t i = 0; i < n; i++)
                g->fd[i] = -1;
        return 0;
}

int evgroup_open(struct evgroup *g, int cpu, const struct evspec *specs, size_t nspecs, int *err)
{
        int r;

        nspecs = MIN(nspecs, (size_t)EVGROUP_MAX);
        r = evgroup_alloc(g, cpu, nspecs);
        if (r < 0)
                return r;
        for (size_t i = 0; i < nspecs; i++) {
                /* The leader is opened disabled and enabled once the whole
                 * group is attached: a member added to a group that is
                 * already running on its CPU is not scheduled in if its PMU
                 * differs from the leader's (a tracepoint under a software
                 * leader counts nothing; seen on 6.18). */
                struct perf_event_attr attr = {
                        .type = specs[i].type,
                        .config = specs[i].config,
                        .read_format = READ_FORMAT,
                        .disabled = g->n == 0,
                        .inherit = 0,
                };
                int fd;

                fd = perf_open(&attr, cpu, g->n ? g->fd[0] : -1);
                if (fd < 0) {
                        err[i] = fd;
                        if (perf_classify(fd) == PERF_ERR_FATAL) {
                                evgroup_close(g);
                                return fd;
                        }
                        continue;
                }
                if (specs[i].filter) {
                        r = perf_set_filter(fd, specs[i].filter);
                        if (r < 0) {
                                close(fd);
                                err[i] = r;
                                continue;
                        }
                }
                r = perf_event_id(fd, &g->id[g->n]);
                if (r < 0) {
                        close(fd);
                        err[i] = r;
                        continue;
                }
                err[i] = 0;
                g->fd[g->n] = fd;
                g->metric[g->n] = specs[i].metric;
                g->n++;
        }
        if (g->n == 0) {
                evgroup_close(g);
                return 0;
        }
        if (ioctl(g->fd[0], PERF_EVENT_IOC_ENABLE, 0) < 0) {
                r = negative_errno();
                evgroup_close(g);
                return r;
        }
        return (int)g->n;
}

int evgroup_decode(struct evgroup *g, const uint64_t *buf, size_t nwords, struct evdelta *d)
{
        uint64_t nr, enabled, running, de, dr;
        uint64_t now[EVGROUP_MAX];

        memset(d, 0, sizeof *d);
        if (nwords < 3)
                return -EIO;
        nr = buf[0];
        enabled = buf[1];
        running = buf[2];
        if (nr != g->n || nwords < 3 + 2 * nr)
                return -EIO;
        for (size_t m = 0; m < g->n; m++) {
                size_t k;
                for (k = 0; k < nr; k++)
                        if (buf[3 + 2 * k + 1] == g->id[m])
                                break;
                if (k == nr)
                        return -EIO;
                now[m] = buf[3 + 2 * k];
        }

        if (g->primed) {
                de = enabled - g->prev_enabled;
                dr = running - g->prev_running;
                d->valid = true;
                d->enabled_ns = de;
                if (dr == 0) {
                        d->not_counted = true;
                        d->duty = 0;
                } else {
                        /* running can pass enabled by a hair on some kernels */
                        double scale = de > dr ? (double)de / (double)dr : 1.0;
                        d->duty = de > dr ? (double)dr / (double)de : 1.0;
                        for (size_t m = 0; m < g->n; m++) {
                                uint64_t delta = now[m] >= g->prev[m] ? now[m] - g->prev[m] : 0;
                                d->value[m] = scale == 1.0 ? delta : (uint64_t)llround((double)delta * scale);
                        }
                }
        }
        memcpy(g->prev, now, g->n * sizeof now[0]);
        g->prev_enabled = enabled;
        g->prev_running = running;
        g->primed = true;
        return 0;
}

int evgroup_read(struct evgroup *g, struct evdelta *d)
{
        size_t want = (3 + 2 * g->n) * sizeof *g->buf;
        ssize_t k;

        if (g->n == 0)
                return -EBADF;
        k = read(g->fd[0], g->buf, want);
        if (k < 0)
                return negative_errno();
        if ((size_t)k != want)
                return -EIO;
        return evgroup_decode(g, g->buf, want / sizeof *g->buf, d);
}

void evgroup_close(struct evgroup *g)
{
        /* members first, the leader last */
        for (size_t i = g->n; i-- > 0;)
                if (g->fd[i] >= 0)
                        close(g->fd[i]);
        free(g->buf);
        g->buf = NULL;
        g->fd = g->metric = NULL;
        g->id = g->prev = NULL;
        g->n = 0;
        g->primed = false;
}
