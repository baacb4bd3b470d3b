/* analysis-groups.c - report --group-by, --baseline and --explain: which
 * results are real, which are noise, and which counter moves with the
 * score.
 *
 * Runs are grouped by equal values of the grouping tags.  Per group and
 * score: n, mean, median, standard deviation (n-1), coefficient of
 * variation, min and max; a group whose CV is above 5% or whose min/max is
 * below 0.75 is HIGH VARIANCE.  Against a baseline group (the one that
 * agrees on every other grouping tag) each score gets the change of its
 * mean, Welch's t-test p-value and a verdict; each metric the change of its
 * mean rate, largest first.  --explain ranks metrics by Spearman's rank
 * correlation between their per-run rate and the score.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "macro.h"

const char *const analysis_run_time_name[_RUN_TIME_MAX] = { "wall_s", "user_s", "sys_s" };

void group_opts_free(struct group_opts *go)
{
        for (size_t i = 0; i < go->nby; i++)
                free(go->by[i]);
        for (size_t i = 0; i < go->nbaseline; i++) {
                free(go->baseline[i].key);
                free(go->baseline[i].value);
        }
        for (size_t i = 0; i < go->nlower_better; i++)
                free(go->lower_better[i]);
        memset(go, 0, sizeof *go);
}

bool group_opts_lower_is_better(const struct group_opts *go, const char *key)
{
        for (size_t i = 0; i < go->nlower_better; i++)
                if (streq(go->lower_better[i], key))
                        return true;
        return false;
}

/* The run's value of a grouping key, "" if it has none: its host's name
 * for "host", else a recorded context key, else a tag (the sources table
 * in group-keys.c). */
static const char *group_tag(const struct analysis_run *r, const char *key)
{
        const char *v = analysis_group_value(r, key);
        return v ? v : "";
}

static bool same_group(const struct group *g, const struct analysis_run *r, const struct group_opts *go)
{
        for (size_t k = 0; k < go->nby; k++)
                if (!streq(g->val[k], group_tag(r, go->by[k])))
                        return false;
        return true;
}

/* The score keys any run of idx[0..n) has, in first-seen order; borrowed
 * from the runs.  NULL only when out of memory (with n > 0). */
static const char **score_keys(const struct analysis_run *runs, const size_t *idx, size_t n, size_t *ret_n)
{
        size_t cap = 1, nk = 0;
        const char **keys;

        for (size_t i = 0; i < n; i++)
                cap += runs[idx[i]].d.nscores;
        keys = calloc(cap, sizeof *keys);
        for (size_t i = 0; keys && i < n; i++) {
                const struct analysis_run *r = &runs[idx[i]];
                for (size_t k = 0; k < r->d.nscores; k++) {
                        bool seen = false;
                        for (size_t j = 0; j < nk && !seen; j++)
                                seen = streq(keys[j], r->d.scores[k].key);
                        if (!seen)
                                keys[nk++] = r->d.scores[k].key;
                }
        }
        *ret_n = nk;
        return keys;
}

static size_t score_values(const struct analysis_run *runs, const size_t *idx, size_t n, const char *key, double *out)
{
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
                const struct store_score *s = analysis_find_score(&runs[idx[i]].d, key);
                if (s)
                        out[m++] = s->value;
        }
        return m;
}

const struct group_score *group_find_score(const struct group *g, const char *key)
{
        for (size_t i = 0; i < g->nscores; i++)
                if (streq(g->scores[i].key, key))
                        return &g->scores[i];
        return NULL;
}

const struct score_verdict *group_find_verdict(const struct group *g, const char *key)
{
        for (size_t i = 0; i < g->nvs; i++)
                if (streq(g->vs[i].key, key))
                        return &g->vs[i];
        return NULL;
}

/* ---- explain ---- */

/* The per-run variables --explain correlates with the score. */
struct var {
        char name[96];
        double *x;              /* per run, NAN where the run lacks it */
};

static void vars_free(struct var *v, size_t nv)
{
        for (size_t i = 0; i < nv; i++)
                free(v[i].x);
        free(v);
}

