/* store.c - open, migrate and write the SQLite store.
 *
 * The daemon is the only writer (schema invariant 3): it holds an flock()
 * on the database file, uses WAL so clients read while it writes, reuses
 * prepared statements and writes one transaction per flush.  Schema
 * changes are the numbered files under schema/, applied in order and
 * recorded in PRAGMA user_version.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "head.h"
#include "macro.h"
#include "packed-sql.h"
#include "packed.h"
#include "pathsec.h"
#include "schema.h"
#include "store-internal.h"

int store_latest_schema_version(void)
{
        return schema_migrations[schema_n_migrations - 1].version;
}

const char *store_path(struct store *s) { return s->path; }
const char *store_errmsg(struct store *s) { return s->errmsg; }

int store_sqlite_error(struct store *s, const char *what)
{
        snprintf(s->errmsg, sizeof s->errmsg, "%s: %s", what, sqlite3_errmsg(s->db));
        return -EIO;
}

sqlite3_stmt *store_stmt(struct store *s, int which, const char *sql)
{
        if (!s->stmt[which] &&
            sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s->stmt[which], NULL) != SQLITE_OK) {
                store_sqlite_error(s, "prepare");
                return NULL;
        }
        return s->stmt[which];
}

int store_exec(struct store *s, const char *sql)
{
        char *err = NULL;
        if (sqlite3_exec(s->db, sql, NULL, NULL, &err) != SQLITE_OK) {
                snprintf(s->errmsg, sizeof s->errmsg, "%s", err ? err : sqlite3_errmsg(s->db));
                sqlite3_free(err);
                return -EIO;
        }
        return 0;
}

static int pragma_int(struct store *s, const char *sql, int *ret)
{
        sqlite3_stmt *st;
        int r;

        if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, sql);
        r = sqlite3_step(st);
        if (r == SQLITE_ROW) {
                *ret = sqlite3_column_int(st, 0);
                r = 0;
        } else
                r = store_sqlite_error(s, sql);
        sqlite3_finalize(st);
        return r;
}

int store_schema_version(struct store *s)
{
        int v = -1;
        pragma_int(s, "PRAGMA user_version", &v);
        return v;
}

/* Apply every migration newer than the database, each in its own
 * transaction with its user_version bump, so a failure leaves the
 * database at the last complete version. */
static int migrate(struct store *s)
{
        int version, latest = store_latest_schema_version(), r;

        r = pragma_int(s, "PRAGMA user_version", &version);
        if (r < 0)
                return r;
        if (version > latest) {
                snprintf(s->errmsg, sizeof s->errmsg,
                         "database %s has schema version %d, newer than this scalemon knows (%d): "
                         "use a newer scalemon, or another --db",
                         s->path, version, latest);
                return -EPROTONOSUPPORT;
        }
        for (unsigned i = 0; i < schema_n_migrations; i++) {
                const struct schema_migration *m = &schema_migrations[i];
                char bump[64];

                if (m->version <= version)
                        continue;
                r = store_exec(s, "BEGIN IMMEDIATE");
                if (r < 0)
                        return r;
                r = store_exec(s, m->sql);
                if (r < 0) {
                        char tmp[sizeof s->errmsg];
                        memcpy(tmp, s->errmsg, sizeof tmp);
                        snprintf(s->errmsg, sizeof s->errmsg, "applying %s: %.400s", m->name, tmp);
                        store_rollback(s);
                        return r;
                }
                snprintf(bump, sizeof bump, "PRAGMA user_version = %d", m->version);
                r = store_exec(s, bump);
                if (r >= 0)
                        r = store_exec(s, "COMMIT");
                if (r < 0) {
                        store_rollback(s);
                        return r;
                }
        }
        return 0;
}

/* A database another program made has tables but no user_version. */
static int check_is_ours(struct store *s)
{
        int version, tables, r;

        r = pragma_int(s, "PRAGMA user_version", &version);
        if (r < 0)
                return r;
        if (version > 0)
                return 0;
        r = pragma_int(s, "SELECT count(*) FROM sqlite_master", &tables);
        if (r < 0)
                return r;
        if (tables > 0) {
                snprintf(s->errmsg, sizeof s->errmsg,
                         "%s is an SQLite database but not a scalemon one (no schema version): "
                         "choose another --db", s->path);
                return -EMEDIUMTYPE;
        }
        return 0;
}

