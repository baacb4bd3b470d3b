/* writer.h - the batch writer: intervals held in memory (the write-ahead
 * backlog) and written to the store one transaction per flush. */
#ifndef SCALEMON_WRITER_H
#define SCALEMON_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "sampler.h"          /* struct tick */
#include "store.h"

struct writer;

/* Where a snapshot was taken: the last tick written, and its end. */
struct snapshot_point {
        int64_t tick;
        int64_t time;
        int64_t mono;           /* CLOCK_MONOTONIC at the tick's end */
};

/* The writer takes ticks (filled by the sampler, daemon/ticker.c) and owns
 * no sampler.  conf (backlog_limit, wal_limit, commit_interval_ns) is read
 * at every use: it may change in place on reload, and must outlive the
 * writer. */
int writer_new(struct store *st, const struct conf *conf, struct writer **ret);
struct writer *writer_free(struct writer *w);
/* The head file, DATABASE-head (lib/head.h): first the ticks a crash left
 * in it and not in the database are inserted, then it is emptied, and
 * from then on every tick sampled is appended to it and it is emptied
 * after each commit.  Before anything else writes to the store. */
int writer_open_head(struct writer *w, char **ret_err);

/* The tick to fill next: the backlog's next slot (its oldest eighth
 * dropped first when it is at backlog_limit, and recorded as a gap).
 * NULL when out of memory.  A slot that is not taken is reused. */
struct tick *writer_slot(struct writer *w);
/* Keep the slot writer_slot() gave, filled: its zeros dropped, appended
 * to the head file with one write(), held for the next flush.  Returns
 * the tick as kept, valid until the next writer_slot(). */
const struct tick *writer_take(struct writer *w);
/* The flush clock starts: commit_interval counts from now. */
void writer_start(struct writer *w);
/* Write the backlog in one transaction.  force: even while a reader
 * holds the write-ahead log at wal_limit (a run boundary).  -EBUSY while
 * held; the store's -errno when the write failed (logged once). */
int writer_flush(struct writer *w, bool force);
/* After a tick: flush if commit_interval has passed since the last flush
 * (or the interval is that long or longer), if the intervals held reach
 * FLUSH_HELD_MAX or a quarter of backlog_limit, or if one carries events.
 * While writes fail or are held, a retry every second, whatever
 * commit_interval says. */
void writer_tick_done(struct writer *w, int64_t interval_ns);
/* Writes fail, or are held for a reader: other writers should wait. */
bool writer_held(const struct writer *w);
/* The last flush failed (a reader holding the WAL is not a failure). */
bool writer_failing(const struct writer *w);
/* Intervals in memory, and their bytes. */
size_t writer_backlog(const struct writer *w, int64_t *ret_bytes);
/* The end (wall clock) of the newest interval held in memory, not yet
 * committed: false when none is held. */
bool writer_last_sampled(const struct writer *w, int64_t *ret_end);
/* Intervals sampled since the start (the totals request's "ticks"). */
uint64_t writer_samples(const struct writer *w);

#endif
