/* groups.c - report --group-by, --baseline and --explain: which results
 * are real, which are noise, and which counter moves with the score.
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
#include <string.h>

#include "locks.h"
#include "proto.h"
#include "report.h"
#include "stats.h"

#define EXPLAIN_TOP   5
#define EXPLAIN_MIN_N 4        /* below this, no ranking at all */
#define EXPLAIN_HINT_N 8       /* below this, say the ranking is only a hint */

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

int group_opts_parse_by(struct group_opts *go, const char *arg)
{
        char buf[1024], *save = NULL, *tok;
        const char *why;

        snprintf(buf, sizeof buf, "%s", arg);
        for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                if (!proto_valid_key(tok, &why))
                        return ctl_fail(EXIT_USAGE, "--group-by '%s': %s", tok, why);
                if (go->nby == ELEMENTSOF(go->by))
                        return ctl_fail(EXIT_USAGE, "--group-by: at most %zu tags", ELEMENTSOF(go->by));
                go->by[go->nby++] = strdup(tok);
        }
        return go->nby ? 0 : ctl_fail(EXIT_USAGE, "--group-by needs TAG[,TAG...]");
}

int group_opts_parse_baseline(struct group_opts *go, const char *arg)
{
        char buf[1024], *save = NULL, *tok;

        snprintf(buf, sizeof buf, "%s", arg);
        for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                if (go->nbaseline == ELEMENTSOF(go->baseline))
                        return ctl_fail(EXIT_USAGE, "--baseline: at most %zu K=V", ELEMENTSOF(go->baseline));
                if (parse_key_value("--baseline", tok, false, &go->baseline[go->nbaseline].key,
                                    &go->baseline[go->nbaseline].value))
                        return EXIT_USAGE;
                go->nbaseline++;
        }
        return go->nbaseline ? 0 : ctl_fail(EXIT_USAGE, "--baseline needs K=V[,K=V...]");
}

static const char *tag_of(const struct rrun *r, const char *key)
{
        for (size_t i = 0; i < r->d.ntags; i++)
                if (streq(r->d.tags[i].key, key))
                        return r->d.tags[i].value;
        return NULL;
}

struct grp {
        const char *val[16];    /* value of each grouping tag ("" if missing) */
        size_t *idx;
        size_t n;
        bool high_variance;
        json_t *json;
};

static bool same_group(const struct grp *g, const struct rrun *r, const struct group_opts *go)
{
        for (size_t k = 0; k < go->nby; k++) {
                const char *v = tag_of(r, go->by[k]);
                if (!streq(g->val[k], v ? v : ""))
                        return false;
        }
        return true;
}

static json_t *summary_json(const struct summary *s)
{
        return json_pack("{s:I,s:o,s:o,s:o,s:o,s:o,s:o}", "n", (json_int_t)s->n, "mean", json_number(s->mean), "median",
                         json_number(s->median), "stddev", s->has_stddev ? json_real(s->stddev) : json_null(), "cv",
                         s->has_cv ? json_real(s->cv) : json_null(), "min", json_number(s->min), "max",
                         json_number(s->max));
}

/* The score keys any run of these has, in first-seen order. */
static json_t *score_keys(const struct rrun *runs, const size_t *idx, size_t n)
{
        json_t *keys = json_array();
        for (size_t i = 0; i < n; i++) {
                const struct rrun *r = &runs[idx[i]];
                for (size_t k = 0; k < r->d.nscores; k++) {
                        bool seen = false;
                        size_t j;
                        json_t *v;
                        json_array_foreach(keys, j, v)
                                seen |= streq(json_string_value(v), r->d.scores[k].key);
                        if (!seen)
                                json_array_append_new(keys, json_string(r->d.scores[k].key));
                }
        }
        return keys;
}

static size_t score_values(const struct rrun *runs, const size_t *idx, size_t n, const char *key, double *out)
{
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
                const struct store_score *s = report_find_score(&runs[idx[i]].d, key);
                if (s)
                        out[m++] = s->value;
        }
        return m;
}

static bool lower_is_better(const struct group_opts *go, const char *key)
{
        for (size_t i = 0; i < go->nlower_better; i++)
                if (streq(go->lower_better[i], key))
                        return true;
        return false;
}

