/* store-runs.c - runs: open, close with exact totals, mark, read back.
 *
 * The daemon writes a run twice: when it starts (name, tags, context)
 * and when it ends (status, times, scores, and every total, per CPU, per
 * node and system-wide).  Reports read the totals and never the samples
 * (schema invariant 4).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "macro.h"
#include "packed.h"
#include "store-internal.h"

const char *total_level_name(enum total_level l)
{
        return l == LEVEL_CPU ? "cpu" : l == LEVEL_NODE ? "node" : l == LEVEL_CGROUP ? "cgroup" : "system";
}

static int level_from_name(const char *s)
{
        return streq(s, "cpu") ? LEVEL_CPU : streq(s, "node") ? LEVEL_NODE : streq(s, "cgroup") ? LEVEL_CGROUP
                                                                                  : LEVEL_SYSTEM;
}

void run_info_free(struct run_info *r)
{
        free(r->command);
        r->command = NULL;
}

void run_infos_free(struct run_info *r, size_t n)
{
        for (size_t i = 0; i < n; i++)
                run_info_free(&r[i]);
        free(r);
}

static void kvs_free(struct store_kv *kv, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(kv[i].key);
                free(kv[i].value);
        }
        free(kv);
}

void run_detail_free(struct run_detail *d)
{
        kvs_free(d->tags, d->ntags);
        for (size_t i = 0; i < d->nscores; i++)
                free(d->scores[i].key);
        free(d->scores);
        kvs_free(d->context, d->ncontext);
        for (size_t i = 0; i < d->nmarks; i++)
                free(d->marks[i].text);
        free(d->marks);
        free(d->totals);
        memset(d, 0, sizeof *d);
}

static int insert_kvs(struct store *s, const char *table, int64_t run, const struct store_kv *kv, size_t n)
{
        char sql[128];
        sqlite3_stmt *st;
        int r = 0;

        snprintf(sql, sizeof sql, "INSERT INTO %s (run, key, value) VALUES (?1, ?2, ?3)", table);
        if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, table);
        for (size_t i = 0; i < n && r == 0; i++) {
                sqlite3_bind_int64(st, 1, run);
                sqlite3_bind_text(st, 2, kv[i].key, -1, SQLITE_STATIC);
                sqlite3_bind_text(st, 3, kv[i].value, -1, SQLITE_STATIC);
                if (sqlite3_step(st) != SQLITE_DONE)
                        r = store_sqlite_error(s, table);
                sqlite3_reset(st);
        }
        sqlite3_finalize(st);
        return r;
}

int store_run_insert(struct store *s, const struct run_new *rn, int64_t *ret_id)
{
        sqlite3_stmt *st;
        int64_t id, ctx = 0;
        int r;

        r = store_exec(s, "BEGIN IMMEDIATE");
        if (r < 0)
                return r;
        if (rn->ncontext > 0) {
                r = store_context_put(s, rn->context, rn->ncontext, &ctx);
                if (r < 0)
                        goto fail;
        }
        if (sqlite3_prepare_v2(s->db,
                               "INSERT INTO run (name, host, status, start, start_tick, command, context) "
                               "VALUES (?1, ?2, 'running', ?3, ?4, ?5, ?6)",
                               -1, &st, NULL) != SQLITE_OK) {
                r = store_sqlite_error(s, "run");
                goto fail;
        }
        sqlite3_bind_text(st, 1, rn->name, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, rn->host);
        sqlite3_bind_int64(st, 3, rn->start);
        if (rn->start_tick > 0)
                sqlite3_bind_int64(st, 4, rn->start_tick);
        else
                sqlite3_bind_null(st, 4);
        if (rn->command)
                sqlite3_bind_text(st, 5, rn->command, -1, SQLITE_STATIC);
        else
                sqlite3_bind_null(st, 5);
        if (ctx > 0)
                sqlite3_bind_int64(st, 6, ctx);
        r = sqlite3_step(st);
        sqlite3_finalize(st);
        if (r != SQLITE_DONE) {
                r = sqlite3_extended_errcode(s->db) == SQLITE_CONSTRAINT_UNIQUE ? -EEXIST : store_sqlite_error(s, "run");
                goto fail;
        }
        id = sqlite3_last_insert_rowid(s->db);
        r = insert_kvs(s, "run_tag", id, rn->tags, rn->ntags);
        if (r < 0)
                goto fail;
        r = store_exec(s, "COMMIT");
        if (r < 0)
                goto fail;
        *ret_id = id;
        return 0;
fail:
        store_rollback(s);
        return r;
}

/* A total's metric.id: the catalogue's, without a query; 0 (the caller
 * then looks the name up in the metric table) for a name it does not know. */
