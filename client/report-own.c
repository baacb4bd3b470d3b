/* report-own.c - the run's own counters beside the machine's.
 *
 * A run with its own cgroup (run exec; run start --cgroup) has, for the
 * metrics its cgroup counted (daemon/owncg.c), a total of its own beside
 * the machine's: report shows which share of the machine's count was the
 * benchmark's, and splits the CPU time into the benchmark's and everything
 * else's (another job on the machine is interference, not the benchmark).
 */
#include "config.h"

#include <math.h>
#include <stdio.h>

#include "macro.h"
#include "metric.h"
#include "output.h"
#include "report-own.h"

void report_own_json(const struct mstat *s, json_t *jm)
{
        if (!s->has_own)
                return;
        json_object_set_new(jm, "own_total", json_real(s->own_total));
        json_object_set_new(jm, "own_share", s->have && s->total > 0 ? json_real(fmin(s->own_total / s->total, 1.0))
                                                                     : json_null());
}

/* Words for the table, as a user says them. */
static const struct {
        int metric;
        const char *words;
} own_lines[] = {
        { M_CONTEXT_SWITCHES, "context switches" },
        { M_CPU_MIGRATIONS, "CPU migrations" },
        { M_PAGE_FAULTS, "page faults" },
        { M_LOCK_CONTENTIONS, "lock contentions" },
        { M_PSI_CPU_SOME, "CPU pressure (us some task waited)" },
        { M_PSI_MEMORY_SOME, "memory pressure (us)" },
        { M_PSI_IO_SOME, "I/O pressure (us)" },
        { M_THP_FAULT_ALLOC, "THP fault allocations" },
};

void report_own_print(const struct analysis_run *r)
{
        const struct mstat *u = &r->m[M_CPU_USER], *sy = &r->m[M_CPU_SYSTEM];
        bool any = false;

        for (size_t i = 0; i < sizeof own_lines / sizeof own_lines[0]; i++) {
                const struct mstat *s = &r->m[own_lines[i].metric];
                char tot[32], own[32];
                if (!s->has_own || !s->have)
                        continue;
                format_number(s->total, tot, sizeof tot);
                format_number(s->own_total, own, sizeof own);
                if (s->total > 0)
                        printf("  %s %s, of which the benchmark %s (%.1f%%)\n", own_lines[i].words, tot, own,
                               fmin(s->own_total / s->total, 1.0) * 100);
                else
                        printf("  %s %s, of which the benchmark %s\n", own_lines[i].words, tot, own);
                any = true;
        }
        if (u->has_own && sy->has_own && r->cpu_total > 0) {
                /* busy time: what is not idle or iowait */
                double busy = r->cpu_total - r->cpu_time[3] - r->cpu_time[4];
                double mine = u->own_total + sy->own_total, rest = busy > mine ? busy - mine : 0;
                printf("  cpu time busy: %.2f CPU-s, the benchmark %.2f (user %.2f, system %.2f), everything else %.2f\n",
                       busy, mine, u->own_total, sy->own_total, rest);
                any = true;
        }
        if (!any && r->m[M_CONTEXT_SWITCHES].has_own)
                printf("  the benchmark's own counters: none counted\n");
}