int store_metric_by_rowid(struct store *s, int64_t rowid)
{
        for (int i = 0; i < _M_MAX; i++)
                if (s->metric_rowid[i] == rowid && rowid != 0)
                        return i;
        return -1;
}

int store_load_metric_ids(struct store *s)
{
        sqlite3_stmt *st;
        int r;

        memset(s->metric_rowid, 0, sizeof s->metric_rowid);
        if (sqlite3_prepare_v2(s->db, "SELECT id, name FROM metric", -1, &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, "reading metrics");
        while ((r = sqlite3_step(st)) == SQLITE_ROW) {
                int id = metric_id_by_name((const char *)sqlite3_column_text(st, 1));
                if (id >= 0)
                        s->metric_rowid[id] = sqlite3_column_int64(st, 0);
        }
        sqlite3_finalize(st);
        return r == SQLITE_DONE ? 0 : store_sqlite_error(s, "reading metrics");
}

/* The database's directory is made if it is missing (one level, like
 * systemd's StateDirectory=), so that a fresh machine needs no set-up. */
static int make_parent(struct store *s)
{
        _cleanup_free_ char *dir = strdup(s->path);
        char *slash;

        if (!dir)
                return -ENOMEM;
        slash = strrchr(dir, '/');
        if (!slash || slash == dir)
                return 0;
        *slash = 0;
        if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
                int r = negative_errno();
                snprintf(s->errmsg, sizeof s->errmsg, "cannot create the database directory %s: %s", dir,
                         strerror(-r));
                return r;
        }
        return 0;
}

/* Refuse a database, -wal or -shm that is a symlink another user planted
 * (pathsec.h).  *ret_is_link: the database itself is an allowed symlink. */
static int check_symlinks(struct store *s, bool *ret_is_link)
{
        static const char *const suffix[] = { "", "-wal", "-shm" };
        struct stat st;

        for (size_t i = 0; i < ELEMENTSOF(suffix); i++) {
                _cleanup_free_ char *p = NULL;
                uid_t link_uid, dir_uid;
                int r;

                if (asprintf(&p, "%s%s", s->path, suffix[i]) < 0)
                        return -ENOMEM;
                r = path_foreign_symlink(p, &link_uid, &dir_uid);
                if (r < 0) {
                        snprintf(s->errmsg, sizeof s->errmsg, "cannot check database path %s: %s", p,
                                 strerror(-r));
                        return r;
                }
                if (r > 0) {
                        snprintf(s->errmsg, sizeof s->errmsg,
                                 "database path %s is a symlink owned by uid %u, neither scalemond's user (uid %u) "
                                 "nor the owner of its directory (uid %u): refusing to follow it; remove it or "
                                 "use another --db",
                                 p, (unsigned)link_uid, (unsigned)geteuid(), (unsigned)dir_uid);
                        return -ELOOP;
                }
        }
        *ret_is_link = lstat(s->path, &st) == 0 && S_ISLNK(st.st_mode);
        return 0;
}

static int open_writer_lock(struct store *s, bool *ret_is_link)
{
        _cleanup_close_ int fd = -1;
        struct stat st;
        int r = make_parent(s);

        if (r < 0)
                return r;
        r = check_symlinks(s, ret_is_link);
        if (r < 0)
                return r;
        /* Not a symlink when checked: then none may appear in between. */
        fd = open(s->path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOCTTY | (*ret_is_link ? 0 : O_NOFOLLOW), 0640);
        if (fd < 0) {
                r = negative_errno();
                snprintf(s->errmsg, sizeof s->errmsg, "cannot open database %s: %s", s->path, strerror(-r));
                return r;
        }
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                snprintf(s->errmsg, sizeof s->errmsg, "database %s is not a regular file", s->path);
                return -EINVAL;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                r = negative_errno();
                if (r == -EWOULDBLOCK) {
                        snprintf(s->errmsg, sizeof s->errmsg,
                                 "database %s is in use by another scalemond; stop it first, or use another --db",
                                 s->path);
                        return -EBUSY;
                }
                snprintf(s->errmsg, sizeof s->errmsg, "cannot lock database %s: %s", s->path, strerror(-r));
                return r;
        }
        s->lock_fd = TAKE_FD(fd);
        return 0;
}