/* The per-run variables --explain correlates with the score. */
struct var {
        char name[96];
        double *x;              /* per run, NAN where the run lacks it */
};

static int explain_vars(const struct rrun *runs, const size_t *idx, size_t n, struct var **ret, size_t *ret_n)
{
        struct var *v = NULL;
        size_t nv = 0, cap = 0;
        int maxnode = -1;

        for (size_t i = 0; i < n; i++)
                for (size_t t = 0; t < runs[idx[i]].d.ntotals; t++)
                        if (runs[idx[i]].d.totals[t].level == LEVEL_NODE && runs[idx[i]].d.totals[t].loc > maxnode)
                                maxnode = runs[idx[i]].d.totals[t].loc;
        for (int m = 0; m < _M_MAX; m++) {
                /* system rate, each node's rate (if there are several), busiest CPU */
                for (int kind = -2; kind <= maxnode; kind++) {
                        struct var *nvar;
                        if (kind >= 0 && (maxnode < 1 || metric_table[m].scope == SCOPE_SYSTEM))
                                continue;
                        if (kind == -1 && metric_table[m].scope != SCOPE_CPU)
                                continue;
                        if (nv == cap) {
                                struct var *p = realloc(v, (cap = cap ? cap * 2 : 64) * sizeof *v);
                                if (!p)
                                        goto oom;
                                v = p;
                        }
                        nvar = &v[nv];
                        nvar->x = calloc(n, sizeof *nvar->x);
                        if (!nvar->x)
                                goto oom;
                        nv++;
                        if (kind == -2)
                                snprintf(nvar->name, sizeof nvar->name, "%s/s", metric_table[m].name);
                        else if (kind == -1)
                                snprintf(nvar->name, sizeof nvar->name, "%s/s on the busiest CPU", metric_table[m].name);
                        else
                                snprintf(nvar->name, sizeof nvar->name, "%s/s on node %d", metric_table[m].name, kind);
                        for (size_t i = 0; i < n; i++) {
                                const struct rrun *r = &runs[idx[i]];
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
                                                if (tt->level == LEVEL_NODE && tt->loc == kind &&
                                                    streq(tt->metric, metric_table[m].name))
                                                        nvar->x[i] = r->dur > 0 ? tt->value / r->dur : NAN;
                                        }
                        }
                }
        }
        /* lock wait hook: the share of CPU time waited for kernel locks */
        if (nv == cap) {
                struct var *p = realloc(v, (cap + 1) * sizeof *v);
                if (!p)
                        goto oom;
                v = p;
        }
        v[nv].x = calloc(n, sizeof *v[nv].x);
        if (!v[nv].x)
                goto oom;
        snprintf(v[nv].name, sizeof v[nv].name, "lock wait share of CPU time");
        for (size_t i = 0; i < n; i++)
                if (!locks_share(&runs[idx[i]], LEVEL_SYSTEM, 0, &v[nv].x[i]))
                        v[nv].x[i] = NAN;
        nv++;
        *ret = v;
        *ret_n = nv;
        return 0;
oom:
        for (size_t i = 0; i < nv; i++)
                free(v[i].x);
        free(v);
        return -ENOMEM;
}

struct ranked {
        const char *name;
        double rho, p;
        size_t n;
};

static int cmp_ranked(const void *a, const void *b)
{
        const struct ranked *x = a, *y = b;
        if (fabs(x->rho) != fabs(y->rho))
                return fabs(x->rho) > fabs(y->rho) ? -1 : 1;
        return x->p < y->p ? -1 : x->p > y->p;
}

