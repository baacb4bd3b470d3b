/* explain-time.c - explain in time (method 3 in explain.c): the runs'
 * per-tick rates aligned by time since their start, the run's excess over
 * its siblings' band at each offset, change points by PELT
 * (changepoint.c), departures gathered into phases with their counters
 * and the CPUs and nodes that carry them; and the top counters' series
 * for plot explain. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "changepoint.h"
#include "explain-internal.h"
#include "macro.h"
#include "store-series.h"

#define SIGMA_FLOOR     0.05            /* per-tick ln-excess noise floor: 5% */
#define PHASE_RATIO     2.0
#define PHASE_MIN_TICKS 3
#define MAX_BINS        20000           /* a longer run is binned by several ticks */
#define NODE_COUNTERS   3               /* cpu counters read per node */
#define NODE_PAIRS      3               /* (counter, node) series searched */
#define NODE_MIN_SPREADS 2              /* a node's whole-run excess needed to search it */
#define MAX_NODES       64

/* ---- 3. time ---- */

/* The series of metric m from a run's binned tick values, as rates per
 * second (NAN: no tick, or one not counted). */
static void bin_series(const struct store_tick_values *tv, int m, size_t nbins, double *out)
{
        const double *v = tv->v + (size_t)m * tv->n;
        const uint8_t *nc = tv->nc + (size_t)m * tv->n;

        for (size_t b = 0; b < nbins; b++)
                out[b] = b < tv->n && tv->dur[b] > 0 && !nc[b] ? v[b] / ((double)tv->dur[b] / 1e9) : NAN;
}

struct window {
        int metric, node;       /* node -1: the machine */
        size_t a, b;            /* bins [a, b) */
        double mu;              /* mean ln excess */
        bool used, joined;
};

/* One counter's binned rates in each run: s[0] the run, s[1..] the
 * siblings with series; NAN where a bin has no tick or one not counted. */
struct sset {
        const double *s[EXPLAIN_MAX_AGAINST + 1];
        size_t nruns, nbins;
        double eps;             /* e of the excess: set by find_windows() */
};

/* Machine-wide rates of every counter: v[(slot * nruns + j) * nbins + t]. */
struct bins {
        double *v;
        size_t nbins, nruns;
        int slot[_M_MAX];       /* metric -> slot, -1 */
        double eps[_M_MAX];
};

static const double *bins_of(const struct bins *B, int m, size_t j)
{
        return B->v + ((size_t)B->slot[m] * B->nruns + j) * B->nbins;
}

/* Per-node rates of a few cpu counters: v[((i * nnodes + k) * nruns + j) * nbins + t]. */
struct nodebins {
        double *v;
        int metric[NODE_COUNTERS];
        size_t nmetric;
        int nnodes;
        int pair_metric[NODE_PAIRS], pair_node[NODE_PAIRS];     /* the series searched */
        size_t npairs;
        double eps[NODE_COUNTERS * MAX_NODES];
};

static void sset_machine(const struct bins *B, int m, struct sset *S)
{
        S->nruns = B->nruns;
        S->nbins = B->nbins;
        S->eps = B->eps[m];
        for (size_t j = 0; j < B->nruns; j++)
                S->s[j] = bins_of(B, m, j);
}

static void sset_node(const struct nodebins *N, const struct bins *B, size_t i, int k, struct sset *S)
{
        S->nruns = B->nruns;
        S->nbins = B->nbins;
        S->eps = N->eps[i * (size_t)N->nnodes + (size_t)k];
        for (size_t j = 0; j < B->nruns; j++)
                S->s[j] = N->v + (((i * (size_t)N->nnodes + (size_t)k) * B->nruns + j) * B->nbins);
}

/* The run's mean rate over [a, b) against the siblings' median there. */
static double sset_ratio(const struct sset *S, size_t a, size_t b)
{
        double sr = 0, sm = 0, tmp[EXPLAIN_MAX_AGAINST];
        for (size_t t = a; t < b && t < S->nbins; t++) {
                size_t k = 0;
                if (isnan(S->s[0][t]))
                        continue;
                for (size_t j = 1; j < S->nruns; j++)
                        if (!isnan(S->s[j][t]))
                                tmp[k++] = S->s[j][t];
                if (k == 0)
                        continue;
                sr += S->s[0][t];
                sm += explain_median(tmp, k);
        }
        return (sr + S->eps * (double)(b - a)) / (sm + S->eps * (double)(b - a));
}

