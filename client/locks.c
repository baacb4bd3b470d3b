/* locks.c - the contended kernel locks of a run and its lock wait share,
 * for `scalemonctl report`.
 *
 * The locks come from run_lock (schema/0006-locks.sql), written by
 * scalemond when the run stopped: exact counts and total waits between
 * the run's start and stop, callers already named.  The share is the
 * run's lock_wait_ns over the CPU time /proc/stat gave the same CPUs
 * (user + nice + system + idle + iowait + irq + softirq + steal): the
 * part of the machine's time that tasks spent waiting for kernel locks
 * (it can pass 100% on a CPU: waits are counted where they end, and a
 * sleeping waiter's time is counted in full though the CPU ran others).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "locks.h"
#include "store-locks.h"

struct run_locks {
        struct store_lock *v;
        size_t n;
        struct store_lock_lost lost;
};

static const int cpu_time_metrics[] = { M_CPU_USER, M_CPU_NICE, M_CPU_SYSTEM, M_CPU_IDLE,
                                        M_CPU_IOWAIT, M_CPU_IRQ, M_CPU_SOFTIRQ, M_CPU_STEAL };

int locks_load(struct ctl *ctl, struct rrun *r)
{
        struct run_locks *l = calloc(1, sizeof *l);
        int e;

        if (!l)
                return -ENOMEM;
        e = store_run_locks_get(ctl->store, r->info.id, &l->v, &l->n, &l->lost);
        if (e < 0) {
                free(l);
                return e;
        }
        r->locks = l;
        return 0;
}

void locks_free(struct rrun *r)
{
        if (r->locks) {
                free(r->locks->v);
                free(r->locks);
                r->locks = NULL;
        }
}

static bool is_cpu_time(int m)
{
        for (size_t i = 0; i < ELEMENTSOF(cpu_time_metrics); i++)
                if (cpu_time_metrics[i] == m)
                        return true;
        return false;
}

bool locks_share(const struct rrun *r, enum total_level level, int loc, double *ret)
{
        double wait = 0, cpu = 0;
        bool have = false;

        if (level == LEVEL_SYSTEM) {
                if (!r->m[M_LOCK_WAIT_NS].have || r->cpu_total <= 0)
                        return false;
                *ret = r->m[M_LOCK_WAIT_NS].total / 1e9 / r->cpu_total;
                return true;
        }
        for (size_t i = 0; i < r->d.ntotals; i++) {
                const struct store_total *t = &r->d.totals[i];
                int m;
                if (t->level != level || t->loc != loc)
                        continue;
                m = metric_id_by_name(t->metric);
                if (m == M_LOCK_WAIT_NS) {
                        wait = t->value;
                        have = true;
                } else if (m >= 0 && is_cpu_time(m))
                        cpu += t->value;
        }
        if (!have || cpu <= 0)
                return false;
        *ret = wait / 1e9 / cpu;
        return true;
}

/* 227.41 ms, 19.46 us, 4.54 s: as perf lock contention prints times */
static void fmt_ns(double ns, char *buf, size_t size)
{
        if (ns >= 1e9)
                snprintf(buf, size, "%.2f s", ns / 1e9);
        else if (ns >= 1e6)
                snprintf(buf, size, "%.2f ms", ns / 1e6);
        else if (ns >= 1e3)
                snprintf(buf, size, "%.2f us", ns / 1e3);
        else
                snprintf(buf, size, "%.0f ns", ns);
}

static int max_loc(const struct rrun *r, enum total_level level)
{
        int mx = -1;
        for (size_t i = 0; i < r->d.ntotals; i++)
                if (r->d.totals[i].level == level && r->d.totals[i].loc > mx &&
                    streq(r->d.totals[i].metric, metric_table[M_LOCK_WAIT_NS].name))
                        mx = r->d.totals[i].loc;
        return mx;
}

static void print_share_line(const struct rrun *r, enum total_level level)
{
        char line[4096];
        size_t len = 0;
        int mx = max_loc(r, level);

        line[0] = 0;
        for (int loc = 0; loc <= mx && len < sizeof line - 32; loc++) {
                double s;
                if (locks_share(r, level, loc, &s))
                        strbuf_appendf(line, sizeof line, &len, "%s%d %.1f%%", len ? ", " : "", loc, s * 100);
        }
        if (len)
                printf("  lock wait per %s: %s\n", level == LEVEL_CPU ? "CPU" : "node", line);
}

