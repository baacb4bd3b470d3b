/* packed-sql.c - SQL functions that read and write cpu_sample.vals.
 *
 * Registered on every connection the store opens, and built a second time
 * into scalemon.so (lib/scalemon-ext.c) for the sqlite3 shell:
 *
 *   .load /usr/lib/scalemon/scalemon
 *   SELECT c.tick, u.cpu, u.value FROM cpu_sample c, scalemon_cpus(c.vals) u
 *    WHERE c.metric = (SELECT id FROM metric WHERE name = 'context_switches');
 *
 * A corrupt blob is an SQL error, never a wrong number.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "packed-sql.h"
#include "packed.h"

static const char *const corrupt_msg = "scalemon: corrupt cpu_sample.vals blob";

static void fn_cpu(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
        struct packed_iter it;
        int64_t want, v;
        bool null;
        int c, r;

        if (sqlite3_value_type(argv[0]) == SQLITE_NULL || sqlite3_value_type(argv[1]) == SQLITE_NULL)
                return;         /* NULL */
        want = sqlite3_value_int64(argv[1]);
        packed_iter_init(&it, sqlite3_value_blob(argv[0]), (size_t)sqlite3_value_bytes(argv[0]));
        while ((r = packed_next(&it, &c, &v, &null)) > 0) {
                if (c < want)
                        continue;
                if (c > want)
                        break;
                if (null)
                        sqlite3_result_null(ctx);
                else
                        sqlite3_result_int64(ctx, v);
                return;
        }
        if (r < 0)
                sqlite3_result_error(ctx, corrupt_msg, -1);
        else
                sqlite3_result_int64(ctx, 0);
}

/* --- scalemon_pack(cpu, value): collect, then encode in CPU order --- */

struct pack_acc {
        int64_t *vals;          /* by CPU */
        bool *nulls;
        int n;                  /* CPUs held: highest seen + 1 */
        int cap;
        bool bad;               /* a CPU out of range */
};

static void pack_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
        struct pack_acc *a = sqlite3_aggregate_context(ctx, sizeof *a);
        int64_t cpu;

        if (!a)
                return sqlite3_result_error_nomem(ctx);
        cpu = sqlite3_value_int64(argv[0]);
        if (cpu < 0 || cpu >= PACKED_MAX_CPUS) {
                a->bad = true;
                return;
        }
        if (cpu >= a->cap) {
                int cap = a->cap ? a->cap * 2 : 64;
                while (cap <= cpu)
                        cap *= 2;
                int64_t *v = realloc(a->vals, (size_t)cap * sizeof *v);
                bool *nl;
                if (!v)
                        return sqlite3_result_error_nomem(ctx);
                a->vals = v;
                nl = realloc(a->nulls, (size_t)cap * sizeof *nl);
                if (!nl)
                        return sqlite3_result_error_nomem(ctx);
                a->nulls = nl;
                memset(a->vals + a->cap, 0, (size_t)(cap - a->cap) * sizeof *v);
                memset(a->nulls + a->cap, 0, (size_t)(cap - a->cap) * sizeof *nl);
                a->cap = cap;
        }
        if (cpu >= a->n)
                a->n = (int)cpu + 1;
        if (sqlite3_value_type(argv[1]) == SQLITE_NULL)
                a->nulls[cpu] = true;
        else
                a->vals[cpu] = sqlite3_value_int64(argv[1]);
}

static void pack_final(sqlite3_context *ctx)
{
        struct pack_acc *a = sqlite3_aggregate_context(ctx, 0);
        uint8_t *buf;
        size_t len;
        int r;

        if (!a || a->n == 0) {
                sqlite3_result_zeroblob(ctx, 0);
                return;
        }
        buf = malloc(packed_encode_bound(a->n) + 1);
        if (!buf)
                sqlite3_result_error_nomem(ctx);
        else if (a->bad)
                sqlite3_result_error(ctx, "scalemon_pack: CPU number out of range", -1);
        else if ((r = packed_encode(a->vals, a->nulls, a->n, buf, packed_encode_bound(a->n) + 1, &len)) < 0)
                sqlite3_result_error(ctx, r == -ERANGE ? "scalemon_pack: negative value" : "scalemon_pack: cannot encode", -1);
        else
                sqlite3_result_blob(ctx, buf, (int)len, SQLITE_TRANSIENT);
        free(buf);
        free(a->vals);
        free(a->nulls);
}

/* --- scalemon_cpus(vals): an eponymous table-valued function --- */

struct cpus_cursor {
        sqlite3_vtab_cursor base;
        uint8_t *blob;          /* a copy: the argument lives only in xFilter */
        struct packed_iter it;
        bool eof;
        int cpu;
        int64_t value;
        bool null;
        sqlite3_int64 rowid;
};

enum { COL_CPU, COL_VALUE, COL_VALS };

