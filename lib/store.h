/* store.h - the SQLite store: schema, the daemon's write path, queries.
 *
 * The daemon opens the store for writing (one connection, WAL, flock on the
 * file so a second daemon is refused); clients open it read-only and read
 * while the daemon writes.
 */
#ifndef SCALEMON_STORE_H
#define SCALEMON_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metric.h"

struct store;
struct store_lock;
struct store_lock_lost;
struct store_lock_obj;

enum store_mode {
        STORE_READ,     /* read-only, busy timeout; the database must exist */
        STORE_WRITE,    /* create, migrate, take the writer lock */
};

/* Open PATH.  Errors: -ENOENT (no database, read mode), -EBUSY (another
 * writer holds it), -EPROTONOSUPPORT (schema newer than this binary),
 * -EMEDIUMTYPE (not a scalemon database), -EIO (see store_errmsg).
 * On failure *ret_err (if not NULL) gets a malloc'd message. */
int store_open(const char *path, enum store_mode mode, struct store **ret, char **ret_err);
/* STORE_WRITE, with the page size a database this creates gets (an
 * existing one keeps its own): store_page_size_for(ncpus).  store_open()
 * creates with 16 KiB pages. */
int store_open_sized(const char *path, int page_size, struct store **ret, char **ret_err);
/* The page size for a new database on a host of ncpus CPUs:
 * 4 KiB where a tick's per-CPU row fits a 4 KiB page's b-tree cell,
 * 16 KiB past that. */
int store_page_size_for(int ncpus);
struct store *store_close(struct store *s);

int store_schema_version(struct store *s);
int store_latest_schema_version(void);
const char *store_path(struct store *s);
const char *store_errmsg(struct store *s);

/* --- meta key/value --- */
int store_meta_set(struct store *s, const char *key, const char *value);
int store_meta_set_int(struct store *s, const char *key, int64_t value);
int store_meta_get(struct store *s, const char *key, char **ret);       /* -ENOENT if absent */
int store_meta_get_int(struct store *s, const char *key, int64_t *ret);

/* --- machine description (daemon) --- */
struct host_info {
        char *machine_id;
        char *hostname;
        char *kernel;
        char *cpu_model;
        int ncpus;
        int nnodes;
};
void host_info_clear(struct host_info *h);
int store_host_update(struct store *s, const struct host_info *h, int64_t now_ns, int64_t *ret_id);
int store_topology_set(struct store *s, int ncpus, const int *node_of_cpu, const bool *online);

/* Record the catalogue: every metric, with availability and reason.
 * scale[] may be NULL (1 for all). */
int store_metrics_sync(struct store *s, const bool *available, char *const *why, const double *scale);

/* --- the write path (daemon), inside store_begin/store_commit --- */
int store_begin(struct store *s);
int store_commit(struct store *s);
int store_rollback(struct store *s);
/* --- the head file (lib/head.h, lib/store-head.c) --- */
struct head_buf;
/* While b is set (not NULL), store_add_tick, _sample, _cpu_values,
 * _own_sample, _mux and _event encode their rows into b (the tick's id is
 * b->tick_id) instead of inserting them: a tick's head record is exactly
 * what its insert will be. */
void store_capture(struct store *s, struct head_buf *b);
/* The database's head_id (meta): the identity a head file carries.  The
 * writer makes one on first use; -ENOENT for a reader if none. */
int store_head_id(struct store *s, uint64_t *ret);
/* The id the next tick inserted will get (AUTOINCREMENT). */
int store_next_tick_id(struct store *s, int64_t *ret);
/* Daemon: insert the head's ticks the database does not have yet, in one
 * transaction; *ret_n: how many.  1 if a torn last record was dropped;
 * -ESTALE: the head is another database's; -EBADMSG: not a head file of
 * this version (store_errmsg says why). */
int store_head_replay(struct store *s, const uint8_t *p, size_t n, int64_t *ret_n);
/* Reader: the ticks in DATABASE-head not in the database yet, read
 * through the same queries (temp views).  Never fails: what could not be
 * read is said by store_head_note() (NULL if nothing to say). */
int store_head_attach(struct store *s);
const char *store_head_note(struct store *s);

int store_add_tick(struct store *s, int64_t t_ns, int64_t dur_ns, int64_t *ret_tick);
/* A node- or system-scope value (-EINVAL for a cpu-scope metric).  A zero
 * value is not stored (schema invariant 1); is_null: not counted. */