void locks_print_share(const struct rrun *r, enum per per)
{
        double share, waits = 0;
        char tw[32], mw[32];

        if (!locks_share(r, LEVEL_SYSTEM, 0, &share))
                return;
        for (int m = M_LOCK_CONTENTIONS_SPINLOCK; m <= M_LOCK_CONTENTIONS_RTMUTEX; m++)
                waits += r->m[m].have ? r->m[m].total : 0;
        fmt_ns(r->m[M_LOCK_WAIT_NS].total, tw, sizeof tw);
        if (r->m[M_LOCK_WAIT_MAX_NS].have)
                fmt_ns(r->m[M_LOCK_WAIT_MAX_NS].total, mw, sizeof mw);
        printf("  lock wait: %.2f%% of CPU time (%s in %.0f waits%s%s)\n", share * 100, tw, waits,
               r->m[M_LOCK_WAIT_MAX_NS].have ? ", longest " : "", r->m[M_LOCK_WAIT_MAX_NS].have ? mw : "");
        if (per != PER_SYSTEM)
                print_share_line(r, LEVEL_NODE);
        if (per == PER_CPU)
                print_share_line(r, LEVEL_CPU);
}

void locks_print(const struct rrun *r, size_t max_rows)
{
        static const char *const cols[] = { "CONTENDED", "TOTAL_WAIT", "MAX_WAIT", "AVG_WAIT", "TYPE", "CALLER", NULL };
        const struct run_locks *l = r->locks;
        struct libscols_table *tb;
        char tw[32];

        if (!l || !l->lost.known)
                return;
        if (l->n == 0) {
                printf("  contended locks: none\n");
                return;
        }
        printf("  contended locks:\n");
        tb = table_new(cols, "rrrrr");
        if (!tb)
                return;
        for (size_t i = 0; i < l->n && (max_rows == 0 || i < max_rows); i++) {
                const struct store_lock *k = &l->v[i];
                char c[32], t[32], m[32], a[32];
                snprintf(c, sizeof c, "%lld", (long long)k->contended);
                fmt_ns((double)k->total_wait_ns, t, sizeof t);
                fmt_ns((double)k->max_wait_ns, m, sizeof m);
                fmt_ns(k->contended ? (double)k->total_wait_ns / (double)k->contended : 0, a, sizeof a);
                table_row(tb, c, t, m, a, k->type, k->caller);
        }
        table_print(tb);
        if (max_rows && l->n > max_rows)
                printf("  (%zu more callers: --format json lists them all)\n", l->n - max_rows);
        if (l->lost.untimed || l->lost.unattributed) {
                fmt_ns((double)l->lost.unattributed_ns, tw, sizeof tw);
                printf("  LOST: %lld waits not timed (per-task map full), %lld waits (%s) not in this table "
                       "(per-caller map full)\n",
                       (long long)l->lost.untimed, (long long)l->lost.unattributed, tw);
        }
}

static json_t *share_obj(const struct rrun *r, enum total_level level)
{
        json_t *o = json_object();
        int mx = max_loc(r, level);

        for (int loc = 0; loc <= mx; loc++) {
                double s;
                char k[16];
                if (!locks_share(r, level, loc, &s))
                        continue;
                snprintf(k, sizeof k, "%d", loc);
                json_object_set_new(o, k, json_real(s));
        }
        return o;
}

void locks_add_json(const struct rrun *r, enum per per, json_t *run)
{
        const struct run_locks *l = r->locks;
        json_t *a = json_array(), *sh;
        double s;

        for (size_t i = 0; l && i < l->n; i++) {
                const struct store_lock *k = &l->v[i];
                json_array_append_new(a, json_pack("{s:s,s:s,s:I,s:I,s:I,s:f,s:I}", "caller", k->caller, "type",
                                                   k->type, "contended", (json_int_t)k->contended, "total_wait_ns",
                                                   (json_int_t)k->total_wait_ns, "max_wait_ns",
                                                   (json_int_t)k->max_wait_ns, "avg_wait_ns",
                                                   k->contended ? (double)k->total_wait_ns / (double)k->contended : 0.0,
                                                   "min_wait_ns", (json_int_t)k->min_wait_ns));
        }
        json_object_set_new(run, "locks", a);
        if (l && l->lost.known)
                json_object_set_new(run, "locks_lost",
                                    json_pack("{s:I,s:I,s:I}", "untimed", (json_int_t)l->lost.untimed, "unattributed",
                                              (json_int_t)l->lost.unattributed, "unattributed_wait_ns",
                                              (json_int_t)l->lost.unattributed_ns));
        else
                json_object_set_new(run, "locks_why", json_string(streq(r->info.status, "running")
                                                                          ? "the run is still running"
                                                                          : "no lock wait recorded for this run "
                                                                            "(scalemond without BPF: scalemonctl "
                                                                            "metrics says why)"));
        if (locks_share(r, LEVEL_SYSTEM, 0, &s)) {
                sh = json_pack("{s:f}", "system", s);
                if (per != PER_SYSTEM)
                        json_object_set_new(sh, "per_node", share_obj(r, LEVEL_NODE));
                if (per == PER_CPU)
                        json_object_set_new(sh, "per_cpu", share_obj(r, LEVEL_CPU));
        } else
                sh = json_null();
        json_object_set_new(run, "lock_wait_share", sh);
}

