/* explain-causes.c - what each counter's excess cost the run, and the
 * distinct causes: families of counters that measure one thing, said once,
 * largest first (doc/EXPLAIN.md).
 *
 * Cost: a time-like counter (CPU time, PSI, run-queue wait, lock wait)
 * costs its excess itself, in seconds over the run; an event counter
 * costs its excess events at a nominal price per event (ev_cost below: an
 * order of magnitude, used to rank families against each other and for
 * the floor).  share = cost / the run's CPU-seconds (wall time x CPUs,
 * the sum of /proc/stat's columns over the run).
 *
 * A counter passes when it is above the siblings' range (a counter below
 * it is shown but is no cause) by at least RATIO_FLOOR, by SPREADS_FLOOR
 * of its own spread (from the siblings alone), and its cost is at least
 * SHARE_FLOOR of the run's CPU-seconds.  A family is a cause when one of
 * its counters passes; its size is its largest member's cost (members
 * count the same thing, so they are not summed).  Where another process's
 * CPU time is a cause, the pressure family (run-queue wait, PSI) is its
 * effect, said in its line; a machine counter whose everything-else part
 * passes and carries most of its excess is another process's too.  Where
 * the run had its own cgroup, a machine-wide counter that has no count
 * of the run's own (lock wait, numa_hit) is the run's only if its
 * family's own count (lock contentions, page faults) rose by RATIO_FLOOR
 * too (own_moved()).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "explain-internal.h"
#include "macro.h"
#include "store-series.h"

#define SHARE_FLOOR     0.01    /* 1% of the run's CPU-seconds */
#define RATIO_FLOOR     1.25    /* 25% above the siblings' highest */
#define SPREADS_FLOOR   3.0

const char *const explain_family_name[_FAM_MAX] = {
        [FAM_OTHERS] = "others",
        [FAM_CPU_TIME] = "cpu_time",
        [FAM_PAGE_FAULTS] = "page_faults",
        [FAM_CONTEXT_SWITCHES] = "context_switches",
        [FAM_MIGRATIONS] = "migrations",
        [FAM_LOCKS] = "locks",
        [FAM_PRESSURE] = "pressure",
        [FAM_NUMA] = "numa",
        [FAM_THP] = "thp",
        [FAM_KVM] = "kvm",
        [FAM_PMU] = "pmu",
};

/* Seconds of one stored unit of a time-like counter; 0 for events. */
static double time_unit_s(int m)
{
        if (metric_table[m].source == SRC_PROCSTAT)
                return 1;
        if (metric_table[m].source == SRC_PSI)
                return 1e-6;
        if (m == M_RUNQUEUE_WAIT || m == M_LOCK_WAIT_NS)
                return 1e-9;
        return 0;
}

/* Nominal CPU cost of one event, in seconds (doc/EXPLAIN.md's table). */
static double ev_cost(int m)
{
        switch (m) {
        case M_THP_FAULT_FALLBACK:
        case M_KVM_PLE_WINDOW_UPDATES:
                return 1e-6;
        case M_PAGE_FAULTS_MAJOR:
        case M_PGMAJFAULT:
                return 10e-6;
        case M_NUMA_HIT:
        case M_NUMA_LOCAL:
        case M_NUMA_MISS:
        case M_NUMA_FOREIGN:
        case M_NUMA_OTHER:
        case M_INTERLEAVE_HIT:
                return 0.5e-6;
        case M_CPU_MIGRATIONS:
        case M_NUMA_PAGES_MIGRATED:
        case M_PGMIGRATE_SUCCESS:
                return 5e-6;
        case M_THP_FAULT_ALLOC:
        case M_THP_COLLAPSE_ALLOC:
                return 50e-6;
        case M_THP_SPLIT_PAGE:
        case M_THP_SPLIT_PMD:
        case M_THP_DEFERRED_SPLIT_PAGE:
                return 10e-6;
        case M_CYCLES:
        case M_INSTRUCTIONS:
                return 1 / 3e9;         /* a cycle at 3 GHz */
        case M_LOCK_WAIT_LOST:
                return 0;
        default:
                return 2e-6;            /* page faults, context switches, lock contentions, KVM exits, NUMA hint faults */
        }
}

