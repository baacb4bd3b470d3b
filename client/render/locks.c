/* locks.c - report's lock wait, formatted (see locks.h).
 *
 * The share is the run's lock_wait_ns over the CPU time /proc/stat gave
 * the same CPUs (busy and idle: the run's wall time times its CPUs).  It
 * is not a share of anything: a sleeping waiter's time counts in full
 * though its CPU runs others, and several tasks may wait at once, so it
 * passes 1 on a busy lock.  Shown as what it is, the number of tasks
 * waiting for a kernel lock per CPU, on average over the run; a waiter is
 * counted on the CPU where its wait ended.
 *
 * The tables count every task's waits: they are machine-wide, and say so.
 * Where the run had its own cgroup, OWN columns give its tasks' share of
 * each row (the benchmark's own lock wait).
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "locks.h"
#include "macro.h"
#include "output.h"

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

static void print_share_line(const struct analysis_run *r, enum total_level level)
{
        char line[4096];
        size_t len = 0;
        int mx = analysis_lock_max_loc(r, level);

        line[0] = 0;
        for (int loc = 0; loc <= mx && len < sizeof line - 32; loc++) {
                double s;
                if (analysis_lock_share(r, level, loc, &s))
                        strbuf_appendf(line, sizeof line, &len, "%s%d %.2f", len ? ", " : "", loc, s);
        }
        if (len)
                printf("  lock wait per %s (tasks waiting per CPU): %s\n", level == LEVEL_CPU ? "CPU" : "node", line);
}

/* The benchmark's own lock wait, where its cgroup was told apart. */
static void print_own_wait(const struct analysis_run *r)
{
        uint64_t n = 0;
        double own, share;
        char ow[32];

        if (!analysis_own_share(r, M_LOCK_WAIT_NS, &own, &share))
                return;
        for (size_t i = 0; i < r->locks.n; i++)
                n += (uint64_t)r->locks.v[i].own_contended;
        fmt_ns(own, ow, sizeof ow);
        printf("  lock wait of the benchmark's own tasks: %s in %" PRIu64 " waits", ow, n);
        if (!isnan(share))
                printf(" (%.1f%% of the machine's)", share * 100);
        printf("\n");
}

/* Why lock_contentions and the timed waits differ, in one line. */
static void print_counts(const struct analysis_run *r)
{
        struct lock_counts c;

        if (!analysis_lock_counts(r, &c) || c.begins == c.waits)
                return;
        if (!c.nested_known) {
                printf("  lock contentions %.0f vs %.0f waits timed: the counter counts every begin, BPF each wait at "
                       "its end (a mutex that spins, then sleeps, begins twice; waits open at the run's edges)\n",
                       c.begins, c.waits);
                return;
        }
        printf("  lock contentions %.0f vs %.0f waits timed: %.0f second begins of one wait (a mutex spins, then "
               "sleeps), %.0f not timed (map full), %+.0f open across the run's edges\n",
               c.begins, c.waits, c.nested, c.untimed, c.edges);
}

void locks_print_share(const struct analysis_run *r, bool per_node, bool per_cpu)
{
        double share, waits = 0;
        char tw[32], mw[32];

        if (!analysis_lock_share(r, LEVEL_SYSTEM, 0, &share))
                return;
        for (int m = M_LOCK_CONTENTIONS_SPINLOCK; m <= M_LOCK_CONTENTIONS_RTMUTEX; m++)
                waits += r->m[m].have ? r->m[m].total : 0;
        fmt_ns(r->m[M_LOCK_WAIT_NS].total, tw, sizeof tw);
        if (r->m[M_LOCK_WAIT_MAX_NS].have)
                fmt_ns(r->m[M_LOCK_WAIT_MAX_NS].total, mw, sizeof mw);
        printf("  lock wait: %s in %.0f waits%s%s; %.2f tasks waiting per CPU, on average over the run\n", tw, waits,
               r->m[M_LOCK_WAIT_MAX_NS].have ? ", longest " : "", r->m[M_LOCK_WAIT_MAX_NS].have ? mw : "", share);
        print_own_wait(r);
        print_counts(r);
        if (per_node || per_cpu)
                print_share_line(r, LEVEL_NODE);
        if (per_cpu)
                print_share_line(r, LEVEL_CPU);
}

static bool has_own(const struct analysis_locks *l)
{
        return (l->n && l->v[0].has_own) || (l->nobj && l->obj[0].has_own);
}

/* CONTENDED TOTAL_WAIT MAX_WAIT AVG_WAIT into c, t, m, a */
static void common_cells(int64_t n, int64_t total, int64_t max, char c[32], char t[32], char m[32], char a[32])
{
        snprintf(c, 32, "%lld", (long long)n);
        fmt_ns((double)total, t, 32);
        fmt_ns((double)max, m, 32);
        fmt_ns(n ? (double)total / (double)n : 0, a, 32);
}