static int64_t total_metric_rowid(struct store *s, const char *name)
{
        int m = metric_id_by_name(name);
        return m < 0 ? 0 : s->metric_rowid[m];
}

/* Some of a run's totals, in one statement of 32, 4 or 1 rows (the
 * largest that n fills): one statement per row cost a statement's set-up
 * and its CHECK's IN list each time; *done is advanced by the rows put. */
static int put_totals(struct store *s, int64_t id, const struct store_total *t, size_t n, size_t *done)
{
        static const struct {
                int which;
                size_t rows;
        } sizes[] = { { STMT_RUN_TOTAL_32, 32 }, { STMT_RUN_TOTAL_4, 4 }, { STMT_RUN_TOTAL_1, 1 } };
        char sql[8192] = "";
        size_t len = 0, k = 0, rows;
        sqlite3_stmt *st;
        int r;

        while (k < ELEMENTSOF(sizes) - 1 && sizes[k].rows > n)
                k++;
        rows = sizes[k].rows;
        if (!s->stmt[sizes[k].which]) {        /* prepared once (store_stmt), written out once */
                strbuf_appendf(sql, sizeof sql, &len,
                               "INSERT OR REPLACE INTO run_total (run, metric, level, loc, value) VALUES ");
                for (size_t j = 0; j < rows; j++)
                        strbuf_appendf(sql, sizeof sql, &len,
                                       "%s(?, coalesce(?, (SELECT id FROM metric WHERE name = ?)), ?, ?, ?)",
                                       j ? ", " : "");
        }
        st = store_stmt(s, sizes[k].which, sql);
        if (!st)
                return -EIO;
        for (size_t j = 0; j < rows; j++) {
                int64_t rowid = total_metric_rowid(s, t[j].metric);
                int p = (int)j * 6;
                sqlite3_bind_int64(st, p + 1, id);
                if (rowid > 0)
                        sqlite3_bind_int64(st, p + 2, rowid);
                else
                        sqlite3_bind_null(st, p + 2);
                sqlite3_bind_text(st, p + 3, t[j].metric, -1, SQLITE_STATIC);
                sqlite3_bind_text(st, p + 4, total_level_name(t[j].level), -1, SQLITE_STATIC);
                sqlite3_bind_int(st, p + 5, t[j].loc);
                sqlite3_bind_double(st, p + 6, t[j].value);
        }
        r = sqlite3_step(st) == SQLITE_DONE ? 0 : store_sqlite_error(s, "run_total");
        sqlite3_reset(st);
        *done += rows;
        return r;
}

/* A run stop writes one row per total (per metric, CPU, node; some 140 on
 * two CPUs): the statements are prepared once, like the tick's inserts. */
int store_run_finish(struct store *s, int64_t id, const struct run_end *re)
{
        sqlite3_stmt *st;
        int r;

        r = store_begin(s);
        if (r < 0)
                return r;
        st = store_stmt(s, STMT_RUN_END,
                        "UPDATE run SET status = ?2, end = ?3, end_tick = ?4, exit_status = ?5, "
                        "wall_s = ?6, user_s = ?7, sys_s = ?8, length_ns = ?9, voluntary_switches = ?10, "
                        "involuntary_switches = ?11 WHERE id = ?1");
        if (!st) {
                r = -EIO;
                goto fail;
        }
        sqlite3_clear_bindings(st);     /* the optional fields: NULL unless bound below */
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_text(st, 2, re->status, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 3, re->end);
        if (re->end_tick > 0)
                sqlite3_bind_int64(st, 4, re->end_tick);
        if (re->has_exit_status)
                sqlite3_bind_int(st, 5, re->exit_status);
        if (re->has_times) {
                sqlite3_bind_double(st, 6, re->wall_s);
                sqlite3_bind_double(st, 7, re->user_s);
                sqlite3_bind_double(st, 8, re->sys_s);
        }
        if (re->length_ns >= 0)
                sqlite3_bind_int64(st, 9, re->length_ns);
        if (re->has_switches) {
                sqlite3_bind_int64(st, 10, re->voluntary_switches);
                sqlite3_bind_int64(st, 11, re->involuntary_switches);
        }
        r = sqlite3_step(st) == SQLITE_DONE ? 0 : store_sqlite_error(s, "run");
        sqlite3_reset(st);
        if (r < 0)
                goto fail;

        st = store_stmt(s, STMT_RUN_SCORE, "INSERT OR REPLACE INTO run_score (run, key, value) VALUES (?1, ?2, ?3)");
        if (!st) {
                r = -EIO;
                goto fail;
        }
        for (size_t i = 0; i < re->nscores && r == 0; i++) {
                sqlite3_bind_int64(st, 1, id);
                sqlite3_bind_text(st, 2, re->scores[i].key, -1, SQLITE_STATIC);
                sqlite3_bind_double(st, 3, re->scores[i].value);
                if (sqlite3_step(st) != SQLITE_DONE)
                        r = store_sqlite_error(s, "run_score");
                sqlite3_reset(st);
        }
        if (r < 0)
                goto fail;

        for (size_t i = 0; i < re->ntotals && r == 0;)
                r = put_totals(s, id, re->totals + i, re->ntotals - i, &i);
        if (r < 0)
                goto fail;
        r = store_commit(s);
        if (r < 0)
                goto fail;
        return 0;
fail:
        store_rollback(s);
        return r;
}