/* Page sizes for a new database.  A commit writes each page it touches
 * whole into the write-ahead log, and each commit touches a dozen pages
 * it does not fill (the tables' and indexes' last leaves, their parents,
 * the header), so small pages write fewer bytes; but a cpu_sample row
 * (schema 0004, one packed blob of every CPU's value) keeps only ~230 B
 * in a 1 KiB page's cell, ~1 KB in a 4 KiB page's, ~4 KB in a 16 KiB
 * page's, and puts the rest on overflow pages of its own.  Up to 16
 * CPUs a row fits a 1 KiB page, up to 64 a 4 KiB page (a few bytes a
 * CPU).  At 1 s on 2 CPUs, 1 KiB pages wrote 12% less than 4 KiB pages
 * for the same growth. */
#define STORE_PAGE_TINY        1024
#define STORE_PAGE_SMALL       4096
#define STORE_PAGE_LARGE       16384
#define STORE_PAGE_TINY_CPUS   16
#define STORE_PAGE_SMALL_CPUS  64

static int open_store(const char *path, enum store_mode mode, int new_page_size, struct store **ret, char **ret_err);

int store_open(const char *path, enum store_mode mode, struct store **ret, char **ret_err)
{
        return open_store(path, mode, STORE_PAGE_LARGE, ret, ret_err);
}

int store_open_sized(const char *path, int page_size, struct store **ret, char **ret_err)
{
        return open_store(path, STORE_WRITE, page_size, ret, ret_err);
}

int store_page_size_for(int ncpus)
{
        if (ncpus <= STORE_PAGE_TINY_CPUS)
                return STORE_PAGE_TINY;
        return ncpus <= STORE_PAGE_SMALL_CPUS ? STORE_PAGE_SMALL : STORE_PAGE_LARGE;
}

/* The writer's connection: WAL, its sync level and checkpoints, the page
 * size of a new database, the schema migrated to the newest.
 *
 * WAL: readers never block the writer nor it them.  NORMAL sync: a crash
 * of the process loses nothing committed.  A passive checkpoint once the
 * log holds 4 MiB keeps each one short: left to the minute's checkpoint
 * alone, a minute of heavy writing (runs started and stopped by the
 * thousand) takes seconds to copy and holds up sampling.  The page size
 * (STORE_PAGE_TINY, _SMALL or _LARGE) applies to a new database only (an
 * existing one keeps its size: changing it means a VACUUM out of WAL
 * mode): a cpu_sample row keeps up to ~4 KB in a 16 KiB page, where 4 KiB
 * pages keep ~1 KB and put the rest of a 1024-CPU blob on an overflow page
 * of its own, three times the bytes (schema 0004); but every commit writes
 * the pages it touches whole. */
static int setup_writer(struct store *s, int new_page_size)
{
        int page_size = 0, r;
        char ckpt[64], pragmas[160];

        snprintf(pragmas, sizeof pragmas,
                 "PRAGMA page_size = %d; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; "
                 "PRAGMA foreign_keys = ON; PRAGMA cache_size = -%d", new_page_size, STORE_WRITER_CACHE_KIB);
        r = store_exec(s, pragmas);
        if (r >= 0)
                r = pragma_int(s, "PRAGMA page_size", &page_size);
        if (r < 0)
                return r;
        snprintf(ckpt, sizeof ckpt, "PRAGMA wal_autocheckpoint = %d", (4 << 20) / MAX(page_size, 512));
        r = store_exec(s, ckpt);
        if (r < 0)
                return r;
        return migrate(s);
}

/* A reader's database has this client's schema: not newer, not empty, not
 * older (only the daemon migrates). */
