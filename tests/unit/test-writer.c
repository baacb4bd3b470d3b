/* test-writer.c - the batch writer on real SQLite files, with ticks built
 * by hand (the writer takes ticks; it owns no sampler): what a flush
 * writes, zeros left out, the head file filled and emptied; a reader that
 * holds the write-ahead log at wal_limit (the batch is held, not
 * written); the backlog at backlog_limit (the oldest dropped, written as
 * one gap row with the next batch).  Every count is the test's own: the
 * values it put into the ticks.  No root. */
#include "config.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "head.h"
#include "sqlraw.h"
#include "store.h"
#include "tap.h"
#include "writer.h"

#define S 1000000000LL
#define T0 (1796031478LL * S)
#define NCPU 4

static char dir[] = "/tmp/scalemon-test-writer.XXXXXX";

static int64_t file_size(const char *path)
{
        struct stat st;

        return stat(path, &st) < 0 ? -1 : (int64_t)st.st_size;
}

static int sum_cb(void *userdata, int metric, int loc, double value)
{
        double (*sums)[NCPU] = userdata;

        if (loc >= 0 && loc < NCPU)
                sums[metric][loc] += value;
        return 0;
}

static struct store *open_db(const char *name, char *db, size_t len)
{
        bool avail[_M_MAX];
        char *why[_M_MAX] = { 0 }, *err = NULL;
        double scale[_M_MAX];
        struct store *st = NULL;

        snprintf(db, len, "%s/%s", dir, name);
        if (store_open(db, STORE_WRITE, &st, &err) < 0) {
                printf("Bail out! cannot create %s: %s\n", db, err ? err : "?");
                exit(1);
        }
        for (int i = 0; i < _M_MAX; i++) {
                avail[i] = true;
                scale[i] = 1;
        }
        if (store_metrics_sync(st, avail, why, scale) < 0) {
                printf("Bail out! catalogue: %s\n", store_errmsg(st));
                exit(1);
        }
        return st;
}

/* Tick i into the writer: context_switches (i+1)*(c+1) on CPU c, and
 * page_faults 0 on every CPU when zeros (a row the writer must leave
 * out).  Exactly as many values as the tick holds, so that compacting a
 * held tick leaves its size alone. */
static void take(struct writer *w, int i, bool zeros)
{
        struct tick *t = writer_slot(w);
        size_t n = NCPU * (zeros ? 2 : 1);

        if (!t) {
                printf("Bail out! writer_slot: out of memory\n");
                exit(1);
        }
        if (t->capv != n) {
                free(t->v);
                t->v = calloc(n, sizeof *t->v);
                t->capv = n;
        }
        t->t = T0 + i * S;
        t->dur = S;
        t->nv = t->nmux = t->nev = t->nown = 0;
        for (int c = 0; c < NCPU; c++)
                t->v[t->nv++] = (struct sample_value){ .value = (int64_t)(i + 1) * (c + 1), .loc = c,
                                                       .metric = M_CONTEXT_SWITCHES };
        for (int c = 0; zeros && c < NCPU; c++)
                t->v[t->nv++] = (struct sample_value){ .value = 0, .loc = c, .metric = M_PAGE_FAULTS };
        writer_take(w);
}

/* Five ticks held, then one flush: five ticks in the database, the sums
 * the ticks carried, no all-zero row; the head file holds the ticks until
 * the commit and is emptied after it. */
static void test_batch(void)
{
        char db[512], head[600];
        struct store *st = open_db("batch.db", db, sizeof db);
        struct conf c;
        struct writer *w = NULL;
        char *err = NULL;
        int64_t end = 0, bytes = 0;
        double sums[_M_MAX][NCPU] = { { 0 } };

        conf_defaults(&c);
        ok(writer_new(st, &c, &w) == 0, "batch: writer made");
        ok(writer_open_head(w, &err) == 0, "batch: head file opened");
        snprintf(head, sizeof head, "%s" HEAD_SUFFIX, db);
        is_int(file_size(head), HEAD_HEADER_SIZE, "batch: an empty head is its header");
        for (int i = 0; i < 5; i++)
                take(w, i, true);
        is_int(writer_backlog(w, &bytes), 5, "batch: 5 ticks held");
        ok(bytes > 0, "batch: and their bytes counted (%lld)", (long long)bytes);
        is_int(raw_int(db, "SELECT count(*) FROM tick"), 0, "batch: none in the database before the flush");
        ok(file_size(head) > HEAD_HEADER_SIZE, "batch: the head file holds them (%lld bytes)",
           (long long)file_size(head));
        ok(writer_last_sampled(w, &end) && end == T0 + 5 * S, "batch: the newest held ends at t0 + 5 s");
        is_int(writer_flush(w, false), 0, "batch: flush");
        is_int(writer_backlog(w, NULL), 0, "batch: nothing held after it");
        ok(!writer_last_sampled(w, &end), "batch: no held tick to report");
        is_int(writer_samples(w), 5, "batch: 5 ticks taken in all");
        is_int(raw_int(db, "SELECT count(*) FROM tick"), 5, "batch: 5 ticks in the database");
        is_int(raw_int(db, "SELECT min(t) FROM tick"), T0, "batch: the first at t0");
        is_int(raw_int(db, "SELECT sum(dur) FROM tick"), 5 * S, "batch: 5 s of ticks");
        is_int(raw_int(db, "SELECT count(*) FROM cpu_sample"), 5, "batch: one cpu_sample row a tick: no all-zero row");
        ok(store_sum_samples(st, 0, 5, sum_cb, sums) == 0, "batch: sums read back");
        /* CPU c: sum over i = 0..4 of (i+1)*(c+1) = 15*(c+1) */
        ok(sums[M_CONTEXT_SWITCHES][0] == 15 && sums[M_CONTEXT_SWITCHES][1] == 30 &&
           sums[M_CONTEXT_SWITCHES][2] == 45 && sums[M_CONTEXT_SWITCHES][3] == 60,
           "batch: context_switches per CPU are the ticks' sums (15, 30, 45, 60)");
        ok(sums[M_PAGE_FAULTS][0] == 0 && sums[M_PAGE_FAULTS][3] == 0, "batch: page_faults 0");
        is_int(file_size(head), HEAD_HEADER_SIZE, "batch: the head file emptied after the commit");
        is_int(raw_int(db, "SELECT count(*) FROM gap"), 0, "batch: no gap");
        writer_free(w);
        store_close(st);
        conf_free(&c);
        free(err);
}

