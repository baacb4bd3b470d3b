/* analysis.c - the runs a report covers, with their stored totals turned
 * into rates: per metric its total, rate and spread across CPUs (min,
 * median, max, imbalance = max / mean), and where the CPU time went.
 *
 * Everything comes from the runs' stored totals (exact differences of the
 * daemon's snapshots at the run's start and stop); no sample is scanned.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "macro.h"
#include "timeutil.h"

const int analysis_cpu_time_metric[ANALYSIS_CPU_TIMES] = { M_CPU_USER, M_CPU_NICE, M_CPU_SYSTEM, M_CPU_IDLE,
                                        M_CPU_IOWAIT, M_CPU_IRQ, M_CPU_SOFTIRQ, M_CPU_STEAL };
const char *const analysis_cpu_time_name[ANALYSIS_CPU_TIMES] = { "user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal" };

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

const char *analysis_context_value(const struct run_detail *d, const char *key)
{
        for (size_t i = 0; i < d->ncontext; i++)
                if (streq(d->context[i].key, key))
                        return d->context[i].value;
        return NULL;
}

/* Is metric listed as unavailable in the run's context? */
static bool listed_unavailable(const struct run_detail *d, const char *metric)
{
        const char *list = analysis_context_value(d, "metrics_unavailable");
        size_t n = strlen(metric);

        for (const char *p = list; p && *p;) {
                const char *e = strchr(p, ',');
                size_t len = e ? (size_t)(e - p) : strlen(p);
                if (len == n && strncmp(p, metric, n) == 0)
                        return true;
                p = e ? e + 1 : NULL;
        }
        return false;
}

/* One pass over the totals (they come grouped by metric, so a metric's
 * name is looked up once per run, not compared with each of the ~5,000
 * totals of a 256-CPU run for each of the metrics), then each metric's
 * per-CPU values sorted and summed in that order. */
void analysis_compute(struct analysis_run *r)
{
        double *vals = calloc(r->d.ntotals + 1, sizeof *vals);
        int *mof = calloc(r->d.ntotals + 1, sizeof *mof);      /* metric of each total, -1: unknown */
        size_t ncpu[_M_MAX] = { 0 }, off[_M_MAX + 1], fill[_M_MAX];
        const char *prev = NULL;
        int m = -1;

        r->dur = analysis_duration_s(&r->info);
        for (m = 0; m < _M_MAX; m++) {
                memset(&r->m[m], 0, sizeof r->m[m]);
                r->busiest[m] = NAN;
        }
        for (size_t i = 0; i < r->d.ntotals; i++) {
                const struct store_total *t = &r->d.totals[i];
                if (!prev || !streq(prev, t->metric)) {
                        prev = t->metric;
                        m = metric_id_by_name(t->metric);
                }
                if (mof)
                        mof[i] = m;
                if (m < 0)
                        continue;
                if (t->level == LEVEL_SYSTEM) {
                        r->m[m].have = true;
                        r->m[m].total = t->value;
                } else if (t->level == LEVEL_CPU)
                        ncpu[m]++;
                else if (t->level == LEVEL_CGROUP) {    /* the run's own cgroup (schema 0007) */
                        r->m[m].has_own = true;
                        r->m[m].own_total = t->value;
                }
        }
        off[0] = 0;
        for (m = 0; m < _M_MAX; m++) {
                off[m + 1] = off[m] + ncpu[m];
                fill[m] = off[m];
        }
        for (size_t i = 0; vals && mof && i < r->d.ntotals; i++)
                if (mof[i] >= 0 && r->d.totals[i].level == LEVEL_CPU)
                        vals[fill[mof[i]]++] = r->d.totals[i].value;

        for (m = 0; m < _M_MAX; m++) {
                struct mstat *s = &r->m[m];
                double *v = vals ? vals + off[m] : NULL, sum = 0;
                size_t nv = vals && mof ? ncpu[m] : 0;

                if (!s->have) {
                        s->why = streq(r->info.status, "running") ? "the run is still running"
                                 : listed_unavailable(&r->d, metric_table[m].name)
                                         ? "not available on the run's host (scalemonctl metrics says why)"
                                         : "not recorded in this run";
                        continue;
                }
                s->per_s = r->dur > 0 ? s->total / r->dur : 0;
                if (metric_table[m].scope == SCOPE_CPU && nv > 0) {
                        qsort(v, nv, sizeof *v, cmp_double);
                        for (size_t i = 0; i < nv; i++)
                                sum += v[i];
                        s->spread = true;
                        s->cpu_min = v[0];
                        s->cpu_max = v[nv - 1];
                        s->cpu_median = nv % 2 ? v[nv / 2] : (v[nv / 2 - 1] + v[nv / 2]) / 2;
                        s->imbalance_ok = sum > 0;
                        s->imbalance = sum > 0 ? s->cpu_max / (sum / (double)nv) : 0;
                        r->busiest[m] = r->dur > 0 ? s->cpu_max / r->dur : 0;
                }
        }
        free(vals);
        free(mof);
        r->cpu_total = 0;
        for (int i = 0; i < ANALYSIS_CPU_TIMES; i++) {
                r->cpu_time[i] = r->m[analysis_cpu_time_metric[i]].have ? r->m[analysis_cpu_time_metric[i]].total : 0;
                r->cpu_total += r->cpu_time[i];
        }
}