static enum explain_family family_of(int m, enum explain_part part)
{
        if (part == EXPLAIN_OTHERS || part == EXPLAIN_OTHERS_CPU)
                return FAM_OTHERS;
        switch (metric_table[m].source) {
        case SRC_PROCSTAT:
                return FAM_CPU_TIME;
        case SRC_PSI:
        case SRC_SCHEDSTAT:
                return FAM_PRESSURE;
        case SRC_BPF:
                return FAM_LOCKS;
        case SRC_PERF_HW:
                return FAM_PMU;
        case SRC_NUMASTAT:
                return m == M_NUMA_HIT || m == M_NUMA_LOCAL ? FAM_PAGE_FAULTS : FAM_NUMA;
        default:
                break;
        }
        switch (m) {
        case M_PAGE_FAULTS:
        case M_PAGE_FAULTS_MINOR:
        case M_PAGE_FAULTS_MAJOR:
        case M_PGFAULT:                 /* the same faults, from /proc/vmstat (the default) */
        case M_PGMAJFAULT:
                return FAM_PAGE_FAULTS;
        case M_CONTEXT_SWITCHES:
        case M_VOLUNTARY_SWITCHES:
        case M_INVOLUNTARY_SWITCHES:
                return FAM_CONTEXT_SWITCHES;
        case M_CPU_MIGRATIONS:
                return FAM_MIGRATIONS;
        case M_LOCK_CONTENTIONS:
                return FAM_LOCKS;
        case M_KVM_EXITS:
        case M_KVM_PAUSE_EXITS:
        case M_KVM_PLE_WINDOW_UPDATES:
                return FAM_KVM;
        case M_NUMA_HINT_FAULTS:
        case M_NUMA_HINT_FAULTS_LOCAL:
        case M_NUMA_PAGES_MIGRATED:
        case M_PGMIGRATE_SUCCESS:
                return FAM_NUMA;
        default:
                return FAM_THP;         /* the vmstat thp_* counters */
        }
}

void explain_cost(const struct analysis_run *run, struct explain_run_counter *c, double dur, double cpu_s, double edge)
{
        int m = (int)c->metric;
        double u = c->part == EXPLAIN_OTHERS_CPU ? 1 : time_unit_s(m);

        c->family = family_of(m, c->part);
        c->time_like = u > 0;
        c->excess_rate = c->excess != 0 ? c->run_rate - edge : 0;
        c->cost_s = fabs(c->excess_rate) * fmax(dur, 0) * (c->time_like ? u : ev_cost(m));
        c->share = c->cost_s / (cpu_s > 0 ? cpu_s : fmax(dur, 1e-3));
        /* the idle time is no cost, and a maximum is no count */
        /* where the run's tasks' own stall is known (its cgroup's
         * cpu.pressure), the machine's run-queue wait and pressure count
         * every other task's waits too: not the run's cost */
        if (c->part == EXPLAIN_MACHINE && c->family == FAM_PRESSURE && run->m[M_PSI_CPU_SOME].has_own) {
                c->passes = false;
                return;
        }
        c->passes = c->excess > 0 && m != M_CPU_IDLE && !metric_table[m].max &&
                    exp(c->excess) >= RATIO_FLOOR && c->score >= SPREADS_FLOOR && c->share >= SHARE_FLOOR;
}

/* Is machine counter c's excess mostly another process's?  (Its
 * everything-else part passes and carries at least half of it.) */
static bool others_carry(const struct explain_run_result *res, const struct explain_run_counter *c)
{
        if (c->part != EXPLAIN_MACHINE)
                return false;
        for (size_t i = 0; i < res->ncounters; i++) {
                const struct explain_run_counter *o = &res->counters[i];
                if (o->part == EXPLAIN_OTHERS && o->metric == c->metric && o->passes)
                        return o->excess_rate >= 0.5 * c->excess_rate;
        }
        return false;
}