static void print_by_caller(const struct analysis_locks *l, size_t max_rows, bool own)
{
        static const char *const cols[] = { "CONTENDED", "TOTAL_WAIT", "MAX_WAIT", "AVG_WAIT", "LOCKS", "TYPE", "CALLER",
                                            NULL };
        static const char *const cols_own[] = { "CONTENDED", "TOTAL_WAIT", "MAX_WAIT", "AVG_WAIT", "LOCKS",
                                                "OWN_CONTENDED", "OWN_WAIT", "TYPE", "CALLER", NULL };
        struct libscols_table *tb = own ? table_new(cols_own, "rrrrrrr") : table_new(cols, "rrrrr");

        if (!tb)
                return;
        for (size_t i = 0; i < l->n && (max_rows == 0 || i < max_rows); i++) {
                const struct store_lock *k = &l->v[i];
                char c[32], t[32], m[32], a[32], nl[32], oc[32], ow[32];
                common_cells(k->contended, k->total_wait_ns, k->max_wait_ns, c, t, m, a);
                snprintf(nl, sizeof nl, k->locks ? "%lld" : "-", (long long)k->locks);
                snprintf(oc, sizeof oc, "%lld", (long long)k->own_contended);
                fmt_ns((double)k->own_total_wait_ns, ow, sizeof ow);
                if (own)
                        table_row(tb, c, t, m, a, nl, oc, ow, k->type, k->caller);
                else
                        table_row(tb, c, t, m, a, nl, k->type, k->caller);
        }
        table_print(tb);
        if (max_rows && l->n > max_rows)
                printf("  (%zu more callers: --format json lists them all)\n", l->n - max_rows);
}

static void print_by_lock(const struct analysis_locks *l, size_t max_rows, bool own)
{
        static const char *const cols[] = { "CONTENDED", "TOTAL_WAIT", "MAX_WAIT", "AVG_WAIT", "CALLERS", "TYPE", "ADDRESS",
                                            "NAME", NULL };
        static const char *const cols_own[] = { "CONTENDED", "TOTAL_WAIT", "MAX_WAIT", "AVG_WAIT", "CALLERS",
                                                "OWN_CONTENDED", "OWN_WAIT", "TYPE", "ADDRESS", "NAME", NULL };
        struct libscols_table *tb = own ? table_new(cols_own, "rrrrrrr") : table_new(cols, "rrrrr");

        if (!tb)
                return;
        for (size_t i = 0; i < l->nobj && (max_rows == 0 || i < max_rows); i++) {
                const struct store_lock_obj *k = &l->obj[i];
                char c[32], t[32], m[32], a[32], nc[32], oc[32], ow[32];
                common_cells(k->contended, k->total_wait_ns, k->max_wait_ns, c, t, m, a);
                snprintf(nc, sizeof nc, "%lld", (long long)k->callers);
                snprintf(oc, sizeof oc, "%lld", (long long)k->own_contended);
                fmt_ns((double)k->own_total_wait_ns, ow, sizeof ow);
                if (own)
                        table_row(tb, c, t, m, a, nc, oc, ow, k->type, k->lock, k->name);
                else
                        table_row(tb, c, t, m, a, nc, k->type, k->lock, k->name);
        }
        table_print(tb);
        if (max_rows && l->nobj > max_rows)
                printf("  (%zu more locks: --format json lists them all)\n", l->nobj - max_rows);
}

void locks_print(const struct analysis_run *r, size_t max_rows, bool by_lock)
{
        const struct analysis_locks *l = &r->locks;
        bool own = has_own(l);
        char tw[32];

        if (!l->lost.known)
                return;
        if (l->n == 0)
                /* none in the table; the waits the maps lost are still said */
                printf("  contended locks (machine-wide): none\n");
        else {
                if (by_lock && l->nobj == 0) {
                        printf("  contended locks by lock: not recorded for this run (a scalemond from before lock "
                               "identity)\n");
                        by_lock = false;
                }
                printf("  contended locks by %s (machine-wide%s):\n", by_lock ? "lock" : "caller",
                       own ? "; OWN_*: the benchmark's own tasks" : "");
                if (by_lock)
                        print_by_lock(l, max_rows, own);
                else
                        print_by_caller(l, max_rows, own);
        }
        if (l->lost.untimed || l->lost.unattributed) {
                fmt_ns((double)l->lost.unattributed_ns, tw, sizeof tw);
                printf("  LOST: %lld waits not timed (per-task map full), %lld waits (%s) not in this table "
                       "(per-caller map full)\n",
                       (long long)l->lost.untimed, (long long)l->lost.unattributed, tw);
        }
}

static json_t *share_obj(const struct analysis_run *r, enum total_level level)
{
        json_t *o = json_object();
        int mx = analysis_lock_max_loc(r, level);

        for (int loc = 0; loc <= mx; loc++) {
                double s;
                char k[16];
                if (!analysis_lock_share(r, level, loc, &s))
                        continue;
                snprintf(k, sizeof k, "%d", loc);
                json_object_set_new(o, k, json_real(s));
        }
        return o;
}

