/* explain-words.c - each of explain's causes as one line in plain words:
 * what it cost the run, when and where, against the siblings' highest. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "explain-internal.h"
#include "macro.h"
#include "output.h"

static const struct explain_run_counter *counter_of(const struct explain_run_result *r, const char *key)
{
        for (size_t i = 0; i < r->ncounters; i++)
                if (streq(r->counters[i].key, key))
                        return &r->counters[i];
        return NULL;
}

/* Words for a counter, as a person says them. */
static const char *words_of(const struct explain_run_counter *c)
{
        static const struct {
                int m;
                const char *w;
        } w[] = {
                { M_PAGE_FAULTS, "page faults" },
                { M_PAGE_FAULTS_MINOR, "minor page faults" },
                { M_PAGE_FAULTS_MAJOR, "major page faults" },
                { M_PGFAULT, "page faults" },
                { M_PGMAJFAULT, "major page faults" },
                { M_NUMA_HIT, "page allocations (numa_hit)" },
                { M_NUMA_LOCAL, "page allocations (numa_local)" },
                { M_CONTEXT_SWITCHES, "context switches" },
                { M_VOLUNTARY_SWITCHES, "voluntary context switches" },
                { M_INVOLUNTARY_SWITCHES, "involuntary context switches (preemptions)" },
                { M_CPU_MIGRATIONS, "CPU migrations" },
                { M_LOCK_CONTENTIONS, "kernel lock contentions" },
                { M_LOCK_WAIT_NS, "kernel lock wait" },
                { M_RUNQUEUE_WAIT, "run-queue wait" },
                { M_PSI_CPU_SOME, "CPU pressure (time some task waited for a CPU)" },
                { M_PSI_IO_SOME, "I/O pressure" },
                { M_PSI_IO_FULL, "I/O pressure (all tasks)" },
                { M_PSI_MEMORY_SOME, "memory pressure" },
                { M_PSI_MEMORY_FULL, "memory pressure (all tasks)" },
                { M_CPU_USER, "user CPU time" },
                { M_CPU_SYSTEM, "system CPU time" },
                { M_CPU_NICE, "niced CPU time" },
                { M_CPU_IRQ, "interrupt CPU time" },
                { M_CPU_SOFTIRQ, "softirq CPU time" },
                { M_CPU_STEAL, "stolen CPU time (the hypervisor's)" },
                { M_CPU_IOWAIT, "I/O wait" },
        };
        if (c->part == EXPLAIN_OTHERS_CPU)
                return "everything else's CPU time";
        if (c->part == EXPLAIN_OWN)
                switch (c->metric) {
                case M_CPU_USER:
                        return "the benchmark's own user CPU time";
                case M_CPU_SYSTEM:
                        return "the benchmark's own system CPU time";
                case M_PSI_CPU_SOME:
                        return "the benchmark's tasks waiting for a CPU (its cgroup's cpu.pressure)";
                case M_PSI_IO_SOME:
                case M_PSI_IO_FULL:
                        return "the benchmark's tasks waiting for I/O (its cgroup's io.pressure)";
                default:
                        return "the benchmark's tasks waiting for memory (its cgroup's memory.pressure)";
                }
        for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
                if (w[i].m == (int)c->metric)
                        return w[i].w;
        return metric_table[c->metric].name;
}

/* " on CPUs 0-1 from +1.0 s to +4.1 s" */
static void when_where(const struct explain_run_result *r, const struct explain_cause *k, char *b, size_t len,
                       size_t *o)
{
        char cpus[256];

        if (k->phase < 0)
                return;
        const struct explain_run_phase *p = &r->phases[k->phase];
        if (p->ncpus) {
                explain_run_format_cpus(p->cpus, p->ncpus, cpus, sizeof cpus);
                strbuf_appendf(b, len, o, " on CPU%s %s", p->ncpus > 1 ? "s" : "", cpus);
        }
        strbuf_appendf(b, len, o, " from +%.1f s to +%.1f s", p->start_s, p->start_s + p->dur_s);
}

static void amount(const struct explain_run_counter *c, char *b, size_t len, size_t *o)
{
        char n[32];

        double x = c->excess_rate;

        if (c->time_like)
                strbuf_appendf(b, len, o, "%.2f s", c->cost_s);
        else {
                if (x >= 1e6)
                        snprintf(n, sizeof n, "%.1fM", x / 1e6);
                else if (x >= 1e4)
                        snprintf(n, sizeof n, "%.0fk", x / 1e3);
                else
                        snprintf(n, sizeof n, "%.0f", x);
                strbuf_appendf(b, len, o, "%s/s", n);
        }
}

