/* sub.c - read a subscription: the subscribe request, the daemon's reply
 * and the ticks it then pushes, one JSON line each (daemon/subscribe.c
 * documents the lines), decoded here into struct sub_info and struct
 * sub_tick so that top and run exec never touch a JSON key. */
#include "config.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "sock.h"
#include "proto.h"
#include "proto-tick.h"
#include "sub.h"
#include "timeutil.h"

#define SUB_MAX_LINE (16 << 20)         /* a tick of 8192 CPUs with every metric fits */

struct sub {
        int fd;
        char *buf;                      /* received, not yet decoded */
        size_t len, cap;
        struct sub_info info;
        struct sub_tick tick;
};

static void info_clear(struct sub_info *in)
{
        free(in->node_of);
        free(in->online);
        free(in->metrics);
        memset(in, 0, sizeof *in);
}

int sub_open(struct ctl *ctl, bool quiet, struct sub **ret)
{
        struct ctl c2 = *ctl;           /* a connection of its own: ctl's stays for requests */
        struct sub *s;
        int r;

        c2.sock_fd = -1;
        r = ctl_connect(&c2, quiet);
        if (r)
                return r;
        s = calloc(1, sizeof *s);
        if (!s) {
                close(c2.sock_fd);
                return quiet ? EXIT_FAILED : ctl_fail(EXIT_FAILED, "out of memory");
        }
        s->fd = c2.sock_fd;
        *ret = s;
        return 0;
}

struct sub *sub_close(struct sub *s)
{
        if (!s)
                return NULL;
        if (s->fd >= 0)
                close(s->fd);
        free(s->buf);
        info_clear(&s->info);
        free(s->tick.v);
        free(s->tick.null);
        free(s->tick.runs);
        free(s);
        return NULL;
}

int sub_fd(const struct sub *s)
{
        return s->fd;
}

const struct sub_info *sub_info(const struct sub *s)
{
        return &s->info;
}

const struct sub_tick *sub_tick(const struct sub *s)
{
        return &s->tick;
}

int sub_metric_index(const struct sub *s, const char *name)
{
        for (size_t i = 0; i < s->info.nmetrics; i++)
                if (streq(s->info.metrics[i].name, name))
                        return (int)i;
        return -1;
}

int sub_request(struct sub *s, const char *const *metrics, size_t n, enum sub_loc per)
{
        static const char *const pers[] = { [SUB_LOC_CPU] = "cpu", [SUB_LOC_NODE] = "node",
                                            [SUB_LOC_SYSTEM] = "system" };
        struct proto_request req = { .cmd = CMD_SUBSCRIBE, .metrics = (char **)metrics, .nmetrics = n,
                                     .per = (char *)pers[per] };
        _cleanup_free_ char *line = proto_request_line(&req);
        size_t len, off = 0;

        if (!line)
                return -ENOMEM;
        len = strlen(line);
        while (off < len) {
                ssize_t k = send(s->fd, line + off, len - off, MSG_NOSIGNAL);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                off += (size_t)k;
        }
        return 0;
}

static enum sub_loc loc_of(const char *s)
{
        return s && streq(s, "node") ? SUB_LOC_NODE : s && streq(s, "system") ? SUB_LOC_SYSTEM : SUB_LOC_CPU;
}

static int decode_info(struct sub *s, json_t *o)
{
        struct sub_info in = { 0 };
        json_t *ms = json_object_get(o, "metrics"), *v;
        size_t i;

        in.per = loc_of(json_string_value(json_object_get(o, "per")));
        in.interval_s = json_number_value(json_object_get(o, "interval_s"));
        in.ncpus = (int)json_integer_value(json_object_get(o, "cpus"));
        in.nnodes = (int)json_integer_value(json_object_get(o, "nodes"));
        if (in.ncpus < 1 || in.ncpus > 65536 || in.nnodes < 1 || in.nnodes > 65536 || !json_is_array(ms))
                return -EPROTO;
        in.nloc = MAX(in.ncpus, in.nnodes);
        in.node_of = calloc((size_t)in.ncpus, sizeof *in.node_of);
        in.online = calloc((size_t)in.ncpus, sizeof *in.online);
        in.metrics = calloc(json_array_size(ms) + 1, sizeof *in.metrics);
        if (!in.node_of || !in.online || !in.metrics) {
                info_clear(&in);
                return -ENOMEM;
        }
        for (int c = 0; c < in.ncpus; c++) {
                in.node_of[c] = (int)json_integer_value(json_array_get(json_object_get(o, "node_of"), (size_t)c));
                in.online[c] = json_is_true(json_array_get(json_object_get(o, "online"), (size_t)c));
                if (in.node_of[c] < 0 || in.node_of[c] >= in.nnodes)
                        in.node_of[c] = 0;
        }
        json_array_foreach(ms, i, v) {
                struct sub_metric *m = &in.metrics[in.nmetrics++];
                snprintf(m->name, sizeof m->name, "%s", json_string_value(json_object_get(v, "name")) ?: "?");
                snprintf(m->unit, sizeof m->unit, "%s", json_string_value(json_object_get(v, "unit")) ?: "");
                snprintf(m->why, sizeof m->why, "%s", json_string_value(json_object_get(v, "why")) ?: "");
                m->loc = loc_of(json_string_value(json_object_get(v, "values")));
                m->available = json_is_true(json_object_get(v, "available"));
        }
        info_clear(&s->info);
        s->info = in;
        free(s->tick.v);
        free(s->tick.null);
        s->tick.v = calloc(in.nmetrics * (size_t)in.nloc + 1, sizeof *s->tick.v);
        s->tick.null = calloc(in.nmetrics * (size_t)in.nloc + 1, sizeof *s->tick.null);
        return s->tick.v && s->tick.null ? 0 : -ENOMEM;
}