bool analysis_pct_change(double base, double x, double *ret)
{
        if (base == 0)
                return false;
        *ret = (x - base) / fabs(base) * 100;
        return true;
}

const struct store_score *analysis_find_score(const struct run_detail *d, const char *key)
{
        for (size_t i = 0; i < d->nscores; i++)
                if (streq(d->scores[i].key, key))
                        return &d->scores[i];
        return NULL;
}

const char *analysis_tag_value(const struct run_detail *d, const char *key)
{
        for (size_t i = 0; i < d->ntags; i++)
                if (streq(d->tags[i].key, key))
                        return d->tags[i].value;
        return NULL;
}

double analysis_duration_s(const struct run_info *ri)
{
        int64_t d;

        if (ri->dur_ns >= 0 && (ri->end || ri->dur_ns > 0))
                return (double)ri->dur_ns / 1e9;
        d = (ri->end ? ri->end : now_realtime_ns()) - ri->start;
        return (double)MAX(d, 0) / 1e9;
}

/* The per-CPU totals, once analysis_compute() has their spread: 256 of
 * every 261 rows of a 256-CPU run, and only --per cpu shows them. */
static void drop_cpu_totals(struct run_detail *d)
{
        size_t k = 0;

        for (size_t i = 0; i < d->ntotals; i++)
                if (d->totals[i].level != LEVEL_CPU)
                        d->totals[k++] = d->totals[i];
        d->ntotals = k;
        if (k > 0) {
                void *p = realloc(d->totals, k * sizeof *d->totals);
                if (p)
                        d->totals = p;
        }
}

int analysis_load(struct store *st, struct run_info *infos, size_t n, enum analysis_totals keep,
                  struct analysis_run **ret, size_t *ret_failed)
{
        unsigned parts = keep == ANALYSIS_TOTALS_SYSTEM ? (RUN_ALL & ~RUN_TOTALS) | RUN_SYSTEM_TOTALS : RUN_ALL;
        struct analysis_run *runs = calloc(n + 1, sizeof *runs);

        *ret_failed = n;
        if (!runs)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                int r = store_run_detail_parts(st, infos[i].id, parts, &runs[i].d);
                if (r < 0) {
                        *ret_failed = i;
                        for (size_t k = 0; k < i; k++)
                                run_detail_free(&runs[k].d);
                        free(runs);
                        return r;
                }
                runs[i].info = infos[i];
                if (i > 0 && infos[i].host == infos[i - 1].host)
                        memcpy(runs[i].hostname, runs[i - 1].hostname, sizeof runs[i].hostname);
                else {
                        struct host_info h = { 0 };
                        if (store_host_by_id(st, infos[i].host, &h) == 0 && h.hostname)
                                snprintf(runs[i].hostname, sizeof runs[i].hostname, "%s", h.hostname);
                        host_info_clear(&h);
                }
                analysis_compute(&runs[i]);
                if (keep != ANALYSIS_TOTALS_SYSTEM && (r = analysis_locks_load(st, &runs[i])) < 0) {
                        *ret_failed = i;
                        for (size_t k = 0; k <= i; k++) {
                                run_detail_free(&runs[k].d);
                                analysis_locks_free(&runs[k].locks);
                        }
                        free(runs);
                        return r;
                }
                if (keep == ANALYSIS_TOTALS_NODE)
                        drop_cpu_totals(&runs[i].d);
        }
        free(infos);            /* the runs own the strings now */
        *ret = runs;
        return 0;
}

struct analysis_run *analysis_unload(struct analysis_run *runs, size_t n)
{
        for (size_t i = 0; runs && i < n; i++) {
                run_detail_free(&runs[i].d);
                run_info_free(&runs[i].info);
                analysis_locks_free(&runs[i].locks);
        }
        free(runs);
        return NULL;
}

