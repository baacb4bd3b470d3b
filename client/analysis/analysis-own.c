/* analysis-own.c - the run's own counters against the machine's: what the
 * benchmark's cgroup counted (daemon/sampler/owncg.c, run totals at level
 * 'cgroup') and what everything else on the machine did meanwhile: other
 * tasks, not the idle task (/proc/stat's idle and iowait are not busy
 * time) and not scalemond's own work (scalemond_cpu, sampler-self.c).
 * Typed answers for the formatters (report-own.c) and for explain, where
 * "everything else" is a candidate cause (interference). */
#include "config.h"

#include <math.h>
#include <stdio.h>

#include "analysis.h"
#include "metric.h"

bool analysis_own_is_part(int m)
{
        return metric_table[m].source != SRC_PSI;
}

bool analysis_own_share(const struct analysis_run *r, int m, double *ret_own, double *ret_share)
{
        const struct mstat *s = &r->m[m];

        if (!s->has_own)
                return false;
        *ret_own = s->own_total;
        *ret_share = s->have && s->total > 0 && analysis_own_is_part(m) ? fmin(s->own_total / s->total, 1.0) : NAN;
        return true;
}

bool analysis_own_others(const struct analysis_run *r, int m, double *ret)
{
        const struct mstat *s = &r->m[m];

        /* cpu_user and cpu_system: the busy time against the cgroup's
         * cpu.stat, analysis_own_cpu() */
        if (!s->has_own || !s->have || !analysis_own_is_part(m) || m == M_CPU_USER || m == M_CPU_SYSTEM)
                return false;
        *ret = s->total > s->own_total ? s->total - s->own_total : 0;
        return true;
}

bool analysis_own_cpu(const struct analysis_run *r, struct analysis_own_cpu *ret)
{
        const struct mstat *u = &r->m[M_CPU_USER], *sy = &r->m[M_CPU_SYSTEM], *self = &r->m[M_SCALEMOND_CPU];
        double busy;

        if (!u->has_own || !sy->has_own || r->cpu_total <= 0)
                return false;
        busy = r->cpu_total - r->cpu_time[3] - r->cpu_time[4];      /* not idle, not iowait */
        ret->busy_s = busy;
        ret->user_s = u->own_total;
        ret->system_s = sy->own_total;
        ret->own_s = u->own_total + sy->own_total;
        /* scalemond's sampling is not interference: taken out where the
         * run recorded it (a run from before scalemond_cpu did not) */
        ret->self_known = self->have;
        ret->self_s = self->have ? self->total : 0;
        ret->others_s = busy > ret->own_s + ret->self_s ? busy - ret->own_s - ret->self_s : 0;
        ret->excess_s = ret->own_s > busy ? ret->own_s - busy : 0;
        return true;
}

void analysis_own_cpu_words(const struct analysis_own_cpu *c, char *buf, size_t len)
{
        int o = snprintf(buf, len, "cpu time busy: %.2f CPU-s, the benchmark %.2f (user %.2f, system %.2f), ", c->busy_s,
                         c->own_s, c->user_s, c->system_s);

        if (o < 0 || (size_t)o >= len)
                return;
        /* Never the benchmark above the whole machine without saying why:
         * the two clocks differ (analysis.h, excess_s). */
        if (c->excess_s >= 0.005)
                snprintf(buf + o, len - (size_t)o,
                         "everything else not measurable (the benchmark's cgroup counts its run time exactly, %.2f "
                         "CPU-s more than /proc/stat's busy time, which is sampled at the timer tick)", c->excess_s);
        else if (c->self_known)
                snprintf(buf + o, len - (size_t)o, "everything else %.2f CPU-s (scalemond's own %.2f CPU-s taken out)",
                         c->others_s, c->self_s);
        else
                snprintf(buf + o, len - (size_t)o, "everything else %.2f CPU-s", c->others_s);
}