static int copy_runs(struct sub_tick *t, const struct proto_tick *pt)
{
        free(t->runs);
        t->nruns = 0;
        t->runs = calloc(pt->nruns + 1, sizeof *t->runs);
        if (!t->runs)
                return -ENOMEM;
        for (size_t i = 0; i < pt->nruns; i++) {
                const struct proto_tick_run *r = &pt->runs[i];
                struct sub_run *u = &t->runs[t->nruns++];

                snprintf(u->name, sizeof u->name, "%s", r->name);
                u->start_ns = r->start_ns;
                u->elapsed_s = r->elapsed_s;
                u->has_mark = r->mark != NULL;
                if (r->mark) {
                        snprintf(u->mark, sizeof u->mark, "%s", r->mark);
                        u->mark_ns = r->mark_ns;
                }
        }
        return 0;
}

/* The decoded tick into sub_tick, in the order of the metrics asked; a
 * metric the tick leaves out (not available) has no values. */
static int copy_tick(struct sub *s, const struct proto_tick *pt)
{
        const struct sub_info *in = &s->info;
        struct sub_tick *t = &s->tick;
        size_t nl = (size_t)in->nloc;

        if (!t->v)
                return -EPROTO;         /* a tick before the reply */
        t->start_ns = pt->start_ns;
        t->end_ns = pt->end_ns;
        t->interval_s = pt->interval_s;
        for (size_t i = 0; i < in->nmetrics; i++) {
                const struct proto_tick_metric *m = NULL;
                double *dv = t->v + i * nl;
                bool *dn = t->null + i * nl;

                for (size_t k = 0; k < pt->nmetrics && !m; k++)
                        if (streq(pt->metrics[k].name, in->metrics[i].name))
                                m = &pt->metrics[k];
                for (size_t l = 0; l < nl; l++) {
                        dn[l] = !m || l >= m->n || m->null[l];
                        dv[l] = dn[l] ? 0 : m->v[l];
                }
        }
        return copy_runs(t, pt);
}

static int decode(struct sub *s, const char *line, size_t len, enum sub_event *ev, char **ret_err)
{
        struct proto_tick pt;
        json_t *o, *x;
        int r = proto_tick_decode(line, len, &pt, NULL);

        *ev = SUB_NONE;
        if (r == 0) {
                r = copy_tick(s, &pt);
                proto_tick_clear(&pt);
                *ev = SUB_TICK;
                if (r != -EPROTO)
                        return r;
        }
        if (r != -ENOMSG && r != -EPROTO)
                return r;
        if (r == -EPROTO)
                goto bad;
        /* not a tick: the reply, again after a change, or an error */
        o = json_loadb(line, len, 0, NULL);
        r = -EPROTO;
        if (json_is_true(json_object_get(o, "ok")) && (x = json_object_get(o, "subscribed"))) {
                r = decode_info(s, x);
                *ev = SUB_INFO;
        } else if (json_is_string(json_object_get(o, "error"))) {
                if (asprintf(ret_err, "%s", json_string_value(json_object_get(o, "error"))) < 0)
                        *ret_err = NULL;
                json_decref(o);
                return -EPROTO;
        }
        json_decref(o);
        if (r != -EPROTO)
                return r;
bad:
        if (asprintf(ret_err, "scalemond sent something that is not a tick: %.*s", (int)MIN(len, (size_t)80),
                     line) < 0)
                *ret_err = NULL;
        return -EPROTO;
}

int sub_next(struct sub *s, enum sub_event *ev, char **ret_err)
{
        char *nl;

        *ev = SUB_NONE;
        for (;;) {
                nl = s->len ? memchr(s->buf, '\n', s->len) : NULL;
                if (nl) {
                        size_t n = (size_t)(nl - s->buf);
                        int r = decode(s, s->buf, n, ev, ret_err);
                        memmove(s->buf, nl + 1, s->len - n - 1);
                        s->len -= n + 1;
                        return r;
                }
                if (s->cap - s->len < 65536) {
                        size_t cap = MAX(s->cap * 2, (size_t)131072);
                        char *b;
                        if (cap > SUB_MAX_LINE)
                                return -EMSGSIZE;
                        b = realloc(s->buf, cap);
                        if (!b)
                                return -ENOMEM;
                        s->buf = b;
                        s->cap = cap;
                }
                ssize_t k = recv(s->fd, s->buf + s->len, s->cap - s->len, MSG_DONTWAIT);
                if (k < 0)
                        return errno == EAGAIN || errno == EINTR ? 0 : negative_errno();
                if (k == 0)
                        return -ECONNRESET;
                s->len += (size_t)k;
        }
}