static int exec_id(struct store *s, const char *sql, int64_t id)
{
        sqlite3_stmt *st;
        int r;

        if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, sql);
        sqlite3_bind_int64(st, 1, id);
        r = sqlite3_step(st) == SQLITE_DONE ? 0 : store_sqlite_error(s, sql);
        sqlite3_finalize(st);
        return r;
}

int store_run_delete(struct store *s, const char *name)
{
        sqlite3_stmt *st;
        int64_t id = 0, ctx = 0;
        bool running = false;
        int r;

        r = store_exec(s, "BEGIN IMMEDIATE");
        if (r < 0)
                return r;
        if (sqlite3_prepare_v2(s->db, "SELECT id, status = 'running', context FROM run WHERE name = ?1", -1, &st, NULL) !=
            SQLITE_OK) {
                r = store_sqlite_error(s, "run");
                goto fail;
        }
        sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW) {
                id = sqlite3_column_int64(st, 0);
                running = sqlite3_column_int(st, 1);
                ctx = sqlite3_column_int64(st, 2);
        }
        sqlite3_finalize(st);
        r = id == 0 ? -ENOENT : running ? -EBUSY : 0;
        if (r < 0)
                goto fail;
        /* tags, scores, marks and totals go with it (ON DELETE CASCADE) */
        r = exec_id(s, "DELETE FROM run WHERE id = ?1", id);
        if (r >= 0 && ctx > 0)
                r = exec_id(s, "DELETE FROM context_kv WHERE ctx = ?1 AND NOT EXISTS (SELECT 1 FROM run WHERE context = ?1)",
                            ctx);
        if (r >= 0 && ctx > 0)
                r = exec_id(s, "DELETE FROM context_set WHERE id = ?1 AND NOT EXISTS (SELECT 1 FROM run WHERE context = ?1)",
                            ctx);
        if (r >= 0)
                r = store_exec(s, "COMMIT");
        if (r < 0)
                goto fail;
        if (ctx == s->ctx_id)
                store_context_forget(s);   /* it may be gone */
        return 0;
fail:
        store_rollback(s);
        return r;
}

int store_run_add_mark(struct store *s, int64_t id, int64_t t, const char *text)
{
        sqlite3_stmt *st;
        int r;

        if (sqlite3_prepare_v2(s->db, "INSERT INTO run_mark (run, t, text) VALUES (?1, ?2, ?3)", -1, &st, NULL) !=
            SQLITE_OK)
                return store_sqlite_error(s, "run_mark");
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_int64(st, 2, t);
        sqlite3_bind_text(st, 3, text, -1, SQLITE_STATIC);
        r = sqlite3_step(st) == SQLITE_DONE ? 0 : store_sqlite_error(s, "run_mark");
        sqlite3_finalize(st);
        return r;
}

/* The last column is the run's length measured on CLOCK_MONOTONIC: stored
 * when it ended; while it runs, the sum of the lengths of its ticks so far
 * (schema invariant 5), or NULL where some are missing.  start and end are
 * wall-clock times: their difference is wrong, even negative, when the
 * clock was set during the run. */
