/* live.c - the live line of `run exec`.
 *
 * [NAME 0:12] context switches 53943/s, lock contentions 0/s
 *
 * Its rates come from a subscription (sub.c): the ticks that have the run
 * open are summed until they cover a second (or an interval, if longer),
 * and the line shows their deltas over their length.  So the first update
 * is the run's first second, as `query` has it, not a difference of two
 * totals taken at unrelated times.
 *
 * The line lives on stderr, a terminal.  The command's output that goes
 * to the same terminal passes through live_output(): the line is erased
 * before any output, and drawn again only when the output ends at the
 * start of a line; while the command leaves a partial line (a prompt, a
 * progress counter without a newline), the live line waits.  So the two
 * never share a line.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "live.h"
#include "proto.h"
#include "sub.h"
#include "timeutil.h"

struct live {
        struct sub *sub;
        char name[PROTO_MAX_NAME + 1];
        int64_t started;                /* monotonic, when the line was set up */
        bool shown;                     /* the line is on the terminal */
        bool at_bol;                    /* the terminal's cursor is at the start of a line */
        bool seen;                      /* a tick with the run open came */
        int cs, lock;                   /* metric indexes in the subscription, or -1 */
        double cs_sum, lock_sum, dur;   /* ticks since the last update */
        char text[256];                 /* the line, without control characters */
};

static void write_all(int fd, const char *buf, size_t n)
{
        while (n > 0) {
                ssize_t k = write(fd, buf, n);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return;
                }
                buf += k;
                n -= (size_t)k;
        }
}

static void erase_line(struct live *lv)
{
        if (lv->shown) {
                write_all(STDERR_FILENO, "\r\033[K", 4);
                lv->shown = false;
        }
}

static void draw(struct live *lv)
{
        char buf[300];

        if (!lv->text[0] || !lv->at_bol)
                return;
        snprintf(buf, sizeof buf, "\r\033[K%s", lv->text);
        write_all(STDERR_FILENO, buf, strlen(buf));
        lv->shown = true;
}

struct live *live_new(struct ctl *ctl, const char *name)
{
        static const char *const metrics[] = { "context_switches", "lock_contentions" };
        struct live *lv;
        struct sub *s = NULL;

        if (!isatty(STDERR_FILENO) || sub_open(ctl, true, &s))
                return NULL;
        if (sub_request(s, metrics, ELEMENTSOF(metrics), SUB_LOC_SYSTEM) < 0) {
                sub_close(s);
                return NULL;
        }
        lv = calloc(1, sizeof *lv);
        if (!lv) {
                sub_close(s);
                return NULL;
        }
        lv->sub = s;
        snprintf(lv->name, sizeof lv->name, "%s", name);
        lv->started = now_monotonic_ns();
        lv->at_bol = true;
        lv->cs = lv->lock = -1;
        return lv;
}

struct live *live_free(struct live *lv)
{
        if (!lv)
                return NULL;
        erase_line(lv);
        sub_close(lv->sub);
        free(lv);
        return NULL;
}

int live_fd(const struct live *lv)
{
        return lv && lv->sub ? sub_fd(lv->sub) : -1;
}

void live_set_name(struct live *lv, const char *name)
{
        if (lv)
                snprintf(lv->name, sizeof lv->name, "%s", name);
}

static bool run_open(const struct sub_tick *t, const char *name)
{
        for (size_t i = 0; i < t->nruns; i++)
                if (streq(t->runs[i].name, name))
                        return true;
        return false;
}

static void on_tick(struct live *lv)
{
        const struct sub_info *in = sub_info(lv->sub);
        const struct sub_tick *t = sub_tick(lv->sub);
        int64_t el;
        char cs[32], lock[32];

        /* from the first tick that has the run open: the tick of its start
         * ended as it started */
        if (!run_open(t, lv->name))
                return;
        lv->seen = true;
        if (lv->cs >= 0 && !t->null[(size_t)lv->cs * (size_t)in->nloc])
                lv->cs_sum += t->v[(size_t)lv->cs * (size_t)in->nloc];
        if (lv->lock >= 0 && !t->null[(size_t)lv->lock * (size_t)in->nloc])
                lv->lock_sum += t->v[(size_t)lv->lock * (size_t)in->nloc];
        lv->dur += t->interval_s;
        if (lv->dur < MAX(1.0, in->interval_s) - 1e-3)
                return;
        el = (now_monotonic_ns() - lv->started) / NSEC_PER_SEC;
        snprintf(cs, sizeof cs, "%.0f/s", lv->cs_sum / lv->dur);
        if (lv->lock >= 0 && in->metrics[lv->lock].available)
                snprintf(lock, sizeof lock, "%.0f/s", lv->lock_sum / lv->dur);
        else
                snprintf(lock, sizeof lock, "-");
        snprintf(lv->text, sizeof lv->text, "[%s %lld:%02lld] context switches %s, lock contentions %s", lv->name,
                 (long long)(el / 60), (long long)(el % 60), cs, lock);
        lv->cs_sum = lv->lock_sum = lv->dur = 0;
        draw(lv);
}

void live_read(struct live *lv)
{
        enum sub_event ev;
        char *err = NULL;
        int r;

        if (!lv || !lv->sub)
                return;
        while ((r = sub_next(lv->sub, &ev, &err)) == 0 && ev != SUB_NONE) {
                if (ev == SUB_INFO) {
                        lv->cs = sub_metric_index(lv->sub, "context_switches");
                        lv->lock = sub_metric_index(lv->sub, "lock_contentions");
                } else
                        on_tick(lv);
        }
        free(err);
        if (r < 0) {
                /* the daemon went away or refused: the command goes on, without the line */
                erase_line(lv);
                lv->sub = sub_close(lv->sub);
        }
}

void live_output(struct live *lv, int fd, const char *buf, size_t n)
{
        if (lv && isatty(fd))
                erase_line(lv);
        write_all(fd, buf, n);
        if (lv && n > 0 && isatty(fd)) {
                lv->at_bol = buf[n - 1] == '\n';
                draw(lv);
        }
}