static int check_reader_schema(struct store *s, const char *path)
{
        int version = store_schema_version(s);

        if (version > store_latest_schema_version()) {
                snprintf(s->errmsg, sizeof s->errmsg,
                         "database %s has schema version %d, newer than this scalemonctl knows (%d): "
                         "use a newer scalemonctl", path, version, store_latest_schema_version());
                return -EPROTONOSUPPORT;
        }
        if (version < 1) {
                snprintf(s->errmsg, sizeof s->errmsg, "database %s is empty: scalemond has not written to it yet",
                         path);
                return -EMEDIUMTYPE;
        }
        if (version < store_latest_schema_version()) {
                snprintf(s->errmsg, sizeof s->errmsg,
                         "database %s has schema version %d, older than this scalemonctl (%d): "
                         "restart scalemond once to upgrade it", path, version, store_latest_schema_version());
                return -EPROTONOSUPPORT;
        }
        return 0;
}

static int open_store(const char *path, enum store_mode mode, int new_page_size, struct store **ret, char **ret_err)
{
        struct store *s;
        bool is_link = false;
        int flags, r;

        s = calloc(1, sizeof *s);
        if (!s)
                return -ENOMEM;
        s->lock_fd = -1;
        s->mode = mode;
        s->path = strdup(path);
        if (!s->path) {
                free(s);
                return -ENOMEM;
        }

        if (mode == STORE_WRITE) {
                /* The lock comes first: a second daemon must not touch the
                 * database at all, not even to set its journal mode. */
                r = open_writer_lock(s, &is_link);
                if (r < 0)
                        goto fail;
                flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | (is_link ? 0 : SQLITE_OPEN_NOFOLLOW);
        } else {
                if (access(path, F_OK) < 0) {
                        r = negative_errno();
                        if (r == -ENOENT)
                                snprintf(s->errmsg, sizeof s->errmsg,
                                         "no database at %s (is scalemond running? --db chooses another)", path);
                        else
                                snprintf(s->errmsg, sizeof s->errmsg, "cannot open database %s: %s", path,
                                         strerror(-r));
                        goto fail;
                }
                flags = SQLITE_OPEN_READONLY;
        }

        if (sqlite3_open_v2(path, &s->db, flags | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
                r = store_sqlite_error(s, path);
                goto fail;
        }
        sqlite3_extended_result_codes(s->db, 1);
        sqlite3_busy_timeout(s->db, STORE_BUSY_TIMEOUT_MS);
        /* before migrating: 0004 packs old rows with scalemon_pack */
        if (packed_sql_register(s->db) != SQLITE_OK) {
                r = store_sqlite_error(s, "registering SQL functions");
                goto fail;
        }

        r = check_is_ours(s);
        if (r < 0)
                goto fail;

        r = mode == STORE_WRITE ? setup_writer(s, new_page_size) : check_reader_schema(s, path);
        if (r < 0)
                goto fail;

        r = store_load_metric_ids(s);
        if (r < 0)
                goto fail;
        *ret = s;
        return 0;

fail:
        if (ret_err)
                *ret_err = strdup(s->errmsg[0] ? s->errmsg : strerror(-r));
        store_close(s);
        return r;
}

/* ---- context sets (schema 0003), shared by runs: the write
 * connection remembers the last one, for the next run's start ---- */

static int insert_context_kvs(struct store *s, int64_t id, const struct store_kv *kv, size_t n)
{
        sqlite3_stmt *st;
        int r = 0;

        if (sqlite3_prepare_v2(s->db, "INSERT INTO context_kv (ctx, key, value) VALUES (?1, ?2, ?3)", -1, &st, NULL) !=
            SQLITE_OK)
                return store_sqlite_error(s, "context_kv (ctx, key, value)");
        for (size_t i = 0; i < n && r == 0; i++) {
                sqlite3_bind_int64(st, 1, id);
                sqlite3_bind_text(st, 2, kv[i].key, -1, SQLITE_STATIC);
                sqlite3_bind_text(st, 3, kv[i].value, -1, SQLITE_STATIC);
                if (sqlite3_step(st) != SQLITE_DONE)
                        r = store_sqlite_error(s, "context_kv (ctx, key, value)");
                sqlite3_reset(st);
        }
        sqlite3_finalize(st);
        return r;
}

void store_context_forget(struct store *s)
{
        for (size_t i = 0; i < s->nctx; i++) {
                free(s->ctx[i].key);
                free(s->ctx[i].value);
        }
        free(s->ctx);
        s->ctx = NULL;
        s->nctx = 0;
        s->ctx_id = 0;
}

static bool same_kvs(const struct store_kv *a, size_t na, const struct store_kv *b, size_t nb)
{
        if (na != nb)
                return false;
        for (size_t i = 0; i < na; i++)
                if (!streq(a[i].key, b[i].key) || !streq(a[i].value, b[i].value))
                        return false;
        return true;
}

int store_context_put(struct store *s, const struct store_kv *kv, size_t n, int64_t *ret_id)
{
        struct store_kv *copy;
        int64_t id;
        int r;

        if (s->ctx_id > 0 && same_kvs(s->ctx, s->nctx, kv, n)) {
                *ret_id = s->ctx_id;
                return 0;
        }
        r = store_exec(s, "INSERT INTO context_set DEFAULT VALUES");
        if (r < 0)
                return r;
        id = sqlite3_last_insert_rowid(s->db);
        r = insert_context_kvs(s, id, kv, n);
        if (r < 0)
                return r;
        store_context_forget(s);
        copy = calloc(n ? n : 1, sizeof *copy);
        if (!copy)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                copy[i].key = strdup(kv[i].key);
                copy[i].value = strdup(kv[i].value);
                if (!copy[i].key || !copy[i].value) {
                        s->ctx = copy;
                        s->nctx = i + 1;
                        store_context_forget(s);
                        return -ENOMEM;
                }
        }
        s->ctx = copy;
        s->nctx = n;
        s->ctx_id = id;
        *ret_id = id;
        return 0;
}