/* Rank the variables by |rho| with the score key over the runs idx. */
static json_t *explain(const struct rrun *runs, const size_t *idx, size_t n, const char *score)
{
        json_t *out = json_object(), *list = json_array();
        struct var *vars = NULL;
        struct ranked *rk = NULL;
        size_t nvars = 0, nrk = 0, m = 0;
        double *y = calloc(n + 1, sizeof *y), *xs = calloc(n + 1, sizeof *xs), *ys = calloc(n + 1, sizeof *ys);
        char note[256] = "";

        json_object_set_new(out, "score", json_string(score));
        for (size_t i = 0; i < n; i++) {
                const struct store_score *s = report_find_score(&runs[idx[i]].d, score);
                y[i] = s ? s->value : NAN;
                m += s != NULL;
        }
        json_object_set_new(out, "n", json_integer((json_int_t)m));
        if (m < EXPLAIN_MIN_N) {
                snprintf(note, sizeof note,
                         "%zu run%s with %s: too few to tell which counter moves with it (at least %d are needed)", m,
                         m == 1 ? "" : "s", score, EXPLAIN_MIN_N);
                goto done;
        }
        if (!y || !xs || !ys || explain_vars(runs, idx, n, &vars, &nvars) < 0)
                goto done;
        rk = calloc(nvars + 1, sizeof *rk);
        for (size_t v = 0; rk && v < nvars; v++) {
                size_t k = 0;
                double rho, p;
                for (size_t i = 0; i < n; i++)
                        if (isfinite(y[i]) && isfinite(vars[v].x[i])) {
                                xs[k] = vars[v].x[i];
                                ys[k] = y[i];
                                k++;
                        }
                if (k < EXPLAIN_MIN_N || stats_spearman(xs, ys, k, &rho, &p) < 0)
                        continue;       /* constant, or too few */
                rk[nrk++] = (struct ranked){ .name = vars[v].name, .rho = rho, .p = p, .n = k };
        }
        if (rk)
                qsort(rk, nrk, sizeof *rk, cmp_ranked);
        for (size_t i = 0; i < nrk && i < EXPLAIN_TOP; i++)
                json_array_append_new(list, json_pack("{s:s,s:f,s:I,s:f}", "metric", rk[i].name, "rho", rk[i].rho, "n",
                                                      (json_int_t)rk[i].n, "p_value", rk[i].p));
        if (nrk == 0)
                snprintf(note, sizeof note, "no counter varies across these runs");
        else if (m < EXPLAIN_HINT_N)
                snprintf(note, sizeof note, "n=%zu is small: take the ranking as a hint, and repeat the runs to confirm", m);
done:
        json_object_set_new(out, "ranking", list);
        if (note[0])
                json_object_set_new(out, "note", json_string(note));
        for (size_t i = 0; i < nvars; i++)
                free(vars[i].x);
        free(vars);
        free(rk);
        free(y);
        free(xs);
        free(ys);
        return out;
}

static json_t *metric_group_stats(const struct rrun *runs, const size_t *idx, size_t n)
{
        json_t *o = json_object();
        double *v = calloc(n + 1, sizeof *v), *w = calloc(n + 1, sizeof *w);

        for (int m = 0; v && w && m < _M_MAX; m++) {
                size_t k = 0, kc = 0;
                struct summary s;
                json_t *jm;
                for (size_t i = 0; i < n; i++) {
                        const struct rrun *r = &runs[idx[i]];
                        if (!r->m[m].have)
                                continue;
                        v[k++] = r->m[m].per_s;
                        if (r->cpu_total > 0)
                                w[kc++] = r->m[m].total / r->cpu_total;
                }
                if (k == 0)
                        continue;
                jm = json_object();
                stats_summary(v, k, &s);
                json_object_set_new(jm, "per_s", summary_json(&s));
                if (kc == k && stats_summary(w, kc, &s) == 0)
                        json_object_set_new(jm, "per_cpu_s", summary_json(&s));
                else
                        json_object_set_new(jm, "per_cpu_s", json_pack("{s:s}", "why", "CPU time not recorded"));
                json_object_set_new(o, metric_table[m].name, jm);
        }
        free(v);
        free(w);
        return o;
}

static int cmp_change(const void *a, const void *b)
{
        double x = json_real_value(json_object_get(*(json_t *const *)a, "sort")),
               y = json_real_value(json_object_get(*(json_t *const *)b, "sort"));
        return x > y ? -1 : x < y;
}

