/* conf.h - scalemon.conf: the daemon's settings. */
#ifndef SCALEMON_CONF_H
#define SCALEMON_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metric.h"

#define CONF_DEFAULT_PATH     "/etc/scalemon/scalemon.conf"
#define CONF_DEFAULT_DATABASE "/var/lib/scalemon/scalemon.db"
#define CONF_DEFAULT_SOCKET   "/run/scalemon/control.sock"
#define CONF_DEFAULT_INTERVAL (1000 * 1000 * 1000LL)
#define CONF_MIN_INTERVAL     (10 * 1000 * 1000LL)
#define CONF_MAX_INTERVAL     (60 * 1000 * 1000 * 1000LL)
#define CONF_MIN_RETENTION    (3600LL * 1000 * 1000 * 1000)
#define CONF_DEFAULT_RAW      (7 * 86400LL * 1000 * 1000 * 1000)
#define CONF_DEFAULT_ROLLUP   (60LL * 1000 * 1000 * 1000)
#define CONF_MIN_ROLLUP       (1000 * 1000 * 1000LL)
#define CONF_MAX_ROLLUP       (86400LL * 1000 * 1000 * 1000)
#define CONF_DEFAULT_RETAIN   (90 * 86400LL * 1000 * 1000 * 1000)
#define CONF_MIN_DB_SIZE      (1LL << 20)
#define CONF_DEFAULT_BACKLOG  (64LL << 20)
#define CONF_DEFAULT_WAL      (64LL << 20)
#define CONF_MIN_LIMIT        (64LL << 10)
#define CONF_DEFAULT_COMMIT   (600LL * 1000 * 1000 * 1000)
#define CONF_MAX_COMMIT       (3600LL * 1000 * 1000 * 1000)

struct conf {
        int64_t interval_ns;
        char *database;
        char *socket;
        char *control_group;            /* group allowed to change state */
        int64_t retain_raw_ns;          /* raw intervals older than this are rolled up; 0: never */
        int64_t rollup_interval_ns;     /* what one rollup merges */
        int64_t retain_rollup_ns;       /* intervals older than this are deleted; 0: never */
        int64_t max_db_size;            /* bytes in use past which the oldest go; 0: no cap */
        int64_t backlog_limit;          /* bytes of unwritten intervals held in memory */
        int64_t wal_limit;              /* bytes the write-ahead log may reach */
        int64_t commit_interval_ns;     /* samples are committed at least this often (0: every tick) */
        bool per_cpu_faults;            /* count page faults per CPU with perf events (conf_fault_event) */
        bool enabled[_M_MAX];           /* metrics and exclude, and per_cpu_faults for the fault events */
};

void conf_defaults(struct conf *c);
/* The per-CPU page-fault events (page_faults, page_faults_minor,
 * page_faults_major): enabled only with per_cpu_faults = yes, since every
 * page fault on the machine pays for each of them; /proc/vmstat's pgfault
 * and pgmajfault count the machine's faults for free. */
bool conf_fault_event(int metric);
/* 65536 -> "64K": the largest unit that divides the size exactly. */
void size_format(int64_t bytes, char *buf, size_t len);
void conf_free(struct conf *c);
int conf_copy(struct conf *dst, const struct conf *src);

/* Parse a configuration text.  fname is only for messages.  On error
 * *ret_err is "fname:line: what is wrong" and c is unchanged. */
int conf_parse(const char *text, size_t len, const char *fname, struct conf *c, char **ret_err);
/* Read and parse a file.  missing_ok: a missing file leaves the defaults. */
int conf_load(const char *path, bool missing_ok, struct conf *c, char **ret_err);

/* Where the daemon's settings come from: the file, then the command
 * line's values, which win over it.  The one place overrides are applied,
 * at start and on every reload. */
struct conf_source {
        char *path;                     /* the file */
        bool missing_ok;                /* the default path: a missing file leaves the defaults */
        int64_t interval_ns;            /* --interval, or 0 */
        int64_t commit_interval_ns;     /* --commit-interval, if commit_interval_set */
        bool commit_interval_set;
        char *database;                 /* --db, or NULL */
        char *socket;                   /* --socket, or NULL */
};
void conf_source_free(struct conf_source *src);
int conf_source_copy(struct conf_source *dst, const struct conf_source *src);
/* Defaults, then the file, then the overrides: into *c (freed by the
 * caller, also on failure).  On error *ret_err says file:line. */
int conf_read(const struct conf_source *src, struct conf *c, char **ret_err);

#endif
