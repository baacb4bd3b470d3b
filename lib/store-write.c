/* store-write.c - what the daemon writes on the tick: transactions, and
 * ticks with their samples, the runs' own samples, multiplexing duty,
 * events and gaps.  In capture mode (store_capture) the same calls append
 * a tick's rows to the head file's record (lib/head.h) instead of
 * inserting them, so that the head holds exactly what the commit will.
 * And the write-ahead log: its size, syncing and checkpoints.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>

#include "head.h"
#include "macro.h"
#include "packed.h"
#include "store-internal.h"

static int step_once(struct store *s, int which, const char *sql)
{
        sqlite3_stmt *st = store_stmt(s, which, sql);
        int r;

        if (!st)
                return -EIO;
        r = sqlite3_step(st);
        sqlite3_reset(st);
        return r == SQLITE_DONE ? 0 : store_sqlite_error(s, sql);
}

/* BEGIN and COMMIT run on every flush: prepared once, like the inserts. */
int store_begin(struct store *s)
{
        return step_once(s, STMT_BEGIN, "BEGIN IMMEDIATE");
}

int store_commit(struct store *s)
{
        return step_once(s, STMT_COMMIT, "COMMIT");
}

/* After a failed statement SQLite may have rolled back already: then there
 * is nothing to do, and the first error stays the one reported. */
int store_rollback(struct store *s)
{
        store_context_forget(s);
        if (sqlite3_get_autocommit(s->db))
                return 0;
        return store_exec(s, "ROLLBACK");
}

void store_capture(struct store *s, struct head_buf *b)
{
        s->capture = b;
}

int store_add_tick(struct store *s, int64_t t_ns, int64_t dur_ns, int64_t *ret_tick)
{
        sqlite3_stmt *st;
        int r;

        if (s->capture) {
                head_put_tick(s->capture, s->capture->tick_id, t_ns, dur_ns);
                *ret_tick = s->capture->tick_id;
                return s->capture->err;
        }
        st = store_stmt(s, STMT_ADD_TICK, "INSERT INTO tick (t, dur) VALUES (?1, ?2)");
        if (!st)
                return -EIO;
        sqlite3_bind_int64(st, 1, t_ns);
        sqlite3_bind_int64(st, 2, dur_ns);
        r = sqlite3_step(st);
        sqlite3_reset(st);
        if (r != SQLITE_DONE)
                return store_sqlite_error(s, "tick");
        *ret_tick = sqlite3_last_insert_rowid(s->db);
        return 0;
}

int store_add_sample(struct store *s, int64_t tick, enum metric_id m, int loc, int64_t value, bool is_null)
{
        sqlite3_stmt *st;
        int r;

        if (metric_table[m].scope == SCOPE_CPU)        /* invariant 7 */
                return -EINVAL;
        if (!is_null && value == 0)     /* invariant 1 */
                return 0;
        if (!s->metric_rowid[m])
                return -ENOENT;
        if (s->capture) {
                head_put_sample(s->capture, s->metric_rowid[m], loc, value, is_null);
                return s->capture->err;
        }
        st = store_stmt(s, STMT_ADD_SAMPLE, "INSERT INTO sample (metric, tick, loc, value) VALUES (?1, ?2, ?3, ?4)");
        if (!st)
                return -EIO;
        sqlite3_bind_int64(st, 1, s->metric_rowid[m]);
        sqlite3_bind_int64(st, 2, tick);
        sqlite3_bind_int(st, 3, loc);
        if (is_null)
                sqlite3_bind_null(st, 4);
        else
                sqlite3_bind_int64(st, 4, value);
        r = sqlite3_step(st);
        sqlite3_reset(st);
        return r == SQLITE_DONE ? 0 : store_sqlite_error(s, "sample");
}