static int cpus_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **ret, char **err)
{
        sqlite3_vtab *vt;
        int r = sqlite3_declare_vtab(db, "CREATE TABLE x (cpu INTEGER, value INTEGER, vals HIDDEN)");

        if (r != SQLITE_OK)
                return r;
        vt = sqlite3_malloc(sizeof *vt);
        if (!vt)
                return SQLITE_NOMEM;
        memset(vt, 0, sizeof *vt);
        sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
        *ret = vt;
        return SQLITE_OK;
}

static int cpus_disconnect(sqlite3_vtab *vt)
{
        sqlite3_free(vt);
        return SQLITE_OK;
}

/* The only plan: vals given.  Without it the table has no rows to give. */
static int cpus_best_index(sqlite3_vtab *vt, sqlite3_index_info *info)
{
        for (int i = 0; i < info->nConstraint; i++) {
                const struct sqlite3_index_constraint *c = &info->aConstraint[i];
                if (c->iColumn != COL_VALS || c->op != SQLITE_INDEX_CONSTRAINT_EQ)
                        continue;
                if (!c->usable)
                        return SQLITE_CONSTRAINT;
                info->aConstraintUsage[i].argvIndex = 1;
                info->aConstraintUsage[i].omit = 1;
                info->idxNum = 1;
                info->estimatedCost = 10;
                info->estimatedRows = 16;
                return SQLITE_OK;
        }
        info->idxNum = 0;
        info->estimatedCost = 1e12;
        return SQLITE_OK;
}

static int cpus_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **ret)
{
        struct cpus_cursor *c = sqlite3_malloc(sizeof *c);

        if (!c)
                return SQLITE_NOMEM;
        memset(c, 0, sizeof *c);
        c->eof = true;
        *ret = &c->base;
        return SQLITE_OK;
}

static int cpus_close(sqlite3_vtab_cursor *cur)
{
        struct cpus_cursor *c = (struct cpus_cursor *)cur;
        sqlite3_free(c->blob);
        sqlite3_free(c);
        return SQLITE_OK;
}

static int cpus_next(sqlite3_vtab_cursor *cur)
{
        struct cpus_cursor *c = (struct cpus_cursor *)cur;
        int r = packed_next(&c->it, &c->cpu, &c->value, &c->null);

        if (r < 0) {
                sqlite3_free(cur->pVtab->zErrMsg);
                cur->pVtab->zErrMsg = sqlite3_mprintf("%s", corrupt_msg);
                return SQLITE_CORRUPT;
        }
        c->eof = r == 0;
        c->rowid++;
        return SQLITE_OK;
}

static int cpus_filter(sqlite3_vtab_cursor *cur, int idx_num, const char *idx_str, int argc, sqlite3_value **argv)
{
        struct cpus_cursor *c = (struct cpus_cursor *)cur;
        int len;

        sqlite3_free(c->blob);
        c->blob = NULL;
        c->eof = true;
        c->rowid = 0;
        if (idx_num != 1 || argc < 1 || sqlite3_value_type(argv[0]) == SQLITE_NULL)
                return SQLITE_OK;
        len = sqlite3_value_bytes(argv[0]);
        if (len > 0) {
                c->blob = sqlite3_malloc(len);
                if (!c->blob)
                        return SQLITE_NOMEM;
                memcpy(c->blob, sqlite3_value_blob(argv[0]), (size_t)len);
        }
        packed_iter_init(&c->it, c->blob, (size_t)len);
        return cpus_next(cur);
}

static int cpus_eof(sqlite3_vtab_cursor *cur)
{
        return ((struct cpus_cursor *)cur)->eof;
}

static int cpus_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
        struct cpus_cursor *c = (struct cpus_cursor *)cur;

        if (col == COL_CPU)
                sqlite3_result_int(ctx, c->cpu);
        else if (col == COL_VALUE && !c->null)
                sqlite3_result_int64(ctx, c->value);
        else
                sqlite3_result_null(ctx);
        return SQLITE_OK;
}

static int cpus_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *ret)
{
        *ret = ((struct cpus_cursor *)cur)->rowid;
        return SQLITE_OK;
}

static sqlite3_module cpus_module = {
        .iVersion = 0,
        .xConnect = cpus_connect,
        .xBestIndex = cpus_best_index,
        .xDisconnect = cpus_disconnect,
        .xOpen = cpus_open,
        .xClose = cpus_close,
        .xFilter = cpus_filter,
        .xNext = cpus_next,
        .xEof = cpus_eof,
        .xColumn = cpus_column,
        .xRowid = cpus_rowid,
};

int packed_sql_register(sqlite3 *db)
{
        const int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
        int r;

        r = sqlite3_create_function_v2(db, "scalemon_cpu", 2, flags, NULL, fn_cpu, NULL, NULL, NULL);
        if (r == SQLITE_OK)
                r = sqlite3_create_function_v2(db, "scalemon_pack", 2, flags, NULL, NULL, pack_step, pack_final, NULL);
        if (r == SQLITE_OK)
                r = sqlite3_create_module(db, "scalemon_cpus", &cpus_module, NULL);
        return r;
}
