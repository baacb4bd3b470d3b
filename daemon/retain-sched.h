/* retain-sched.h - when retention runs: slices of rollup and deletion in
 * the event loop's idle time. */
#ifndef SCALEMON_RETAIN_SCHED_H
#define SCALEMON_RETAIN_SCHED_H

#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "conf.h"
#include "store.h"
#include "writer.h"

struct retain_sched;

struct retain_stats {
        uint64_t merged, deleted;       /* ticks merged away and deleted since start */
        int64_t step_max_ns;            /* the longest slice */
        int64_t db_bytes;               /* the database's pages in use, looked at now */
};

/* Start at first_usec (CLOCK_MONOTONIC: the daemon's first tick, after
 * which a backlog starts shrinking), then in slices that give way to
 * ticks and requests.  conf is read at every slice (it changes in place
 * on reload) and must outlive the scheduler, as must st and w. */
int retain_sched_new(sd_event *e, struct store *st, const struct writer *w, const struct conf *conf,
                     uint64_t first_usec, struct retain_sched **ret);
struct retain_sched *retain_sched_free(struct retain_sched *rs);
/* A run was deleted: its intervals may go now. */
void retain_sched_run_deleted(struct retain_sched *rs);
void retain_sched_stats(struct retain_sched *rs, struct retain_stats *ret);
/* "raw samples kept 7d, then 1m rollups to 90d, database capped at 10G" */
void retain_sched_format(const struct conf *c, char *buf, size_t len);

#endif
