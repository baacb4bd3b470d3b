/* retain-sched.c - when retention runs.
 *
 * The store does the work (store_delete_step(), store_rollup_step(), one
 * bounded transaction each); this decides when: a timer at idle priority;
 * when there is nothing to do, again once new work can exist (idle_ns():
 * the database changes at commits, and a raw tick ages into a rollup once
 * per rollup_interval), so that between commits the daemon prepares and
 * runs no SQL; while catching up one part working in RETAIN_DUTY, each
 * slice at most half an interval, so that sampling and requests never wait
 * long.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "macro.h"
#include "retain-sched.h"
#include "timeutil.h"

#define RETAIN_EVERY_NS    NSEC_PER_SEC
#define RETAIN_BUDGET_NS   (50 * NSEC_PER_MSEC)
#define RETAIN_MAX_TICKS   128             /* ticks merged or deleted in one transaction */
#define RETAIN_DUTY        5               /* catching up, work 1 part in 5 */
#define SIZE_CAP_KEEP_NS   (3600 * NSEC_PER_SEC)   /* max_db_size never takes the last hour */

struct retain_sched {
        sd_event_source *src;
        struct store *store;
        const struct writer *writer;       /* retention waits while its writes fail or are held */
        const struct conf *conf;           /* the manager's, changed on reload */
        int64_t rollup_cursor;             /* store_rollup_step()'s; -1: from the database */
        int64_t delete_cursor;             /* store_delete_step()'s */
        uint64_t merged, deleted;          /* ticks merged away and deleted since start */
        int64_t step_max_ns;               /* the longest call */
        int64_t db_bytes;                  /* the database's pages in use, when last looked at */
        bool full_logged;                  /* said that max_db_size cannot be kept */
        bool err_logged;
};

/* One slice of retention: the oldest ticks outside runs deleted while
 * the database is over max_db_size or past retain_rollup, then raw ticks
 * past retain_raw rolled up, one transaction at a time for at most half
 * an interval (and RETAIN_BUDGET_NS), so that a tick waits at most that
 * plus one transaction.  Returns true if work is left. */
static bool retain_work(struct retain_sched *rs)
{
        int64_t start = now_monotonic_ns(), budget = MIN(rs->conf->interval_ns / 2, RETAIN_BUDGET_NS);
        const struct conf *c = rs->conf;
        int r;

        /* while writes fail or are held, the flush has said so; this
         * would only make the log longer */
        if (writer_held(rs->writer))
                return false;
        do {
                int64_t now = now_realtime_ns();
                size_t n = 0;

                r = 0;
                if (c->max_db_size > 0 && store_db_bytes(rs->store, &rs->db_bytes) >= 0 &&
                    rs->db_bytes > c->max_db_size) {
                        r = store_delete_step(rs->store, now - SIZE_CAP_KEEP_NS, RETAIN_MAX_TICKS,
                                              &rs->delete_cursor, &n);
                        if (r == 0 && !rs->full_logged) {
                                char cap[16];
                                size_format(c->max_db_size, cap, sizeof cap);
                                log_warning("the database uses %.1f MiB, over max_db_size (%s), and what is left is "
                                            "inside runs or from the last hour: delete old runs (scalemonctl run "
                                            "delete) or raise max_db_size",
                                            (double)rs->db_bytes / (1 << 20), cap);
                                rs->full_logged = true;
                        }
                } else
                        rs->full_logged = false;
                if (r == 0 && c->retain_rollup_ns > 0)
                        r = store_delete_step(rs->store, now - c->retain_rollup_ns, RETAIN_MAX_TICKS,
                                              &rs->delete_cursor, &n);
                if (r > 0)
                        rs->deleted += n;
                else if (r == 0 && c->retain_raw_ns > 0 && c->rollup_interval_ns > c->interval_ns) {
                        r = store_rollup_step(rs->store, now - c->retain_raw_ns, c->rollup_interval_ns,
                                              RETAIN_MAX_TICKS, &rs->rollup_cursor, &n);
                        rs->merged += n;
                }
        } while (r > 0 && now_monotonic_ns() - start < budget);
        if (r < 0 && !rs->err_logged) {
                log_warning("cannot roll up or delete old samples: %s; trying again every second",
                            r == -ENOMEM ? "out of memory" : store_errmsg(rs->store));
                rs->err_logged = true;
        } else if (r >= 0)
                rs->err_logged = false;
        rs->step_max_ns = MAX(rs->step_max_ns, now_monotonic_ns() - start);
        return r > 0;
}