struct store *store_close(struct store *s)
{
        if (!s)
                return NULL;
        for (int i = 0; i < _STMT_MAX; i++)
                sqlite3_finalize(s->stmt[i]);
        store_context_forget(s);
        free(s->packbuf);
        if (s->db)
                sqlite3_close(s->db);
        /* Only now: closing any fd of the file drops SQLite's POSIX locks. */
        if (s->lock_fd >= 0)
                close(s->lock_fd);
        free(s->path);
        free(s);
        return NULL;
}

int store_meta_set(struct store *s, const char *key, const char *value)
{
        sqlite3_stmt *st = store_stmt(s, STMT_META_SET, "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)");
        int r;

        if (!st)
                return -EIO;
        sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, value, -1, SQLITE_STATIC);
        r = sqlite3_step(st);
        sqlite3_reset(st);
        return r == SQLITE_DONE ? 0 : store_sqlite_error(s, "meta");
}

int store_meta_set_int(struct store *s, const char *key, int64_t value)
{
        char buf[32];
        snprintf(buf, sizeof buf, "%lld", (long long)value);
        return store_meta_set(s, key, buf);
}

int store_meta_get(struct store *s, const char *key, char **ret)
{
        sqlite3_stmt *st;
        int r;

        if (sqlite3_prepare_v2(s->db, "SELECT value FROM meta WHERE key = ?1", -1, &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, "meta");
        sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
        r = sqlite3_step(st);
        if (r == SQLITE_ROW) {
                const char *v = (const char *)sqlite3_column_text(st, 0);
                char *copy = strdup(v ? v : "");
                r = copy ? 0 : -ENOMEM;
                if (copy)
                        *ret = copy;
        } else
                r = r == SQLITE_DONE ? -ENOENT : store_sqlite_error(s, "meta");
        sqlite3_finalize(st);
        return r;
}

int store_meta_get_int(struct store *s, const char *key, int64_t *ret)
{
        _cleanup_free_ char *v = NULL;
        char *end;
        long long x;
        int r = store_meta_get(s, key, &v);

        if (r < 0)
                return r;
        errno = 0;
        x = strtoll(v, &end, 10);
        if (errno || *end || end == v)
                return -EINVAL;
        *ret = x;
        return 0;
}

void host_info_clear(struct host_info *h)
{
        free(h->machine_id);
        free(h->hostname);
        free(h->kernel);
        free(h->cpu_model);
        memset(h, 0, sizeof *h);
}

int store_host_update(struct store *s, const struct host_info *h, int64_t now_ns, int64_t *ret_id)
{
        sqlite3_stmt *st;
        int r;

        if (sqlite3_prepare_v2(s->db,
                               "INSERT INTO host (machine_id, hostname, kernel, ncpus, nnodes, cpu_model, first_seen, last_seen) "
                               "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7) "
                               "ON CONFLICT (machine_id) DO UPDATE SET hostname = ?2, kernel = ?3, ncpus = ?4, "
                               "nnodes = ?5, cpu_model = ?6, last_seen = ?7 RETURNING id",
                               -1, &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, "host");
        sqlite3_bind_text(st, 1, h->machine_id, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, h->hostname, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, h->kernel, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 4, h->ncpus);
        sqlite3_bind_int(st, 5, h->nnodes);
        sqlite3_bind_text(st, 6, h->cpu_model, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 7, now_ns);
        r = sqlite3_step(st);
        if (r == SQLITE_ROW) {
                int64_t id = sqlite3_column_int64(st, 0);
                sqlite3_finalize(st);
                if (ret_id)
                        *ret_id = id;
                return store_meta_set_int(s, "host", id);
        }
        r = store_sqlite_error(s, "host");
        sqlite3_finalize(st);
        return r;
}

int store_topology_set(struct store *s, int ncpus, const int *node_of_cpu, const bool *online)
{
        sqlite3_stmt *st;
        int r = store_exec(s, "DELETE FROM cpu");

        if (r < 0)
                return r;
        if (sqlite3_prepare_v2(s->db, "INSERT INTO cpu (cpu, node, online) VALUES (?1, ?2, ?3)", -1, &st, NULL) !=
            SQLITE_OK)
                return store_sqlite_error(s, "cpu");
        for (int c = 0; c < ncpus; c++) {
                sqlite3_bind_int(st, 1, c);
                sqlite3_bind_int(st, 2, node_of_cpu[c]);
                sqlite3_bind_int(st, 3, online[c]);
                if (sqlite3_step(st) != SQLITE_DONE) {
                        r = store_sqlite_error(s, "cpu");
                        break;
                }
                sqlite3_reset(st);
        }
        sqlite3_finalize(st);
        return r;
}

int store_metrics_sync(struct store *s, const bool *available, char *const *why, const double *scale)
{
        sqlite3_stmt *st;
        int r = 0;

        if (sqlite3_prepare_v2(s->db,
                               "INSERT INTO metric (name, scope, unit, scale, source, available, why) "
                               "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (name) DO UPDATE SET "
                               "scope = ?2, unit = ?3, scale = ?4, source = ?5, available = ?6, why = ?7",
                               -1, &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, "metric");
        for (int i = 0; i < _M_MAX; i++) {
                const struct metric_def *m = &metric_table[i];
                sqlite3_bind_text(st, 1, m->name, -1, SQLITE_STATIC);
                sqlite3_bind_text(st, 2, metric_scope_name(m->scope), -1, SQLITE_STATIC);
                sqlite3_bind_text(st, 3, m->unit, -1, SQLITE_STATIC);
                sqlite3_bind_double(st, 4, scale ? scale[i] : 1.0);
                sqlite3_bind_text(st, 5, m->source_name, -1, SQLITE_STATIC);
                sqlite3_bind_int(st, 6, available[i]);
                if (!available[i] && why && why[i])
                        sqlite3_bind_text(st, 7, why[i], -1, SQLITE_STATIC);
                else
                        sqlite3_bind_null(st, 7);
                if (sqlite3_step(st) != SQLITE_DONE) {
                        r = store_sqlite_error(s, "metric");
                        break;
                }
                sqlite3_reset(st);
        }
        sqlite3_finalize(st);
        return r < 0 ? r : store_load_metric_ids(s);
}