#define RUN_COLUMNS "id, name, status, host, start, end, start_tick, end_tick, exit_status, wall_s, user_s, sys_s, " \
                    "command, imported, " \
                    "CASE WHEN status != 'running' THEN length_ns ELSE " \
                    "(SELECT CASE WHEN count(*) = max(id) - start_tick THEN coalesce(sum(dur), 0) END FROM tick " \
                    "WHERE id > start_tick) END, voluntary_switches, involuntary_switches"

static int read_run(sqlite3_stmt *st, struct run_info *r)
{
        const char *name = (const char *)sqlite3_column_text(st, 1);
        const char *status = (const char *)sqlite3_column_text(st, 2);

        memset(r, 0, sizeof *r);
        r->id = sqlite3_column_int64(st, 0);
        snprintf(r->name, sizeof r->name, "%s", name ? name : "");
        snprintf(r->status, sizeof r->status, "%s", status ? status : "");
        r->host = sqlite3_column_int64(st, 3);
        r->start = sqlite3_column_int64(st, 4);
        r->end = sqlite3_column_int64(st, 5);
        r->start_tick = sqlite3_column_int64(st, 6);
        r->end_tick = sqlite3_column_int64(st, 7);
        r->has_exit_status = sqlite3_column_type(st, 8) != SQLITE_NULL;
        r->exit_status = sqlite3_column_int(st, 8);
        r->has_times = sqlite3_column_type(st, 9) != SQLITE_NULL;
        r->wall_s = sqlite3_column_double(st, 9);
        r->user_s = sqlite3_column_double(st, 10);
        r->sys_s = sqlite3_column_double(st, 11);
        if (sqlite3_column_type(st, 12) != SQLITE_NULL) {
                r->command = strdup((const char *)sqlite3_column_text(st, 12));
                if (!r->command)
                        return -ENOMEM;
        }
        r->imported = sqlite3_column_int(st, 13);
        r->dur_ns = sqlite3_column_type(st, 14) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 14);
        r->has_switches = sqlite3_column_type(st, 15) != SQLITE_NULL;
        r->voluntary_switches = sqlite3_column_int64(st, 15);
        r->involuntary_switches = sqlite3_column_int64(st, 16);
        return 0;
}

static int read_runs(struct store *s, sqlite3_stmt *st, struct run_info **ret, size_t *ret_n)
{
        struct run_info *v = NULL;
        size_t n = 0, cap = 0;
        int r;

        while ((r = sqlite3_step(st)) == SQLITE_ROW) {
                if (n == cap) {
                        struct run_info *p = realloc(v, (cap = cap ? cap * 2 : 16) * sizeof *v);
                        if (!p) {
                                run_infos_free(v, n);
                                return -ENOMEM;
                        }
                        v = p;
                }
                if (read_run(st, &v[n++]) < 0) {
                        run_infos_free(v, n);
                        return -ENOMEM;
                }
        }
        if (r != SQLITE_DONE) {
                run_infos_free(v, n);
                return store_sqlite_error(s, "runs");
        }
        *ret = v;
        *ret_n = n;
        return 0;
}