int store_add_sample(struct store *s, int64_t tick, enum metric_id m, int loc, int64_t value, bool is_null);
/* Every CPU's value of a cpu-scope metric in a tick, packed in one row
 * (schema 0004): vals[c] for CPU c < ncpus, nulls[c] (nulls may be NULL)
 * if it was not counted.  Nothing is stored if all are 0 (invariant 6).
 * -EINVAL: not a cpu-scope metric; -ERANGE: a negative value. */
int store_add_cpu_values(struct store *s, int64_t tick, enum metric_id m, const int64_t *vals, const bool *nulls,
                         int ncpus);
int store_add_mux(struct store *s, int64_t tick, int cpu, const char *grp, double duty);
/* A run's own cgroup's delta in one tick, in the catalogue unit (schema
 * 0007, run_own_sample); a 0 is not stored. */
int store_add_own_sample(struct store *s, int64_t run, int64_t tick, enum metric_id m, double value);
int store_add_event(struct store *s, int64_t t_ns, const char *kind, int cpu, const char *detail);
int store_add_gap(struct store *s, int64_t start_ns, int64_t end_ns, int64_t intervals, const char *reason);
int store_checkpoint(struct store *s, bool truncate);
/* Called every minute or so: a passive checkpoint when the log holds
 * min_wal bytes, or when this connection wrote since the last checkpoint
 * and not since the last call (the log is quiet).  0, or as
 * store_checkpoint(). */
int store_checkpoint_due(struct store *s, int64_t min_wal);
/* Memory SQLite holds in this process (its page cache, mostly). */
int64_t store_memory_used(void);
/* Size of the write-ahead log file in bytes (0 if there is none). */
int64_t store_wal_size(struct store *s);
/* Copy the whole WAL into the database and truncate it, without waiting:
 * 1 if done, 0 if a reader still uses it (try later). */
/* fdatasync() the write-ahead log: the commits so far survive a power
 * loss (synchronous = NORMAL syncs it at checkpoints only). */
int store_sync_wal(struct store *s);
int store_wal_reset(struct store *s);
/* Retention (store-retain.c, schema 0005).  Ticks from a run's start
 * tick to its end tick (to the newest, while it runs) are never merged
 * or deleted.  Each call is one transaction.
 *
 * Merge at most max_ticks ticks outside runs of the oldest
 * bucket_ns-long bucket that ended before cutoff_ns into its first tick.
 * *cursor_ns: buckets before it are done (negative: unknown, taken from
 * the database).  Returns 1 if it found work (*ret_merged: ticks merged
 * away), 0 if nothing is due. */
int store_rollup_step(struct store *s, int64_t cutoff_ns, int64_t bucket_ns, size_t max_ticks, int64_t *cursor_ns,
                      size_t *ret_merged);
/* Delete the samples and ticks of at most max_ticks of the oldest ticks
 * outside runs that ended before cutoff_ns.  *cursor_id: ticks below it
 * are known kept or gone (0 at first; after a run is deleted, 0 again).
 * Returns 1 if it deleted (*ret_deleted), 0 if nothing is due. */
int store_delete_step(struct store *s, int64_t cutoff_ns, size_t max_ticks, int64_t *cursor_id, size_t *ret_deleted);
/* Bytes of the database file in use (pages not on the free list). */
int store_db_bytes(struct store *s, int64_t *ret);

/* --- reading --- */
struct store_metric_row {
        char name[64];
        char scope[8];
        char unit[32];
        char source[96];
        double scale;
        bool available;
        char why[256];
};
/* Rows for every metric the database knows, in catalogue order. */
int store_metrics_list(struct store *s, struct store_metric_row **ret, size_t *ret_n);

struct store_summary {
        int64_t ticks;
        int64_t first_t, last_t;       /* first tick start, last tick end; 0 if none */
        int64_t samples;
        int64_t size_bytes;            /* main file + WAL */
        int ncpus, nnodes, online_cpus;
};
int store_summary(struct store *s, struct store_summary *ret);

int store_host_get(struct store *s, struct host_info *ret);
/* CPU->node map: *ret_node[cpu] (-1 where unknown), n = highest cpu + 1. */
int store_topology_get(struct store *s, int **ret_node, bool **ret_online, int *ret_n);

enum series_filter { SERIES_ALL, SERIES_CPU, SERIES_NODE };
struct series_point {
        int64_t t_ns;          /* start */
        int64_t dur_ns;        /* length */
        double value;          /* sum of counts in the unit (scaled) */
        bool not_counted;      /* a perf group was multiplexed out: value unknown */
};
/* Deltas of METRIC per tick between since and until (tick starts), summed
 * over all CPUs (SERIES_ALL), one CPU or one node (arg); for node-scope
 * metrics SERIES_ALL sums nodes and SERIES_NODE picks one.  step_ns > 0
 * merges ticks into buckets of step_ns. */
