/* explain-text.c - explain's result as people and scripts read it: the
 * summary paragraph, the tables, the JSON document, the one or two lines
 * report gives a group; and the verb. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "explain.h"
#include "output.h"
#include "proto.h"
#include "verbs.h"


static json_t *causes_json(const struct explain_run_result *r);

/* ---- summary ---- */

static void fmt_secs(double s, char *buf, size_t len)
{
        if (s < 60)
                snprintf(buf, len, "%.*fs", s < 10 ? 1 : 0, s);
        else if (s < 3600)
                snprintf(buf, len, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
        else
                snprintf(buf, len, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
}

static void fmt_ratio(double r, char *buf, size_t len)
{
        if (r >= 10)
                snprintf(buf, len, "%.0fx", r);
        else if (r >= 0.1)
                snprintf(buf, len, "%.1fx", r);
        else
                snprintf(buf, len, "%.2gx", r);
}

void explain_run_format_cpus(const int *c, size_t n, char *buf, size_t len)
{
        size_t o = 0;
        buf[0] = 0;
        for (size_t i = 0; i < n;) {
                size_t j = i;
                while (j + 1 < n && c[j + 1] == c[j] + 1)
                        j++;
                if (j > i)
                        strbuf_appendf(buf, len, &o, "%s%d-%d", o ? "," : "", c[i], c[j]);
                else
                        strbuf_appendf(buf, len, &o, "%s%d", o ? "," : "", c[i]);
                i = j + 1;
        }
}

static void place_text(char *buf, size_t len, size_t *o, const int *cpus, size_t ncpus, const int *nodes,
                       size_t nnodes)
{
        char c[256], n[128];
        if (ncpus == 0)
                return;
        explain_run_format_cpus(cpus, ncpus, c, sizeof c);
        explain_run_format_cpus(nodes, nnodes, n, sizeof n);
        strbuf_appendf(buf, len, o, " on CPU%s %s", ncpus > 1 ? "s" : "", c);
        if (nnodes)
                strbuf_appendf(buf, len, o, " (node%s %s)", nnodes > 1 ? "s" : "", n);
}

int explain_run_summary(const struct explain_run_result *res, char **ret)
{
        size_t len = 8192, o = 0;
        char *b = malloc(len), t1[32], t2[32];

        if (!b)
                return -ENOMEM;
        b[0] = 0;
        /* the first line: the causes, largest first */
        if (res->ncauses == 0)
                strbuf_appendf(b, len, &o, "No clear cause: no counter departs from the siblings' range by more than "
                                            "the floors (1%% of the run's CPU-seconds, 1.25x their highest, 3 spreads).");
        for (size_t i = 0; i < res->ncauses; i++) {
                const char *t = res->causes[i].text;
                /* "Then: a page-fault storm", but "CPU" stays */
                bool lower = i && t[0] >= 'A' && t[0] <= 'Z' && ((t[1] >= 'a' && t[1] <= 'z') || t[1] == ' ');
                strbuf_appendf(b, len, &o, "%s%c%s%s", i == 1 ? " Then: " : i ? "; " : "",
                               lower ? t[0] - 'A' + 'a' : t[0], t[0] ? t + 1 : "", i + 1 == res->ncauses || i == 0 ? "." : "");
        }
        if (res->others_words[0])
                strbuf_appendf(b, len, &o, " The run's %s.", res->others_words);
        if (res->nctx) {
                strbuf_appendf(b, len, &o, " Context differs from its siblings:");
                for (size_t i = 0; i < res->nctx; i++) {
                        const struct explain_run_ctx *x = &res->ctx[i];
                        strbuf_appendf(b, len, &o, "%s %s is %s%s%s here,", i ? ";" : "", x->key, x->run ? "'" : "",
                                       x->run ? x->run : "not recorded", x->run ? "'" : "");
                        for (size_t k = 0; k < res->nsib; k++) {
                                bool first = true;
                                for (size_t j = 0; j < k; j++)
                                        first &= !(x->sib[j] && x->sib[k] ? streq(x->sib[j], x->sib[k])
                                                                            : x->sib[j] == x->sib[k]);
                                if (first)
                                        strbuf_appendf(b, len, &o, "%s %s%s%s", k ? " or" : "", x->sib[k] ? "'" : "",
                                                       x->sib[k] ? x->sib[k] : "not recorded", x->sib[k] ? "'" : "");
                        }
                        strbuf_appendf(b, len, &o, " in the siblings");
                }
                strbuf_appendf(b, len, &o, ".");
        }
        strbuf_appendf(b, len, &o, " Against its %zu sibling%s (", res->nsib, res->nsib == 1 ? "" : "s");
        for (size_t k = 0; k < res->nsib && k < 4; k++)
                strbuf_appendf(b, len, &o, "%s%s", k ? ", " : "", res->siblings[k]);
        strbuf_appendf(b, len, &o, "%s).", res->nsib > 4 ? ", ..." : "");
        for (size_t i = 0; i < res->ncounters && res->ncauses; i++) {
                const struct explain_run_counter *c = &res->counters[i];
                if (!streq(c->key, res->causes[0].metrics[0]) || c->consistent < 0)
                        continue;
                strbuf_appendf(b, len, &o,
                               " The lowest-scoring run has the %s %s, the highest-scoring the %s: %s across "
                               "%zu of %zu runs (a hint from %zu runs, not a test).",
                               c->direction < 0 ? "most" : "least", c->name, c->direction < 0 ? "least" : "most",
                               c->consistent ? "consistent" : "consistent only", c->agree, c->nruns, c->nruns);
        }
        bool place_of_cause = false;
        for (size_t q = 0; res->ncauses && res->place_metric >= 0 && q < res->causes[0].nmetrics; q++)
                place_of_cause |= streq(res->causes[0].metrics[q], metric_table[res->place_metric].name);
        if (place_of_cause && res->ncpus) {
                strbuf_appendf(b, len, &o, " Over the whole run the difference in %s is",
                               metric_table[res->place_metric].name);
                place_text(b, len, &o, res->cpus, res->ncpus, res->nodes, res->nnodes);
                strbuf_appendf(b, len, &o, ".");
        }
        if (!res->have_series)
                strbuf_appendf(b, len, &o, " No time analysis: %s.", res->phases_why);
        else if (res->nphases == 0)
                strbuf_appendf(b, len, &o, " In time: no phase where it departs from its siblings at the same "
                                            "elapsed time.");
        for (size_t i = 0; i < res->nphases; i++) {
                const struct explain_run_phase *p = &res->phases[i];
                fmt_secs(p->start_s, t1, sizeof t1);
                fmt_secs(p->dur_s, t2, sizeof t2);
                strbuf_appendf(b, len, &o, " From +%s for %s (%.0f%% of the run):", t1, t2,
                               res->run_dur_s > 0 ? 100 * p->dur_s / res->run_dur_s : 0);
                for (size_t q = 0; q < p->nm && q < 3; q++) {
                        fmt_ratio(p->m[q].ratio, t1, sizeof t1);
                        strbuf_appendf(b, len, &o, "%s %s %s%s", q ? "," : "", metric_table[p->m[q].metric].name, t1,
                                       q == 0 ? " the siblings'" : "");
                        /* "on node 1", unless the place below says just that */
                        if (p->m[q].node >= 0 && !(p->nnodes == 1 && p->nodes[0] == p->m[q].node))
                                strbuf_appendf(b, len, &o, " on node %d", p->m[q].node);
                }
                place_text(b, len, &o, p->cpus, p->ncpus, p->nodes, p->nnodes);
                strbuf_appendf(b, len, &o, ".");
        }
        *ret = b;
        return 0;
}

void explain_run_brief(const struct explain_run_result *r, char *line1, size_t len1, char *line2, size_t len2)
{
        size_t o = 0;
        char t[32];

        line1[0] = line2[0] = 0;
        strbuf_appendf(line1, len1, &o, "%s against the other %zu:", r->run, r->nsib);
        for (size_t i = 0; i < r->nctx && i < 2; i++)
                strbuf_appendf(line1, len1, &o, " %s %s here;", r->ctx[i].key, r->ctx[i].run ? r->ctx[i].run : "(none)");
        if (r->ncauses == 0)
                strbuf_appendf(line1, len1, &o, " no clear cause");
        for (size_t i = 0; i < r->ncauses && i < 2; i++)
                strbuf_appendf(line1, len1, &o, "%s %s", i ? ";" : "", r->causes[i].text);
        if (r->nphases) {
                const struct explain_run_phase *best = &r->phases[0];
                char c[256], n[64], t2[32];
                size_t o2 = 0;
                /* the phase whose lead counter moved most */
                for (size_t i = 1; i < r->nphases; i++)
                        if (r->phases[i].nm && best->nm &&
                            fabs(log(r->phases[i].m[0].ratio)) > fabs(log(best->m[0].ratio)))
                                best = &r->phases[i];
                fmt_secs(best->start_s, t, sizeof t);
                fmt_secs(best->dur_s, t2, sizeof t2);
                strbuf_appendf(line2, len2, &o2, "phase from +%s for %s:", t, t2);
                for (size_t q = 0; q < best->nm && q < 2; q++) {
                        fmt_ratio(best->m[q].ratio, t, sizeof t);
                        strbuf_appendf(line2, len2, &o2, "%s %s %s", q ? "," : "", metric_table[best->m[q].metric].name, t);
                        if (best->m[q].node >= 0)
                                strbuf_appendf(line2, len2, &o2, " on node %d", best->m[q].node);
                }
                if (best->ncpus) {
                        explain_run_format_cpus(best->cpus, best->ncpus, c, sizeof c);
                        explain_run_format_cpus(best->nodes, best->nnodes, n, sizeof n);
                        strbuf_appendf(line2, len2, &o2, " on CPU%s %s%s%s%s", best->ncpus > 1 ? "s" : "", c,
                                       best->nnodes ? " (node " : "", best->nnodes ? n : "", best->nnodes ? ")" : "");
                }
                if (r->nphases > 1)
                        strbuf_appendf(line2, len2, &o2, "; %zu more phase%s", r->nphases - 1, r->nphases > 2 ? "s" : "");
        }
}

/* ---- JSON ---- */

static json_t *ints_json(const int *v, size_t n)
{
        json_t *a = json_array();
        for (size_t i = 0; i < n; i++)
                json_array_append_new(a, json_integer(v[i]));
        return a;
}

json_t *explain_run_json(const struct explain_run_result *r)
{
        json_t *doc = json_object(), *sib = json_array(), *ctx = json_array(), *cs = json_array(), *ph = json_array();

        for (size_t k = 0; k < r->nsib; k++)
                json_array_append_new(sib, json_string(r->siblings[k]));
        for (size_t i = 0; i < r->nctx; i++) {
                json_t *per = json_object();
                for (size_t k = 0; k < r->nsib; k++)
                        json_object_set_new(per, r->siblings[k], r->ctx[i].sib[k] ? json_string(r->ctx[i].sib[k]) : json_null());
                json_array_append_new(ctx, json_pack("{s:s,s:o,s:o}", "key", r->ctx[i].key, "run",
                                                     r->ctx[i].run ? json_string(r->ctx[i].run) : json_null(), "siblings",
                                                     per));
        }
        for (size_t i = 0; i < r->ncounters; i++) {
                const struct explain_run_counter *c = &r->counters[i];
                json_t *o = json_pack("{s:s,s:o,s:o,s:o,s:o}", "metric", c->key, "run_rate",
                                      json_number(c->run_rate), "siblings_min", json_number(c->sib_min), "siblings_max",
                                      json_number(c->sib_max), "score", json_real(c->score));
                json_object_set_new(o, "consistent", c->consistent < 0 ? json_null() : json_boolean(c->consistent));
                if (c->consistent < 0)
                        json_object_set_new(o, "consistent_why", json_string(r->score_key ? "the runs lack the score"
                                                                                            : "the run has no score"));
                else {
                        json_object_set_new(o, "agree", json_integer((json_int_t)c->agree));
                        json_object_set_new(o, "n", json_integer((json_int_t)c->nruns));
                        json_object_set_new(o, "direction", json_string(c->direction < 0 ? "more with a lower score"
                                                                                         : "more with a higher score"));
                }
                json_object_set_new(o, "part", json_string(c->part == EXPLAIN_MACHINE ? "machine" : c->part == EXPLAIN_OWN ? "own" : "everything_else"));
                json_object_set_new(o, "excess_ratio", json_real(exp(c->excess)));
                json_object_set_new(o, "spread", json_real(c->spread));
                json_object_set_new(o, "spread_from", json_string(c->spread_from));
                if (c->has_per_score) {
                        json_object_set_new(o, "run_per_score", json_number(c->run_per_score));
                        json_object_set_new(o, "siblings_per_score_min", json_number(c->sib_ps_min));
                        json_object_set_new(o, "siblings_per_score_max", json_number(c->sib_ps_max));
                } else {
                        json_object_set_new(o, "run_per_score", json_null());
                        json_object_set_new(o, "why", json_string("no score to divide by"));
                }
                json_object_set_new(o, "family", json_string(explain_family_name[c->family]));
                json_object_set_new(o, "excess_per_s", json_real(c->excess_rate));
                json_object_set_new(o, "cost_s", json_real(c->cost_s));
                json_object_set_new(o, "share", json_real(c->share));
                json_object_set_new(o, "passes", json_boolean(c->passes));
                json_array_append_new(cs, o);
        }
        for (size_t i = 0; i < r->nphases; i++) {
                const struct explain_run_phase *p = &r->phases[i];
                json_t *ms = json_array();
                for (size_t q = 0; q < p->nm; q++)
                        json_array_append_new(ms, json_pack("{s:s,s:f,s:o}", "metric", metric_table[p->m[q].metric].name,
                                                            "ratio", p->m[q].ratio, "node",
                                                            p->m[q].node >= 0 ? json_integer(p->m[q].node) : json_null()));
                json_array_append_new(ph, json_pack("{s:f,s:f,s:f,s:o,s:o,s:o,s:o}", "start_offset_s", p->start_s,
                                                    "duration_s", p->dur_s, "share",
                                                    r->run_dur_s > 0 ? p->dur_s / r->run_dur_s : 0.0, "metrics", ms,
                                                    "cpus", ints_json(p->cpus, p->ncpus), "nodes",
                                                    ints_json(p->nodes, p->nnodes), "place_metric",
                                                    p->place_metric >= 0 ? json_string(metric_table[p->place_metric].name)
                                                                         : json_null()));
        }
        json_object_set_new(doc, "run", json_string(r->run));
        json_object_set_new(doc, "siblings", sib);
        json_object_set_new(doc, "siblings_from", json_string(r->siblings_given ? "--against" : "group"));
        json_object_set_new(doc, "score", r->score_key ? json_string(r->score_key) : json_null());
        json_object_set_new(doc, "context_differs", ctx);
        json_object_set_new(doc, "counters", cs);
        json_object_set_new(doc, "causes", causes_json(r));
        json_object_set_new(doc, "cpu_seconds", json_real(r->cpu_s));
        json_object_set_new(doc, "spread_note", json_string(r->spread_note ? r->spread_note : ""));
        json_object_set_new(doc, "phases", ph);
        if (!r->have_series)
                json_object_set_new(doc, "phases_why", json_string(r->phases_why));
        else
                json_object_set_new(doc, "tick_s", json_real(r->tick_s));
        json_object_set_new(doc, "place", json_pack("{s:o,s:o,s:o}", "metric",
                                                    r->place_metric >= 0 ? json_string(metric_table[r->place_metric].name)
                                                                         : json_null(),
                                                    "cpus", ints_json(r->cpus, r->ncpus), "nodes",
                                                    ints_json(r->nodes, r->nnodes)));
        json_object_set_new(doc, "summary", json_string(r->summary ? r->summary : ""));
        return doc;
}

static json_t *causes_json(const struct explain_run_result *r)
{
        json_t *a = json_array();

        for (size_t i = 0; i < r->ncauses; i++) {
                const struct explain_cause *k = &r->causes[i];
                json_t *ms = json_array(), *cl = json_array(), *o;
                for (size_t q = 0; q < k->nmetrics; q++)
                        json_array_append_new(ms, json_string(k->metrics[q]));
                o = json_pack("{s:s,s:o,s:s,s:f,s:s,s:f,s:s}", "family", explain_family_name[k->family], "metrics", ms,
                              "part", k->part, "value", k->value, "unit", k->unit, "share", k->share, "text", k->text);
                if (k->phase >= 0)
                        json_object_set_new(o, "phase", json_pack("{s:f,s:f}", "start_offset_s", r->phases[k->phase].start_s,
                                                                  "duration_s", r->phases[k->phase].dur_s));
                else
                        json_object_set_new(o, "phase", json_null());
                for (size_t q = 0; q < k->ncallers; q++)
                        json_array_append_new(cl, json_pack("{s:s,s:s,s:f,s:f}", "caller", k->callers[q].caller, "type",
                                                            k->callers[q].type, "wait_ms", k->callers[q].run_ms,
                                                            "siblings_wait_ms", k->callers[q].sib_ms));
                if (k->family == FAM_OTHERS && r->have_others_window)
                        json_object_set_new(o, "window", json_pack("{s:f,s:f}", "start_offset_s", r->others_from_s,
                                                                   "duration_s", r->others_to_s - r->others_from_s));
                if (k->family == FAM_LOCKS)
                        json_object_set_new(o, "callers", cl);
                else
                        json_decref(cl);
                if (k->family == FAM_LOCKS && k->lock.have)
                        json_object_set_new(o, "lock", json_pack("{s:s,s:s,s:s,s:f,s:I,s:I}", "lock", k->lock.lock, "name",
                                                                 k->lock.name, "type", k->lock.type, "wait_ms",
                                                                 k->lock.wait_ms, "contended", (json_int_t)k->lock.contended,
                                                                 "callers", (json_int_t)k->lock.callers));
                json_array_append_new(a, o);
        }
        return a;
}

json_t *explain_run_brief_json(const struct explain_run_result *r)
{
        json_t *full = explain_run_json(r), *o = json_object(), *lines = json_array(), *cs = json_array();
        char l1[1024], l2[1024];
        size_t i;
        json_t *c;

        explain_run_brief(r, l1, sizeof l1, l2, sizeof l2);
        json_array_append_new(lines, json_string(l1));
        if (l2[0])
                json_array_append_new(lines, json_string(l2));
        json_array_foreach(json_object_get(full, "counters"), i, c)
                if (i < 3)
                        json_array_append(cs, c);
        json_object_set(o, "run", json_object_get(full, "run"));
        json_object_set(o, "siblings", json_object_get(full, "siblings"));
        json_object_set(o, "context_differs", json_object_get(full, "context_differs"));
        json_object_set_new(o, "counters", cs);
        json_object_set(o, "causes", json_object_get(full, "causes"));
        json_object_set(o, "phases", json_object_get(full, "phases"));
        json_object_set(o, "summary", json_object_get(full, "summary"));
        json_object_set_new(o, "lines", lines);
        json_decref(full);
        return o;
}

/* ---- the verb ---- */

static void print_wrapped(const char *s, size_t width)
{
        size_t col = 0;
        while (*s) {
                size_t w = strcspn(s, " ");
                if (col && col + 1 + w > width) {
                        putchar('\n');
                        col = 0;
                } else if (col) {
                        putchar(' ');
                        col++;
                }
                fwrite(s, 1, w, stdout);
                col += w;
                s += w;
                while (*s == ' ')
                        s++;
        }
        putchar('\n');
}

static int print_tables(const struct explain_run_result *r)
{
        char a[80], b[160], c[64], d[64], e[64], f[64], g[96], h[32], ps[160];
        int rc = EXIT_OK;

        print_wrapped(r->summary, 78);
        if (r->nctx) {
                static const char *const cols[] = { "CONTEXT", "RUN", "SIBLINGS", NULL };
                struct libscols_table *tb = table_new(cols, NULL);
                printf("\n");
                for (size_t i = 0; i < r->nctx; i++) {
                        char sv[1024];
                        size_t o = 0;
                        sv[0] = 0;
                        for (size_t k = 0; k < r->nsib; k++)
                                strbuf_appendf(sv, sizeof sv, &o, "%s%s=%s", k ? " " : "", r->siblings[k],
                                               r->ctx[i].sib[k] ? r->ctx[i].sib[k] : "(none)");
                        table_row(tb, r->ctx[i].key, r->ctx[i].run ? r->ctx[i].run : "(none)", sv);
                }
                rc |= table_print(tb);
        }
        if (r->ncounters) {
                static const char *const cols[] = { "COUNTER", "RUN/S", "SIBLINGS/S", "RUN/SCORE", "SIBLINGS/SCORE",
                                                    "OUTSIDE", "SCORE", "CONSISTENT", NULL };
                struct libscols_table *tb = table_new(cols, "lrrrrrrl");
                printf("\nCounters against the siblings' range, in the counter's own spread (%s%s%s):\n",
                       r->spread_note, r->score_key ? "; per unit of " : "", r->score_key ? r->score_key : "");
                for (size_t i = 0; i < r->ncounters && i < 12; i++) {
                        const struct explain_run_counter *x = &r->counters[i];
                        char cons[32] = "-";
                        format_number(x->run_rate, a, sizeof a);
                        format_number(x->sib_min, c, sizeof c);
                        format_number(x->sib_max, d, sizeof d);
                        snprintf(b, sizeof b, "%s-%s", c, d);
                        if (x->has_per_score) {
                                format_number(x->run_per_score, c, sizeof c);
                                format_number(x->sib_ps_min, e, sizeof e);
                                format_number(x->sib_ps_max, f, sizeof f);
                                snprintf(ps, sizeof ps, "%s-%s", e, f);
                        } else
                                snprintf(c, sizeof c, "-"), snprintf(ps, sizeof ps, "-");
                        if (x->excess == 0)
                                snprintf(g, sizeof g, "inside");
                        else {
                                fmt_ratio(exp(fabs(x->excess)), e, sizeof e);
                                snprintf(g, sizeof g, "%s %s", e, x->excess > 0 ? "above" : "below");
                        }
                        snprintf(h, sizeof h, "%+.1f", x->score);
                        if (x->consistent >= 0)
                                snprintf(cons, sizeof cons, "%zu of %zu", x->agree, x->nruns);
                        table_row(tb, x->name, a, b, c, ps, g, h, cons);
                }
                rc |= table_print(tb);
        }
        if (r->nphases) {
                static const char *const cols[] = { "FROM", "FOR", "SHARE", "COUNTERS (RUN / SIBLINGS' MEDIAN)", "CPUS",
                                                    "NODES", NULL };
                struct libscols_table *tb = table_new(cols, "rrrlll");
                printf("\nPhases where it departs from its siblings at the same elapsed time (ticks of %.3gs):\n",
                       r->tick_s);
                for (size_t i = 0; i < r->nphases; i++) {
                        const struct explain_run_phase *p = &r->phases[i];
                        char ms[512], cpus[256], nodes[128];
                        size_t o = 0;
                        ms[0] = 0;
                        fmt_secs(p->start_s, c, sizeof c);
                        snprintf(a, sizeof a, "+%s", c);
                        fmt_secs(p->dur_s, b, sizeof b);
                        snprintf(c, sizeof c, "%.0f%%", r->run_dur_s > 0 ? 100 * p->dur_s / r->run_dur_s : 0);
                        for (size_t q = 0; q < p->nm; q++) {
                                fmt_ratio(p->m[q].ratio, d, sizeof d);
                                strbuf_appendf(ms, sizeof ms, &o, "%s%s %s", q ? ", " : "", metric_table[p->m[q].metric].name, d);
                                if (p->m[q].node >= 0)
                                        strbuf_appendf(ms, sizeof ms, &o, " on node %d", p->m[q].node);
                        }
                        explain_run_format_cpus(p->cpus, p->ncpus, cpus, sizeof cpus);
                        explain_run_format_cpus(p->nodes, p->nnodes, nodes, sizeof nodes);
                        table_row(tb, a, b, c, ms, cpus[0] ? cpus : "-", nodes[0] ? nodes : "-");
                }
                rc |= table_print(tb);
        }
        return rc ? EXIT_FAILED : EXIT_OK;
}

int explain_run_parse_against(struct explain_run_opts *o, char *arg)
{
        char *save = NULL;
        const char *why;
        for (char *tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                if (!proto_valid_name(tok, &why))
                        return ctl_fail(EXIT_USAGE, "--against '%s': not a run name: %s", tok, why);
                if (o->nagainst == EXPLAIN_MAX_AGAINST)
                        return ctl_fail(EXIT_USAGE, "--against: at most %d runs", EXPLAIN_MAX_AGAINST);
                o->against[o->nagainst++] = tok;
        }
        return o->nagainst ? 0 : ctl_fail(EXIT_USAGE, "--against needs RUN[,RUN...]");
}

int verb_explain(struct ctl *ctl, int argc, char **argv)
{
        static const struct option options[] = {
                { "against", required_argument, NULL, 'a' },
                { "score", required_argument, NULL, 'S' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        struct explain_run_opts o = { 0 };
        struct explain_run_result res;
        _cleanup_free_ char *err = NULL;
        const char *why;
        struct store *s;
        int c, r = 0;

        while (r == 0 && (c = ctl_getopt(argc, argv, "", options)) >= 0) {
                switch (c) {
                case 'a':
                        r = explain_run_parse_against(&o, optarg);
                        break;
                case 'S':
                        if (!proto_valid_key(optarg, &why))
                                r = ctl_fail(EXIT_USAGE, "--score '%s': %s", optarg, why);
                        o.score = optarg;
                        break;
                case 'h':
                        printf("Usage: scalemonctl explain RUN [--against RUN,...] [--score K]\n"
                               "Why RUN differs from its siblings (the other runs with its tags, or those named):\n"
                               "context, counters against the siblings' range, phases in time, CPUs and nodes.\n");
                        return EXIT_OK;
                default:
                        r = EXIT_USAGE;
                }
        }
        if (r)
                return r;
        if (optind >= argc)
                return ctl_fail(EXIT_USAGE, "explain needs a RUN; try 'scalemonctl explain --help'");
        if (optind + 1 < argc)
                return ctl_fail(EXIT_USAGE, "explain takes one RUN, got also '%s' (compare with --against RUN,...)",
                                argv[optind + 1]);
        if (!proto_valid_name(argv[optind], &why))
                return ctl_fail(EXIT_USAGE, "explain '%s': not a run name: %s", argv[optind], why);
        if (ctl->format == FORMAT_CSV)
                return ctl_fail(EXIT_USAGE, "explain writes a table or --format json; csv does not apply");
        s = ctl_store(ctl);
        if (!s)
                return EXIT_FAILED;
        r = explain_run_compute(s, argv[optind], &o, &res, &err);
        if (r < 0)
                return ctl_fail(r == -EINVAL ? EXIT_USAGE : EXIT_FAILED, "%s", err ? err : strerror(-r));
        if (ctl->format == FORMAT_JSON) {
                json_t *doc = explain_run_json(&res);
                r = output_json(doc);
                json_decref(doc);
        } else
                r = print_tables(&res);
        explain_run_free(&res);
        return r;
}
