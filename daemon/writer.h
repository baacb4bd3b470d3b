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

/* conf (backlog_limit, wal_limit) is read at every use: it may change in
 * place on reload, and must outlive the writer. */
int writer_new(struct store *st, struct sampler *sm, const struct conf *conf, writer_catalogue_fn on_catalogue,
               void *userdata, struct writer **ret);
struct writer *writer_free(struct writer *w);

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
/* After a tick: flush if a second has passed since the last flush (or the
 * interval is a second or more). */
void writer_tick_done(struct writer *w, int64_t interval_ns);
/* A sample written at once: a run's boundary.  Requests within a
 * millisecond of the last boundary, with no tick since, share its tick. */
int writer_snapshot(struct writer *w, struct snapshot_point *pt, char **ret_err);

/* Writes fail, or are held for a reader: other writers should wait. */
bool writer_held(const struct writer *w);
/* The last flush failed (a reader holding the WAL is not a failure). */
bool writer_failing(const struct writer *w);
/* Intervals in memory, and their bytes. */
size_t writer_backlog(const struct writer *w, int64_t *ret_bytes);

#endif
