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

enum store_mode {
        STORE_READ,     /* read-only, busy timeout; the database must exist */
        STORE_WRITE,    /* create, migrate, take the writer lock */
};

/* Open PATH.  Errors: -ENOENT (no database, read mode), -EBUSY (another
 * writer holds it), -EPROTONOSUPPORT (schema newer than this binary),
 * -EMEDIUMTYPE (not a scalemon database), -EIO (see store_errmsg).
 * On failure *ret_err (if not NULL) gets a malloc'd message. */
int store_open(const char *path, enum store_mode mode, struct store **ret, char **ret_err);
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
int store_add_tick(struct store *s, int64_t t_ns, int64_t dur_ns, int64_t *ret_tick);
/* A zero value is not stored (schema invariant 1); is_null: not counted. */
int store_add_sample(struct store *s, int64_t tick, enum metric_id m, int loc, int64_t value, bool is_null);
int store_add_mux(struct store *s, int64_t tick, int cpu, const char *grp, double duty);
int store_add_event(struct store *s, int64_t t_ns, const char *kind, int cpu, const char *detail);
int store_checkpoint(struct store *s, bool truncate);

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

#endif