static int cmp_change(const void *a, const void *b)
{
        double x = json_real_value(json_object_get(*(json_t *const *)a, "sort")),
               y = json_real_value(json_object_get(*(json_t *const *)b, "sort"));
        return x > y ? -1 : x < y;
}

json_t *locks_compare_json(const struct rrun *runs, const size_t *gidx, size_t gn, const size_t *bidx, size_t bn)
{
        json_t *g = locks_group_json(runs, gidx, gn), *b = locks_group_json(runs, bidx, bn), *out = json_array(), *v;
        json_t **rows;
        const char *key;
        size_t n = 0, cap = json_object_size(g) + json_object_size(b) + 1;

        rows = calloc(cap, sizeof *rows);
        for (int pass = 0; rows && pass < 2; pass++)
                json_object_foreach(pass ? b : g, key, v) {
                        json_t *gv = json_object_get(g, key), *bv = json_object_get(b, key);
                        double x = gv ? json_real_value(gv) : 0, y = bv ? json_real_value(bv) : 0;
                        char caller[160];
                        const char *sp = strrchr(key, ' ');
                        json_t *o;

                        if (pass && gv)
                                continue;       /* seen in the first pass */
                        snprintf(caller, sizeof caller, "%.*s", sp ? (int)(sp - key) : (int)strlen(key), key);
                        o = json_pack("{s:s,s:s,s:f,s:f,s:o,s:f}", "caller", caller, "type", sp ? sp + 1 : "",
                                      "total_wait_ns", x, "baseline_total_wait_ns", y, "change_pct",
                                      y > 0 ? json_real((x / y - 1) * 100) : json_null(), "sort", x - y);
                        rows[n++] = o;
                }
        if (n > 1)
                qsort(rows, n, sizeof *rows, cmp_change);
        for (size_t i = 0; i < n; i++) {
                json_object_del(rows[i], "sort");
                json_array_append_new(out, rows[i]);
        }
        free(rows);
        json_decref(g);
        json_decref(b);
        return out;
}

void locks_print_compare(json_t *rows)
{
        size_t i;
        json_t *r;

        json_array_foreach(rows, i, r) {
                char a[32], b[32];
                double x = json_real_value(json_object_get(r, "total_wait_ns")),
                       y = json_real_value(json_object_get(r, "baseline_total_wait_ns"));
                if (i >= 5 || x <= y)
                        break;          /* the locks that got worse, the most first */
                if (i == 0)
                        printf("  locks that got worse (mean total wait per run):\n");
                fmt_ns(x, a, sizeof a);
                fmt_ns(y, b, sizeof b);
                if (y > 0)
                        printf("    %-8s %-36s %+9.1f%%  (%s vs %s)\n", json_string_value(json_object_get(r, "type")),
                               json_string_value(json_object_get(r, "caller")), (x / y - 1) * 100, a, b);
                else
                        printf("    %-8s %-36s %10s  (%s vs none)\n", json_string_value(json_object_get(r, "type")),
                               json_string_value(json_object_get(r, "caller")), "new", a);
        }
}

json_t *locks_group_json(const struct rrun *runs, const size_t *idx, size_t n)
{
        json_t *o = json_object();

        for (size_t i = 0; i < n; i++) {
                const struct run_locks *l = runs[idx[i]].locks;
                for (size_t j = 0; l && j < l->n; j++) {
                        char key[160];
                        json_t *v;
                        snprintf(key, sizeof key, "%s %s", l->v[j].caller, l->v[j].type);
                        v = json_object_get(o, key);
                        json_object_set_new(o, key, json_real((v ? json_real_value(v) : 0) +
                                                              (double)l->v[j].total_wait_ns / (double)n));
                }
        }
        return o;
}