static void add_own(json_t *o, bool has, int64_t contended, int64_t total)
{
        json_object_set_new(o, "own_contended", has ? json_integer(contended) : json_null());
        json_object_set_new(o, "own_total_wait_ns", has ? json_integer(total) : json_null());
}

static json_t *counts_json(const struct analysis_run *r)
{
        struct lock_counts c;

        if (!analysis_lock_counts(r, &c))
                return json_null();
        return json_pack("{s:f,s:f,s:o,s:f,s:o}", "contentions", c.begins, "waits", c.waits, "nested",
                         c.nested_known ? json_real(c.nested) : json_null(), "untimed", c.untimed, "edges",
                         c.nested_known ? json_real(c.edges) : json_null());
}

static json_t *by_lock_json(const struct analysis_locks *l)
{
        json_t *a = json_array();

        for (size_t i = 0; i < l->nobj; i++) {
                const struct store_lock_obj *k = &l->obj[i];
                json_t *o = json_pack("{s:s,s:s,s:s,s:I,s:I,s:I,s:I,s:s}", "lock", k->lock, "name", k->name, "type",
                                      k->type, "contended", (json_int_t)k->contended, "total_wait_ns",
                                      (json_int_t)k->total_wait_ns, "max_wait_ns", (json_int_t)k->max_wait_ns,
                                      "callers", (json_int_t)k->callers, "scope", "machine");
                add_own(o, k->has_own, k->own_contended, k->own_total_wait_ns);
                json_array_append_new(a, o);
        }
        return a;
}

void locks_add_json(const struct analysis_run *r, bool per_node, bool per_cpu, json_t *run)
{
        const struct analysis_locks *l = &r->locks;
        json_t *a = json_array(), *sh;
        double s;

        for (size_t i = 0; i < l->n; i++) {
                const struct store_lock *k = &l->v[i];
                json_t *o = json_pack("{s:s,s:s,s:I,s:I,s:I,s:f,s:I,s:s}", "caller", k->caller, "type", k->type,
                                      "contended", (json_int_t)k->contended, "total_wait_ns",
                                      (json_int_t)k->total_wait_ns, "max_wait_ns", (json_int_t)k->max_wait_ns,
                                      "avg_wait_ns",
                                      k->contended ? (double)k->total_wait_ns / (double)k->contended : 0.0,
                                      "min_wait_ns", (json_int_t)k->min_wait_ns, "scope", "machine");
                json_object_set_new(o, "locks", k->locks ? json_integer(k->locks) : json_null());
                add_own(o, k->has_own, k->own_contended, k->own_total_wait_ns);
                json_array_append_new(a, o);
        }
        json_object_set_new(run, "locks", a);
        json_object_set_new(run, "locks_by_lock", by_lock_json(l));
        json_object_set_new(run, "lock_counts", counts_json(r));
        if (l->lost.known)
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
        if (analysis_lock_share(r, LEVEL_SYSTEM, 0, &s)) {
                sh = json_pack("{s:f}", "system", s);
                if (per_node || per_cpu)
                        json_object_set_new(sh, "per_node", share_obj(r, LEVEL_NODE));
                if (per_cpu)
                        json_object_set_new(sh, "per_cpu", share_obj(r, LEVEL_CPU));
        } else
                sh = json_null();
        json_object_set_new(run, "lock_wait_share", sh);
}

json_t *locks_changes_json(const struct lock_change *v, size_t n)
{
        json_t *a = json_array();

        for (size_t i = 0; i < n; i++)
                json_array_append_new(a, json_pack("{s:s,s:s,s:f,s:f,s:o}", "caller", v[i].caller, "type", v[i].type,
                                                   "total_wait_ns", v[i].total_ns, "baseline_total_wait_ns",
                                                   v[i].baseline_total_ns, "change_pct",
                                                   v[i].has_change ? json_real(v[i].change_pct) : json_null()));
        return a;
}

void locks_print_changes(const struct lock_change *v, size_t n)
{
        for (size_t i = 0; i < n && i < 5 && v[i].total_ns > v[i].baseline_total_ns; i++) {
                char a[32], b[32];
                if (i == 0)
                        printf("  locks that got worse (mean total wait per run):\n");
                fmt_ns(v[i].total_ns, a, sizeof a);
                fmt_ns(v[i].baseline_total_ns, b, sizeof b);
                if (v[i].has_change)
                        printf("    %-8s %-36s %+9.1f%%  (%s vs %s)\n", v[i].type, v[i].caller, v[i].change_pct, a, b);
                else
                        printf("    %-8s %-36s %10s  (%s vs none)\n", v[i].type, v[i].caller, "new", a);
        }
}