/* kind: -2 the system rate, -1 the busiest CPU's rate, N node N's rate. */
static void var_fill(struct var *nvar, const struct analysis_run *runs, const size_t *idx, size_t n, int m, int kind)
{
        if (kind == -2)
                snprintf(nvar->name, sizeof nvar->name, "%s/s", metric_table[m].name);
        else if (kind == -1)
                snprintf(nvar->name, sizeof nvar->name, "%s/s on the busiest CPU", metric_table[m].name);
        else
                snprintf(nvar->name, sizeof nvar->name, "%s/s on node %d", metric_table[m].name, kind);
        for (size_t i = 0; i < n; i++) {
                const struct analysis_run *r = &runs[idx[i]];
                nvar->x[i] = NAN;
                if (!r->m[m].have)
                        continue;
                if (kind == -2)
                        nvar->x[i] = r->m[m].per_s;
                else if (kind == -1)
                        nvar->x[i] = r->busiest[m];
                else
                        for (size_t t = 0; t < r->d.ntotals; t++) {
                                const struct store_total *tt = &r->d.totals[t];
                                if (tt->level == LEVEL_NODE && tt->loc == kind && streq(tt->metric, metric_table[m].name))
                                        nvar->x[i] = r->dur > 0 ? tt->value / r->dur : NAN;
                        }
        }
}

/* What everything else did in run r: its busy CPU time (m < 0), or its
 * count of metric m. */
static bool others_total(const struct analysis_run *r, int m, double *ret)
{
        struct analysis_own_cpu oc;

        if (m >= 0)
                return analysis_own_others(r, m, ret);
        if (!analysis_own_cpu(r, &oc))
                return false;
        *ret = oc.others_s;
        return true;
}

/* Make room for variable v[nv], its x[] for n runs allocated (the caller
 * counts it in nv once filled, or frees x). */
static int var_next(struct var **v, size_t nv, size_t *cap, size_t n)
{
        if (nv == *cap) {
                size_t c = *cap ? *cap * 2 : 64;
                struct var *p = realloc(*v, c * sizeof *p);
                if (!p)
                        return -ENOMEM;
                *v = p;
                *cap = c;
        }
        (*v)[nv].x = calloc(n + 1, sizeof *(*v)[nv].x);
        return (*v)[nv].x ? 0 : -ENOMEM;
}

static int explain_vars(const struct analysis_run *runs, const size_t *idx, size_t n, struct var **ret, size_t *ret_n)
{
        struct var *v = NULL;
        size_t nv = 0, cap = 0;
        int maxnode = -1;

        for (size_t i = 0; i < n; i++)
                for (size_t t = 0; t < runs[idx[i]].d.ntotals; t++)
                        if (runs[idx[i]].d.totals[t].level == LEVEL_NODE && runs[idx[i]].d.totals[t].loc > maxnode)
                                maxnode = runs[idx[i]].d.totals[t].loc;
        for (int m = 0; m < _M_MAX; m++)
                /* system rate, each node's rate (if there are several), busiest CPU;
                 * a maximum (lock_wait_max_ns) has no rate: left out */
                for (int kind = -2; kind <= maxnode && !metric_table[m].max; kind++) {
                        if (kind >= 0 && (maxnode < 1 || metric_table[m].scope == SCOPE_SYSTEM))
                                continue;
                        if (kind == -1 && metric_table[m].scope != SCOPE_CPU)
                                continue;
                        if (var_next(&v, nv, &cap, n) < 0)
                                goto oom;
                        var_fill(&v[nv++], runs, idx, n, m, kind);
                }
        /* interference: where runs had their own cgroup, what
         * everything else on the machine did meanwhile: the busy CPU time
         * minus the run's own, and each count the cgroup counted too
         * minus its part (PSI is no sum over cgroups: left out) */
        for (int m = -1; m < _M_MAX; m++) {
                bool any = false;
                if (var_next(&v, nv, &cap, n) < 0)
                        goto oom;
                snprintf(v[nv].name, sizeof v[nv].name, "everything else: %s", m < 0 ? "cpu time" : metric_table[m].name);
                for (size_t i = 0; i < n; i++) {
                        const struct analysis_run *r = &runs[idx[i]];
                        double o;
                        v[nv].x[i] = NAN;
                        if (r->dur > 0 && others_total(r, m, &o)) {
                                v[nv].x[i] = o / r->dur;
                                any = true;
                        }
                }
                if (any)
                        nv++;
                else
                        free(v[nv].x);
        }
        /* the share of CPU time waited for kernel locks */
        if (var_next(&v, nv, &cap, n) < 0)
                goto oom;
        snprintf(v[nv].name, sizeof v[nv].name, "lock wait share of CPU time");
        for (size_t i = 0; i < n; i++)
                if (!analysis_lock_share(&runs[idx[i]], LEVEL_SYSTEM, 0, &v[nv].x[i]))
                        v[nv].x[i] = NAN;
        nv++;
        *ret = v;
        *ret_n = nv;
        return 0;
oom:
        vars_free(v, nv);
        return -ENOMEM;
}

