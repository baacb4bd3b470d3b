/* groups.c - report --group-by, --baseline and --explain, printed: the
 * groups as JSON (doc/DESIGN.md), CSV rows and tables.  The numbers come from
 * analysis_groups() (analysis-groups.c); nothing is computed here.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "groups.h"
#include "locks.h"
#include "macro.h"
#include "output.h"
#include "units.h"

/* ---- JSON ---- */

static json_t *summary_json(const struct summary *s)
{
        return json_pack("{s:I,s:o,s:o,s:o,s:o,s:o,s:o}", "n", (json_int_t)s->n, "mean", json_number(s->mean), "median",
                         json_number(s->median), "stddev", s->has_stddev ? json_real(s->stddev) : json_null(), "cv",
                         s->has_cv ? json_real(s->cv) : json_null(), "min", json_number(s->min), "max",
                         json_number(s->max));
}

json_t *groups_explain_json(const struct explain_result *e, size_t n)
{
        json_t *a = json_array();

        for (size_t i = 0; i < n; i++) {
                json_t *list = json_array(), *o;
                for (size_t k = 0; k < e[i].nrows; k++) {
                        const struct explain_row *w = &e[i].rows[k];
                        json_t *jr = json_pack("{s:s,s:f,s:I,s:f,s:s}", "metric", w->name, "rho", w->rho, "n",
                                               (json_int_t)w->n, "p_value", w->p_value, "ranked_by",
                                               explain_view_name[w->ranked_by]);
                        json_object_set_new(jr, "rho_per_score", w->has_per_score ? json_real(w->rho_per_score) : json_null());
                        json_object_set_new(jr, "p_value_per_score",
                                            w->has_per_score ? json_real(w->p_per_score) : json_null());
                        if (!w->has_per_score)
                                json_object_set_new(jr, "why", json_string("a score is not above 0: no rate per unit of it"));
                        json_array_append_new(list, jr);
                }
                o = json_pack("{s:s,s:I,s:o}", "score", e[i].score, "n", (json_int_t)e[i].n, "ranking", list);
                if (e[i].note[0])
                        json_object_set_new(o, "note", json_string(e[i].note));
                json_array_append_new(a, o);
        }
        return a;
}

json_t *groups_pools_json(const struct pools *p)
{
        json_t *o = json_object();

        for (size_t t = 0; t < p->ntags; t++) {
                json_t *vals = json_object();
                for (size_t k = 0; k < p->tags[t].nv; k++)
                        json_object_set_new(vals, p->tags[t].v[k].value, json_integer((json_int_t)p->tags[t].v[k].runs));
                json_object_set_new(o, p->tags[t].key, vals);
        }
        return o;
}

void groups_pools_line(const char *label, const struct pools *p, const char *option, char *buf, size_t len)
{
        size_t o = 0, nv = 0, i = 0;

        buf[0] = 0;
        if (p->ntags == 0)
                return;
        for (size_t t = 0; t < p->ntags; t++)
                nv += p->tags[t].nv;
        strbuf_appendf(buf, len, &o, "%s pools", label);
        for (size_t t = 0; t < p->ntags; t++)
                for (size_t k = 0; k < p->tags[t].nv; k++, i++)
                        strbuf_appendf(buf, len, &o, "%s %s=%s (%zu run%s)", i == 0 ? "" : i + 1 == nv ? " and" : ",",
                                       p->tags[t].key, p->tags[t].v[k].value, p->tags[t].v[k].runs,
                                       p->tags[t].v[k].runs == 1 ? "" : "s");
        if (option)
                strbuf_appendf(buf, len, &o, ": add --tag or %s %s", option, p->tags[0].key);
        else
                strbuf_appendf(buf, len, &o, ": add --tag %s=%s", p->tags[0].key, p->tags[0].v[0].value);
}

static json_t *metrics_json(const struct group *g)
{
        json_t *o = json_object();

        for (int m = 0; m < _M_MAX; m++) {
                const struct group_metric *gm = &g->metrics[m];
                json_t *jm;
                if (!gm->have)
                        continue;
                if (gm->is_max) {       /* a maximum: the largest, no rate */
                        json_object_set_new(o, metric_table[m].name,
                                            json_pack("{s:o,s:n,s:n,s:s}", "max", json_number(gm->max), "per_s",
                                                      "per_cpu_s", "why", "a maximum, not a count: no rate"));
                        continue;
                }
                jm = json_pack("{s:o}", "per_s", summary_json(&gm->per_s));
                json_object_set_new(jm, "per_cpu_s", gm->has_per_cpu_s ? summary_json(&gm->per_cpu_s)
                                                                       : json_pack("{s:s}", "why", "CPU time not recorded"));
                json_object_set_new(o, metric_table[m].name, jm);
        }
        return o;
}

