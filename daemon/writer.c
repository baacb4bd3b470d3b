/* writer.c - the batch writer.
 *
 * It takes the ticks the sampler filled (daemon/ticker.c drives both) and
 * owns no sampler.  Ticks are held in memory and written in one
 * transaction per flush, every commit_interval (scalemon.conf; every tick
 * when the interval is that long or longer): each commit rewrites the
 * b-tree pages it touches into the write-ahead log, and at 1 s committing
 * every tick writes a hundred times the bytes the database keeps.  A flush comes
 * sooner when the intervals held reach FLUSH_HELD_MAX (or a quarter of
 * backlog_limit), and at once for a tick that carries events.  Each tick
 * is appended to the head file as it is taken, so kill -9 loses at most
 * the tick being sampled (a restarted daemon commits the head first) and
 * readers see every tick at once; a power loss loses what the kernel had
 * not written back of the head (scalemond(8)).  While writes fail, or a
 * reader pins the write-ahead log at wal_limit, the intervals stay in memory (compacted) up to
 * backlog_limit; past it the oldest go, and the span lost is written as a
 * gap row with the next batch.  A run boundary is a tick flushed at once
 * (ticker_snapshot()).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "head.h"
#include "log.h"
#include "macro.h"
#include "timeutil.h"
#include "writer.h"

#define RETRY_EVERY_NS     NSEC_PER_SEC     /* while writes fail or are held */
#define FLUSH_HELD_MAX     (8LL << 20)      /* bytes held that bring the commit forward */
#define SNAPSHOT_REUSE_NS  NSEC_PER_MSEC   /* run boundaries this close share a tick */

struct writer {
        struct store *store;
        const struct conf *conf;           /* backlog_limit, wal_limit: the manager's, changed on reload */

        int64_t *cpu_vals;                 /* write_batch()'s per-CPU row of one metric */
        bool *cpu_nulls;
        int cpu_cap;
        struct tick *batch;                /* ticks not yet written */
        size_t nbatch, capbatch;
        int64_t backlog_bytes;             /* memory held by batch[0..nbatch) */
        struct {                           /* intervals dropped, not yet recorded */
                int64_t start, end, intervals;
                char reason[256];
        } gap;
        char hold_reason[160];             /* why the batch is not being written */
        bool wal_held;                     /* a reader holds the WAL at wal_limit */
        uint64_t nsamples;                 /* ticks taken so far */
        int64_t last_flush_mono;
        bool flush_now;                    /* a tick with events is held: commit it at once */
        int last_flush_err;                /* to log a failing flush once */

        struct head_buf hb;                /* a tick's head record (head.h) */
        int head_fd;                       /* DATABASE-head, O_APPEND; -1: none */
        int64_t head_size;                 /* its length: a failed append is cut back to it */
        int64_t base_id;                   /* the id batch[0] gets in the database */
        int head_err;                      /* to log a failing append once */
};

int writer_new(struct store *st, const struct conf *conf, struct writer **ret)
{
        struct writer *w = calloc(1, sizeof *w);

        if (!w)
                return -ENOMEM;
        w->store = st;
        w->conf = conf;
        w->head_fd = -1;
        *ret = w;
        return 0;
}

struct writer *writer_free(struct writer *w)
{
        if (!w)
                return NULL;
        for (size_t i = 0; i < w->capbatch; i++)
                tick_clear(&w->batch[i]);
        free(w->batch);
        free(w->cpu_vals);
        free(w->cpu_nulls);
        head_buf_free(&w->hb);
        if (w->head_fd >= 0)
                close(w->head_fd);
        free(w);
        return NULL;
}

bool writer_held(const struct writer *w)
{
        return w->last_flush_err || w->wal_held;
}

bool writer_failing(const struct writer *w)
{
        return w->last_flush_err != 0;
}

uint64_t writer_samples(const struct writer *w)
{
        return w->nsamples;
}

size_t writer_backlog(const struct writer *w, int64_t *ret_bytes)
{
        if (ret_bytes)
                *ret_bytes = w->backlog_bytes;
        return w->nbatch;
}