int store_series(struct store *s, const char *metric, enum series_filter f, int arg,
                 int64_t since, int64_t until, int64_t step_ns,
                 struct series_point **ret, size_t *ret_n);
/* The series of a cpu-scope METRIC for each of CPUs 0..ncpus-1, what
 * store_series() with SERIES_CPU gives for each, in one pass over the
 * ticks that decodes each tick's blob once.  (*ret)[c] is CPU c's series;
 * all have the same *ret_n points.  The caller frees each series and
 * *ret.  -EINVAL if METRIC is not cpu-scope or ncpus < 1. */
int store_series_cpus(struct store *s, const char *metric, int ncpus, int64_t since, int64_t until,
                      int64_t step_ns, struct series_point ***ret, size_t *ret_n);


/* --- runs (schema 0002) --- */

struct store_kv {
        char *key;
        char *value;
};

struct store_score {
        char *key;
        double value;
};

/* LEVEL_CGROUP: the run's own cgroup (loc 0), where the run had one
 * (daemon/sampler/owncg.c; schema 0007) */
enum total_level { LEVEL_CPU, LEVEL_NODE, LEVEL_SYSTEM, LEVEL_CGROUP };
const char *total_level_name(enum total_level l);

struct store_total {
        char metric[64];
        enum total_level level;
        int loc;
        double value;          /* in the catalogue unit */
};

struct store_mark {
        int64_t t;
        char *text;
};

struct run_info {
        int64_t id;
        char name[160];
        char status[16];                /* running, done, failed, interrupted */
        int64_t host;
        int64_t start, end;             /* end 0 while running */
        int64_t start_tick, end_tick;   /* 0 where NULL (imported) */
        bool has_exit_status;
        int exit_status;
        bool has_times;
        double wall_s, user_s, sys_s;
        bool has_switches;              /* run exec's wait4(): the run's tasks' own (schema 0007) */
        int64_t voluntary_switches, involuntary_switches;
        char *command;                  /* or NULL */
        bool imported;
        int64_t dur_ns;                 /* CLOCK_MONOTONIC length from its ticks; -1 if unknown */
};

struct run_detail {
        struct store_kv *tags;          /* sorted by key */
        size_t ntags;
        struct store_score *scores;     /* sorted by key */
        size_t nscores;
        struct store_kv *context;       /* sorted by key */
        size_t ncontext;
        struct store_mark *marks;       /* by time */
        size_t nmarks;
        struct store_total *totals;     /* by metric, level, loc */
        size_t ntotals;
};

void run_info_free(struct run_info *r);
void run_infos_free(struct run_info *r, size_t n);
void run_detail_free(struct run_detail *d);

/* The writer's side: open a run, close it with its totals. */
struct run_new {
        const char *name;
        int64_t host;
        int64_t start;
        int64_t start_tick;
        const char *command;
        const struct store_kv *tags;
        size_t ntags;
        const struct store_kv *context;
        size_t ncontext;
};
int store_run_insert(struct store *s, const struct run_new *rn, int64_t *ret_id);

struct run_end {
        const char *status;
        int64_t end;
        int64_t end_tick;
        bool has_exit_status;
        int exit_status;
        bool has_times;
        double wall_s, user_s, sys_s;
        bool has_switches;
        int64_t voluntary_switches, involuntary_switches;
        int64_t length_ns;                 /* CLOCK_MONOTONIC length; < 0: unknown */
        const struct store_score *scores;
        size_t nscores;
        const struct store_total *totals;  /* metric names from the catalogue */
        size_t ntotals;
};
int store_run_finish(struct store *s, int64_t id, const struct run_end *re);
int store_run_add_mark(struct store *s, int64_t id, int64_t t, const char *text);
/* Delete a finished run and what belongs to it: tags, scores, marks,
 * totals, and its context set unless another run shares it.  The samples
 * of its time stay (they are the machine's).  -ENOENT: no run of that
 * name; -EBUSY: it is still running. */
int store_run_delete(struct store *s, const char *name);

int store_run_find(struct store *s, const char *name, struct run_info *ret);   /* -ENOENT */
int store_runs_open(struct store *s, struct run_info **ret, size_t *ret_n);