/* g against its baseline b. */
static json_t *compare(const struct rrun *runs, const struct grp *g, const struct grp *b, const struct group_opts *go)
{
        json_t *o = json_object(), *keys = score_keys(runs, g->idx, g->n), *k, *metrics, *times = json_object();
        double *x = calloc(g->n + 1, sizeof *x), *y = calloc(b->n + 1, sizeof *y);
        json_t **mv = calloc(_M_MAX, sizeof *mv);
        size_t i, nmv = 0;
        static const char *const time_names[3] = { "wall_s", "user_s", "sys_s" };

        json_array_foreach(keys, i, k) {
                const char *key = json_string_value(k);
                size_t nx = score_values(runs, g->idx, g->n, key, x), ny = score_values(runs, b->idx, b->n, key, y);
                struct summary sx, sy;
                json_t *jo;
                double pct, p, t, df;
                const char *verdict;

                if (nx == 0 || ny == 0)
                        continue;
                stats_summary(x, nx, &sx);
                stats_summary(y, ny, &sy);
                jo = json_object();
                json_object_set_new(jo, "change_pct", report_pct_change(sy.mean, sx.mean, &pct) ? json_real(pct) : json_null());
                if (nx < 3 || ny < 3) {
                        verdict = "too few runs";
                        json_object_set_new(jo, "p_value", json_null());
                        json_object_set_new(jo, "why", json_string("fewer than 3 runs on one side"));
                } else {
                        /* both sides constant: p is 1 or 0, as the means say */
                        stats_welch(x, nx, y, ny, &p, &t, &df);
                        json_object_set_new(jo, "p_value", json_real(p));
                        if (p >= go->alpha)
                                verdict = "no significant change";
                        else if ((sx.mean > sy.mean) != lower_is_better(go, key))
                                verdict = "improvement";
                        else
                                verdict = "regression";
                }
                json_object_set_new(jo, "verdict", json_string(verdict));
                json_object_set_new(o, key, jo);
        }
        json_decref(keys);

        /* run times, where recorded: the ratio matters (sys time 20x) */
        for (int tn = 0; tn < 3; tn++) {
                size_t nx = 0, ny = 0;
                for (i = 0; i < g->n; i++)
                        if (runs[g->idx[i]].info.has_times)
                                x[nx++] = tn == 0 ? runs[g->idx[i]].info.wall_s
                                        : tn == 1 ? runs[g->idx[i]].info.user_s : runs[g->idx[i]].info.sys_s;
                for (i = 0; i < b->n; i++)
                        if (runs[b->idx[i]].info.has_times)
                                y[ny++] = tn == 0 ? runs[b->idx[i]].info.wall_s
                                        : tn == 1 ? runs[b->idx[i]].info.user_s : runs[b->idx[i]].info.sys_s;
                if (nx && ny) {
                        struct summary sx, sy;
                        stats_summary(x, nx, &sx);
                        stats_summary(y, ny, &sy);
                        json_object_set_new(times, time_names[tn],
                                            json_pack("{s:f,s:f,s:o}", "mean", sx.mean, "baseline_mean", sy.mean, "ratio",
                                                      sy.mean > 0 ? json_real(sx.mean / sy.mean) : json_null()));
                }
        }

        /* metrics: change of the mean rate, the largest first */
        for (int m = 0; mv && m < _M_MAX; m++) {
                double sx = 0, sy = 0, pct;
                size_t nx = 0, ny = 0;
                for (i = 0; i < g->n; i++)
                        if (runs[g->idx[i]].m[m].have) {
                                sx += runs[g->idx[i]].m[m].per_s;
                                nx++;
                        }
                for (i = 0; i < b->n; i++)
                        if (runs[b->idx[i]].m[m].have) {
                                sy += runs[b->idx[i]].m[m].per_s;
                                ny++;
                        }
                if (!nx || !ny || (sx == 0 && sy == 0))
                        continue;
                sx /= (double)nx;
                sy /= (double)ny;
                mv[nmv++] = json_pack("{s:s,s:f,s:f,s:o,s:f}", "metric", metric_table[m].name, "per_s", sx,
                                      "baseline_per_s", sy, "change_pct",
                                      report_pct_change(sy, sx, &pct) ? json_real(pct) : json_null(), "sort",
                                      report_pct_change(sy, sx, &pct) ? fabs(pct) : 1e300 /* new: first */);
        }
        qsort(mv, nmv, sizeof *mv, cmp_change);
        metrics = json_array();
        for (i = 0; i < nmv; i++) {
                json_object_del(mv[i], "sort");
                json_array_append_new(metrics, mv[i]);
        }
        free(mv);
        free(x);
        free(y);
        return json_pack("{s:o,s:o,s:o}", "scores", o, "times", times, "metrics", metrics);
}