const char *const explain_view_name[2] = { "per second", "per unit of score" };

struct ranked {
        size_t var;             /* index: ties keep the variables' order */
        double rho, p;          /* per second */
        size_t n;
        bool has_w;
        double rho_w, p_w;      /* per unit of score */
        enum explain_view by;
        double key, key_p;      /* the ranking view's |rho| and p */
};

static int cmp_ranked(const void *a, const void *b)
{
        const struct ranked *x = a, *y = b;
        if (x->key != y->key)
                return x->key > y->key ? -1 : 1;
        if (x->key_p != y->key_p)
                return x->key_p < y->key_p ? -1 : 1;
        return x->var < y->var ? -1 : x->var > y->var;
}

int analysis_explain(const struct analysis_run *runs, const size_t *idx, size_t n, const char *score,
                     struct explain_result *ret)
{
        struct explain_result e = { .score = score };
        _cleanup_free_ double *y = calloc(n + 1, sizeof *y), *xs = calloc(n + 1, sizeof *xs),
                              *ys = calloc(n + 1, sizeof *ys), *ws = calloc(n + 1, sizeof *ws);
        _cleanup_free_ struct ranked *rk = NULL;
        struct var *vars = NULL;
        size_t nvars = 0, nrk = 0;

        if (!y || !xs || !ys || !ws)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const struct store_score *s = analysis_find_score(&runs[idx[i]].d, score);
                y[i] = s ? s->value : NAN;
                e.n += s != NULL;
        }
        if (e.n < EXPLAIN_MIN_N) {
                snprintf(e.note, sizeof e.note,
                         "%zu run%s with %s: too few to tell which counter moves with it (at least %d are needed)", e.n,
                         e.n == 1 ? "" : "s", score, EXPLAIN_MIN_N);
                *ret = e;
                return 0;
        }
        if (explain_vars(runs, idx, n, &vars, &nvars) < 0)
                return -ENOMEM;
        rk = calloc(nvars + 1, sizeof *rk);
        if (!rk) {
                vars_free(vars, nvars);
                return -ENOMEM;
        }
        for (size_t v = 0; v < nvars; v++) {
                size_t k = 0;
                bool pos = true;
                double rho, p;
                struct ranked *q = &rk[nrk];
                for (size_t i = 0; i < n; i++)
                        if (isfinite(y[i]) && isfinite(vars[v].x[i])) {
                                xs[k] = vars[v].x[i];
                                ys[k] = y[i];
                                pos &= y[i] > 0;
                                ws[k] = y[i] > 0 ? xs[k] / y[i] : 0;
                                k++;
                        }
                if (k < EXPLAIN_MIN_N || stats_spearman(xs, ys, k, &rho, &p) < 0)
                        continue;       /* constant, or too few */
                *q = (struct ranked){ .var = v, .rho = rho, .p = p, .n = k, .by = EXPLAIN_PER_S, .key = fabs(rho),
                                      .key_p = p };
                /* constant per unit of score: proportional to the work, rho 0 */
                if (pos && stats_spearman(ws, ys, k, &q->rho_w, &q->p_w) < 0) {
                        q->rho_w = 0;
                        q->p_w = 1;
                }
                q->has_w = pos;
                if (pos && fabs(q->rho_w) < fabs(rho)) {
                        q->by = EXPLAIN_PER_SCORE;
                        q->key = fabs(q->rho_w);
                        q->key_p = q->p_w;
                }
                nrk++;
        }
        qsort(rk, nrk, sizeof *rk, cmp_ranked);
        for (size_t i = 0; i < nrk && i < EXPLAIN_TOP; i++) {
                struct explain_row *row = &e.rows[e.nrows++];
                snprintf(row->name, sizeof row->name, "%s", vars[rk[i].var].name);
                row->rho = rk[i].rho;
                row->p_value = rk[i].p;
                row->n = rk[i].n;
                row->has_per_score = rk[i].has_w;
                row->rho_per_score = rk[i].rho_w;
                row->p_per_score = rk[i].p_w;
                row->ranked_by = rk[i].by;
                row->rank_rho = rk[i].by == EXPLAIN_PER_S ? rk[i].rho : rk[i].rho_w;
        }
        if (nrk == 0)
                snprintf(e.note, sizeof e.note, "no counter varies across these runs");
        else if (e.n < EXPLAIN_HINT_N)
                snprintf(e.note, sizeof e.note, "n=%zu is small: take the ranking as a hint, and repeat the runs to confirm",
                         e.n);
        vars_free(vars, nvars);
        *ret = e;
        return 0;
}

