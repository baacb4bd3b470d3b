/* totals.c - answer {"cmd":"totals"}: the running totals the sampler keeps
 * (the sum of every delta since it started, per metric and CPU or node),
 * and the daemon's health.
 *
 * scalemon-exporter asks for this once per scrape, so it must cost the
 * event loop little: it reads arrays the sampler already keeps and touches
 * neither the database nor the kernel.  At 256 CPUs it is some 9,000
 * integers (bench/bench-exporter.sh measures it).  Counters start from 0
 * when the daemon starts; started_ns tells a scraper of the restart.
 */
#include "config.h"

#include "macro.h"
#include "metric.h"
#include "timeutil.h"
#include "totals.h"

static json_t *int_array(const int64_t *v, int n)
{
        json_t *a = json_array();

        for (int i = 0; a && i < n; i++)
                if (json_array_append_new(a, json_integer((json_int_t)v[i])) < 0) {
                        json_decref(a);
                        return NULL;
                }
        return a;
}

json_t *totals_reply(const struct sampler *s, struct store *st, const struct totals_health *h)
{
        static int64_t started_ns;      /* the daemon's start: it does not change while it runs */
        const struct cpumap *map = sampler_cpumap(s);
        const int64_t *tot = sampler_totals(s);
        int nloc = sampler_nloc(s);
        json_t *o, *metrics = json_array(), *unavail = json_array(), *cpu_node = json_array(), *nodes = json_array();
        int64_t now_mono = now_monotonic_ns(), last = sampler_last_mono(s);

        if (!metrics || !unavail || !cpu_node || !nodes)
                goto oom;
        if (started_ns == 0 && st && store_meta_get_int(st, "daemon_started", &started_ns) < 0)
                started_ns = 0;
        for (int c = 0; c < map->ncpus; c++)
                if (json_array_append_new(cpu_node, json_integer(map->node[c])) < 0)
                        goto oom;
        for (int n = 0; n < map->nnodes; n++)
                if (map->has_node[n] && json_array_append_new(nodes, json_integer(n)) < 0)
                        goto oom;

        for (int m = 0; m < _M_MAX; m++) {
                const struct metric_def *d = &metric_table[m];
                int n = d->scope == SCOPE_CPU ? map->ncpus : d->scope == SCOPE_NODE ? map->nnodes : 1;
                json_t *e;

                if (!sampler_enabled(s, m))
                        continue;
                if (!sampler_available(s, m)) {
                        const char *why = sampler_why(s, m);
                        e = json_pack("{s:s,s:s}", "name", d->name, "why", why ? why : "not available");
                        if (!e || json_array_append_new(unavail, e) < 0)
                                goto oom;
                        continue;
                }
                n = MIN(n, nloc);
                e = json_pack("{s:s,s:s,s:s,s:f,s:o}", "name", d->name, "scope", metric_scope_name(d->scope),
                              "unit", d->unit, "scale", sampler_scale(s, m), "values",
                              int_array(tot + (size_t)m * (size_t)nloc, n));
                if (!e || json_array_append_new(metrics, e) < 0)
                        goto oom;
        }

        o = json_pack("{s:I,s:I,s:f,s:I,s:I,s:I,s:i,s:o,s:o,s:o,s:o}",
                      "started_ns", (json_int_t)started_ns,
                      "sampled_at_ns", (json_int_t)(last > 0 ? now_realtime_ns() - (now_mono - last) : 0),
                      "interval_s", (double)h->interval_ns / 1e9,
                      "ticks", (json_int_t)h->ticks,
                      "tick_late_max_us", (json_int_t)(h->tick_late_max_ns / 1000),
                      "held_intervals", (json_int_t)h->held_intervals,
                      "cpus", map->ncpus, "cpu_node", cpu_node, "nodes", nodes, "metrics", metrics,
                      "unavailable", unavail);
        return o;
oom:
        json_decref(metrics);
        json_decref(unavail);
        json_decref(cpu_node);
        json_decref(nodes);
        return NULL;
}
