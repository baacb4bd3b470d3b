/* subscribe.c - push each tick to the clients that subscribed.
 *
 * A client that wants to watch the counters live (scalemonctl top, the
 * live line of run exec) sends one request on its own connection:
 *
 *   {"cmd": "subscribe", "metrics": ["context_switches", ...], "per": "cpu"}
 *
 * and gets {"ok": true, "subscribed": {...}} (the interval, the CPU map
 * and, per metric asked, its unit, scope, the shape of its values and
 * whether it is available), then one line per tick, as the tick ends
 * (struct proto_tick, lib/proto-tick.h):
 *
 *   {"tick": {"start", "end", "start_ns", "end_ns", "interval_s"},
 *    "values": {METRIC: [v, ...] | v},
 *    "runs": [{"name", "start", "elapsed_s", "mark": {"text", "time"}}]}
 *
 * Values are the interval's deltas in the catalogue's unit: an array per
 * CPU (null for an offline CPU or a group multiplexed out) or per node for
 * cpu and node metrics, one number for system ones and with "per":
 * "system".  A rate is a delta divided by the tick's interval_s.  Sending
 * it again on the same connection changes what it gets.  When a CPU goes
 * offline or comes back, or a reload changes the interval or the metrics,
 * the reply is pushed again, as things are now, before the next tick.
 *
 * The daemon never waits for a subscriber: ctl.c sends what the socket
 * takes and keeps the rest up to CTL_MAX_STREAM_OUTPUT (its invariant 5),
 * then drops the subscriber with a log line.  Without subscribers a tick
 * costs one test of a pointer here.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "macro.h"
#include "proto-tick.h"
#include "subscribe.h"
#include "timeutil.h"

#define MAX_MARKS 64            /* open runs whose last mark is kept */

enum per { PER_CPU, PER_NODE, PER_SYSTEM };
static const char *const per_names[] = { [PER_CPU] = "cpu", [PER_NODE] = "node", [PER_SYSTEM] = "system" };

struct subscriber {
        struct ctl_stream *st;
        bool want[_M_MAX];              /* asked for (available or not) */
        enum per per;
        struct subscriber *next;
};

struct last_mark {
        char *run;
        char *text;
        int64_t time;                   /* ns since the epoch */
};

struct subscribers {
        const struct sampler *sampler;
        const int64_t *interval_ns;
        struct subscriber *list;
        struct last_mark marks[MAX_MARKS];
        size_t nmarks;
        double *vals;                   /* this tick, [_M_MAX * nloc], catalogue unit */
        bool *nulls;                    /* not counted, [_M_MAX * nloc] */
        size_t cap;
        bool changed;                   /* the map, interval or catalogue changed: tell them */
};

static void mark_clear(struct last_mark *mk)
{
        free(mk->run);
        free(mk->text);
        memset(mk, 0, sizeof *mk);
}

static struct subscriber *find(struct subscribers *s, struct ctl_stream *st, struct subscriber ***ret_pp)
{
        for (struct subscriber **pp = &s->list; *pp; pp = &(*pp)->next)
                if ((*pp)->st == st) {
                        if (ret_pp)
                                *ret_pp = pp;
                        return *pp;
                }
        return NULL;
}

static void on_gone(void *userdata, struct ctl_stream *st)
{
        struct subscribers *s = userdata;
        struct subscriber **pp, *sub = find(s, st, &pp);

        if (!sub)
                return;
        *pp = sub->next;
        free(sub);
}

static json_t *metric_json(const struct subscribers *s, int id, enum per per)
{
        const struct metric_def *d = &metric_table[id];
        const char *loc = d->scope == SCOPE_SYSTEM || per == PER_SYSTEM ? "system"
                        : d->scope == SCOPE_NODE || per == PER_NODE ? "node" : "cpu";
        json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:b}", "name", d->name, "unit", d->unit, "scope",
                              metric_scope_name(d->scope), "values", loc, "available",
                              sampler_available(s->sampler, id));

        if (o && !sampler_available(s->sampler, id))
                json_object_set_new(o, "why", json_string(sampler_why(s->sampler, id) ? sampler_why(s->sampler, id)
                                                                                      : "not enabled"));
        return o;
}

/* The reply to a subscription, {"subscribed": {...}}: the interval, the
 * CPU map and the metrics asked, as they are now. */
