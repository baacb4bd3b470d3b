/* writer.h - the batch writer: intervals held in memory (the write-ahead
 * backlog) and written to the store one transaction per flush. */
#ifndef SCALEMON_WRITER_H
#define SCALEMON_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "sampler.h"
#include "store.h"

struct writer;

/* Where a snapshot was taken: the last tick written, and its end. */
struct snapshot_point {
        int64_t tick;
        int64_t time;
        int64_t mono;           /* CLOCK_MONOTONIC at the tick's end */
};

/* Called when the sampler's catalogue changed (a counter failed and
 * stopped) during a sample. */
typedef void (*writer_catalogue_fn)(void *userdata);

/* conf (backlog_limit, wal_limit, commit_interval_ns) is read at every use: it may change in
 * place on reload, and must outlive the writer. */
int writer_new(struct store *st, struct sampler *sm, const struct conf *conf, writer_catalogue_fn on_catalogue,
               void *userdata, struct writer **ret);
struct writer *writer_free(struct writer *w);
/* The head file, DATABASE-head (lib/head.h): first the ticks a crash left
 * in it and not in the database are inserted, then it is emptied, and
 * from then on every tick sampled is appended to it and it is emptied
 * after each commit.  Before anything else writes to the store. */
int writer_open_head(struct writer *w, char **ret_err);

/* Called with every tick sampled (the timer's and run boundaries'), once
 * it is in the backlog: subscribe.c pushes it to subscribers. */
typedef void (*writer_tick_fn)(void *userdata, const struct tick *t);
void writer_set_tick_hook(struct writer *w, writer_tick_fn fn, void *userdata);

/* Take one sample into the backlog (dropping its oldest eighth when it is
 * at backlog_limit).  A failed sample is logged once and skipped; only
 * -ENOMEM is returned. */
int writer_sample(struct writer *w);
/* The first sample: it primes the counters, and the flush clock starts. */
int writer_prime(struct writer *w);
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
/* A sample written at once: a run's boundary.  Requests within a
 * millisecond of the last boundary, with no tick since, share its tick. */
int writer_snapshot(struct writer *w, struct snapshot_point *pt, char **ret_err);

/* Called with every tick the sampler emits, to add the open runs' own
 * cgroups' deltas (tick.own); 0 or -ENOMEM. */
typedef int (*writer_own_fn)(void *userdata, struct tick *t);
void writer_set_own_hook(struct writer *w, writer_own_fn fn, void *userdata);

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