/* A reader's open read transaction pins the write-ahead log: with it at
 * wal_limit the batch is held (-EBUSY), not written; past backlog_limit
 * the oldest ticks go, one at a time below 16 held, and are written as
 * one gap row when the reader lets go. */
static void test_wal_hold_and_gap(void)
{
        char db[512];
        struct store *st = open_db("hold.db", db, sizeof db);
        struct conf c;
        struct writer *w = NULL;
        sqlite3 *rd = NULL;
        sqlite3_stmt *q = NULL;
        int64_t one = 0, bytes = 0;

        conf_defaults(&c);
        c.wal_limit = 1;                /* any log at all is at the limit */
        ok(writer_new(st, &c, &w) == 0, "hold: writer made");
        /* the reader's snapshot, kept open */
        ok(sqlite3_open_v2(db, &rd, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
           sqlite3_prepare_v2(rd, "SELECT count(*) FROM metric", -1, &q, NULL) == SQLITE_OK &&
           sqlite3_exec(rd, "BEGIN", NULL, NULL, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW,
           "hold: a reader holds a snapshot");
        ok(store_wal_size(st) > 0, "hold: the write-ahead log is not empty (%lld bytes)",
           (long long)store_wal_size(st));

        take(w, 0, false);
        is_int(writer_flush(w, false), -EBUSY, "hold: the flush is held");
        ok(writer_held(w) && !writer_failing(w), "hold: held, not failing");
        is_int(writer_backlog(w, &one), 1, "hold: the tick stays in memory");
        /* room for 4 ticks of this size */
        c.backlog_limit = 4 * one;
        for (int i = 1; i < 10; i++)
                take(w, i, false);
        is_int(writer_backlog(w, &bytes), 4, "hold: 10 ticks taken, 4 held at backlog_limit");
        is_int(bytes, 4 * one, "hold: 4 ticks' bytes");
        is_int(writer_flush(w, false), -EBUSY, "hold: still held");
        is_int(raw_int(db, "SELECT count(*) FROM tick"), 0, "hold: nothing written while held");

        /* the reader lets go */
        sqlite3_finalize(q);
        sqlite3_exec(rd, "COMMIT", NULL, NULL, NULL);
        sqlite3_close(rd);
        is_int(writer_flush(w, false), 0, "gap: written once the reader let go");
        ok(!writer_held(w), "gap: no longer held");
        is_int(raw_int(db, "SELECT count(*) FROM tick"), 4, "gap: the 4 held ticks written");
        is_int(raw_int(db, "SELECT min(t) FROM tick"), T0 + 6 * S, "gap: the oldest written is tick 6");
        is_int(raw_int(db, "SELECT count(*) FROM gap"), 1, "gap: one gap row");
        is_int(raw_int(db, "SELECT intervals FROM gap"), 6, "gap: 6 intervals lost");
        is_int(raw_int(db, "SELECT start FROM gap"), T0, "gap: from tick 0's start");
        is_int(raw_int(db, "SELECT end FROM gap"), T0 + 6 * S, "gap: to tick 5's end");
        is_int(raw_int(db, "SELECT count(*) FROM gap WHERE reason LIKE 'backlog_limit reached while a reader held%'"),
               1, "gap: its reason names the reader");
        is_int(writer_samples(w), 10, "gap: 10 ticks taken in all");
        writer_free(w);
        store_close(st);
        conf_free(&c);
}

int main(void)
{
        if (!mkdtemp(dir)) {
                printf("Bail out! mkdtemp\n");
                return 1;
        }
        test_batch();
        test_wal_hold_and_gap();
        tap_rm_rf(dir);
        return tap_done();
}