int store_run_find(struct store *s, const char *name, struct run_info *ret)
{
        sqlite3_stmt *st;
        int r;

        if (sqlite3_prepare_v2(s->db, "SELECT " RUN_COLUMNS " FROM run WHERE name = ?1", -1, &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, "run");
        sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
        r = sqlite3_step(st);
        if (r == SQLITE_ROW)
                r = read_run(st, ret);
        else
                r = r == SQLITE_DONE ? -ENOENT : store_sqlite_error(s, "run");
        sqlite3_finalize(st);
        return r;
}

int store_runs_open(struct store *s, struct run_info **ret, size_t *ret_n)
{
        sqlite3_stmt *st;
        int r;

        if (sqlite3_prepare_v2(s->db, "SELECT " RUN_COLUMNS " FROM run WHERE status = 'running' ORDER BY start", -1,
                               &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, "run");
        r = read_runs(s, st, ret, ret_n);
        sqlite3_finalize(st);
        return r;
}

int store_runs_list(struct store *s, const struct run_filter *f, struct run_info **ret, size_t *ret_n)
{
        char sql[16384];
        size_t len;
        sqlite3_stmt *st;
        int r;

        len = 0;
        strbuf_appendf(sql, sizeof sql, &len, "SELECT " RUN_COLUMNS " FROM run r WHERE start >= ?1 AND start <= ?2");
        for (size_t i = 0; i < f->ntags; i++)
                strbuf_appendf(sql, sizeof sql, &len,
                               " AND EXISTS (SELECT 1 FROM run_tag t WHERE t.run = r.id AND t.key = ?%zu "
                               "AND t.value = ?%zu)",
                               3 + 2 * i, 4 + 2 * i);
        if (f->host)
                strbuf_appendf(sql, sizeof sql, &len, " AND r.host IN (SELECT id FROM host WHERE hostname = ?%zu)",
                               3 + 2 * f->ntags);
        strbuf_appendf(sql, sizeof sql, &len, " ORDER BY start, id");
        if (len >= sizeof sql - 1) {
                snprintf(s->errmsg, sizeof s->errmsg, "too many tags to select runs by");
                return -E2BIG;
        }
        if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, "runs");
        sqlite3_bind_int64(st, 1, f->since);
        sqlite3_bind_int64(st, 2, f->until);
        for (size_t i = 0; i < f->ntags; i++) {
                sqlite3_bind_text(st, (int)(3 + 2 * i), f->tags[i].key, -1, SQLITE_STATIC);
                sqlite3_bind_text(st, (int)(4 + 2 * i), f->tags[i].value, -1, SQLITE_STATIC);
        }
        if (f->host)
                sqlite3_bind_text(st, (int)(3 + 2 * f->ntags), f->host, -1, SQLITE_STATIC);
        r = read_runs(s, st, ret, ret_n);
        sqlite3_finalize(st);
        return r;
}

static int read_kvs(struct store *s, const char *sql, int64_t id, struct store_kv **ret, size_t *ret_n)
{
        struct store_kv *v = NULL;
        size_t n = 0, cap = 0;
        sqlite3_stmt *st;
        int r;

        if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, sql);
        sqlite3_bind_int64(st, 1, id);
        while ((r = sqlite3_step(st)) == SQLITE_ROW) {
                if (n == cap) {
                        struct store_kv *p = realloc(v, (cap = cap ? cap * 2 : 16) * sizeof *v);
                        if (!p)
                                break;
                        v = p;
                }
                v[n].key = strdup((const char *)sqlite3_column_text(st, 0));
                v[n].value = strdup(sqlite3_column_text(st, 1) ? (const char *)sqlite3_column_text(st, 1) : "");
                n++;
                if (!v[n - 1].key || !v[n - 1].value)
                        break;
        }
        sqlite3_finalize(st);
        if (r != SQLITE_DONE) {
                kvs_free(v, n);
                return r == SQLITE_ROW ? -ENOMEM : store_sqlite_error(s, sql);
        }
        *ret = v;
        *ret_n = n;
        return 0;
}

/* A metric.id's name: the catalogue's for the ids this binary knows
 * (metric_rowid[], read at open), else the database's. */