/* The departures of one series set (method 3 above), appended to *w;
 * sets S->eps.  y and all: scratch of nbins and nbins * nruns. */
static int find_windows(struct sset *S, int m, int node, double tick_s, double extra_penalty, double *y, double *all,
                        struct window **w, size_t *nw)
{
        struct cp_opts co = { .sigma_min = SIGMA_FLOOR, .min_seg = PHASE_MIN_TICKS };
        size_t nall = 0, *cp = NULL, ncp = 0, len = S->nbins;
        double eps;
        int r;

        /* offsets covered by the run and a sibling: up to the last one */
        while (len > 0) {
                bool any = false;
                for (size_t j = 1; j < S->nruns; j++)
                        any |= !isnan(S->s[j][len - 1]);
                if (any && !isnan(S->s[0][len - 1]))
                        break;
                len--;
        }
        for (size_t t = 0; t < len; t++)
                for (size_t j = 0; j < S->nruns; j++)
                        if (!isnan(S->s[j][t]))
                                all[nall++] = S->s[j][t];
        eps = fmax(nall ? 0.01 * explain_select_kth(all, nall, (size_t)(0.95 * (double)(nall - 1))) : 0,
                   3 * (metric_table[m].source == SRC_PROCSTAT ? 0.01 : 1) / tick_s);
        S->eps = eps;
        if (!(eps > 0) || len < 2 * PHASE_MIN_TICKS)
                return 0;       /* zero everywhere */
        for (size_t t = 0; t < len; t++) {
                double lo = INFINITY, hi = -INFINITY, x = S->s[0][t];
                size_t k = 0;
                for (size_t j = 1; j < S->nruns; j++)
                        if (!isnan(S->s[j][t])) {
                                lo = fmin(lo, S->s[j][t]);
                                hi = fmax(hi, S->s[j][t]);
                                k++;
                        }
                if (k == 0 || isnan(x)) {
                        y[t] = t ? y[t - 1] : 0;        /* a gap: carry the last level */
                        continue;
                }
                y[t] = x > hi ? log((x + eps) / (hi + eps)) : x < lo ? log((x + eps) / (lo + eps)) : 0;
        }
        /* y is 0 wherever the run is inside the band, so the MAD of its
         * differences measures those zeros; the SD of the differences
         * counts the excursions that are the noise to beat (and a real
         * change's two edges, which only makes the test more
         * conservative).  The penalty pays for the K series searched:
         * 2 ln K more per change keeps the chance of a phase in pure
         * noise across all of them about that of one alone (the tail of
         * the gain falls as exp(-penalty / 2)). */
        co.sigma = cp_noise_sigma_sd(y, len);
        co.penalty = cp_default_penalty(len) + extra_penalty;
        r = cp_pelt(y, len, &co, &cp, &ncp);
        if (r < 0)
                return r;
        for (size_t sg = 0; sg <= ncp && ncp > 0; sg++) {
                size_t a = sg == 0 ? 0 : cp[sg - 1], b = sg == ncp ? len : cp[sg];
                double mu = 0;
                struct window *nwp;
                for (size_t t = a; t < b; t++)
                        mu += y[t] / (double)(b - a);
                if (fabs(mu) < log(PHASE_RATIO))
                        continue;
                /* a departure right after one of the same sign (a storm
                 * that ramps up in two levels) is the same departure */
                if (*nw > 0 && (*w)[*nw - 1].metric == m && (*w)[*nw - 1].node == node && (*w)[*nw - 1].b == a &&
                    ((*w)[*nw - 1].mu > 0) == (mu > 0)) {
                        struct window *pw = &(*w)[*nw - 1];
                        pw->mu = (pw->mu * (double)(pw->b - pw->a) + mu * (double)(b - a)) / (double)(b - pw->a);
                        pw->b = b;
                        continue;
                }
                nwp = realloc(*w, (*nw + 1) * sizeof **w);
                if (!nwp) {
                        free(cp);
                        return -ENOMEM;
                }
                *w = nwp;
                (*w)[(*nw)++] = (struct window){ .metric = m, .node = node, .a = a, .b = b, .mu = mu };
        }
        free(cp);
        return 0;
}