static json_t *info_json(const struct subscribers *s, const bool *want, enum per per)
{
        const struct cpumap *map = sampler_cpumap(s->sampler);
        json_t *metrics = json_array(), *node_of = json_array(), *online = json_array();

        for (int i = 0; i < _M_MAX; i++)
                if (want[i])
                        json_array_append_new(metrics, metric_json(s, i, per));
        for (int c = 0; c < map->ncpus; c++) {
                json_array_append_new(node_of, json_integer(map->node[c]));
                json_array_append_new(online, json_boolean(map->online[c]));
        }
        return json_pack("{s:{s:s,s:f,s:i,s:i,s:o,s:o,s:i,s:o}}", "subscribed", "per", per_names[per], "interval_s",
                         (double)*s->interval_ns / 1e9, "cpus", map->ncpus, "nodes", map->nnodes, "node_of", node_of,
                         "online", online, "max_unsent_bytes", CTL_MAX_STREAM_OUTPUT, "metrics", metrics);
}

static json_t *on_subscribe(void *userdata, const struct proto_request *req, struct ctl_stream *st,
                            const struct ucred *peer, char **ret_err)
{
        struct subscribers *s = userdata;
        struct subscriber *sub;
        bool want[_M_MAX] = { false };
        enum per per = PER_CPU;
        json_t *reply;

        for (size_t i = 0; i < req->nmetrics; i++) {
                int id = metric_id_by_name(req->metrics[i]);
                if (id < 0) {
                        if (asprintf(ret_err, "unknown metric '%s' (scalemonctl metrics lists them)",
                                     req->metrics[i]) < 0)
                                *ret_err = NULL;
                        return NULL;
                }
                want[id] = true;
        }
        if (req->per)
                per = streq(req->per, "node") ? PER_NODE : streq(req->per, "system") ? PER_SYSTEM : PER_CPU;

        reply = info_json(s, want, per);
        if (!reply)
                return NULL;

        sub = find(s, st, NULL);
        if (!sub) {
                sub = calloc(1, sizeof *sub);
                if (!sub) {
                        json_decref(reply);
                        return NULL;
                }
                sub->st = st;
                sub->next = s->list;
                s->list = sub;
                log_debug("control: pid %d (uid %u) subscribed to %zu metric%s per %s", (int)peer->pid,
                          (unsigned)peer->uid, req->nmetrics, req->nmetrics == 1 ? "" : "s", per_names[per]);
        }
        memcpy(sub->want, want, sizeof want);
        sub->per = per;
        return reply;
}

int subscribe_new(struct ctl_server *ctl, const struct sampler *sm, const int64_t *interval_ns,
                  struct subscribers **ret)
{
        struct subscribers *s = calloc(1, sizeof *s);

        if (!s)
                return -ENOMEM;
        s->sampler = sm;
        s->interval_ns = interval_ns;
        ctl_server_set_stream(ctl, on_subscribe, on_gone, s);
        *ret = s;
        return 0;
}

struct subscribers *subscribe_free(struct subscribers *s)
{
        if (!s)
                return NULL;
        while (s->list)
                on_gone(s, s->list->st);
        for (size_t i = 0; i < s->nmarks; i++)
                mark_clear(&s->marks[i]);
        free(s->vals);
        free(s->nulls);
        free(s);
        return NULL;
}

void subscribe_mark(struct subscribers *s, const char *run, int64_t time, const char *text)
{
        struct last_mark *slot = NULL;

        if (!s || !run || !text)
                return;
        for (size_t i = 0; i < s->nmarks && !slot; i++)
                if (streq(s->marks[i].run, run))
                        slot = &s->marks[i];
        if (!slot) {
                if (s->nmarks == MAX_MARKS) {
                        /* the oldest entry gives way */
                        mark_clear(&s->marks[0]);
                        memmove(s->marks, s->marks + 1, (MAX_MARKS - 1) * sizeof *s->marks);
                        memset(&s->marks[MAX_MARKS - 1], 0, sizeof *s->marks);
                        s->nmarks--;
                }
                slot = &s->marks[s->nmarks];
                slot->run = strdup(run);
                if (!slot->run)
                        return;
                s->nmarks++;
        }
        free(slot->text);
        slot->text = strdup(text);
        slot->time = time;
}

/* The open runs, with elapsed time at end_ns and last mark (borrowed:
 * valid until the next tick); marks of runs no longer open are
 * forgotten.  Returns the number of runs in *ret, or -ENOMEM. */