static int metric_name(struct store *s, int64_t rowid, char *buf, size_t len)
{
        int m = store_metric_by_rowid(s, rowid);
        sqlite3_stmt *st;
        int r;

        if (m >= 0) {
                snprintf(buf, len, "%s", metric_table[m].name);
                return 1;
        }
        if (sqlite3_prepare_v2(s->db, "SELECT name FROM metric WHERE id = ?1", -1, &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, "metric");
        sqlite3_bind_int64(st, 1, rowid);
        r = sqlite3_step(st);
        if (r == SQLITE_ROW)
                snprintf(buf, len, "%s", (const char *)sqlite3_column_text(st, 0));
        r = r == SQLITE_ROW ? 1 : r == SQLITE_DONE ? 0 : store_sqlite_error(s, "metric");
        sqlite3_finalize(st);
        return r;
}

/* Totals by (metric.id, level, loc): the primary key's order, so no sort,
 * and no join with metric per row (a name is looked up once per metric:
 * on 470 runs of a 256-CPU machine the join alone took 0.9 s).  Only the
 * system-wide ones: one seek per metric, not a walk past every CPU's. */
static int read_totals(struct store *s, int64_t id, bool system_only, struct run_detail *d)
{
        static const char *const sql[2] = {
                "SELECT metric, level, loc, value FROM run_total WHERE run = ?1 ORDER BY metric, level, loc",
                "SELECT t.metric, t.level, t.loc, t.value FROM metric m CROSS JOIN run_total t "
                "ON t.run = ?1 AND t.metric = m.id AND t.level IN ('system', 'cgroup') ORDER BY m.id, t.level, t.loc",
        };
        char name[sizeof d->totals[0].metric] = "";
        int64_t rowid = 0;
        size_t cap = 0;
        sqlite3_stmt *st;
        bool looked_up = false;
        int r, known = 0;       /* the metric has a name; < 0: an error looking */

        if (sqlite3_prepare_v2(s->db, sql[system_only], -1, &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, "run_total");
        sqlite3_bind_int64(st, 1, id);
        while ((r = sqlite3_step(st)) == SQLITE_ROW) {
                struct store_total *t;
                if (!looked_up || sqlite3_column_int64(st, 0) != rowid) {
                        rowid = sqlite3_column_int64(st, 0);
                        known = metric_name(s, rowid, name, sizeof name);
                        looked_up = true;
                        if (known < 0)
                                break;
                }
                if (!known)
                        continue;       /* not in the metric table: the join used to leave it out */
                if (d->ntotals == cap) {
                        void *p = realloc(d->totals, (cap = cap ? cap * 2 : 128) * sizeof *d->totals);
                        if (!p) {
                                known = -ENOMEM;
                                break;
                        }
                        d->totals = p;
                }
                t = &d->totals[d->ntotals++];
                memcpy(t->metric, name, sizeof t->metric);
                t->level = level_from_name((const char *)sqlite3_column_text(st, 1));
                t->loc = sqlite3_column_int(st, 2);
                t->value = sqlite3_column_double(st, 3);
        }
        if (known < 0)
                r = known;
        else
                r = r == SQLITE_DONE ? 0 : store_sqlite_error(s, "run_total");
        sqlite3_finalize(st);
        return r;
}

int store_run_detail_parts(struct store *s, int64_t id, unsigned parts, struct run_detail *ret)
{
        struct run_detail d = { 0 };
        struct store_kv *kv = NULL;
        size_t n = 0;
        int r = 0;

        if (parts & RUN_TAGS)
                r = read_kvs(s, "SELECT key, value FROM run_tag WHERE run = ?1 ORDER BY key", id, &d.tags, &d.ntags);
        if (r >= 0 && (parts & RUN_CONTEXT))
                r = read_kvs(s, "SELECT key, value FROM run_context WHERE run = ?1 ORDER BY key", id, &d.context,
                             &d.ncontext);
        if (r < 0)
                goto fail;
        if (parts & RUN_SCORES) {
                r = read_kvs(s, "SELECT key, value FROM run_score WHERE run = ?1 ORDER BY key", id, &kv, &n);
                if (r < 0)
                        goto fail;
                d.scores = calloc(n + 1, sizeof *d.scores);
                if (!d.scores) {
                        kvs_free(kv, n);
                        r = -ENOMEM;
                        goto fail;
                }
                for (size_t i = 0; i < n; i++) {
                        d.scores[i].key = TAKE_PTR(kv[i].key);
                        d.scores[i].value = strtod(kv[i].value, NULL);
                }
                d.nscores = n;
                kvs_free(kv, n);
        }

        if (parts & RUN_MARKS) {
                r = read_kvs(s, "SELECT t, text FROM run_mark WHERE run = ?1 ORDER BY t, id", id, &kv, &n);
                if (r < 0)
                        goto fail;
                d.marks = calloc(n + 1, sizeof *d.marks);
                if (!d.marks) {
                        kvs_free(kv, n);
                        r = -ENOMEM;
                        goto fail;
                }
                for (size_t i = 0; i < n; i++) {
                        d.marks[i].t = strtoll(kv[i].key, NULL, 10);
                        d.marks[i].text = TAKE_PTR(kv[i].value);
                }
                d.nmarks = n;
                kvs_free(kv, n);
        }

        if (parts & (RUN_TOTALS | RUN_SYSTEM_TOTALS)) {
                r = read_totals(s, id, !(parts & RUN_TOTALS), &d);
                if (r < 0)
                        goto fail;
        }
        *ret = d;
        return 0;
fail:
        run_detail_free(&d);
        return r;
}

int store_run_detail(struct store *s, int64_t id, struct run_detail *ret)
{
        return store_run_detail_parts(s, id, RUN_ALL, ret);
}