/* One explain_result per score key (all, or only go->score). */
static int explain_keys(const struct analysis_run *runs, const size_t *idx, size_t n, const char **keys, size_t nkeys,
                        const struct group_opts *go, struct explain_result **ret, size_t *ret_n)
{
        struct explain_result *e = calloc(nkeys + 1, sizeof *e);
        size_t ne = 0;

        if (!e)
                return -ENOMEM;
        for (size_t k = 0; k < nkeys; k++) {
                if (go->score && !streq(go->score, keys[k]))
                        continue;
                if (analysis_explain(runs, idx, n, keys[k], &e[ne]) < 0) {
                        free(e);
                        return -ENOMEM;
                }
                ne++;
        }
        *ret = e;
        *ret_n = ne;
        return 0;
}

/* ---- per group ---- */

static int group_stats(const struct analysis_run *runs, struct group *g, const struct group_opts *go)
{
        _cleanup_free_ double *x = calloc(g->n + 1, sizeof *x), *w = calloc(g->n + 1, sizeof *w);
        _cleanup_free_ const char **keys = NULL;
        size_t nkeys = 0;

        keys = score_keys(runs, g->idx, g->n, &nkeys);
        if (!x || !w || !keys || !(g->scores = calloc(nkeys + 1, sizeof *g->scores)))
                return -ENOMEM;
        for (size_t k = 0; k < nkeys; k++) {
                struct summary s;
                size_t m = score_values(runs, g->idx, g->n, keys[k], x);
                if (m == 0 || stats_summary(x, m, &s) < 0)
                        continue;
                if ((s.has_cv && s.cv > go->cv_limit) || (s.max > 0 && s.min / s.max < go->minmax_limit))
                        g->high_variance = true;
                g->scores[g->nscores++] = (struct group_score){ .key = keys[k], .s = s };
        }
        analysis_group_metrics(runs, g, x, w);
        return 0;
}

static double run_time(const struct run_info *ri, enum run_time t)
{
        return t == RUN_TIME_WALL ? ri->wall_s : t == RUN_TIME_USER ? ri->user_s : ri->sys_s;
}

/* Does a run of idx[0..n) record key as lower-is-better? */
static bool idx_recorded_lower(const struct analysis_run *runs, const size_t *idx, size_t n, const char *key)
{
        for (size_t i = 0; i < n; i++)
                if (analysis_recorded_lower(&runs[idx[i]], 1, key))
                        return true;
        return false;
}