static int64_t tick_bytes(const struct tick *t)
{
        return (int64_t)(sizeof *t + t->capv * sizeof *t->v + t->capmux * sizeof *t->mux + t->capev * sizeof *t->ev +
                         t->capown * sizeof *t->own);
}

/* ---- the head file: every tick appended as it is sampled (head.h),
 * emptied after each commit ---- */

static int write_tick(struct writer *w, const struct tick *t, int64_t *ret_id);

static void head_failed(struct writer *w, int r, const char *what)
{
        if (!w->head_err)
                log_error("cannot %s the head file %s" HEAD_SUFFIX ": %s; readers see ticks up to the last commit, "
                          "and a crash loses the ticks since", what, store_path(w->store), strerror(-r));
        w->head_err = r;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
        while (n > 0) {
                ssize_t k = write(fd, p, n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                p += k;
                n -= (size_t)k;
        }
        return 0;
}

/* The tick that will be batch[i], as its record, with one write(). */
static void head_append(struct writer *w, const struct tick *t, size_t i)
{
        int64_t id;
        int r;

        if (w->head_fd < 0)
                return;
        head_buf_reset(&w->hb);
        w->hb.tick_id = w->base_id + (int64_t)i;
        store_capture(w->store, &w->hb);
        r = write_tick(w, t, &id);
        store_capture(w->store, NULL);
        if (r >= 0)
                r = head_finish(&w->hb);
        if (r >= 0)
                r = write_all(w->head_fd, w->hb.p, w->hb.len);
        if (r < 0) {
                /* no torn record in the middle: readers stop at one */
                if (ftruncate(w->head_fd, w->head_size) < 0)
                        r = -errno;
                head_failed(w, r, "append to");
                return;
        }
        w->head_size += (int64_t)w->hb.len;
        if (w->head_err)
                log_info("the head file can be written again");
        w->head_err = 0;
}

static void head_truncate(struct writer *w)
{
        int r;

        if (w->head_fd < 0 || w->head_size == HEAD_HEADER_SIZE)
                return;
        /* the commit on disk before the head is emptied: a power loss
         * must not find the head empty and the commit not there */
        r = store_sync_wal(w->store);
        if (r < 0) {
                head_failed(w, r, "sync the write-ahead log before emptying");
                return;
        }
        if (ftruncate(w->head_fd, HEAD_HEADER_SIZE) < 0) {
                head_failed(w, -errno, "empty");
                return;
        }
        w->head_size = HEAD_HEADER_SIZE;
}

/* The batch changed under the head (its oldest ticks dropped): write it
 * again, with the ids its ticks will get. */
static void head_rewrite(struct writer *w)
{
        if (w->head_fd < 0)
                return;
        if (ftruncate(w->head_fd, HEAD_HEADER_SIZE) < 0) {
                head_failed(w, -errno, "empty");
                return;
        }
        w->head_size = HEAD_HEADER_SIZE;
        for (size_t i = 0; i < w->nbatch; i++)
                head_append(w, &w->batch[i], i);
}

/* The backlog is full: drop its oldest eighth, and remember the span lost
 * so that it is written as a gap row with the next batch. */
static void drop_oldest(struct writer *w)
{
        size_t n = MAX(w->nbatch / 8, (size_t)1);
        char lim[32];

        if (w->gap.intervals == 0) {
                w->gap.start = w->batch[0].t;
                snprintf(w->gap.reason, sizeof w->gap.reason, "backlog_limit reached while %s", w->hold_reason);
                size_format(w->conf->backlog_limit, lim, sizeof lim);
                log_error("unwritten intervals reached backlog_limit (%s): dropping the oldest; "
                          "the gap will be recorded in the database", lim);
        }
        w->gap.end = w->batch[n - 1].t + w->batch[n - 1].dur;
        w->gap.intervals += (int64_t)n;
        for (size_t i = 0; i < n; i++) {
                w->backlog_bytes -= tick_bytes(&w->batch[i]);
                tick_clear(&w->batch[i]);
        }
        memmove(w->batch, w->batch + n, (w->nbatch - n) * sizeof *w->batch);
        memset(w->batch + w->nbatch - n, 0, n * sizeof *w->batch);
        w->nbatch -= n;
        head_rewrite(w);
}

/* Zeros are not stored (schema invariant 1), so they are not held either;
 * while writes are failing, each held interval keeps only the memory it
 * needs, so that backlog_limit buys as many intervals as it can. */
static void compact(struct writer *w, struct tick *t)
{
        size_t k = 0;

        for (size_t i = 0; i < t->nv; i++)
                if (t->v[i].null || t->v[i].value != 0)
                        t->v[k++] = t->v[i];
        t->nv = k;
        if ((w->last_flush_err || w->wal_held) && t->capv > k && k > 0) {
                struct sample_value *v = realloc(t->v, k * sizeof *v);
                if (v) {
                        t->v = v;
                        t->capv = k;
                }
        }
}

struct tick *writer_slot(struct writer *w)
{
        if (w->nbatch > 0 && w->backlog_bytes >= w->conf->backlog_limit)
                drop_oldest(w);
        if (w->nbatch == w->capbatch) {
                size_t cap = w->capbatch ? w->capbatch * 2 : 16;
                struct tick *b = realloc(w->batch, cap * sizeof *b);
                if (!b)
                        return NULL;
                memset(b + w->capbatch, 0, (cap - w->capbatch) * sizeof *b);
                w->batch = b;
                w->capbatch = cap;
        }
        return &w->batch[w->nbatch];
}

const struct tick *writer_take(struct writer *w)
{
        struct tick *t = &w->batch[w->nbatch];

        compact(w, t);
        head_append(w, t, w->nbatch);
        w->backlog_bytes += tick_bytes(t);
        w->flush_now |= t->nev > 0;
        w->nbatch++;
        w->nsamples++;
        return t;
}

/* A tick's cpu-scope values v[0..n), all of one metric, as one packed
 * row (schema 0004).  The sampler sorts a tick's values by metric. */
static int write_cpu_values(struct writer *w, int64_t tick, const struct sample_value *v, size_t n)
{
        int ncpus = 0;

        for (size_t i = 0; i < n; i++)
                if (v[i].loc >= 0)
                        ncpus = MAX(ncpus, v[i].loc + 1);
        if (ncpus > w->cpu_cap) {
                int64_t *pv = realloc(w->cpu_vals, (size_t)ncpus * sizeof *pv);
                bool *pn;
                if (!pv)
                        return -ENOMEM;
                w->cpu_vals = pv;
                pn = realloc(w->cpu_nulls, (size_t)ncpus * sizeof *pn);
                if (!pn)
                        return -ENOMEM;
                w->cpu_nulls = pn;
                w->cpu_cap = ncpus;
        }
        memset(w->cpu_vals, 0, (size_t)ncpus * sizeof *w->cpu_vals);
        memset(w->cpu_nulls, 0, (size_t)ncpus * sizeof *w->cpu_nulls);
        for (size_t i = 0; i < n; i++) {
                if (v[i].loc < 0)
                        continue;
                /* deltas of u64 counters, clamped at 0: never negative */
                w->cpu_vals[v[i].loc] = v[i].null ? 0 : MAX(v[i].value, (int64_t)0);
                w->cpu_nulls[v[i].loc] = v[i].null;
        }
        return store_add_cpu_values(w->store, tick, v[0].metric, w->cpu_vals, w->cpu_nulls, ncpus);
}

static int write_tick_values(struct writer *w, int64_t id, const struct tick *t)
{
        int r = 0;

        for (size_t k = 0; r >= 0 && k < t->nv;) {
                size_t end = k + 1;

                if (metric_table[t->v[k].metric].scope != SCOPE_CPU) {
                        r = store_add_sample(w->store, id, t->v[k].metric, t->v[k].loc, t->v[k].value, t->v[k].null);
                        k++;
                        continue;
                }
                while (end < t->nv && t->v[end].metric == t->v[k].metric)
                        end++;
                r = write_cpu_values(w, id, t->v + k, end - k);
                k = end;
        }
        return r;
}

/* One tick's rows: inserted, or (store_capture()) its head record. */
static int write_tick(struct writer *w, const struct tick *t, int64_t *ret_id)
{
        int64_t id = 0;
        int r = store_add_tick(w->store, t->t, t->dur, &id);

        if (r >= 0)
                r = write_tick_values(w, id, t);
        for (size_t k = 0; r >= 0 && k < t->nown; k++)
                r = store_add_own_sample(w->store, t->own[k].run, id, t->own[k].metric, t->own[k].value);
        for (size_t k = 0; r >= 0 && k < t->nmux; k++)
                r = store_add_mux(w->store, id, t->mux[k].cpu, t->mux[k].grp, t->mux[k].duty);
        for (size_t k = 0; r >= 0 && k < t->nev; k++)
                r = store_add_event(w->store, t->t + t->dur, t->ev[k].kind, t->ev[k].cpu, NULL);
        *ret_id = id;
        return r;
}

static int write_batch(struct writer *w)
{
        int64_t id = w->base_id - 1;
        int r = store_begin(w->store);

        if (r >= 0 && w->gap.intervals > 0)
                r = store_add_gap(w->store, w->gap.start, w->gap.end, w->gap.intervals, w->gap.reason);
        for (size_t i = 0; r >= 0 && i < w->nbatch; i++) {
                r = write_tick(w, &w->batch[i], &id);
                if (r >= 0 && id != w->base_id + (int64_t)i)
                        log_debug("tick %" PRId64 " written as %" PRId64 " (head ids off)", w->base_id + (int64_t)i, id);
        }
        if (r >= 0)
                r = store_commit(w->store);
        if (r < 0) {
                store_rollback(w->store);
                return r;
        }
        /* committed: the head's ticks are in the database */
        w->base_id = id + 1;
        head_truncate(w);
        return 0;
}

/* A reader that keeps a read transaction open pins the write-ahead log:
 * nothing can be checkpointed past its snapshot, and every write makes
 * the file longer.  Past wal_limit, hold the batch in memory until the
 * reader lets go.  A run boundary (force) is written anyway: it is a few
 * pages, and a run that cannot start is worse. */
static bool wal_blocked(struct writer *w, bool force)
{
        char lim[32];
        int r;

        if (force || store_wal_size(w->store) < w->conf->wal_limit)
                return false;
        r = store_wal_reset(w->store);
        if (r > 0) {
                if (w->wal_held)
                        log_info("the reader let go of the database: writing %zu held interval%s", w->nbatch,
                                 w->nbatch == 1 ? "" : "s");
                w->wal_held = false;
                return false;
        }
        if (r < 0)              /* not a reader: let the write report it */
                return false;
        if (!w->wal_held) {
                size_format(w->conf->wal_limit, lim, sizeof lim);
                log_warning("the write-ahead log reached wal_limit (%s) and a reader holds the database: "
                            "keeping samples in memory until it lets go", lim);
                snprintf(w->hold_reason, sizeof w->hold_reason,
                         "a reader held the database with the write-ahead log at wal_limit");
        }
        w->wal_held = true;
        return true;
}

int writer_flush(struct writer *w, bool force)
{
        int r;

        w->last_flush_mono = now_monotonic_ns();
        if (w->nbatch == 0 && w->gap.intervals == 0)
                return 0;
        if (wal_blocked(w, force))
                return -EBUSY;
        r = write_batch(w);
        if (r < 0) {
                if (!w->last_flush_err)
                        log_error("cannot write to the database: %s; keeping %zu interval%s in memory and retrying",
                                  store_errmsg(w->store), w->nbatch, w->nbatch == 1 ? "" : "s");
                snprintf(w->hold_reason, sizeof w->hold_reason, "the database could not be written (%.100s)",
                         store_errmsg(w->store));
                w->last_flush_err = r;
                return r;
        }
        if (w->last_flush_err)
                log_info("database writes work again: wrote %zu held interval%s", w->nbatch,
                         w->nbatch == 1 ? "" : "s");
        if (w->gap.intervals > 0)
                log_notice("recorded a gap of %" PRId64 " interval%s dropped from the backlog", w->gap.intervals,
                           w->gap.intervals == 1 ? "" : "s");
        w->last_flush_err = 0;
        w->flush_now = false;
        w->gap.intervals = 0;
        w->nbatch = 0;
        w->backlog_bytes = 0;
        return 0;
}

void writer_start(struct writer *w)
{
        w->last_flush_mono = now_monotonic_ns();
}

void writer_tick_done(struct writer *w, int64_t interval_ns)
{
        int64_t every = w->conf->commit_interval_ns;

        if (w->last_flush_err || w->wal_held)
                every = RETRY_EVERY_NS;
        if (every <= interval_ns || w->flush_now ||
            w->backlog_bytes >= MIN(FLUSH_HELD_MAX, w->conf->backlog_limit / 4) ||
            now_monotonic_ns() - w->last_flush_mono >= every)
                writer_flush(w, false);
}

bool writer_last_sampled(const struct writer *w, int64_t *ret_end)
{
        if (w->nbatch == 0)
                return false;
        *ret_end = w->batch[w->nbatch - 1].t + w->batch[w->nbatch - 1].dur;
        return true;
}

/* What a crash left in the head file and not in the database: inserted
 * now, before anything else is (runs_recover() closes runs on the ticks
 * written). */
static void head_recover(struct writer *w, const char *path)
{
        _cleanup_free_ uint8_t *p = NULL;
        char bad[4096 + 8];
        int64_t n = 0;
        size_t len;
        int r = head_read_file(path, &p, &len);

        if (r == -ENOENT)
                return;
        if (r >= 0)
                r = store_head_replay(w->store, p, len, &n);
        if (n > 0)
                log_notice("recovered %" PRId64 " tick%s from %s that the last daemon had not committed", n,
                           n == 1 ? "" : "s", path);
        if (r == 1)
                log_notice("dropped a torn last record from %s (a crash in the middle of its write)", path);
        if (r >= 0 || r == -ESTALE)
                return;         /* -ESTALE: another database's, left behind */
        /* kept for a look, out of the way of the new one */
        snprintf(bad, sizeof bad, "%s.bad", path);
        log_error("cannot recover the ticks in %s (%s); moved it to %s", path,
                  r == -EBADMSG || r == -EIO ? store_errmsg(w->store) : strerror(-r), bad);
        if (rename(path, bad) < 0)
                log_error("cannot move %s aside: %m", path);
}

int writer_open_head(struct writer *w, char **ret_err)
{
        char path[4096];
        struct stat st;
        uint64_t db_id;
        int fd, r;

        if ((size_t)snprintf(path, sizeof path, "%s" HEAD_SUFFIX, store_path(w->store)) >= sizeof path)
                return -ENAMETOOLONG;
        r = store_head_id(w->store, &db_id);
        if (r >= 0)
                head_recover(w, path);
        if (r >= 0)
                r = store_next_tick_id(w->store, &w->base_id);
        if (r < 0) {
                if (asprintf(ret_err, "cannot read the database's tick ids: %s", store_errmsg(w->store)) < 0)
                        *ret_err = NULL;
                return r;
        }
        /* readable by whoever may read the database */
        fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW,
                  stat(store_path(w->store), &st) == 0 ? st.st_mode & 0666 : 0640);
        if (fd < 0 || ftruncate(fd, 0) < 0 || (stat(store_path(w->store), &st) == 0 && fchmod(fd, st.st_mode & 0666) < 0)) {
                r = -errno;
                if (fd >= 0)
                        close(fd);
                if (asprintf(ret_err, "cannot open the head file %s: %s", path, strerror(-r)) < 0)
                        *ret_err = NULL;
                return r;
        }
        head_buf_reset(&w->hb);
        head_put_header(&w->hb, db_id);
        r = write_all(fd, w->hb.p, w->hb.len);
        if (r < 0) {
                close(fd);
                if (asprintf(ret_err, "cannot write the head file %s: %s", path, strerror(-r)) < 0)
                        *ret_err = NULL;
                return r;
        }
        w->head_fd = fd;
        w->head_size = HEAD_HEADER_SIZE;
        return 0;
}