/* "raw samples kept 7d, then 1m rollups to 90d, database capped at 10G" */
void retain_sched_format(const struct conf *c, char *buf, size_t len)
{
        char raw[16], every[16], keep[16], cap[16];
        size_t n;

        duration_format(c->retain_raw_ns, raw, sizeof raw);
        duration_format(c->rollup_interval_ns, every, sizeof every);
        duration_format(c->retain_rollup_ns, keep, sizeof keep);
        if (c->retain_raw_ns == 0 || (c->retain_rollup_ns > 0 && c->retain_rollup_ns <= c->retain_raw_ns) ||
            c->rollup_interval_ns <= c->interval_ns)
                snprintf(buf, len, "samples kept %s", c->retain_rollup_ns ? keep : "forever");
        else
                snprintf(buf, len, "raw samples kept %s, then %s rollups %s%s", raw, every,
                         c->retain_rollup_ns ? "to " : "", c->retain_rollup_ns ? keep : "forever");
        n = strlen(buf);
        if (c->max_db_size > 0 && n < len) {
                size_format(c->max_db_size, cap, sizeof cap);
                snprintf(buf + n, len - n, ", database capped at %s", cap);
        }
}

/* How long to rest when nothing was left to do: until the next commit
 * or the next rollup bucket, whichever comes first, at least a second. */
static int64_t idle_ns(const struct conf *c)
{
        int64_t every = c->commit_interval_ns > 0 ? c->commit_interval_ns : c->interval_ns;

        if (c->rollup_interval_ns > 0)
                every = MIN(every, c->rollup_interval_ns);
        return MAX(every, RETAIN_EVERY_NS);
}

static int on_retain(sd_event_source *src, uint64_t usec, void *userdata)
{
        struct retain_sched *rs = userdata;
        int64_t t0 = now_monotonic_ns(), t1, next;
        bool more = retain_work(rs);

        (void)usec;
        t1 = now_monotonic_ns();
        /* catching up: again soon, but resting RETAIN_DUTY - 1 times as
         * long as it worked */
        next = more ? t1 + MAX((t1 - t0) * (RETAIN_DUTY - 1), NSEC_PER_MSEC) : t1 + idle_ns(rs->conf);
        sd_event_source_set_time(src, (uint64_t)(next / NSEC_PER_USEC));
        return sd_event_source_set_enabled(src, SD_EVENT_ONESHOT);
}

int retain_sched_new(sd_event *e, struct store *st, const struct writer *w, const struct conf *conf,
                     uint64_t first_usec, struct retain_sched **ret)
{
        struct retain_sched *rs = calloc(1, sizeof *rs);
        int r;

        if (!rs)
                return -ENOMEM;
        rs->store = st;
        rs->writer = w;
        rs->conf = conf;
        rs->rollup_cursor = -1;
        r = sd_event_add_time(e, &rs->src, CLOCK_MONOTONIC, first_usec, 1000, on_retain, rs);
        if (r >= 0)
                r = sd_event_source_set_priority(rs->src, SD_EVENT_PRIORITY_IDLE);
        if (r < 0) {
                retain_sched_free(rs);
                return r;
        }
        *ret = rs;
        return 0;
}

struct retain_sched *retain_sched_free(struct retain_sched *rs)
{
        if (!rs)
                return NULL;
        sd_event_source_unref(rs->src);
        free(rs);
        return NULL;
}

void retain_sched_run_deleted(struct retain_sched *rs)
{
        rs->delete_cursor = 0;
}

void retain_sched_stats(struct retain_sched *rs, struct retain_stats *ret)
{
        store_db_bytes(rs->store, &rs->db_bytes);
        *ret = (struct retain_stats){ .merged = rs->merged, .deleted = rs->deleted, .step_max_ns = rs->step_max_ns,
                                      .db_bytes = rs->db_bytes };
}
