/* store-internal.h - what the store's own files (lib/store*.c) share; no other file includes it. */
#ifndef SCALEMON_STORE_INTERNAL_H
#define SCALEMON_STORE_INTERNAL_H

#include <sqlite3.h>

#include "store.h"

#define STORE_BUSY_TIMEOUT_MS 5000
/* The writer's page cache, KiB (SQLite's default is 2000): a tick's inserts touch
 * the right edge of each table and index; the rest is in the kernel's page
 * cache a pread() away. */
#define STORE_WRITER_CACHE_KIB 512

enum {
        STMT_ADD_TICK,
        STMT_ADD_SAMPLE,
        STMT_ADD_OWN,
        STMT_ADD_CPU,
        STMT_ADD_MUX,
        STMT_ADD_EVENT,
        STMT_META_SET,
        STMT_BEGIN,
        STMT_COMMIT,
        STMT_RUN_END,                   /* store_run_finish(): once per run stop, */
        STMT_RUN_SCORE,                 /* its scores, */
        STMT_RUN_TOTAL_32,              /* and its totals (some 140 rows): 32 rows */
        STMT_RUN_TOTAL_4,               /* a statement, then 4, then 1 */
        STMT_RUN_TOTAL_1,
        _STMT_MAX,
};

struct store {
        sqlite3 *db;
        char *path;
        enum store_mode mode;
        int lock_fd;                     /* flock()ed database file (writer), or -1 */
        sqlite3_stmt *stmt[_STMT_MAX];   /* the write path's prepared statements */
        int64_t metric_rowid[_M_MAX];    /* metric.id of each catalogue entry, 0 = none */
        uint8_t *packbuf;                /* store_add_cpu_values()' blob, reused */
        size_t packcap;
        struct store_kv *ctx;            /* the last context set written ... */
        size_t nctx;
        int64_t ctx_id;                  /* ... and its id; 0: none (or rolled back) */
        struct head_buf *capture;        /* store_capture(): rows to the head, not SQL */
        char head_note[768];             /* store_head_attach(): why the head could not be read */
        int64_t ckpt_seen, ckpt_done;     /* store_checkpoint_due(): changes at the last call, at the last checkpoint */
        char errmsg[512];
};

/* A context set's id: the last one written if the pairs are the same,
 * else a new one (in the caller's transaction). */
int store_context_put(struct store *s, const struct store_kv *kv, size_t n, int64_t *ret_id);
/* Forget the last context set (its transaction was rolled back). */
void store_context_forget(struct store *s);

/* Prepare (or reuse) a statement of the write path. */
sqlite3_stmt *store_stmt(struct store *s, int which, const char *sql);
/* Run SQL without results; on error its message goes to store_errmsg()
 * and -EIO is returned. */
int store_exec(struct store *s, const char *sql);
/* Remember sqlite's message for store_errmsg() and return -EIO. */
int store_sqlite_error(struct store *s, const char *what);
/* store-locks.c: a run's lock rows, inside the caller's transaction */
struct store_lock;
struct store_lock_lost;
/* A run's lock objects (run_lock_object), within the caller's
 * transaction. */
int store_lock_objects_insert(struct store *s, int64_t run, const struct store_lock_obj *o, size_t n);
int store_locks_insert(struct store *s, int64_t run, const struct store_lock *v, size_t n,
                       const struct store_lock_lost *lost);
/* store-query.c: the first and last tick ids with t in [since, until)
 * (lo > hi when none): the bounds that keep a join of tick and a series
 * table cheap when both are the head's views (store-head.c). */
int store_tick_id_range(struct store *s, int64_t since, int64_t until, int64_t *ret_lo, int64_t *ret_hi);
/* Catalogue id of a metric.id, -1 if unknown. */
int store_metric_by_rowid(struct store *s, int64_t rowid);
/* Fill metric_rowid[] from the metric table. */
int store_load_metric_ids(struct store *s);

#endif