/* g against its baseline: into o as "baseline_tags", "vs_baseline",
 * "times_vs_baseline" and (not csv) "metrics_vs_baseline". */
static void vs_baseline_json(json_t *o, const struct group_result *gr, const struct group *g, bool csv)
{
        const struct group *b = &gr->groups[g->baseline];
        json_t *bt = json_object(), *vs = json_object(), *times = json_object(), *metrics = json_array();

        for (size_t t = 0; t < gr->go->nby; t++)
                json_object_set_new(bt, gr->go->by[t], json_string(b->val[t]));
        for (size_t k = 0; k < g->nvs; k++) {
                const struct score_verdict *v = &g->vs[k];
                json_t *jo = json_pack("{s:o,s:o}", "change_pct", v->has_change ? json_real(v->change_pct) : json_null(),
                                       "p_value", v->has_p ? json_real(v->p_value) : json_null());
                if (v->why)
                        json_object_set_new(jo, "why", json_string(v->why));
                json_object_set_new(jo, "verdict", json_string(v->verdict));
                json_object_set_new(vs, v->key, jo);
        }
        for (int tn = 0; tn < _RUN_TIME_MAX; tn++) {
                const struct time_ratio *tr = &g->times[tn];
                if (tr->have)
                        json_object_set_new(times, analysis_run_time_name[tn],
                                            json_pack("{s:f,s:f,s:o}", "mean", tr->mean, "baseline_mean",
                                                      tr->baseline_mean, "ratio",
                                                      tr->has_ratio ? json_real(tr->ratio) : json_null()));
        }
        for (size_t i = 0; i < g->nchanges; i++) {
                static const char *const rank[] = { "significant", "not significant", "untested", "maximum",
                                                    "negligible" };
                const struct metric_change *c = &g->changes[i];
                bool mx = c->rank == CHANGE_MAXIMUM;
                json_t *jc = json_pack("{s:s,s:o,s:o,s:o,s:o,s:s}", "metric", metric_table[c->metric].name, "per_s",
                                       mx ? json_null() : json_real(c->per_s), "baseline_per_s",
                                       mx ? json_null() : json_real(c->baseline_per_s), "change_pct",
                                       c->has_change ? json_real(c->change_pct) : json_null(), "p_value",
                                       c->has_p ? json_real(c->p_value) : json_null(), "rank", rank[c->rank]);
                if (mx) {
                        json_object_set_new(jc, "max", json_number(c->max));
                        json_object_set_new(jc, "baseline_max", json_number(c->baseline_max));
                }
                if (!c->has_p)
                        json_object_set_new(jc, "why", json_string(c->rank == CHANGE_NEGLIGIBLE
                                                                           ? "both rates below the negligible floor"
                                                                   : mx ? "a maximum: the largest against the largest, "
                                                                          "never tested"
                                                                        : "fewer than 2 runs on a side"));
                json_array_append_new(metrics, jc);
        }
        json_object_set_new(o, "baseline_tags", bt);
        json_object_set_new(o, "vs_baseline", vs);
        json_object_set_new(o, "times_vs_baseline", times);
        if (!csv)
                json_object_set_new(o, "metrics_vs_baseline", metrics);
        else
                json_decref(metrics);
        if (!csv)                       /* which lock got worse */
                json_object_set_new(o, "locks_vs_baseline", locks_changes_json(g->lock_changes, g->nlock_changes));
}

static json_t *group_json(const struct group_result *gr, const struct group *g, const struct analysis_run *runs,
                          bool csv)
{
        const struct group_opts *go = gr->go;
        json_t *o, *tags = json_object(), *scores = json_object();

        for (size_t t = 0; t < go->nby; t++)
                json_object_set_new(tags, go->by[t], g->val[t][0] ? json_string(g->val[t]) : json_null());
        for (size_t k = 0; k < g->nscores; k++)
                json_object_set_new(scores, g->scores[k].key, summary_json(&g->scores[k].s));
        o = json_pack("{s:o,s:I}", "tags", tags, "n", (json_int_t)g->n);
        if (!csv) {
                json_t *names = json_array();
                for (size_t i = 0; i < g->n; i++)
                        json_array_append_new(names, json_string(runs[g->idx[i]].info.name));
                json_object_set_new(o, "runs", names);
        }
        if (g->pools.ntags && !csv)
                json_object_set_new(o, "pools", groups_pools_json(&g->pools));
        json_object_set_new(o, "high_variance", json_boolean(g->high_variance));
        json_object_set_new(o, "scores", scores);
        if (!csv)
                json_object_set_new(o, "metrics", metrics_json(g));
        if (g->is_baseline)
                json_object_set_new(o, "baseline", json_true());
        else if (g->has_baseline)
                vs_baseline_json(o, gr, g, csv);
        else if (go->nbaseline)
                json_object_set_new(o, "vs_baseline", json_pack("{s:s}", "why", "no baseline group with the same other tags"));
        if (go->explain && !csv)
                json_object_set_new(o, "explain", groups_explain_json(g->explain, g->nexplain));
        return o;
}