int store_add_own_sample(struct store *s, int64_t run, int64_t tick, enum metric_id m, double value)
{
        sqlite3_stmt *st;
        int r;

        if (value == 0)         /* invariant 5 of 0007 */
                return 0;
        if (!s->metric_rowid[m])
                return -ENOENT;
        if (s->capture) {
                head_put_own(s->capture, run, s->metric_rowid[m], value);
                return s->capture->err;
        }
        st = store_stmt(s, STMT_ADD_OWN, "INSERT OR REPLACE INTO run_own_sample (run, tick, metric, value) "
                                         "VALUES (?1, ?2, ?3, ?4)");
        if (!st)
                return -EIO;
        sqlite3_bind_int64(st, 1, run);
        sqlite3_bind_int64(st, 2, tick);
        sqlite3_bind_int64(st, 3, s->metric_rowid[m]);
        sqlite3_bind_double(st, 4, value);
        r = sqlite3_step(st);
        sqlite3_reset(st);
        return r == SQLITE_DONE ? 0 : store_sqlite_error(s, "run_own_sample");
}

int store_add_cpu_values(struct store *s, int64_t tick, enum metric_id m, const int64_t *vals, const bool *nulls,
                         int ncpus)
{
        sqlite3_stmt *st;
        int64_t total = 0;
        bool any = false, null = false;
        size_t need, len;
        int r;

        if (metric_table[m].scope != SCOPE_CPU || ncpus < 0 || ncpus > PACKED_MAX_CPUS)
                return -EINVAL;
        for (int c = 0; c < ncpus; c++) {
                if (nulls && nulls[c])
                        null = any = true;
                else if (vals[c] != 0) {
                        any = true;
                        /* a maximum's "total" over CPUs is their maximum */
                        total = metric_table[m].max ? MAX(total, vals[c])
                                                    : (int64_t)((uint64_t)total + (uint64_t)vals[c]);
                }
        }
        if (!any)               /* invariant 6 */
                return 0;
        if (!s->metric_rowid[m])
                return -ENOENT;
        need = packed_encode_bound(ncpus);
        if (need > s->packcap) {
                uint8_t *p = realloc(s->packbuf, need);
                if (!p)
                        return -ENOMEM;
                s->packbuf = p;
                s->packcap = need;
        }
        r = packed_encode(vals, nulls, ncpus, s->packbuf, s->packcap, &len);
        if (r < 0)
                return r;
        if (s->capture) {
                head_put_cpu(s->capture, s->metric_rowid[m], total, null, s->packbuf, len);
                return s->capture->err;
        }
        st = store_stmt(s, STMT_ADD_CPU, "INSERT INTO cpu_sample (tick, metric, total, vals) VALUES (?1, ?2, ?3, ?4)");
        if (!st)
                return -EIO;
        sqlite3_bind_int64(st, 1, tick);
        sqlite3_bind_int64(st, 2, s->metric_rowid[m]);
        if (null)
                sqlite3_bind_null(st, 3);
        else
                sqlite3_bind_int64(st, 3, total);
        sqlite3_bind_blob(st, 4, s->packbuf, (int)len, SQLITE_STATIC);
        r = sqlite3_step(st);
        sqlite3_reset(st);
        return r == SQLITE_DONE ? 0 : store_sqlite_error(s, "cpu_sample");
}

int store_add_mux(struct store *s, int64_t tick, int cpu, const char *grp, double duty)
{
        sqlite3_stmt *st;
        int r;

        if (s->capture) {
                head_put_mux(s->capture, cpu, grp, duty);
                return s->capture->err;
        }
        st = store_stmt(s, STMT_ADD_MUX, "INSERT INTO mux (tick, cpu, grp, duty) VALUES (?1, ?2, ?3, ?4)");
        if (!st)
                return -EIO;
        sqlite3_bind_int64(st, 1, tick);
        sqlite3_bind_int(st, 2, cpu);
        sqlite3_bind_text(st, 3, grp, -1, SQLITE_STATIC);
        sqlite3_bind_double(st, 4, duty);
        r = sqlite3_step(st);
        sqlite3_reset(st);
        return r == SQLITE_DONE ? 0 : store_sqlite_error(s, "mux");
}

