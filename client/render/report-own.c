/* report-own.c - the run's own counters beside the machine's, formatted.
 *
 * A run with its own cgroup (run exec; run start --cgroup) has, for the
 * metrics its cgroup counted (daemon/sampler/owncg.c), a total of its own beside
 * the machine's: report shows which share of the machine's count was the
 * benchmark's, and splits the CPU time into the benchmark's and everything
 * else's (another job on the machine is interference, not the benchmark).
 * The numbers come from analysis-own.c.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>

#include "macro.h"
#include "metric.h"
#include "output.h"
#include "report-own.h"

void report_own_json(const struct analysis_run *r, int m, json_t *jm)
{
        double own, share;

        if (!analysis_own_share(r, m, &own, &share))
                return;
        json_object_set_new(jm, "own_total", json_real(own));
        json_object_set_new(jm, "own_share", isnan(share) ? json_null() : json_real(share));
}

/* Words for the table, as a user says them. */
static const struct {
        int metric;
        const char *words;
} own_lines[] = {
        { M_CONTEXT_SWITCHES, "context switches" },
        { M_VOLUNTARY_SWITCHES, "voluntary switches" },
        { M_INVOLUNTARY_SWITCHES, "involuntary switches" },
        { M_CPU_MIGRATIONS, "CPU migrations" },
        { M_PAGE_FAULTS, "page faults" },
        { M_PGFAULT, "page faults" },           /* memory.stat, where the memory controller is on cgroup v2 */
        { M_LOCK_CONTENTIONS, "lock contentions" },
        { M_PSI_CPU_SOME, "CPU pressure" },
        { M_PSI_MEMORY_SOME, "memory pressure" },
        { M_PSI_IO_SOME, "I/O pressure" },
        { M_THP_FAULT_ALLOC, "THP fault allocations" },
};

void report_own_print(const struct analysis_run *r)
{
        struct analysis_own_cpu cpu;
        char words[320];

        for (size_t i = 0; i < sizeof own_lines / sizeof own_lines[0]; i++) {
                const struct mstat *s = &r->m[own_lines[i].metric];
                double own, share;
                char tot[32], o[32];

                if (!s->have || !analysis_own_share(r, own_lines[i].metric, &own, &share))
                        continue;
                if (!analysis_own_is_part(own_lines[i].metric)) {
                        /* stall time: the machine's and the benchmark's tasks', side by side (analysis.h) */
                        printf("  %s (time some task stalled): the machine %.3f s, the benchmark's tasks %.3f s\n",
                               own_lines[i].words, s->total / 1e6, own / 1e6);
                        continue;
                }
                format_number(s->total, tot, sizeof tot);
                format_number(own, o, sizeof o);
                if (isnan(share))
                        printf("  %s %s, of which the benchmark %s\n", own_lines[i].words, tot, o);
                else
                        printf("  %s %s, of which the benchmark %s (%.1f%%)\n", own_lines[i].words, tot, o, share * 100);
        }
        if (!analysis_own_cpu(r, &cpu))
                return;
        analysis_own_cpu_words(&cpu, words, sizeof words);
        printf("  %s\n", words);
}