int report_groups(struct rrun *runs, size_t n, const struct group_opts *go, json_t **ret_groups, json_t **ret_all)
{
        struct grp *g = calloc(n + 1, sizeof *g);
        size_t ng = 0;
        json_t *groups = json_array();

        if (!g)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                size_t k;
                for (k = 0; k < ng && !same_group(&g[k], &runs[i], go); k++)
                        ;
                if (k == ng) {
                        for (size_t t = 0; t < go->nby; t++) {
                                const char *v = tag_of(&runs[i], go->by[t]);
                                g[k].val[t] = v ? v : "";
                        }
                        g[k].idx = calloc(n, sizeof *g[k].idx);
                        if (!g[k].idx)
                                break;
                        ng++;
                }
                g[k].idx[g[k].n++] = i;
        }

        for (size_t k = 0; k < ng; k++) {
                json_t *tags = json_object(), *scores = json_object(), *keys = score_keys(runs, g[k].idx, g[k].n), *key,
                       *names = json_array();
                double *x = calloc(g[k].n + 1, sizeof *x);
                size_t i;

                for (size_t t = 0; t < go->nby; t++)
                        json_object_set_new(tags, go->by[t], g[k].val[t][0] ? json_string(g[k].val[t]) : json_null());
                json_array_foreach(keys, i, key) {
                        struct summary s;
                        size_t m = x ? score_values(runs, g[k].idx, g[k].n, json_string_value(key), x) : 0;
                        if (m == 0 || stats_summary(x, m, &s) < 0)
                                continue;
                        if ((s.has_cv && s.cv > go->cv_limit) || (s.max > 0 && s.min / s.max < go->minmax_limit))
                                g[k].high_variance = true;
                        json_object_set_new(scores, json_string_value(key), summary_json(&s));
                }
                for (i = 0; i < g[k].n; i++)
                        json_array_append_new(names, json_string(runs[g[k].idx[i]].info.name));
                g[k].json = json_pack("{s:o,s:I,s:o,s:b,s:o,s:o}", "tags", tags, "n", (json_int_t)g[k].n, "runs", names,
                                      "high_variance", g[k].high_variance, "scores", scores, "metrics",
                                      metric_group_stats(runs, g[k].idx, g[k].n));
                json_decref(keys);
                free(x);
        }

        /* baselines: the group with the baseline's values and the same
         * values of every other grouping tag */
        if (go->nbaseline)
                for (size_t k = 0; k < ng; k++) {
                        bool is_base = true;
                        size_t b;
                        for (size_t j = 0; j < go->nbaseline; j++)
                                for (size_t t = 0; t < go->nby; t++)
                                        if (streq(go->by[t], go->baseline[j].key) &&
                                            !streq(g[k].val[t], go->baseline[j].value))
                                                is_base = false;
                        if (is_base) {
                                json_object_set_new(g[k].json, "baseline", json_true());
                                continue;
                        }
                        for (b = 0; b < ng; b++) {
                                bool match = true;
                                for (size_t t = 0; t < go->nby && match; t++) {
                                        const char *want = g[k].val[t];
                                        for (size_t j = 0; j < go->nbaseline; j++)
                                                if (streq(go->by[t], go->baseline[j].key))
                                                        want = go->baseline[j].value;
                                        match = streq(g[b].val[t], want);
                                }
                                if (match)
                                        break;
                        }
                        if (b == ng) {
                                json_object_set_new(g[k].json, "vs_baseline",
                                                    json_pack("{s:s}", "why", "no baseline group with the same other tags"));
                                continue;
                        }
                        {
                                json_t *c = compare(runs, &g[k], &g[b], go), *bt = json_object();
                                for (size_t t = 0; t < go->nby; t++)
                                        json_object_set_new(bt, go->by[t], json_string(g[b].val[t]));
                                json_object_set_new(g[k].json, "baseline_tags", bt);
                                json_object_set_new(g[k].json, "vs_baseline", json_incref(json_object_get(c, "scores")));
                                json_object_set_new(g[k].json, "times_vs_baseline", json_incref(json_object_get(c, "times")));
                                json_object_set_new(g[k].json, "metrics_vs_baseline", json_incref(json_object_get(c, "metrics")));
                                json_object_set_new(g[k].json, "locks_vs_baseline",      /* lock wait hook */
                                                    locks_compare_json(runs, g[k].idx, g[k].n, g[b].idx, g[b].n));
                                json_decref(c);
                        }
                }

        /* --explain: inside each flagged group, and across all runs */
        if (go->explain) {
                size_t *all = calloc(n + 1, sizeof *all);
                json_t *keys, *key;
                size_t i;
                for (i = 0; all && i < n; i++)
                        all[i] = i;
                keys = score_keys(runs, all, all ? n : 0);
                *ret_all = json_array();
                json_array_foreach(keys, i, key)
                        if (!go->score || streq(go->score, json_string_value(key)))
                                json_array_append_new(*ret_all, explain(runs, all, n, json_string_value(key)));
                for (size_t k = 0; k < ng; k++) {
                        json_t *ex = json_array();
                        if (g[k].high_variance)
                                json_array_foreach(keys, i, key)
                                        if (!go->score || streq(go->score, json_string_value(key)))
                                                json_array_append_new(ex, explain(runs, g[k].idx, g[k].n,
                                                                                  json_string_value(key)));
                        json_object_set_new(g[k].json, "explain", ex);
                }
                json_decref(keys);
                free(all);
        } else
                *ret_all = NULL;

        for (size_t k = 0; k < ng; k++) {
                json_array_append_new(groups, g[k].json);
                free(g[k].idx);
        }
        free(g);
        *ret_groups = groups;
        return 0;
}