static int tick_runs(struct subscribers *s, const struct runs *rs, int64_t end_ns, struct proto_tick_run **ret)
{
        size_t n = runs_count(rs), k = 0;
        struct proto_tick_run *a = calloc(n + 1, sizeof *a);

        if (!a)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                int64_t t0;
                const char *name = runs_name(rs, i, &t0);

                a[i] = (struct proto_tick_run){ .name = name, .start_ns = t0,
                                                .elapsed_s = (double)(end_ns - t0) / 1e9 };
                for (size_t m = 0; m < s->nmarks; m++)
                        if (streq(s->marks[m].run, name) && s->marks[m].text) {
                                a[i].mark = s->marks[m].text;
                                a[i].mark_ns = s->marks[m].time;
                        }
        }
        for (size_t m = 0; m < s->nmarks; m++) {
                bool open = false;
                for (size_t i = 0; i < n; i++)
                        open |= streq(runs_name(rs, i, NULL), s->marks[m].run);
                if (open)
                        s->marks[k++] = s->marks[m];
                else
                        mark_clear(&s->marks[m]);
        }
        for (size_t m = k; m < s->nmarks; m++)
                memset(&s->marks[m], 0, sizeof s->marks[m]);
        s->nmarks = k;
        *ret = a;
        return (int)n;
}

/* One metric's values for a subscriber, from the dense arrays, into m
 * (v and nul: room for sampler_nloc() values). */
static void tick_values(struct subscribers *s, int id, enum per per, struct proto_tick_metric *m, double *v,
                        bool *nul)
{
        const struct cpumap *map = sampler_cpumap(s->sampler);
        const struct metric_def *d = &metric_table[id];
        int nloc = sampler_nloc(s->sampler);
        const double *sv = s->vals + (size_t)id * (size_t)nloc;
        const bool *sn = s->nulls + (size_t)id * (size_t)nloc;
        int n = d->scope == SCOPE_CPU ? map->ncpus : d->scope == SCOPE_NODE ? map->nnodes : 1;

        *m = (struct proto_tick_metric){ .name = d->name, .integer = sampler_scale(s->sampler, id) == 1.0,
                                         .v = v, .null = nul };
        if (d->scope == SCOPE_SYSTEM || per == PER_SYSTEM) {
                m->scalar = true;
                m->n = 1;
                v[0] = 0;
                nul[0] = true;
                for (int l = 0; l < n; l++)
                        if (!sn[l]) {
                                v[0] += sv[l];
                                nul[0] = false;
                        }
                return;
        }
        if (d->scope == SCOPE_CPU && per == PER_NODE) {
                m->n = (size_t)map->nnodes;
                for (int nd = 0; nd < map->nnodes; nd++) {
                        v[nd] = 0;
                        nul[nd] = true;
                        for (int c = 0; c < map->ncpus; c++)
                                if (map->node[c] == nd && !sn[c]) {
                                        v[nd] += sv[c];
                                        nul[nd] = false;
                                }
                }
                return;
        }
        m->n = (size_t)n;
        for (int l = 0; l < n; l++) {
                nul[l] = sn[l];
                v[l] = sn[l] ? 0 : sv[l];
        }
}

static char *tick_line(struct subscribers *s, const struct subscriber *sub, const struct tick *t,
                       struct proto_tick_run *runs, size_t nruns, size_t *ret_len)
{
        size_t nloc = (size_t)sampler_nloc(s->sampler);
        struct proto_tick pt = { .start_ns = t->t, .end_ns = t->t + t->dur, .runs = runs, .nruns = nruns };
        _cleanup_free_ struct proto_tick_metric *ms = calloc(_M_MAX, sizeof *ms);
        _cleanup_free_ double *v = calloc((size_t)_M_MAX * nloc, sizeof *v);
        _cleanup_free_ bool *nul = calloc((size_t)_M_MAX * nloc, sizeof *nul);

        if (!ms || !v || !nul)
                return NULL;
        pt.metrics = ms;
        for (int i = 0; i < _M_MAX; i++)
                if (sub->want[i] && sampler_available(s->sampler, i)) {
                        tick_values(s, i, sub->per, &ms[pt.nmetrics], v + pt.nmetrics * nloc,
                                    nul + pt.nmetrics * nloc);
                        pt.nmetrics++;
                }
        return proto_tick_line(&pt, ret_len);
}

/* This tick's deltas, dense and in the catalogue unit; zeros are not
 * in t (the manager compacts them away), nulls are. */
