/* totals.c - answer the totals request: the running totals the sampler keeps
 * (the sum of every delta since it started, per metric and CPU or node),
 * and the daemon's health.
 *
 * scalemon-exporter asks for this once per scrape, so it must cost the
 * event loop little: it reads arrays the sampler already keeps and touches
 * neither the database nor the kernel; lib/proto-totals.c encodes it.
 * Counters start from 0 when the daemon starts; started_ns tells a scraper
 * of the restart.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "macro.h"
#include "metric.h"
#include "proto-reply.h"
#include "timeutil.h"
#include "totals.h"

/* The totals reply as the protocol's struct; its arrays are new, its
 * values borrowed from the sampler.  -ENOMEM. */
static int totals_fill(const struct sampler *s, const struct cpumap *map, struct proto_totals *t)
{
        const int64_t *tot = sampler_totals(s);
        int nloc = sampler_nloc(s);

        t->cpu_node = calloc((size_t)map->ncpus + 1, sizeof *t->cpu_node);
        t->nodes = calloc((size_t)map->nnodes + 1, sizeof *t->nodes);
        t->metrics = calloc(_M_MAX, sizeof *t->metrics);
        t->unavailable = calloc(_M_MAX, sizeof *t->unavailable);
        if (!t->cpu_node || !t->nodes || !t->metrics || !t->unavailable)
                return -ENOMEM;
        for (int c = 0; c < map->ncpus; c++)
                t->cpu_node[c] = map->node[c];
        for (int n = 0; n < map->nnodes; n++)
                if (map->has_node[n])
                        t->nodes[t->nnodes++] = n;
        for (int m = 0; m < _M_MAX; m++) {
                const struct metric_def *d = &metric_table[m];
                int n = d->scope == SCOPE_CPU ? map->ncpus : d->scope == SCOPE_NODE ? map->nnodes : 1;

                if (!sampler_enabled(s, m))
                        continue;
                if (!sampler_available(s, m)) {
                        struct proto_totals_unavailable *u = &t->unavailable[t->nunavailable++];
                        const char *why = sampler_why(s, m);
                        snprintf(u->name, sizeof u->name, "%s", d->name);
                        u->why = (char *)(why ? why : "not available");
                        continue;
                }
                t->metrics[t->nmetrics++] = (struct proto_totals_metric){
                        .scope = d->scope, .scale = sampler_scale(s, m),
                        .values = (int64_t *)(tot + (size_t)m * (size_t)nloc), .nvalues = MIN(n, nloc) };
                snprintf(t->metrics[t->nmetrics - 1].name, sizeof t->metrics[0].name, "%s", d->name);
                snprintf(t->metrics[t->nmetrics - 1].unit, sizeof t->metrics[0].unit, "%s", d->unit);
        }
        return 0;
}

json_t *totals_reply(const struct sampler *s, struct store *st, const struct totals_health *h)
{
        static int64_t started_ns;      /* the daemon's start: it does not change while it runs */
        const struct cpumap *map = sampler_cpumap(s);
        int64_t now_mono = now_monotonic_ns(), last = sampler_last_mono(s);
        struct proto_totals t = {
                .sampled_at_ns = last > 0 ? now_realtime_ns() - (now_mono - last) : 0,
                .interval_s = (double)h->interval_ns / 1e9,
                .ticks = (int64_t)h->ticks,
                .tick_late_max_us = h->tick_late_max_ns / 1000,
                .held_intervals = (int64_t)h->held_intervals,
                .ncpus = map->ncpus,
        };
        json_t *o = NULL;

        if (started_ns == 0 && st && store_meta_get_int(st, "daemon_started", &started_ns) < 0)
                started_ns = 0;
        t.started_ns = started_ns;
        if (totals_fill(s, map, &t) == 0)
                o = proto_totals_to_json(&t);
        /* the arrays only: the strings and values are borrowed */
        free(t.cpu_node);
        free(t.nodes);
        free(t.metrics);
        free(t.unavailable);
        return o;
}