/* The counter the run's cgroup counts for family f, or -1. */
static int own_witness(enum explain_family f)
{
        switch (f) {
        case FAM_PAGE_FAULTS:
                return M_PAGE_FAULTS;
        case FAM_LOCKS:
                return M_LOCK_CONTENTIONS;
        case FAM_CONTEXT_SWITCHES:
                return M_CONTEXT_SWITCHES;
        case FAM_MIGRATIONS:
                return M_CPU_MIGRATIONS;
        default:
                return -1;
        }
}

/* Where the run had its own cgroup, did its own count of family f's
 * witness rise above the siblings' own by RATIO_FLOOR?  A machine-wide
 * excess (lock wait, numa_hit: no count of the run's own) whose family's
 * own count did not move is another process's, not the run's. */
static bool own_moved(struct ex *e, enum explain_family f)
{
        int m = own_witness(f);
        const struct analysis_run *run = ex_run(e, 0);
        double hi = 0, x;

        if (m < 0 || !run->m[m].has_own || !(run->dur > 0))
                return true;
        for (size_t j = 1; j <= e->nsib; j++) {
                const struct analysis_run *s = ex_run(e, j);
                if (!s->m[m].has_own || !(s->dur > 0))
                        return true;
                hi = fmax(hi, s->m[m].own_total / s->dur);
        }
        x = run->m[m].own_total / run->dur;
        /* three events over the run as the least that counts */
        return (x + 3 / run->dur) / (hi + 3 / run->dur) >= RATIO_FLOOR;
}

/* The resource a pressure counter is about: "cpu", "io", "memory". */
static const char *resource(int m)
{
        return m == M_RUNQUEUE_WAIT ? "cpu" : metric_table[m].source == SRC_PSI ? metric_table[m].key : "";
}

/* For pressure, a phase counter about the same resource as the cause's
 * head (CPU pressure does not show in an I/O stall); others: any. */
static bool same_resource(const struct explain_cause *k, int m)
{
        const char *h = k->metrics[0], *colon = strchr(h, ':');
        int hm = metric_id_by_name(colon ? colon + 1 : h);

        return k->family != FAM_PRESSURE || hm < 0 || streq(resource(hm), resource(m));
}

static int phase_of(const struct explain_run_result *res, const struct explain_cause *k)
{
        int best = -1;
        double br = 0;

        /* the phase its head leads or joins, the strongest there */
        for (size_t p = 0; p < res->nphases; p++)
                for (size_t q = 0; q < res->phases[p].nm; q++) {
                        const struct explain_run_phase_metric *pm = &res->phases[p].m[q];
                        if (streq(metric_table[pm->metric].name, k->metrics[0]) && pm->ratio > 1 && pm->ratio > br) {
                                br = pm->ratio;
                                best = (int)p;
                        }
                }
        if (best >= 0)
                return best;
        for (size_t p = 0; p < res->nphases; p++)
                for (size_t q = 0; q < res->phases[p].nm; q++) {
                        const struct explain_run_phase_metric *pm = &res->phases[p].m[q];
                        enum explain_family f = family_of((int)pm->metric, EXPLAIN_MACHINE);
                        /* another process shows in time as pressure and CPU time */
                        bool mine = k->family == FAM_OTHERS ? pm->metric == M_PSI_CPU_SOME || pm->metric == M_RUNQUEUE_WAIT ||
                                                                      pm->metric == M_INVOLUNTARY_SWITCHES ||
                                                                      pm->metric == M_CPU_USER || pm->metric == M_CPU_SYSTEM
                                                            : f == k->family && same_resource(k, (int)pm->metric);
                        if (mine && pm->ratio > 1 && pm->ratio > br) {
                                br = pm->ratio;
                                best = (int)p;
                        }
                }
        return best;
}