/* g against its baseline b: scores, run times, metrics. */
static int compare(const struct analysis_run *runs, struct group *g, const struct group *b, const struct group_opts *go)
{
        _cleanup_free_ double *x = calloc(g->n + 1, sizeof *x), *y = calloc(b->n + 1, sizeof *y);
        _cleanup_free_ const char **keys = NULL;
        size_t nkeys = 0;

        keys = score_keys(runs, g->idx, g->n, &nkeys);
        if (!x || !y || !keys || !(g->vs = calloc(nkeys + 1, sizeof *g->vs)) ||
            !(g->changes = calloc(_M_MAX, sizeof *g->changes)))
                return -ENOMEM;
        for (size_t k = 0; k < nkeys; k++) {
                size_t nx = score_values(runs, g->idx, g->n, keys[k], x), ny = score_values(runs, b->idx, b->n, keys[k], y);
                struct score_verdict *v = &g->vs[g->nvs];
                struct summary sx, sy;
                double t, df;

                if (nx == 0 || ny == 0)
                        continue;
                g->nvs++;
                stats_summary(x, nx, &sx);
                stats_summary(y, ny, &sy);
                v->key = keys[k];
                v->has_change = analysis_pct_change(sy.mean, sx.mean, &v->change_pct);
                if (nx < 3 || ny < 3) {
                        v->verdict = "too few runs";
                        v->why = "fewer than 3 runs on one side";
                        continue;
                }
                /* both sides constant: p is 1 or 0, as the means say */
                stats_welch(x, nx, y, ny, &v->p_value, &t, &df);
                v->has_p = true;
                if (v->p_value >= go->alpha)
                        v->verdict = "no significant change";
                else if ((sx.mean > sy.mean) !=
                         (group_opts_lower_is_better(go, keys[k]) || idx_recorded_lower(runs, g->idx, g->n, keys[k]) ||
                          idx_recorded_lower(runs, b->idx, b->n, keys[k])))
                        v->verdict = "improvement";
                else
                        v->verdict = "regression";
        }

        /* run times, where recorded: the ratio matters (sys time 20x) */
        for (int tn = 0; tn < _RUN_TIME_MAX; tn++) {
                struct time_ratio *tr = &g->times[tn];
                struct summary sx, sy;
                size_t nx = 0, ny = 0;
                for (size_t i = 0; i < g->n; i++)
                        if (runs[g->idx[i]].info.has_times)
                                x[nx++] = run_time(&runs[g->idx[i]].info, tn);
                for (size_t i = 0; i < b->n; i++)
                        if (runs[b->idx[i]].info.has_times)
                                y[ny++] = run_time(&runs[b->idx[i]].info, tn);
                if (!nx || !ny)
                        continue;
                stats_summary(x, nx, &sx);
                stats_summary(y, ny, &sy);
                tr->have = true;
                tr->mean = sx.mean;
                tr->baseline_mean = sy.mean;
                tr->has_ratio = sy.mean > 0;
                tr->ratio = sy.mean > 0 ? sx.mean / sy.mean : 0;
        }

        /* metrics: rates by Welch's t-test, maxima as maxima (analysis-changes.c) */
        if (analysis_metric_changes(runs, g, b, go) < 0)
                return -ENOMEM;
        /* which lock got worse */
        return analysis_lock_changes(runs, g->idx, g->n, b->idx, b->n, &g->lock_changes, &g->nlock_changes);
}

/* Is g a baseline group: has it the baseline's value of each baseline tag? */
static bool is_baseline(const struct group *g, const struct group_opts *go)
{
        for (size_t j = 0; j < go->nbaseline; j++)
                for (size_t t = 0; t < go->nby; t++)
                        if (streq(go->by[t], go->baseline[j].key) && !streq(g->val[t], go->baseline[j].value))
                                return false;
        return true;
}

/* The baseline group of g: the baseline's values, and g's values of every
 * other grouping tag.  Its index, or ng. */
static size_t find_baseline(const struct group *groups, size_t ng, const struct group *g, const struct group_opts *go)
{
        size_t b;

        for (b = 0; b < ng; b++) {
                bool match = true;
                for (size_t t = 0; t < go->nby && match; t++) {
                        const char *want = g->val[t];
                        for (size_t j = 0; j < go->nbaseline; j++)
                                if (streq(go->by[t], go->baseline[j].key))
                                        want = go->baseline[j].value;
                        match = streq(groups[b].val[t], want);
                }
                if (match)
                        break;
        }
        return b;
}