int store_add_event(struct store *s, int64_t t_ns, const char *kind, int cpu, const char *detail)
{
        sqlite3_stmt *st;
        int r;

        if (s->capture) {
                head_put_event(s->capture, t_ns, kind, cpu, detail);
                return s->capture->err;
        }
        st = store_stmt(s, STMT_ADD_EVENT, "INSERT INTO event (t, kind, cpu, detail) VALUES (?1, ?2, ?3, ?4)");
        if (!st)
                return -EIO;
        sqlite3_bind_int64(st, 1, t_ns);
        sqlite3_bind_text(st, 2, kind, -1, SQLITE_STATIC);
        if (cpu >= 0)
                sqlite3_bind_int(st, 3, cpu);
        else
                sqlite3_bind_null(st, 3);
        if (detail)
                sqlite3_bind_text(st, 4, detail, -1, SQLITE_STATIC);
        else
                sqlite3_bind_null(st, 4);
        r = sqlite3_step(st);
        sqlite3_reset(st);
        return r == SQLITE_DONE ? 0 : store_sqlite_error(s, "event");
}

int store_add_gap(struct store *s, int64_t start_ns, int64_t end_ns, int64_t intervals, const char *reason)
{
        sqlite3_stmt *st;
        int r;

        if (sqlite3_prepare_v2(s->db, "INSERT INTO gap (start, end, intervals, reason) VALUES (?1, ?2, ?3, ?4)", -1,
                               &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, "gap");
        sqlite3_bind_int64(st, 1, start_ns);
        sqlite3_bind_int64(st, 2, end_ns);
        sqlite3_bind_int64(st, 3, intervals);
        sqlite3_bind_text(st, 4, reason, -1, SQLITE_STATIC);
        r = sqlite3_step(st) == SQLITE_DONE ? 0 : store_sqlite_error(s, "gap");
        sqlite3_finalize(st);
        return r;
}

int64_t store_memory_used(void)
{
        return (int64_t)sqlite3_memory_used();
}

int64_t store_wal_size(struct store *s)
{
        char path[PATH_MAX];
        struct stat st;

        if ((size_t)snprintf(path, sizeof path, "%s-wal", s->path) >= sizeof path || stat(path, &st) < 0)
                return 0;
        return (int64_t)st.st_size;
}

int store_sync_wal(struct store *s)
{
        char path[PATH_MAX];
        int fd, r = 0;

        if ((size_t)snprintf(path, sizeof path, "%s-wal", s->path) >= sizeof path)
                return -ENAMETOOLONG;
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        if (fdatasync(fd) < 0)
                r = -errno;
        close(fd);
        return r;
}

int store_wal_reset(struct store *s)
{
        int r;

        /* no busy handler: a reader in the way answers BUSY at once */
        sqlite3_busy_timeout(s->db, 0);
        r = sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
        sqlite3_busy_timeout(s->db, STORE_BUSY_TIMEOUT_MS);
        if (r == SQLITE_OK)
                return 1;
        if (r == SQLITE_BUSY || r == SQLITE_LOCKED)
                return 0;
        return store_sqlite_error(s, "checkpoint");
}

int store_checkpoint_due(struct store *s, int64_t min_wal)
{
        int64_t changes = sqlite3_total_changes64(s->db);
        bool quiet = changes == s->ckpt_seen && changes != s->ckpt_done;

        s->ckpt_seen = changes;
        if (!quiet && store_wal_size(s) < min_wal)
                return 0;
        s->ckpt_done = changes;
        return store_checkpoint(s, false);
}

int store_checkpoint(struct store *s, bool truncate)
{
        int r = sqlite3_wal_checkpoint_v2(s->db, NULL, truncate ? SQLITE_CHECKPOINT_TRUNCATE : SQLITE_CHECKPOINT_PASSIVE,
                                          NULL, NULL);
        /* BUSY: a reader is in the way; the next checkpoint catches up. */
        if (r == SQLITE_OK || r == SQLITE_BUSY)
                return 0;
        return store_sqlite_error(s, "checkpoint");
}