static int cmp_cause(const void *a, const void *b)
{
        const struct explain_cause *x = a, *y = b;
        /* CPU time says where the time went and pressure that tasks
         * waited, not why: after the causes that name a why */
        bool sx = x->family == FAM_CPU_TIME || x->family == FAM_PRESSURE,
             sy = y->family == FAM_CPU_TIME || y->family == FAM_PRESSURE;
        if (sx != sy)
                return sx ? 1 : -1;
        if (x->cost_s != y->cost_s)
                return x->cost_s > y->cost_s ? -1 : 1;
        return (int)x->family - (int)y->family;
}

/* The callers whose lock wait grew most in the run against the siblings'
 * mean, from the runs' lock tables. */
static int lock_callers(struct ex *e, struct explain_cause *k)
{
        _cleanup_free_ struct analysis_run *t = calloc(e->nsib + 1, sizeof *t);
        _cleanup_free_ size_t *sib = calloc(e->nsib + 1, sizeof *sib);
        _cleanup_free_ struct lock_change *v = NULL;
        size_t n = 0, zero = 0;
        int r = 0;

        if (!t || !sib)
                return -ENOMEM;
        for (size_t j = 0; j <= e->nsib && r >= 0; j++) {
                t[j].info = ex_run(e, j)->info;
                r = analysis_locks_load(e->s, &t[j]);
                if (j)
                        sib[j - 1] = j;
        }
        if (r >= 0)
                r = analysis_lock_changes(t, &zero, 1, sib, e->nsib, &v, &n);
        if (r >= 0 && t[0].locks.nobj > 0) {
                /* by lock object, largest wait first: addresses differ from
                 * run to run (a process's mmap_lock), so the run's own first */
                const struct store_lock_obj *b = &t[0].locks.obj[0];
                k->lock.have = true;
                snprintf(k->lock.lock, sizeof k->lock.lock, "%s", b->lock);
                snprintf(k->lock.name, sizeof k->lock.name, "%s", b->name);
                snprintf(k->lock.type, sizeof k->lock.type, "%s", b->type);
                k->lock.wait_ms = b->total_wait_ns / 1e6;
                k->lock.contended = b->contended;
                k->lock.callers = b->callers;
        }
        for (size_t j = 0; j <= e->nsib; j++)
                analysis_locks_free(&t[j].locks);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n && k->ncallers < EXPLAIN_CAUSE_CALLERS; i++) {
                struct explain_cause_caller *c = &k->callers[k->ncallers];
                if (!(v[i].total_ns > v[i].baseline_total_ns))
                        break;
                snprintf(c->caller, sizeof c->caller, "%s", v[i].caller);
                snprintf(c->type, sizeof c->type, "%s", v[i].type);
                c->run_ms = v[i].total_ns / 1e6;
                c->sib_ms = v[i].baseline_total_ns / 1e6;
                k->ncallers++;
        }
        return 0;
}

/* Add counter c to family f's cause in k[0..*n). */
static void add_member(struct explain_cause *k, size_t *n, const struct explain_run_counter *c, enum explain_family f)
{
        struct explain_cause *x = NULL;

        for (size_t i = 0; i < *n && !x; i++)
                if (k[i].family == f)
                        x = &k[i];
        if (!x) {
                x = &k[(*n)++];
                memset(x, 0, sizeof *x);
                x->family = f;
                x->phase = -1;
        }
        if (c->cost_s > x->cost_s || x->nmetrics == 0) {
                /* the head: the costliest member, first */
                if (x->nmetrics == EXPLAIN_CAUSE_METRICS)
                        x->nmetrics--;
                memmove(&x->metrics[1], &x->metrics[0], x->nmetrics * sizeof x->metrics[0]);
                x->metrics[0] = c->key;
                x->nmetrics++;
                x->cost_s = c->cost_s;
                x->share = c->share;
                x->value = c->time_like ? c->cost_s : c->excess_rate;
                x->unit = c->time_like ? "s" : "/s";
                x->part = c->part == EXPLAIN_MACHINE ? "machine" : c->part == EXPLAIN_OWN ? "own" : "others";
        } else if (x->nmetrics < EXPLAIN_CAUSE_METRICS)
                x->metrics[x->nmetrics++] = c->key;
}