/* Context keys whose values are not the same in every run.  Each key is
 * compared across the runs once (seen), not again for every run that
 * has it: that was quadratic in the runs. */
int analysis_context_differs(const struct analysis_run *runs, size_t n, struct context_differs *ret)
{
        struct context_differs cd = { .nruns = n };
        const char **seen = NULL;
        size_t nseen = 0, cap = 0;

        for (size_t i = 0; i < n; i++)
                for (size_t k = 0; k < runs[i].d.ncontext; k++) {
                        const char *key = runs[i].d.context[k].key;
                        bool differs = false, was_seen = false;
                        struct context_differ *cdk;

                        for (size_t s = 0; s < nseen && !was_seen; s++)
                                was_seen = streq(seen[s], key);
                        if (was_seen)
                                continue;
                        if (nseen == cap) {
                                const char **p = realloc(seen, (cap = cap ? cap * 2 : 32) * sizeof *p);
                                if (!p)
                                        goto oom;
                                seen = p;
                        }
                        seen[nseen++] = key;
                        for (size_t j = 0; j < n && !differs; j++) {
                                const char *v = analysis_context_value(&runs[j].d, key);
                                differs = !v || !streq(v, runs[i].d.context[k].value);
                        }
                        if (!differs)
                                continue;
                        cdk = realloc(cd.keys, (cd.nkeys + 1) * sizeof *cdk);
                        if (!cdk)
                                goto oom;
                        cd.keys = cdk;
                        cdk = &cd.keys[cd.nkeys];
                        cdk->key = key;
                        cdk->value = calloc(n + 1, sizeof *cdk->value);
                        if (!cdk->value)
                                goto oom;
                        cd.nkeys++;
                        for (size_t j = 0; j < n; j++)
                                cdk->value[j] = analysis_context_value(&runs[j].d, key);
                }
        free(seen);
        *ret = cd;
        return 0;
oom:
        free(seen);
        context_differs_free(&cd);
        return -ENOMEM;
}

void context_differs_free(struct context_differs *cd)
{
        for (size_t i = 0; i < cd->nkeys; i++)
                free(cd->keys[i].value);
        free(cd->keys);
        *cd = (struct context_differs){ 0 };
}

static bool numeric(const char *s, double *ret)
{
        char *end;
        if (!s)
                return false;
        errno = 0;
        *ret = strtod(s, &end);
        return !errno && end != s && !*end && isfinite(*ret) && *ret > 0;
}

bool analysis_numeric_tag(const struct analysis_run *r, const char *key, double *ret)
{
        return numeric(analysis_tag_value(&r->d, key), ret);
}

int analysis_pick_score(const struct analysis_run *runs, size_t n, const char *by, const char *score,
                        const char **ret, char *why, size_t whylen)
{
        size_t usable = 0;
        double v;

        if (!score) {
                for (size_t i = 0; i < n; i++)
                        for (size_t k = 0; k < runs[i].d.nscores; k++) {
                                if (!score)
                                        score = runs[i].d.scores[k].key;
                                else if (!streq(score, runs[i].d.scores[k].key)) {
                                        snprintf(why, whylen,
                                                 "the runs have several scores (%s, %s, ...): choose one with --score",
                                                 score, runs[i].d.scores[k].key);
                                        return -EINVAL;
                                }
                        }
                if (!score) {
                        snprintf(why, whylen, "none of these runs has a score (run stop --score, run exec --score-regex)");
                        return -ENOENT;
                }
        }
        for (size_t i = 0; by && i < n; i++)
                usable += analysis_find_score(&runs[i].d, score) && analysis_numeric_tag(&runs[i], by, &v);
        if (by && usable == 0) {
                snprintf(why, whylen, "no run in range has both score %s and a numeric tag %s", score, by);
                return -ENOENT;
        }
        *ret = score;
        return 0;
}

static bool same_tags(const struct run_detail *a, const struct run_detail *b)
{
        if (a->ntags != b->ntags)
                return false;
        for (size_t k = 0; k < a->ntags; k++) {
                const char *v = analysis_tag_value(b, a->tags[k].key);
                if (!v || !streq(v, a->tags[k].value))
                        return false;
        }
        return true;
}

const struct analysis_run *analysis_first_same_tags(const struct analysis_run *runs, size_t i)
{
        for (size_t j = 0; j < i; j++)
                if (same_tags(&runs[j].d, &runs[i].d))
                        return &runs[j];
        return &runs[i];
}