static int cmp_window(const void *a, const void *b)
{
        const struct window *x = a, *y = b;
        return fabs(x->mu) > fabs(y->mu) ? -1 : fabs(x->mu) < fabs(y->mu);
}

static int cmp_phase(const void *a, const void *b)
{
        const struct explain_run_phase *x = a, *y = b;
        return x->start_s < y->start_s ? -1 : x->start_s > y->start_s;
}

static int phase_place(struct ex *e, struct explain_run_phase *p, int m, double sign, int64_t iv, size_t a, size_t b)
{
        _cleanup_free_ double *d = NULL, *sibv = NULL, *sum = NULL, *dur = NULL;
        int ncpu = 0, r;

        {
                _cleanup_free_ int *node = NULL;
                if (store_topology_get(e->s, &node, NULL, &ncpu) < 0 || ncpu <= 0)
                        return 0;
        }
        d = calloc((size_t)ncpu, sizeof *d);
        sibv = calloc((size_t)ncpu * (e->nsib + 1), sizeof *sibv);
        sum = calloc((size_t)ncpu, sizeof *sum);
        dur = calloc((size_t)ncpu, sizeof *dur);
        if (!d || !sibv || !sum || !dur)
                return -ENOMEM;
        for (size_t k = 0; k <= e->nsib; k++) {
                const struct analysis_run *rr = ex_run(e, k);
                if (rr->info.start_tick == 0)
                        continue;
                r = store_cpu_sums(e->s, metric_table[m].name, ncpu, rr->info.start + (int64_t)a * iv,
                                   rr->info.start + (int64_t)b * iv, sum, dur);
                if (r < 0)
                        return r;
                for (int c = 0; c < ncpu; c++) {
                        double rate = dur[c] > 0 ? sum[c] / dur[c] : 0;
                        if (k == 0)
                                d[c] = rate;
                        else
                                sibv[(size_t)c * e->nsib + k - 1] = rate;
                }
        }
        for (int c = 0; c < ncpu; c++)
                d[c] = sign * (d[c] - explain_median(sibv + (size_t)c * e->nsib, e->nsib));
        p->place_metric = m;
        return explain_place_from(e->s, d, ncpu, &p->cpus, &p->ncpus, &p->nodes, &p->nnodes);
}

/* Counter m's series for plot explain, averaged into at most
 * EXPLAIN_SERIES_POINTS points, in units of the siblings' mean rate (of
 * the counter's e where that is 0). */
static int keep_one(struct explain_run_result *res, const struct bins *B, int m)
{
        size_t f = (B->nbins + EXPLAIN_SERIES_POINTS - 1) / EXPLAIN_SERIES_POINTS;

        for (size_t i = 0; i < res->nseries; i++)
                if ((int)res->series[i].metric == m)
                        return 0;
        if (B->slot[m] < 0)
                return 0;       /* not searched: no series */
        {
                struct explain_run_series *sr = &res->series[res->nseries];
                double mean = 0;
                size_t nm = 0, np = (B->nbins + f - 1) / f;

                for (size_t j = 1; j < B->nruns; j++)
                        for (size_t t = 0; t < B->nbins; t++)
                                if (!isnan(bins_of(B, m, j)[t])) {
                                        mean += bins_of(B, m, j)[t];
                                        nm++;
                                }
                /* a counter at 0 in every sibling (contention of a lock
                 * type only the run had) is drawn in units of its e, the
                 * floor its excess and phase ratios are taken against */
                if (nm == 0)
                        return 0;
                mean = mean > 0 ? mean / (double)nm : B->eps[m];
                if (!(mean > 0))
                        return 0;
                sr->metric = (enum metric_id)m;
                sr->x = calloc(np, sizeof *sr->x);
                sr->run = calloc(np, sizeof *sr->run);
                sr->lo = calloc(np, sizeof *sr->lo);
                sr->hi = calloc(np, sizeof *sr->hi);
                res->nseries++;
                if (!sr->x || !sr->run || !sr->lo || !sr->hi)
                        return -ENOMEM;
                for (size_t q = 0; q < np; q++) {
                        double rv = 0, lo = 0, hi = 0;
                        size_t kr = 0, kb = 0;
                        for (size_t t = q * f; t < (q + 1) * f && t < B->nbins; t++) {
                                double l = INFINITY, h = -INFINITY;
                                if (!isnan(bins_of(B, m, 0)[t])) {
                                        rv += bins_of(B, m, 0)[t];
                                        kr++;
                                }
                                for (size_t j = 1; j < B->nruns; j++)
                                        if (!isnan(bins_of(B, m, j)[t])) {
                                                l = fmin(l, bins_of(B, m, j)[t]);
                                                h = fmax(h, bins_of(B, m, j)[t]);
                                        }
                                if (isfinite(l)) {
                                        lo += l;
                                        hi += h;
                                        kb++;
                                }
                        }
                        if (kr == 0 && kb == 0)
                                continue;
                        sr->x[sr->n] = (double)(q * f) * res->tick_s;
                        sr->run[sr->n] = kr ? rv / (double)kr / mean : NAN;
                        sr->lo[sr->n] = kb ? lo / (double)kb / mean : NAN;
                        sr->hi[sr->n] = kb ? hi / (double)kb / mean : NAN;
                        sr->n++;
                }
        }
        return 0;
}