/* What the benchmark itself felt: its own CPU time against the siblings'
 * median, and its tasks' CPU stall. */
static void own_detail(struct ex *e, struct explain_cause *k)
{
        double v[EXPLAIN_MAX_AGAINST];
        struct analysis_own_cpu oc, os;
        const struct mstat *p = &ex_run(e, 0)->m[M_PSI_CPU_SOME];
        size_t n = 0;

        if (!analysis_own_cpu(ex_run(e, 0), &oc))
                return;
        for (size_t j = 1; j <= e->nsib && n < EXPLAIN_MAX_AGAINST; j++)
                if (analysis_own_cpu(ex_run(e, j), &os))
                        v[n++] = os.own_s;
        if (n == 0)
                return;
        k->own_known = true;
        k->own_cpu_delta_s = oc.own_s - explain_median(v, n);
        k->own_stall_s = p->has_own ? p->own_total / 1e6 : NAN;
}

int explain_causes(struct ex *e, struct explain_run_result *res)
{
        struct explain_cause k[_FAM_MAX];
        bool others = false, mine[_FAM_MAX];
        size_t n = 0;

        for (int f = 0; f < _FAM_MAX; f++)
                mine[f] = own_moved(e, (enum explain_family)f);
        for (size_t i = 0; i < res->ncounters; i++)
                others |= res->counters[i].passes && res->counters[i].part == EXPLAIN_OTHERS_CPU;
        /* members by cost, so that each family's head is its costliest */
        for (size_t i = 0; i < res->ncounters; i++) {
                const struct explain_run_counter *c = &res->counters[i];
                enum explain_family f = c->family;
                if (!c->passes)
                        continue;
                if ((others && f == FAM_PRESSURE) || others_carry(res, c))
                        f = FAM_OTHERS;         /* its effects */
                else if (c->part == EXPLAIN_MACHINE && !mine[f])
                        continue;               /* another process's, unseen by the run's own count */
                add_member(k, &n, c, f);
        }
        /* the others' head is their CPU time where it passes: the cost is
         * another process's, the pressure is what the benchmark felt */
        for (size_t i = 0; i < n; i++) {
                if (k[i].family != FAM_OTHERS || !others)
                        continue;
                for (size_t j = 0; j < res->ncounters; j++) {
                        const struct explain_run_counter *c = &res->counters[j];
                        if (c->part != EXPLAIN_OTHERS_CPU)
                                continue;
                        for (size_t q = 0; q < k[i].nmetrics; q++)
                                if (k[i].metrics[q] == c->key) {
                                        memmove(&k[i].metrics[1], &k[i].metrics[0], q * sizeof k[i].metrics[0]);
                                        k[i].metrics[0] = c->key;
                                }
                        /* what another process took, as report says it */
                        k[i].value = c->run_rate * res->run_dur_s;
                        k[i].share = k[i].value / (res->cpu_s > 0 ? res->cpu_s : fmax(res->run_dur_s, 1e-3));
                        k[i].unit = "s";
                        k[i].part = "others";
                }
        }
        for (size_t i = 0; i < n; i++) {
                k[i].phase = phase_of(res, &k[i]);
                if (k[i].family == FAM_OTHERS)
                        own_detail(e, &k[i]);
                if (k[i].family == FAM_LOCKS) {
                        int r = lock_callers(e, &k[i]);
                        if (r < 0)
                                return r;
                }
        }
        if (n > 1)
                qsort(k, n, sizeof *k, cmp_cause);
        res->causes = calloc(n + 1, sizeof *res->causes);
        if (!res->causes)
                return -ENOMEM;
        memcpy(res->causes, k, n * sizeof *k);
        res->ncauses = n;
        return 0;
}