static void others_text(const struct explain_run_result *r, struct explain_cause *k, const struct explain_run_counter *h)
{
        char *b = k->text;
        size_t len = sizeof k->text, o = 0;

        if (h->part != EXPLAIN_OTHERS_CPU) {
                strbuf_appendf(b, len, &o, "Other processes: %s ", words_of(h));
                amount(h, b, len, &o);
                strbuf_appendf(b, len, &o, " above the siblings' highest (%.1fx)", exp(h->excess));
                when_where(r, k, b, len, &o);
                return;
        }
        strbuf_appendf(b, len, &o, "Another process took %.2f CPU-s", h->run_rate * r->run_dur_s);
        if (r->have_others_window)
                strbuf_appendf(b, len, &o, " from +%.1f s to +%.1f s", r->others_from_s, r->others_to_s);
        else
                when_where(r, k, b, len, &o);
        strbuf_appendf(b, len, &o, " (%.2f CPU-s a second, against %.2f-%.2f in the siblings; %.1f%% of the run's "
                       "CPU-seconds", h->run_rate, h->sib_min, h->sib_max,
                       100 * h->run_rate * r->run_dur_s / (r->cpu_s > 0 ? r->cpu_s : 1));
        if (k->own_known) {
                strbuf_appendf(b, len, &o, "; the benchmark's own CPU time %s by %.2f CPU-s",
                               k->own_cpu_delta_s < 0 ? "fell" : "rose", fabs(k->own_cpu_delta_s));
                if (!isnan(k->own_stall_s))
                        strbuf_appendf(b, len, &o, "; its tasks waited for a CPU %.2f s", k->own_stall_s);
        }
        for (size_t i = 1; i < k->nmetrics; i++) {
                const struct explain_run_counter *c = counter_of(r, k->metrics[i]);
                if (c && (c->metric == M_RUNQUEUE_WAIT || c->metric == M_PSI_CPU_SOME) && c->part == EXPLAIN_MACHINE) {
                        strbuf_appendf(b, len, &o, "; %s %.2f s above the siblings'", words_of(c), c->cost_s);
                        break;
                }
        }
        strbuf_appendf(b, len, &o, ")");
}

static void cause_text(const struct explain_run_result *r, struct explain_cause *k)
{
        const struct explain_run_counter *h = counter_of(r, k->metrics[0]);
        char *b = k->text;
        size_t len = sizeof k->text, o = 0;

        b[0] = 0;
        if (!h)
                return;
        if (k->family == FAM_OTHERS) {
                others_text(r, k, h);
                return;
        }
        strbuf_appendf(b, len, &o, "%s%s: ", k->family == FAM_PAGE_FAULTS ? "A page-fault storm, " : "", words_of(h));
        if (b[0] >= 'a' && b[0] <= 'z')
                b[0] = (char)(b[0] - 'a' + 'A');
        amount(h, b, len, &o);
        strbuf_appendf(b, len, &o, " above the siblings' highest (%.1fx; %.1f%% of the run's CPU-seconds%s)",
                       exp(h->excess), 100 * h->share, h->time_like ? "" : " at its nominal cost");
        when_where(r, k, b, len, &o);
        for (size_t i = 0; i < k->ncallers; i++)
                strbuf_appendf(b, len, &o, "%s %s (%s) %.1f ms against %.1f ms", i ? "," : "; most at", k->callers[i].caller,
                               k->callers[i].type, k->callers[i].run_ms, k->callers[i].sib_ms);
        if (k->lock.have)
                strbuf_appendf(b, len, &o, "; the lock waited for most: %s%s%s (%s) %.1f ms in %lld waits from %lld callers",
                               k->lock.name, k->lock.name[0] ? " at " : "", k->lock.lock, k->lock.type, k->lock.wait_ms,
                               (long long)k->lock.contended, (long long)k->lock.callers);
        if (k->nmetrics > 1) {
                strbuf_appendf(b, len, &o, "; with");
                for (size_t i = 1; i < k->nmetrics && i < 4; i++)
                        strbuf_appendf(b, len, &o, "%s %s", i > 1 ? "," : "", k->metrics[i]);
                if (k->nmetrics > 4)
                        strbuf_appendf(b, len, &o, " and %zu more", k->nmetrics - 4);
        }
}

void explain_causes_words(struct explain_run_result *res)
{
        for (size_t i = 0; i < res->ncauses; i++)
                cause_text(res, &res->causes[i]);
}