/* The series plot explain draws: the first cause's counters, each
 * phase's lead, then the top counters, at most e->keep. */
static int keep_series(const struct ex *e, struct explain_run_result *res, const struct bins *B)
{
        size_t keep = e->keep < EXPLAIN_KEEP_MAX ? e->keep : EXPLAIN_KEEP_MAX;
        int r = 0;

        /* the cause's head (the machine's counters are named as the
         * catalogue names them), the phases' leads, the cause's members */
        for (size_t q = 0; res->ncauses && q < res->causes[0].nmetrics && res->nseries < keep && r >= 0; q++) {
                int m = metric_id_by_name(res->causes[0].metrics[q]);
                if (m >= 0) {
                        r = keep_one(res, B, m);
                        if (res->nseries)
                                break;
                }
        }
        for (size_t p = 0; p < res->nphases && res->nseries < keep && r >= 0; p++)
                if (res->phases[p].nm)
                        r = keep_one(res, B, (int)res->phases[p].m[0].metric);
        for (size_t q = 0; res->ncauses && q < res->causes[0].nmetrics && res->nseries < keep && r >= 0; q++) {
                int m = metric_id_by_name(res->causes[0].metrics[q]);
                if (m >= 0)
                        r = keep_one(res, B, m);
        }
        for (size_t ci = 0; ci < res->ncounters && res->nseries < keep && r >= 0; ci++)
                if (res->counters[ci].part == EXPLAIN_MACHINE)  /* everything else's: totals only, no series */
                        r = keep_one(res, B, (int)res->counters[ci].metric);
        return r;
}

/* The (cpu counter, node) pairs whose series are searched too: those
 * where the run's rate on the node over the whole run (its stored node
 * totals) lies outside the siblings' range there by at least
 * NODE_MIN_SPREADS of the counter's spread, the farthest NODE_PAIRS of
 * them; and the counters to read per node for them. */
static void node_pairs(const struct ex *e, const struct explain_run_result *res, struct nodebins *N)
{
        struct {
                int m, k;
                double x;
        } best[NODE_PAIRS];
        size_t nb = 0;

        for (size_t ci = 0; ci < res->ncounters; ci++) {
                int m = (int)res->counters[ci].metric;
                if (metric_table[m].scope != SCOPE_CPU || res->counters[ci].part != EXPLAIN_MACHINE)
                        continue;
                for (int k = 0; k < N->nnodes; k++) {
                        double rate[EXPLAIN_MAX_AGAINST + 1], lo = INFINITY, hi = -INFINITY, eps, x;
                        for (size_t j = 0; j <= e->nsib; j++) {
                                rate[j] = NAN;
                                for (size_t t = 0; t < e->full[j].ntotals; t++) {
                                        const struct store_total *tt = &e->full[j].totals[t];
                                        if (tt->level == LEVEL_NODE && tt->loc == k && streq(tt->metric, metric_table[m].name))
                                                rate[j] = ex_run(e, j)->dur > 0 ? tt->value / ex_run(e, j)->dur : NAN;
                                }
                                if (j > 0 && !isnan(rate[j])) {
                                        lo = fmin(lo, rate[j]);
                                        hi = fmax(hi, rate[j]);
                                }
                        }
                        if (isnan(rate[0]) || !isfinite(lo))
                                continue;
                        eps = fmax(0.01 * fmax(rate[0], hi), 1e-12);
                        x = rate[0] > hi ? log((rate[0] + eps) / (hi + eps)) : rate[0] < lo ? log((rate[0] + eps) / (lo + eps)) : 0;
                        if (fabs(x) < NODE_MIN_SPREADS * res->counters[ci].spread)
                                continue;       /* inside, or within the counter's run-to-run noise */
                        /* keep the farthest NODE_PAIRS */
                        if (nb < NODE_PAIRS)
                                best[nb++] = (typeof(best[0])){ m, k, fabs(x) };
                        else {
                                size_t w = 0;
                                for (size_t i = 1; i < nb; i++)
                                        if (best[i].x < best[w].x)
                                                w = i;
                                if (fabs(x) > best[w].x)
                                        best[w] = (typeof(best[0])){ m, k, fabs(x) };
                        }
                }
        }
        for (size_t i = 0; i < nb; i++) {
                bool have = false;
                N->pair_metric[N->npairs] = best[i].m;
                N->pair_node[N->npairs++] = best[i].k;
                for (size_t q = 0; q < N->nmetric; q++)
                        have |= N->metric[q] == best[i].m;
                if (!have && N->nmetric < NODE_COUNTERS)
                        N->metric[N->nmetric++] = best[i].m;
        }
}