/* The runs into groups by equal values of the grouping tags, in first-seen
 * order. */
static int make_groups(const struct analysis_run *runs, size_t n, const struct group_opts *go, struct group_result *gr)
{
        gr->groups = calloc(n + 1, sizeof *gr->groups);
        if (!gr->groups)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                struct group *g = gr->groups;
                size_t k;
                for (k = 0; k < gr->ngroups && !same_group(&g[k], &runs[i], go); k++)
                        ;
                if (k == gr->ngroups) {
                        for (size_t t = 0; t < go->nby; t++)
                                g[k].val[t] = group_tag(&runs[i], go->by[t]);
                        g[k].idx = calloc(n, sizeof *g[k].idx);
                        if (!g[k].idx)
                                return -ENOMEM;
                        gr->ngroups++;
                }
                g[k].idx[g[k].n++] = i;
        }
        return 0;
}

int analysis_groups(const struct analysis_run *runs, size_t n, const struct group_opts *go,
                    struct group_result **ret)
{
        struct group_result *gr = calloc(1, sizeof *gr);
        _cleanup_free_ size_t *all = calloc(n + 1, sizeof *all);
        _cleanup_free_ const char **keys = NULL;
        size_t nkeys = 0;
        int r = -ENOMEM;

        if (!gr || !all)
                goto fail;
        gr->go = go;
        if (go->nby && (r = make_groups(runs, n, go, gr)) < 0)
                goto fail;
        for (size_t k = 0; k < gr->ngroups; k++)
                if ((r = group_stats(runs, &gr->groups[k], go)) < 0 ||
                    (r = analysis_pools(runs, gr->groups[k].idx, gr->groups[k].n, (const char *const *)go->by, go->nby,
                                        &gr->groups[k].pools)) < 0)
                        goto fail;

        /* baselines: the group with the baseline's values and the same
         * values of every other grouping tag */
        for (size_t k = 0; go->nbaseline && k < gr->ngroups; k++) {
                struct group *g = &gr->groups[k];
                size_t b;
                if (is_baseline(g, go)) {
                        g->is_baseline = true;
                        continue;
                }
                b = find_baseline(gr->groups, gr->ngroups, g, go);
                if (b == gr->ngroups)
                        continue;
                g->has_baseline = true;
                g->baseline = b;
                if ((r = compare(runs, g, &gr->groups[b], go)) < 0)
                        goto fail;
        }

        /* --explain: inside each flagged group, and across all runs */
        if (go->explain) {
                for (size_t i = 0; i < n; i++)
                        all[i] = i;
                keys = score_keys(runs, all, n, &nkeys);
                r = -ENOMEM;
                if (!keys)
                        goto fail;
                gr->has_all = true;
                if ((r = explain_keys(runs, all, n, keys, nkeys, go, &gr->all, &gr->nall)) < 0)
                        goto fail;
                for (size_t k = 0; k < gr->ngroups; k++) {
                        struct group *g = &gr->groups[k];
                        if (g->high_variance &&
                            (r = explain_keys(runs, g->idx, g->n, keys, nkeys, go, &g->explain, &g->nexplain)) < 0)
                                goto fail;
                }
        }
        *ret = gr;
        return 0;
fail:
        group_result_free(gr);
        return r;
}

struct group_result *group_result_free(struct group_result *gr)
{
        if (!gr)
                return NULL;
        for (size_t k = 0; k < gr->ngroups; k++) {
                free(gr->groups[k].idx);
                pools_free(&gr->groups[k].pools);
                free(gr->groups[k].scores);
                free(gr->groups[k].vs);
                free(gr->groups[k].changes);
                free(gr->groups[k].lock_changes);
                free(gr->groups[k].explain);
        }
        free(gr->groups);
        free(gr->all);
        free(gr);
        return NULL;
}