json_t *groups_json(const struct group_result *gr, const struct analysis_run *runs, bool csv)
{
        json_t *a = json_array();

        for (size_t k = 0; gr && k < gr->ngroups; k++)
                json_array_append_new(a, group_json(gr, &gr->groups[k], runs, csv));
        return a;
}

/* ---- tables ---- */

void groups_label(const struct group_result *gr, const struct group *g, char *buf, size_t len)
{
        size_t o = 0;

        buf[0] = 0;
        for (size_t t = 0; t < gr->go->nby; t++)
                strbuf_appendf(buf, len, &o, "%s%s=%s", o ? " " : "", gr->go->by[t], g->val[t][0] ? g->val[t] : "(none)");
}

/* The baseline's tags: its values as they are, even "". */
static void baseline_label(const struct group_result *gr, const struct group *b, char *buf, size_t len)
{
        size_t o = 0;

        buf[0] = 0;
        for (size_t t = 0; t < gr->go->nby; t++)
                strbuf_appendf(buf, len, &o, "%s%s=%s", o ? " " : "", gr->go->by[t], b->val[t]);
}

static void print_explain(const struct explain_result *e, size_t n, const char *indent)
{
        for (size_t i = 0; i < n; i++) {
                printf("%sexplain %s (n=%zu):", indent, e[i].score, e[i].n);
                if (e[i].nrows == 0) {
                        printf(" %s\n", e[i].note);
                        continue;
                }
                printf(" ranked by the weaker of rho per second and rho per unit of %s\n", e[i].score);
                for (size_t k = 0; k < e[i].nrows; k++) {
                        const struct explain_row *w = &e[i].rows[k];
                        double p = w->ranked_by == EXPLAIN_PER_S ? w->p_value : w->p_per_score;
                        char ws[32] = "-";
                        if (w->has_per_score)
                                snprintf(ws, sizeof ws, "%+.2f", w->rho_per_score);
                        printf("%s  %-44s rho/s=%+.2f  rho/%s=%s  n=%zu  p=%s%.3g  (ranked %s)\n", indent, w->name,
                               w->rho, e[i].score, ws, w->n, p < 0.001 ? "<" : "", p < 0.001 ? 0.001 : p,
                               explain_view_name[w->ranked_by]);
                }
                if (e[i].note[0])
                        printf("%s  (%s)\n", indent, e[i].note);
        }
}

static void print_group_rows(struct libscols_table *tb, const struct group_result *gr, const struct group *g)
{
        char label[512], n[16];

        groups_label(gr, g, label, sizeof label);
        snprintf(n, sizeof n, "%zu", g->n);
        for (size_t k = 0; k < g->nscores; k++) {
                const struct summary *s = &g->scores[k].s;
                const struct score_verdict *vb = g->has_baseline ? group_find_verdict(g, g->scores[k].key) : NULL;
                char mean[32], med[32], sd[32] = "-", cv[32] = "-", mn[32], mx[32], ch[32] = "", p[32] = "";

                format_number(s->mean, mean, sizeof mean);
                format_number(s->median, med, sizeof med);
                if (s->has_stddev)
                        format_number(s->stddev, sd, sizeof sd);
                if (s->has_cv)
                        snprintf(cv, sizeof cv, "%.1f%%", s->cv * 100);
                format_number(s->min, mn, sizeof mn);
                format_number(s->max, mx, sizeof mx);
                if (vb && vb->has_change)
                        format_pct(vb->change_pct, ch, sizeof ch);
                if (vb && vb->has_p)
                        snprintf(p, sizeof p, "%.3g", vb->p_value);
                table_row(tb, k ? "" : label, k ? "" : n, g->scores[k].key, mean, med, sd, cv, mn, mx,
                          g->high_variance ? "HIGH VARIANCE" : "", ch, p,
                          g->is_baseline ? "(baseline)" : vb ? vb->verdict : "");
        }
        if (g->nscores == 0)
                table_row(tb, label, n, "(no scores)", "", "", "", "", "", "", "", "", "", "");
}

/* The metrics' changes as ranked (analysis-changes.c): significant ones
 * by |t|, then the rest, at most 8; each maximum; the negligible ones on
 * one line. */