int explain_time(struct ex *e, struct explain_run_result *res)
{
        const struct analysis_run *run = ex_run(e, 0);
        struct store_tick_values tv[EXPLAIN_MAX_AGAINST + 1];
        size_t nw = 0, nbins, nruns = 1, sibidx[EXPLAIN_MAX_AGAINST + 1], nsearch;
        struct bins B = { 0 };
        struct nodebins N = { 0 };
        _cleanup_free_ double *y = NULL, *all = NULL, *off = NULL;
        _cleanup_free_ int *node_of = NULL;
        struct window *w = NULL;
        int64_t iv = 0;
        int ncpu = 0, r = 0;

        memset(tv, 0, sizeof tv);
        if (run->info.start_tick == 0 || run->info.imported) {
                snprintf(res->phases_why, sizeof res->phases_why,
                         "no per-tick samples for this run here (imported runs carry their totals only)");
                return 0;
        }
        sibidx[0] = 0;
        for (size_t k = 1; k <= e->nsib; k++)
                if (ex_run(e, k)->info.start_tick != 0 && !ex_run(e, k)->info.imported)
                        sibidx[nruns++] = k;
        if (nruns == 1) {
                snprintf(res->phases_why, sizeof res->phases_why,
                         "no per-tick samples for its siblings here (imported runs carry their totals only)");
                return 0;
        }
        /* the bins: the daemon's interval, or a multiple of it where a
         * run has longer ticks on average (one recorded at 1 s and one at
         * 100 ms compare second by second); a run's first and last ticks
         * are short (its start and stop snapshots) */
        if (store_meta_get_int(e->s, "interval_ns", &iv) < 0 || iv <= 0) {
                snprintf(res->phases_why, sizeof res->phases_why, "the database does not record the sampling interval");
                return 0;
        }
        {
                int64_t k = 1;
                for (size_t j = 0; j < nruns; j++) {
                        const struct analysis_run *rr = ex_run(e, sibidx[j]);
                        int64_t nt = rr->info.end_tick - rr->info.start_tick;
                        if (nt > 0 && rr->info.end > rr->info.start) {
                                int64_t q = ((rr->info.end - rr->info.start) / nt + iv / 2) / iv;
                                k = q > k ? q : k;
                        }
                }
                iv *= k;
        }
        /* a long run in bins of several ticks: at most MAX_BINS */
        nbins = (size_t)((run->info.end - run->info.start + iv - 1) / iv);
        if (nbins > MAX_BINS) {
                iv *= (int64_t)((nbins + MAX_BINS - 1) / MAX_BINS);
                nbins = (size_t)((run->info.end - run->info.start + iv - 1) / iv);
        }
        if (nbins < 2 * PHASE_MIN_TICKS) {
                snprintf(res->phases_why, sizeof res->phases_why, "the run is too short for phases (%zu ticks)", nbins);
                return 0;
        }
        res->tick_s = (double)iv / 1e9;
        res->have_series = true;

        /* every counter's series of each run, from one pass over its ticks */
        B.nbins = nbins;
        B.nruns = nruns;
        for (int m = 0; m < _M_MAX; m++)
                B.slot[m] = -1;
        for (size_t ci = 0; ci < res->ncounters; ci++)
                if (res->counters[ci].part == EXPLAIN_MACHINE)
                        B.slot[res->counters[ci].metric] = (int)ci;
        B.v = calloc(res->ncounters * nruns * nbins + 1, sizeof *B.v);
        y = calloc(nbins + 1, sizeof *y);
        all = calloc(nbins * nruns + 1, sizeof *all);
        if (!B.v || !y || !all) {
                r = -ENOMEM;
                goto out;
        }
        for (size_t j = 0; j < nruns; j++) {
                const struct analysis_run *rr = ex_run(e, sibidx[j]);
                r = store_tick_values(e->s, rr->info.start, rr->info.end, iv, &tv[j]);
                if (r < 0)
                        goto out;
        }
        for (size_t ci = 0; ci < res->ncounters; ci++)
                for (size_t j = 0; j < nruns && res->counters[ci].part == EXPLAIN_MACHINE; j++)
                        bin_series(&tv[j], (int)res->counters[ci].metric, nbins,
                                   B.v + ((size_t)B.slot[res->counters[ci].metric] * nruns + j) * nbins);
        /* where each of the run's bins starts, in seconds since its start:
         * the ticks tile time (each runs from the sample before it to its
         * own) and the first starts at the run's start snapshot, so the
         * sum of the lengths before a bin is the true offset of its first
         * tick.  The grid label b * iv is not: the daemon's ticks are
         * offset from the run's start by up to an interval, which put a
         * phase's edges up to half a tick off the truth before the change
         * point's own tick of resolution. */
        off = calloc(nbins + 1, sizeof *off);
        if (!off) {
                r = -ENOMEM;
                goto out;
        }
        for (size_t t = 0; t < nbins; t++)
                off[t + 1] = off[t] + (t < tv[0].n && tv[0].dur[t] > 0 ? (double)tv[0].dur[t] / 1e9 : (double)iv / 1e9);

        /* with several nodes, the strongest cpu counters per node too: a
         * storm on one node of eight is under 2x machine-wide */
        if (store_topology_get(e->s, &node_of, NULL, &ncpu) >= 0)
                for (int c = 0; c < ncpu; c++)
                        N.nnodes = node_of[c] + 1 > N.nnodes ? node_of[c] + 1 : N.nnodes;
        if (N.nnodes > 1 && N.nnodes <= MAX_NODES) {
                node_pairs(e, res, &N);
                N.v = calloc(N.nmetric * (size_t)N.nnodes * nruns * nbins + 1, sizeof *N.v);
                if (!N.v) {
                        r = -ENOMEM;
                        goto out;
                }
                for (size_t j = 0; j < nruns && N.nmetric; j++) {
                        const struct analysis_run *rr = ex_run(e, sibidx[j]);
                        struct store_node_values nv;
                        r = store_node_values(e->s, N.metric, N.nmetric, rr->info.start, rr->info.end, iv, node_of, ncpu,
                                              N.nnodes, &nv);
                        if (r < 0)
                                goto out;
                        for (size_t i = 0; i < N.nmetric; i++)
                                for (int k = 0; k < N.nnodes; k++)
                                        for (size_t t = 0; t < nbins; t++) {
                                                size_t q = (i * (size_t)N.nnodes + (size_t)k) * nv.n + t;
                                                N.v[((i * (size_t)N.nnodes + (size_t)k) * nruns + j) * nbins + t] =
                                                        t < nv.n && nv.dur[t] > 0 && !nv.nc[q]
                                                                ? nv.v[q] / ((double)nv.dur[t] / 1e9)
                                                                : NAN;
                                        }
                        store_node_values_free(&nv);
                }
        } else
                N.nnodes = 0;

        /* the departures: machine-wide for every counter, per node for a few */
        nsearch = N.npairs;
        for (size_t ci = 0; ci < res->ncounters; ci++)
                nsearch += res->counters[ci].part == EXPLAIN_MACHINE;
        for (size_t ci = 0; ci < res->ncounters; ci++) {
                struct sset S;
                int m = (int)res->counters[ci].metric;
                if (res->counters[ci].part != EXPLAIN_MACHINE)
                        continue;       /* totals only */
                sset_machine(&B, m, &S);
                r = find_windows(&S, m, -1, res->tick_s, 2 * log((double)nsearch), y, all, &w, &nw);
                B.eps[m] = S.eps;
                if (r < 0)
                        goto out;
        }
        for (size_t p = 0; p < N.npairs; p++) {
                struct sset S;
                size_t i = 0;
                int k = N.pair_node[p];
                while (N.metric[i] != N.pair_metric[p])
                        i++;
                sset_node(&N, &B, i, k, &S);
                r = find_windows(&S, N.metric[i], k, res->tick_s, 2 * log((double)nsearch), y, all, &w, &nw);
                N.eps[i * (size_t)N.nnodes + (size_t)k] = S.eps;
                if (r < 0)
                        goto out;
        }

        /* windows into phases: strongest first; every other window that
         * overlaps the phase (its bins so far, grown by each window that
         * joins) is the same phase, whichever way it departs (the storm's
         * lock counters up, the ping-pong's context switches down).  A storm
         * moves counters that derive from one another (lock_contentions
         * and its per-type parts, lock_wait_ns; psi_cpu_some_us from the
         * tasks it keeps waiting; page_faults and page_faults_minor),
         * whose change points fall a tick or two apart: one phase listing
         * them, not one phase each.  Its bounds are its strongest
         * window's; a counter once per phase. */
        if (nw)
                qsort(w, nw, sizeof *w, cmp_window);
        for (size_t i = 0; i < nw; i++) {
                struct explain_run_phase *p;
                size_t a = w[i].a, b = w[i].b, ua = a, ub = b;
                int place_m = -1;
                double place_sign = 1;

                if (w[i].used)
                        continue;
                p = realloc(res->phases, (res->nphases + 1) * sizeof *p);
                if (!p) {
                        r = -ENOMEM;
                        goto out;
                }
                res->phases = p;
                p = &res->phases[res->nphases++];
                memset(p, 0, sizeof *p);
                p->place_metric = -1;
                p->start_s = off[a];
                p->dur_s = off[b] - off[a];
                for (bool grew = true; grew;) {
                        grew = false;
                        for (size_t j = i + 1; j < nw; j++)
                                if (!w[j].used && !w[j].joined && w[j].a < ub && w[j].b > ua) {
                                        w[j].joined = true;
                                        ua = w[j].a < ua ? w[j].a : ua;
                                        ub = w[j].b > ub ? w[j].b : ub;
                                        grew = true;
                                }
                }
                for (size_t j = i; j < nw; j++) {
                        bool dup = false;
                        struct sset S;
                        if (w[j].used || (j > i && !w[j].joined))
                                continue;
                        w[j].used = true;
                        for (size_t q = 0; q < p->nm; q++)
                                dup |= (int)p->m[q].metric == w[j].metric;
                        if (dup || p->nm == EXPLAIN_PHASE_METRICS)
                                continue;
                        if (w[j].node < 0)
                                sset_machine(&B, w[j].metric, &S);
                        else {
                                size_t ni = 0;
                                while (N.metric[ni] != w[j].metric)
                                        ni++;
                                sset_node(&N, &B, ni, w[j].node, &S);
                        }
                        p->m[p->nm].metric = (enum metric_id)w[j].metric;
                        p->m[p->nm].node = w[j].node;
                        p->m[p->nm].ratio = sset_ratio(&S, a, b);
                        if (place_m < 0 && metric_table[w[j].metric].scope == SCOPE_CPU) {
                                place_m = w[j].metric;
                                place_sign = p->m[p->nm].ratio >= 1 ? 1 : -1;
                        }
                        p->nm++;
                }
                if (place_m >= 0) {
                        r = phase_place(e, p, place_m, place_sign, iv, a, b);
                        if (r < 0)
                                goto out;
                }
        }
        if (res->nphases > 1)
                qsort(res->phases, res->nphases, sizeof *res->phases, cmp_phase);
        /* the causes, which take the phases they show in (and another
         * process's, its own window); then the series that show them */
        r = explain_others_window(e, res, tv, sibidx, nruns, nbins, iv);
        if (r >= 0)
                r = explain_causes(e, res);
        if (r >= 0)
                r = keep_series(e, res, &B);
out:
        for (size_t j = 0; j < nruns; j++)
                store_tick_values_free(&tv[j]);
        free(B.v);
        free(N.v);
        free(w);
        return r < 0 ? r : 0;
}

