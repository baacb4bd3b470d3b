/* locks.c - report's lock wait, formatted (see locks.h).
 *
 * The share is the run's lock_wait_ns over the CPU time /proc/stat gave
 * the same CPUs (busy and idle: the run's wall time times its CPUs).  It
 * is not a share of anything: a sleeping waiter's time counts in full
 * though its CPU runs others, and several tasks may wait at once, so it
 * passes 1 on a busy lock.  Shown as what it is, the number of tasks
 * waiting for a kernel lock per CPU, on average over the run; a waiter is
 * counted on the CPU where its wait ended.
 */
#include "config.h"

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
        if (per_node || per_cpu)
                print_share_line(r, LEVEL_NODE);
        if (per_cpu)
                print_share_line(r, LEVEL_CPU);
}

void locks_print(const struct analysis_run *r, size_t max_rows)
{
        static const char *const cols[] = { "CONTENDED", "TOTAL_WAIT", "MAX_WAIT", "AVG_WAIT", "TYPE", "CALLER", NULL };
        const struct analysis_locks *l = &r->locks;
        struct libscols_table *tb;
        char tw[32];

        if (!l->lost.known)
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

void locks_add_json(const struct analysis_run *r, bool per_node, bool per_cpu, json_t *run)
{
        const struct analysis_locks *l = &r->locks;
        json_t *a = json_array(), *sh;
        double s;

        for (size_t i = 0; i < l->n; i++) {
                const struct store_lock *k = &l->v[i];
                json_array_append_new(a, json_pack("{s:s,s:s,s:I,s:I,s:I,s:f,s:I}", "caller", k->caller, "type",
                                                   k->type, "contended", (json_int_t)k->contended, "total_wait_ns",
                                                   (json_int_t)k->total_wait_ns, "max_wait_ns",
                                                   (json_int_t)k->max_wait_ns, "avg_wait_ns",
                                                   k->contended ? (double)k->total_wait_ns / (double)k->contended : 0.0,
                                                   "min_wait_ns", (json_int_t)k->min_wait_ns));
        }
        json_object_set_new(run, "locks", a);
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