/* ---- another process's time window ---- */

#define WINDOW_CPUS     0.5     /* CPUs above the siblings' most at the same offset */
#define WINDOW_GAP      2       /* bins below that bridged inside a window */
#define WINDOW_MIN      3       /* bins, at least */

/* Everything else's CPU time per bin of run j: the machine's busy time
 * (/proc/stat, all but idle and iowait) minus the cgroup's user and
 * system time (its per-tick cpu.stat) and scalemond's own (scalemond_cpu,
 * where recorded), in CPUs; false if it had none. */
static int others_bins(struct ex *e, const struct store_tick_values *tv, size_t k, size_t nbins, int64_t iv, double *out,
                       double *tmp)
{
        static const int busy[] = { M_CPU_USER, M_CPU_NICE, M_CPU_SYSTEM, M_CPU_IRQ, M_CPU_SOFTIRQ, M_CPU_STEAL };
        const struct analysis_run *r = ex_run(e, k);
        size_t n = tv->n < nbins ? tv->n : nbins;
        int rc;

        for (size_t i = 0; i < nbins; i++)
                out[i] = NAN;
        for (int pass = 0; pass < 2; pass++) {
                rc = store_own_bins(e->s, r->info.id, pass ? M_CPU_SYSTEM : M_CPU_USER, r->info.start, iv, nbins,
                                    tmp + (size_t)pass * nbins);
                if (rc < 0)
                        return rc;
        }
        for (size_t i = 0; i < n; i++) {
                double b = 0;
                if (!tv->dur[i])
                        continue;
                for (size_t q = 0; q < sizeof busy / sizeof busy[0]; q++)
                        b += tv->v[(size_t)busy[q] * tv->n + i];
                b -= tv->v[(size_t)M_SCALEMOND_CPU * tv->n + i];       /* 0 where not recorded */
                out[i] = fmax(b - tmp[i] - tmp[nbins + i], 0) / ((double)iv / 1e9);
        }
        return 0;
}

int explain_others_window(struct ex *e, struct explain_run_result *res, const struct store_tick_values *tv,
                          const size_t *sibidx, size_t nruns, size_t nbins, int64_t iv)
{
        _cleanup_free_ double *x = calloc(nbins * (nruns + 2) + 1, sizeof *x);
        size_t best_a = 0, best_b = 0, a = SIZE_MAX, last = 0;
        int r = 0;

        if (!x)
                return -ENOMEM;
        if (!ex_run(e, 0)->m[M_CPU_USER].has_own || nruns < 2)
                return 0;
        for (size_t j = 0; j < nruns && r >= 0; j++)
                r = others_bins(e, &tv[j], sibidx[j], nbins, iv, x + j * nbins, x + nruns * nbins);
        if (r < 0)
                return r;
        /* the bins where the run's is WINDOW_CPUS above every sibling's;
         * the longest stretch of them, gaps of WINDOW_GAP bridged */
        for (size_t i = 0; i <= nbins; i++) {
                bool in = false;
                if (i < nbins && !isnan(x[i])) {
                        double hi = -INFINITY;
                        for (size_t j = 1; j < nruns; j++)
                                if (!isnan(x[j * nbins + i]))
                                        hi = fmax(hi, x[j * nbins + i]);
                        in = isfinite(hi) && x[i] >= hi + WINDOW_CPUS;
                }
                if (in) {
                        if (a == SIZE_MAX || i > last + WINDOW_GAP + 1)
                                a = i;
                        last = i;
                        if (last + 1 - a > best_b - best_a) {
                                best_a = a;
                                best_b = last + 1;
                        }
                }
        }
        if (best_b - best_a >= WINDOW_MIN) {
                res->have_others_window = true;
                res->others_from_s = (double)best_a * (double)iv / 1e9;
                res->others_to_s = (double)best_b * (double)iv / 1e9;
        }
        return 0;
}