/* ---- tables ---- */

static void group_label(json_t *tags, char *buf, size_t len)
{
        const char *k;
        json_t *v;
        size_t o = 0;
        buf[0] = 0;
        json_object_foreach(tags, k, v)
                strbuf_appendf(buf, len, &o, "%s%s=%s", o ? " " : "", k,
                                      json_is_string(v) ? json_string_value(v) : "(none)");
}

static void fnum(json_t *v, char *buf, size_t len)
{
        if (json_is_number(v))
                format_number(json_number_value(v), buf, len);
        else
                snprintf(buf, len, "-");
}

static void print_explain(json_t *ex, const char *indent)
{
        size_t i, j;
        json_t *e, *r;

        json_array_foreach(ex, i, e) {
                printf("%sexplain %s (n=%" JSON_INTEGER_FORMAT "):", indent, json_string_value(json_object_get(e, "score")),
                       json_integer_value(json_object_get(e, "n")));
                if (json_array_size(json_object_get(e, "ranking")) == 0)
                        printf(" %s\n", json_string_value(json_object_get(e, "note")));
                else {
                        printf("\n");
                        json_array_foreach(json_object_get(e, "ranking"), j, r) {
                                double p = json_number_value(json_object_get(r, "p_value"));
                                printf("%s  %-44s rho=%+.2f  n=%" JSON_INTEGER_FORMAT "  p=%s%.3g\n", indent,
                                       json_string_value(json_object_get(r, "metric")),
                                       json_number_value(json_object_get(r, "rho")),
                                       json_integer_value(json_object_get(r, "n")), p < 0.001 ? "<" : "",
                                       p < 0.001 ? 0.001 : p);
                        }
                        if (json_object_get(e, "note"))
                                printf("%s  (%s)\n", indent, json_string_value(json_object_get(e, "note")));
                }
        }
}