static void print_changes(const struct group *g)
{
        size_t shown = 0, nneg = 0;

        for (size_t j = 0; j < g->nchanges; j++) {
                const struct metric_change *c = &g->changes[j];
                char a[32], b[32], pct[32], p[48];
                if (c->rank == CHANGE_NEGLIGIBLE) {
                        nneg++;
                        continue;
                }
                /* at most 8 rates; a maximum is a line of its own kind */
                if (c->rank != CHANGE_MAXIMUM && shown++ >= 8)
                        continue;
                if (c->has_change)
                        format_pct(c->change_pct, pct, sizeof pct);
                else
                        snprintf(pct, sizeof pct, "new");
                if (c->rank == CHANGE_MAXIMUM) {        /* in its unit, never per second */
                        units_total(c->metric, c->max, a, sizeof a);
                        units_total(c->metric, c->baseline_max, b, sizeof b);
                        printf("  %-26s %10s  (max %s vs %s)  a maximum: not tested\n", metric_table[c->metric].name,
                               pct, a, b);
                        continue;
                }
                units_rate(c->metric, c->per_s, false, a, sizeof a);
                units_rate(c->metric, c->baseline_per_s, false, b, sizeof b);
                if (c->has_p)
                        snprintf(p, sizeof p, "p%s%.2g%s", c->p_value < 0.001 ? "<" : "=",
                                 c->p_value < 0.001 ? 0.001 : c->p_value,
                                 c->rank == CHANGE_SIGNIFICANT ? "" : " (not significant)");
                else
                        snprintf(p, sizeof p, "untested: under 2 runs a side");
                printf("  %-26s %10s  (%s vs %s)  %s\n", metric_table[c->metric].name, pct, a, b, p);
        }
        if (nneg) {
                printf("  negligible (below %g/s, or %g ms/s for times, on both sides):", ANALYSIS_NEGLIGIBLE_PER_S,
                       ANALYSIS_NEGLIGIBLE_CPU_S * 1e3);
                for (size_t j = 0, k = 0; j < g->nchanges; j++)
                        if (g->changes[j].rank == CHANGE_NEGLIGIBLE)
                                printf("%s %s", k++ ? "," : "", metric_table[g->changes[j].metric].name);
                printf("\n");
        }
}

/* A group against its baseline, and its explanations. */
static void print_group_detail(const struct group_result *gr, const struct group *g)
{
        char label[512], blabel[512];
        bool header = false, any_time = false;

        groups_label(gr, g, label, sizeof label);
        for (int tn = 0; tn < _RUN_TIME_MAX; tn++)
                any_time |= g->times[tn].have;
        if (g->has_baseline && (g->nchanges || any_time)) {
                baseline_label(gr, &gr->groups[g->baseline], blabel, sizeof blabel);
                printf("\n%s vs %s:\n", label, blabel);
                header = true;
                for (int tn = 0; tn < _RUN_TIME_MAX; tn++) {
                        const struct time_ratio *tr = &g->times[tn];
                        if (tr->have && tr->has_ratio)
                                printf("  %-6s %.2fx (%.3fs vs %.3fs)\n", analysis_run_time_name[tn], tr->ratio, tr->mean,
                                       tr->baseline_mean);
                }
                print_changes(g);
                locks_print_changes(g->lock_changes, g->nlock_changes);
        }
        if (g->nexplain) {
                if (!header)
                        printf("\n%s:\n", label);
                print_explain(g->explain, g->nexplain, "  ");
        }
}

void groups_print(const struct group_result *gr)
{
        static const char *const cols[] = { "GROUP", "N", "SCORE", "MEAN", "MEDIAN", "STDDEV", "CV", "MIN", "MAX",
                                            "VARIANCE", "VS_BASELINE", "P", "VERDICT", NULL };
        const struct group_opts *go = gr->go;

        if (gr->ngroups) {
                struct libscols_table *tb = table_new(cols, "lrlrrrrrrlrrl");
                char cvl[16];

                snprintf(cvl, sizeof cvl, "%.0f%%", go->cv_limit * 100);
                for (size_t k = 0; k < gr->ngroups; k++)
                        print_group_rows(tb, gr, &gr->groups[k]);
                printf("Groups (HIGH VARIANCE: CV above %s or min/max below %.2f; verdicts at p < %.2g, Welch's t-test;\n"
                       "higher scores are better%s):\n",
                       cvl, go->minmax_limit, go->alpha,
                       go->nlower_better ? " except those given to --lower-is-better or recorded lower-is-better"
                                         : " except those recorded lower-is-better with the runs");
                table_print(tb);
                for (size_t k = 0; k < gr->ngroups; k++) {
                        char label[512], line[1024];
                        groups_label(gr, &gr->groups[k], label, sizeof label);
                        groups_pools_line(label, &gr->groups[k].pools, "--group-by", line, sizeof line);
                        if (line[0])
                                printf("%s\n", line);
                }
                for (size_t k = 0; k < gr->ngroups; k++)
                        print_group_detail(gr, &gr->groups[k]);
        }
        if (gr->has_all) {
                printf("%sAcross all runs in range:\n", gr->ngroups ? "\n" : "");
                print_explain(gr->all, gr->nall, "  ");
        }
}