static int densify(struct subscribers *s, const struct tick *t)
{
        const struct cpumap *map = sampler_cpumap(s->sampler);
        size_t nloc = (size_t)sampler_nloc(s->sampler), need = (size_t)_M_MAX * nloc;

        if (need > s->cap) {
                double *v = realloc(s->vals, need * sizeof *v);
                bool *n;
                if (!v)
                        return -ENOMEM;
                s->vals = v;
                n = realloc(s->nulls, need * sizeof *n);
                if (!n)
                        return -ENOMEM;
                s->nulls = n;
                s->cap = need;
        }
        memset(s->vals, 0, need * sizeof *s->vals);
        memset(s->nulls, 0, need * sizeof *s->nulls);
        /* an offline CPU has no value, not a zero */
        for (int i = 0; i < _M_MAX; i++)
                if (metric_table[i].scope == SCOPE_CPU)
                        for (int c = 0; c < map->ncpus && (size_t)c < nloc; c++)
                                s->nulls[(size_t)i * nloc + (size_t)c] = !map->online[c];
        for (size_t k = 0; k < t->nv; k++) {
                const struct sample_value *sv = &t->v[k];
                size_t at = (size_t)sv->metric * nloc + (size_t)MAX(sv->loc, 0);
                if (sv->loc >= (int)nloc)
                        continue;
                s->nulls[at] = sv->null;
                s->vals[at] = sv->null ? 0 : (double)sv->value * sampler_scale(s->sampler, sv->metric);
        }
        return 0;
}

/* One tick line per distinct request, shared by the subscribers that
 * asked the same (ctl.c copies it into each one's output).  Returns the
 * number of subscribers, with their streams and lines in st[], line[],
 * len[] and the lines to free in own[]; -ENOMEM. */
static int tick_lines(struct subscribers *s, const struct tick *t, struct proto_tick_run *runs, size_t nruns,
                      struct ctl_stream ***ret_st, const char ***ret_line, size_t **ret_len, char ***ret_own)
{
        struct ctl_stream **st;
        const char **line;
        size_t *len, n = 0, i = 0;
        char **own;

        for (struct subscriber *sub = s->list; sub; sub = sub->next)
                n++;
        st = calloc(n, sizeof *st);
        line = calloc(n, sizeof *line);
        len = calloc(n, sizeof *len);
        own = calloc(n, sizeof *own);
        if (!st || !line || !len || !own) {
                free(st);
                free(line);
                free(len);
                free(own);
                return -ENOMEM;
        }
        for (struct subscriber *sub = s->list; sub; sub = sub->next, i++) {
                size_t j = 0, same = i;
                st[i] = sub->st;
                for (const struct subscriber *o = s->list; o != sub; o = o->next, j++)
                        if (own[j] && o->per == sub->per && memcmp(o->want, sub->want, sizeof sub->want) == 0) {
                                same = j;
                                break;
                        }
                if (same == i)
                        line[i] = own[i] = tick_line(s, sub, t, runs, nruns, &len[i]);
                else {
                        line[i] = line[same];
                        len[i] = len[same];
                }
        }
        *ret_st = st;
        *ret_line = line;
        *ret_len = len;
        *ret_own = own;
        return (int)n;
}

void subscribe_changed(struct subscribers *s)
{
        if (s)
                s->changed = true;
}

/* Each subscriber's reply again, as things are now, before the tick that
 * shows the change: clients redraw from it (top's CPU map after hotplug,
 * the interval and the metrics' availability after a reload). */
static void push_info(struct subscribers *s)
{
        struct subscriber *sub, *next;

        for (sub = s->list; sub; sub = next) {
                json_t *o = info_json(s, sub->want, sub->per);
                char *line = NULL;

                next = sub->next;       /* a send may drop sub (on_gone) */
                if (o && json_object_set_new(o, "ok", json_true()) == 0)
                        line = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
                json_decref(o);
                if (line)
                        ctl_stream_send(sub->st, line, strlen(line));
                free(line);
        }
}

void subscribe_tick(struct subscribers *s, const struct tick *t, const struct runs *rs)
{
        struct ctl_stream **st;
        const char **line;
        size_t *len;
        char **own;
        struct proto_tick_run *runs;
        int n, nruns;

        if (!s || !s->list)
                return;
        if (t->nev > 0 || s->changed)   /* a CPU went or came back; a reload */
                push_info(s);
        s->changed = false;
        if (!s->list || densify(s, t) < 0)
                return;
        nruns = tick_runs(s, rs, t->t + t->dur, &runs);
        if (nruns < 0)
                return;
        n = tick_lines(s, t, runs, (size_t)nruns, &st, &line, &len, &own);
        free(runs);
        if (n < 0)
                return;
        /* a send may drop its own subscriber (on_gone), never another */
        for (int i = 0; i < n; i++)
                if (line[i])
                        ctl_stream_send(st[i], line[i], len[i]);
        for (int i = 0; i < n; i++)
                free(own[i]);
        free(st);
        free(line);
        free(len);
        free(own);
}