void report_print_groups(json_t *groups, json_t *all, const struct group_opts *go)
{
        static const char *const cols[] = { "GROUP", "N", "SCORE", "MEAN", "MEDIAN", "STDDEV", "CV", "MIN", "MAX",
                                            "VARIANCE", "VS_BASELINE", "P", "VERDICT", NULL };
        struct libscols_table *tb = table_new(cols, "lrlrrrrrrlrrl");
        size_t i;
        json_t *g;
        char cvl[16];

        snprintf(cvl, sizeof cvl, "%.0f%%", go->cv_limit * 100);
        if (json_array_size(groups) == 0) {
                scols_unref_table(tb);
                goto explain_all;
        }
        json_array_foreach(groups, i, g) {
                char label[512], n[16];
                const char *key;
                json_t *s;
                bool any = false;

                group_label(json_object_get(g, "tags"), label, sizeof label);
                snprintf(n, sizeof n, "%" JSON_INTEGER_FORMAT, json_integer_value(json_object_get(g, "n")));
                json_object_foreach(json_object_get(g, "scores"), key, s) {
                        char mean[32], med[32], sd[32], cv[32] = "-", mn[32], mx[32], ch[32] = "", p[32] = "";
                        json_t *vb = json_object_get(json_object_get(g, "vs_baseline"), key);
                        fnum(json_object_get(s, "mean"), mean, sizeof mean);
                        fnum(json_object_get(s, "median"), med, sizeof med);
                        fnum(json_object_get(s, "stddev"), sd, sizeof sd);
                        if (json_is_number(json_object_get(s, "cv")))
                                snprintf(cv, sizeof cv, "%.1f%%", json_number_value(json_object_get(s, "cv")) * 100);
                        fnum(json_object_get(s, "min"), mn, sizeof mn);
                        fnum(json_object_get(s, "max"), mx, sizeof mx);
                        if (json_is_number(json_object_get(vb, "change_pct")))
                                snprintf(ch, sizeof ch, "%+.1f%%", json_number_value(json_object_get(vb, "change_pct")));
                        if (json_is_number(json_object_get(vb, "p_value")))
                                snprintf(p, sizeof p, "%.3g", json_number_value(json_object_get(vb, "p_value")));
                        table_row(tb, any ? "" : label, any ? "" : n, key, mean, med, sd, cv, mn, mx,
                                  json_is_true(json_object_get(g, "high_variance")) ? "HIGH VARIANCE" : "",
                                  ch, p,
                                  json_is_true(json_object_get(g, "baseline")) ? "(baseline)"
                                  : vb ? json_string_value(json_object_get(vb, "verdict")) : "");
                        any = true;
                }
                if (!any)
                        table_row(tb, label, n, "(no scores)", "", "", "", "", "", "", "", "", "", "");
        }
        printf("Groups (HIGH VARIANCE: CV above %s or min/max below %.2f; verdicts at p < %.2g, Welch's t-test;\n"
               "higher scores are better%s):\n",
               cvl, go->minmax_limit, go->alpha, go->nlower_better ? " except those given to --lower-is-better" : "");
        table_print(tb);

        json_array_foreach(groups, i, g) {
                json_t *mv = json_object_get(g, "metrics_vs_baseline"), *tv = json_object_get(g, "times_vs_baseline"),
                       *m;
                char label[512], blabel[512];
                size_t j;
                const char *tk;
                json_t *t;
                bool header = false;

                group_label(json_object_get(g, "tags"), label, sizeof label);
                if (json_array_size(mv) || json_object_size(tv)) {
                        group_label(json_object_get(g, "baseline_tags"), blabel, sizeof blabel);
                        printf("\n%s vs %s:\n", label, blabel);
                        header = true;
                        json_object_foreach(tv, tk, t)
                                if (json_is_number(json_object_get(t, "ratio")))
                                        printf("  %-6s %.2fx (%.3fs vs %.3fs)\n", tk,
                                               json_number_value(json_object_get(t, "ratio")),
                                               json_number_value(json_object_get(t, "mean")),
                                               json_number_value(json_object_get(t, "baseline_mean")));
                        json_array_foreach(mv, j, m) {
                                char a[32], b[32];
                                if (j >= 8)
                                        break;
                                format_number(json_number_value(json_object_get(m, "per_s")), a, sizeof a);
                                format_number(json_number_value(json_object_get(m, "baseline_per_s")), b, sizeof b);
                                if (json_is_number(json_object_get(m, "change_pct")))
                                        printf("  %-26s %+9.1f%%  (%s/s vs %s/s)\n",
                                               json_string_value(json_object_get(m, "metric")),
                                               json_number_value(json_object_get(m, "change_pct")), a, b);
                                else
                                        printf("  %-26s %10s  (%s/s vs 0)\n", json_string_value(json_object_get(m, "metric")),
                                               "new", a);
                        }
                        locks_print_compare(json_object_get(g, "locks_vs_baseline"));  /* lock wait hook */
                }
                if (json_array_size(json_object_get(g, "explain"))) {
                        if (!header)
                                printf("\n%s:\n", label);
                        print_explain(json_object_get(g, "explain"), "  ");
                }
        }
explain_all:
        if (all) {
                printf("%sAcross all runs in range:\n", json_array_size(groups) ? "\n" : "");
                print_explain(all, "  ");
        }
}
