/* explain-place.c - where a run's difference lies: the CPUs and nodes
 * that carry it, for a phase (explain-time.c) and for the whole run
 * (method 4 in explain.c). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "explain-internal.h"
#include "macro.h"

#define PLACE_FRACTION  0.25

/* ---- 4. place ---- */

/* The locations whose difference is at least PLACE_FRACTION of the
 * largest one (a storm on 64 CPUs names the 64; one hot CPU, that one),
 * ascending in *ret; none if no difference is positive. */
static int carriers(const double *d, size_t n, int **ret, size_t *ret_n)
{
        int *out = calloc(n + 1, sizeof *out);
        double max = 0;
        size_t k = 0;

        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                max = fmax(max, d[i]);
        for (size_t i = 0; max > 0 && i < n; i++)
                if (d[i] >= PLACE_FRACTION * max)
                        out[k++] = (int)i;
        *ret = out;
        *ret_n = k;
        return 0;
}

/* CPU differences d[0..ncpu) (run minus siblings' median, sign set so
 * that positive is "more like the run's departure") into CPUs and nodes. */
int explain_place_from(struct store *s, const double *d, int ncpu, int **cpus, size_t *ncpus, int **nodes,
                      size_t *nnodes)
{
        _cleanup_free_ int *node = NULL;
        _cleanup_free_ double *nd = NULL;
        int nn = 0, maxnode = -1, r;

        r = carriers(d, (size_t)ncpu, cpus, ncpus);
        if (r < 0)
                return r;
        if (store_topology_get(s, &node, NULL, &nn) < 0)
                nn = 0;
        for (int c = 0; c < nn && c < ncpu; c++)
                maxnode = node[c] > maxnode ? node[c] : maxnode;
        nd = calloc((size_t)maxnode + 2, sizeof *nd);
        if (!nd)
                return -ENOMEM;
        for (int c = 0; c < nn && c < ncpu; c++)
                if (node[c] >= 0)
                        nd[node[c]] += d[c];
        if (maxnode < 0) {
                *nodes = calloc(1, sizeof **nodes);
                *nnodes = 0;
                return *nodes ? 0 : -ENOMEM;
        }
        return carriers(nd, (size_t)maxnode + 1, nodes, nnodes);
}

int explain_whole_run_place(struct ex *e, struct explain_run_result *res)
{
        _cleanup_free_ double *d = NULL, *sibv = NULL;
        int m = -1, ncpu = 0;
        double sign;

        res->place_metric = -1;
        for (size_t i = 0; i < res->ncounters && m < 0; i++)
                if (res->counters[i].part == EXPLAIN_MACHINE && metric_table[res->counters[i].metric].scope == SCOPE_CPU &&
                    res->counters[i].excess != 0)
                        m = (int)res->counters[i].metric;
        if (m < 0)
                return 0;
        sign = 1;
        for (size_t i = 0; i < res->ncounters; i++)
                if ((int)res->counters[i].metric == m && res->counters[i].part == EXPLAIN_MACHINE)
                        sign = res->counters[i].excess > 0 ? 1 : -1;
        for (size_t k = 0; k <= e->nsib; k++)
                for (size_t t = 0; t < e->full[k].ntotals; t++)
                        if (e->full[k].totals[t].level == LEVEL_CPU && e->full[k].totals[t].loc >= ncpu &&
                            streq(e->full[k].totals[t].metric, metric_table[m].name))
                                ncpu = e->full[k].totals[t].loc + 1;
        if (ncpu == 0)
                return 0;
        d = calloc((size_t)ncpu, sizeof *d);
        sibv = calloc((size_t)ncpu * (e->nsib + 1), sizeof *sibv);
        if (!d || !sibv)
                return -ENOMEM;
        /* per-second rates per CPU: run in d, siblings in sibv[c * nsib + j] */
        for (size_t k = 0; k <= e->nsib; k++) {
                double dur = ex_run(e, k)->dur;
                for (size_t t = 0; t < e->full[k].ntotals; t++) {
                        const struct store_total *tt = &e->full[k].totals[t];
                        if (tt->level != LEVEL_CPU || tt->loc >= ncpu || !streq(tt->metric, metric_table[m].name))
                                continue;
                        if (k == 0)
                                d[tt->loc] = dur > 0 ? tt->value / dur : 0;
                        else
                                sibv[(size_t)tt->loc * e->nsib + k - 1] = dur > 0 ? tt->value / dur : 0;
                }
        }
        for (int c = 0; c < ncpu; c++)
                d[c] = sign * (d[c] - explain_median(sibv + (size_t)c * e->nsib, e->nsib));
        res->place_metric = m;
        return explain_place_from(e->s, d, ncpu, &res->cpus, &res->ncpus, &res->nodes, &res->nnodes);
}