/* The names a shell completes (store-words.c): at most max, distinct,
 * sorted, each starting with prefix; key: the tag whose values are asked
 * for (STORE_WORDS_TAG_VALUES).  Free with store_words_free(). */
enum store_words {
        STORE_WORDS_RUNS,
        STORE_WORDS_TAG_KEYS,
        STORE_WORDS_TAG_VALUES,
        STORE_WORDS_SCORE_KEYS,
        STORE_WORDS_CONTEXT_KEYS,
};
int store_words(struct store *s, enum store_words what, const char *key, const char *prefix, size_t max,
                char ***ret, size_t *ret_n);
void store_words_free(char **w, size_t n);
/* The last tick written: id and end time; -ENOENT if none. */
int store_last_tick(struct store *s, int64_t *ret_id, int64_t *ret_end);
/* Sums of the samples of ticks in (after_tick, upto_tick], per (metric,
 * loc), in the catalogue unit: fn is called once per non-zero sum. */
int store_sum_samples(struct store *s, int64_t after_tick, int64_t upto_tick,
                      int (*fn)(void *userdata, int metric, int loc, double value), void *userdata);

struct run_filter {
        int64_t since, until;           /* on the run's start; until inclusive */
        const struct store_kv *tags;    /* every one must match */
        size_t ntags;
        const char *host;               /* the host's name, or NULL for every host */
};
int store_runs_list(struct store *s, const struct run_filter *f, struct run_info **ret, size_t *ret_n);
int store_run_detail(struct store *s, int64_t id, struct run_detail *ret);
/* Only some of it: what `runs` lists needs no totals, and a curve only
 * the system-wide ones (a 256-CPU run has some 5,000 totals, nearly all
 * per CPU).  The parts not read are left empty. */
enum run_part {
        RUN_TAGS = 1 << 0,
        RUN_SCORES = 1 << 1,
        RUN_CONTEXT = 1 << 2,
        RUN_MARKS = 1 << 3,
        RUN_TOTALS = 1 << 4,            /* every total: per CPU, per node, system-wide */
        RUN_SYSTEM_TOTALS = 1 << 5,     /* the system-wide totals only */
        RUN_ALL = RUN_TAGS | RUN_SCORES | RUN_CONTEXT | RUN_MARKS | RUN_TOTALS,
};
int store_run_detail_parts(struct store *s, int64_t id, unsigned parts, struct run_detail *ret);

/* --- runs from another database: exchange.c's export and import --- */

/* The host row id, as it was recorded (cpu_model NULL where unknown). */
int store_host_by_id(struct store *s, int64_t id, struct host_info *ret);

/* A finished run as another database had it.  Inserted with its tags,
 * scores, context, marks and totals (the totals' metrics must exist:
 * store_metric_import()).  Doubles that are NAN are stored as NULL. */
struct run_import {
        const char *name;
        int64_t host;                   /* store_host_import()'s id */
        const char *status;             /* done, failed, interrupted */
        int64_t start, end;
        bool has_exit_status;
        int exit_status;
        double wall_s, user_s, sys_s;   /* or NAN */
        const char *command;            /* or NULL */
        bool has_length;
        int64_t length_ns;
        bool has_switches;              /* the command's own voluntary and involuntary switches */
        int64_t voluntary_switches, involuntary_switches;
        const struct store_lock *locks; /* its contended locks (store-locks.h), or NULL */
        size_t nlocks;
        const struct store_lock_lost *locks_lost;       /* or NULL: the run had no lock wait */
        const struct store_lock_obj *lock_objects;      /* by lock object, or NULL */
        size_t nlock_objects;
        const struct store_kv *tags;
        size_t ntags;
        const struct store_score *scores;
        size_t nscores;
        const struct store_kv *context; /* sorted by key */
        size_t ncontext;
        const struct store_mark *marks;
        size_t nmarks;
        const struct store_total *totals;
        size_t ntotals;
};

/* Import: everything between store_import_begin() and
 * store_import_commit() is one transaction; on an error, store_rollback(). */
int store_import_begin(struct store *s);
int store_import_commit(struct store *s);
/* A host, matched by machine_id; first_seen moves back to first. */
int store_host_import(struct store *s, const struct host_info *h, int64_t first, int64_t *ret_id);
/* A metric this database has not seen gets a row, marked as not sampled here. */
int store_metric_import(struct store *s, const char *name, const char *scope, const char *unit);
/* -EEXIST: a run of that name is in the database already. */
int store_run_import(struct store *s, const struct run_import *ri, int64_t *ret_id);

#endif
