/* test-ctl.c - the control socket (daemon/ctl.c) on a real UNIX socket in
 * a temporary directory, its event loop run by the test, without root:
 * framing (two requests in one write, one request over two writes), bad
 * requests answered with an error while the connection goes on, a request
 * of exactly CTL_MAX_LINE bytes served and one byte more refused and
 * closed, a client gone mid-request freed, at most CTL_MAX_CLIENTS
 * connections, replies unread holding further requests back (invariant
 * 3), and a stream that does not read dropped over CTL_MAX_STREAM_OUTPUT
 * with whole lines only, one error line and gone() once (invariant 5).
 * The test's uid is the daemon's here, so the reserved connections and
 * the permission checks (live-socket.sh, as nobody) are not covered. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl.h"
#include "macro.h"
#include "tap.h"
#include "timeutil.h"

#define BIG_REPLY (32 * 1024)   /* bytes of padding in a reply while big_replies */

static char dir[] = "/tmp/scalemon-test-ctl.XXXXXX";
static struct sockaddr_un sa = { .sun_family = AF_UNIX };
static sd_event *ev;
static struct ctl_server *srv;
static int calls;               /* requests the handler was given */
static bool big_replies;
static int gone_calls;
static struct ctl_stream *stream;

static json_t *handler(void *userdata, const struct proto_request *req, int fd, const struct ucred *peer,
                       char **ret_err)
{
        (void)userdata, (void)peer, (void)ret_err;
        if (fd >= 0)
                close(fd);
        calls++;
        if (big_replies) {
                static char pad[BIG_REPLY + 1];
                memset(pad, 'p', BIG_REPLY);
                return json_pack("{s:s, s:i, s:s}", "cmd", proto_cmd_name(req->cmd), "n", calls, "pad", pad);
        }
        return json_pack("{s:s, s:i}", "cmd", proto_cmd_name(req->cmd), "n", calls);
}

static json_t *stream_handler(void *userdata, const struct proto_request *req, struct ctl_stream *st,
                              const struct ucred *peer, char **ret_err)
{
        (void)userdata, (void)req, (void)peer, (void)ret_err;
        stream = st;
        return json_pack("{s:b}", "subscribed", true);
}

static void stream_gone(void *userdata, struct ctl_stream *st)
{
        (void)userdata;
        if (st == stream)
                gone_calls++;
}

/* Run the server's loop until nothing is left to do. */
static void pump(void)
{
        for (int i = 0; i < 10000 && sd_event_run(ev, 5000) > 0; i++)
                ;
}

struct conn {
        int fd;
        char *buf;
        size_t have, cap;
        bool eof;
};

static int conn_open(struct conn *c)
{
        *c = (struct conn){ .fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0) };
        if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&sa, sizeof sa) < 0)
                return -errno;
        return 0;
}

static void conn_close(struct conn *c)
{
        if (c->fd >= 0)
                close(c->fd);
        free(c->buf);
        *c = (struct conn){ .fd = -1 };
}

/* Write all of s, running the server's loop while the socket is full. */
static bool conn_write(struct conn *c, const char *s, size_t len)
{
        int64_t start = now_monotonic_ns();

        while (len > 0 && now_monotonic_ns() - start < 5 * NSEC_PER_SEC) {
                ssize_t k = send(c->fd, s, len, MSG_NOSIGNAL);
                if (k < 0 && errno != EAGAIN)
                        return false;
                if (k > 0) {
                        s += k;
                        len -= (size_t)k;
                }
                pump();
        }
        pump();
        return len == 0;
}

static bool conn_say(struct conn *c, const char *s)
{
        return conn_write(c, s, strlen(s));
}

/* One line (without its newline, to free), running the loop meanwhile;
 * NULL at the end of the connection (c->eof) or after 5 s. */
static char *conn_line(struct conn *c)
{
        int64_t start = now_monotonic_ns();

        while (now_monotonic_ns() - start < 5 * NSEC_PER_SEC) {
                char *nl = c->buf ? memchr(c->buf, '\n', c->have) : NULL;
                ssize_t k;

                if (nl) {
                        size_t n = (size_t)(nl - c->buf);
                        char *line = strndup(c->buf, n);
                        c->have -= n + 1;
                        memmove(c->buf, nl + 1, c->have);
                        return line;
                }
                if (c->cap - c->have < 65536) {
                        char *p = realloc(c->buf, c->cap + 262144);
                        if (!p)
                                return NULL;
                        c->buf = p;
                        c->cap += 262144;
                }
                k = recv(c->fd, c->buf + c->have, c->cap - c->have, 0);
                if (k == 0) {
                        c->eof = true;
                        return NULL;
                }
                if (k > 0)
                        c->have += (size_t)k;
                else if (errno != EAGAIN)
                        return NULL;
                else
                        sd_event_run(ev, 10000);
        }
        return NULL;
}

static json_t *conn_reply(struct conn *c)
{
        _cleanup_free_ char *line = conn_line(c);

        return line ? json_loads(line, 0, NULL) : NULL;
}

/* Whether the connection is open with nothing to read, after the loop ran. */
static bool conn_quiet(struct conn *c)
{
        char b;

        pump();
        return recv(c->fd, &b, 1, MSG_DONTWAIT) < 0 && errno == EAGAIN;
}

static bool reply_ok(json_t *o, const char *cmd, int n)
{
        return o && json_is_true(json_object_get(o, "ok")) &&
               strcmp(json_string_value(json_object_get(o, "cmd")) ?: "", cmd) == 0 &&
               json_integer_value(json_object_get(o, "n")) == n;
}

static const char *reply_error(json_t *o)
{
        return o && json_is_false(json_object_get(o, "ok")) ? json_string_value(json_object_get(o, "error")) : NULL;
}

static void test_framing(void)
{
        struct conn c;
        json_t *o, *o2;

        ok(conn_open(&c) == 0 && conn_say(&c, "{\"cmd\":\"status\"}\n{\"cmd\":\"totals\"}\n"),
           "framing: two requests in one write");
        o = conn_reply(&c);
        o2 = conn_reply(&c);
        ok(reply_ok(o, "status", 1) && reply_ok(o2, "totals", 2), "framing: two replies, in order");
        json_decref(o);
        json_decref(o2);
        ok(conn_say(&c, "{\"cmd\":\"sta") && conn_quiet(&c) && calls == 2, "framing: half a request: no answer yet");
        ok(conn_say(&c, "tus\"}\n"), "framing: its other half");
        o = conn_reply(&c);
        ok(reply_ok(o, "status", 3), "framing: one request over two writes, one reply");
        json_decref(o);
        conn_close(&c);
}

static void test_bad(void)
{
        struct conn c;
        json_t *o;
        int before = calls;

        ok(conn_open(&c) == 0 && conn_say(&c, "not json\n"), "bad: a line that is not JSON");
        o = conn_reply(&c);
        ok(reply_error(o) && *reply_error(o), "bad: an error reply");
        json_decref(o);
        ok(conn_say(&c, "{\"cmd\":\"nosuch\"}\n"), "bad: an unknown cmd");
        o = conn_reply(&c);
        contains(reply_error(o), "unknown cmd 'nosuch'", "bad: said as such");
        json_decref(o);
        ok(conn_write(&c, "{\"cmd\":\"st\0tus\"}\n", 17), "bad: a request with a NUL byte");
        o = conn_reply(&c);
        contains(reply_error(o), "NUL byte", "bad: said as such");
        json_decref(o);
        is_int(calls, before, "bad: none reached the handler");
        ok(conn_say(&c, "{\"cmd\":\"status\"}\n"), "bad: a good request on the same connection");
        o = conn_reply(&c);
        ok(reply_ok(o, "status", before + 1), "bad: served: the connection went on");
        json_decref(o);
        conn_close(&c);
}

static void test_size(void)
{
        _cleanup_free_ char *line = malloc(CTL_MAX_LINE + 1);
        const char *req = "{\"cmd\":\"status\"}";
        struct conn c;
        json_t *o;
        int before;

        if (!line)
                return;
        /* the request padded with spaces to CTL_MAX_LINE bytes, its newline included */
        memset(line, ' ', CTL_MAX_LINE);
        memcpy(line, req, strlen(req));
        line[CTL_MAX_LINE - 1] = '\n';
        ok(conn_open(&c) == 0 && conn_write(&c, line, CTL_MAX_LINE), "size: a request of CTL_MAX_LINE bytes");
        before = calls;
        o = conn_reply(&c);
        ok(reply_ok(o, "status", before), "size: served");
        json_decref(o);
        ok(conn_quiet(&c), "size: and the connection stays");

        /* one byte more: CTL_MAX_LINE bytes and no newline yet */
        line[CTL_MAX_LINE - 1] = ' ';
        ok(conn_write(&c, line, CTL_MAX_LINE), "size: CTL_MAX_LINE bytes without a newline");
        o = conn_reply(&c);
        contains(reply_error(o), "request longer than 65536 bytes", "size: refused, with the limit");
        json_decref(o);
        /* what it goes on sending is read and dropped, up to CTL_MAX_LINE
         * bytes more, so that it sees the answer; then it is closed */
        line[0] = '\n';
        ok(conn_write(&c, line, CTL_MAX_LINE) && conn_quiet(&c), "size: up to CTL_MAX_LINE bytes more dropped");
        ok(conn_write(&c, "x", 1) && !conn_line(&c) && c.eof, "size: one byte over that, the connection is closed");
        is_int(calls, before, "size: the handler never saw it");
        conn_close(&c);
}

/* A client gone with half a request; then the connection limit: if the
 * server kept the one gone, the 64th connection would be turned away. */
static void test_limits(void)
{
        static struct conn cs[CTL_MAX_CLIENTS];
        struct conn c, extra;
        int before = calls, alive = 0;
        json_t *o;
        char *line;

        ok(conn_open(&c) == 0 && conn_say(&c, "{\"cmd\":\"sta"), "gone: a client sends half a request");
        conn_close(&c);
        pump();
        is_int(calls, before, "gone: and goes: nothing handled");

        for (int i = 0; i < CTL_MAX_CLIENTS; i++) {
                if (conn_open(&cs[i]) < 0)
                        break;
                pump();
        }
        for (int i = 0; i < CTL_MAX_CLIENTS; i++)
                alive += cs[i].fd >= 0 && conn_quiet(&cs[i]);
        is_int(alive, CTL_MAX_CLIENTS, "limits: CTL_MAX_CLIENTS connections held open");
        ok(conn_open(&extra) == 0, "limits: one more connects");
        pump();
        line = conn_line(&extra);
        contains(line, "too many connections", "limits: and is told it is one too many");
        free(line);
        ok(!conn_line(&extra) && extra.eof, "limits: then closed");
        conn_close(&extra);

        conn_close(&cs[0]);
        pump();
        ok(conn_open(&extra) == 0 && conn_say(&extra, "{\"cmd\":\"status\"}\n"), "limits: one closed, a new one asks");
        o = conn_reply(&extra);
        ok(reply_ok(o, "status", before + 1), "limits: and is served");
        json_decref(o);
        conn_close(&extra);
        for (int i = 1; i < CTL_MAX_CLIENTS; i++)
                conn_close(&cs[i]);
        pump();
}

/* Invariant 3: while more than CTL_MAX_OUTPUT bytes wait unsent, no more
 * requests are read; once the client reads, all are answered in order. */
static void test_unread(void)
{
        enum { N = 200 };       /* N * BIG_REPLY bytes: far over any socket buffer */
        static char reqs[N * 17 + 1];
        struct conn c;
        int before = calls, handled, in_order = 0;

        for (int i = 0; i < N; i++)
                memcpy(reqs + i * 17, "{\"cmd\":\"status\"}\n", 17);
        big_replies = true;
        ok(conn_open(&c) == 0 && conn_write(&c, reqs, N * 17), "unread: 200 requests, their replies not read");
        pump();
        handled = calls - before;
        ok(handled > CTL_MAX_OUTPUT / BIG_REPLY && handled < N, "unread: held back after some (%d of %d handled)",
           handled, N);
        for (int i = 0; i < N; i++) {
                json_t *o = conn_reply(&c);
                in_order += reply_ok(o, "status", before + 1 + i);
                json_decref(o);
        }
        is_int(in_order, N, "unread: once read, all 200 answered in order");
        big_replies = false;
        conn_close(&c);
}

/* Invariant 5: a stream that does not read is dropped past its bound;
 * it gets a prefix of whole lines, one error line, and the end. */
static void test_stream(void)
{
        enum { LINE = 1000, MAX_SENDS = 20000 };   /* 20 MB: far over bound and socket buffer */
        const char *sub = "{\"cmd\":\"subscribe\",\"metrics\":[\"context_switches\"],\"per\":\"cpu\"}\n";
        char line[LINE + 1];
        struct conn c;
        json_t *o;
        int sent = 0, r = 0, got = 0, whole = 0;
        bool told = false;
        char *s;

        ctl_server_set_stream(srv, stream_handler, stream_gone, NULL);
        ok(conn_open(&c) == 0 && conn_say(&c, sub), "stream: a client subscribes");
        o = conn_reply(&c);
        ok(o && json_is_true(json_object_get(o, "ok")) && json_is_true(json_object_get(o, "subscribed")) && stream,
           "stream: the stream handler's reply");
        json_decref(o);
        ok(conn_say(&c, "{\"cmd\":\"status\"}\n"), "stream: another request on it");
        o = conn_reply(&c);
        contains(reply_error(o), "this connection is subscribed", "stream: refused");
        json_decref(o);

        while (sent < MAX_SENDS) {
                int n = snprintf(line, sizeof line, "{\"i\":%d,\"pad\":\"", sent);
                memset(line + n, 'y', LINE - n - 2);
                memcpy(line + LINE - 2, "\"}", 2);
                r = ctl_stream_send(stream, line, LINE);
                if (r < 0)
                        break;
                sent++;
        }
        is_int(r, -ENOBUFS, "stream: pushed without being read: dropped (-ENOBUFS)");
        ok((long)(sent + 1) * (LINE + 1) > CTL_MAX_STREAM_OUTPUT, "stream: not before its bound (%d lines sent)", sent);
        is_int(gone_calls, 1, "stream: gone() called once");
        while ((s = conn_line(&c))) {
                o = json_loads(s, 0, NULL);
                if (o && json_integer_value(json_object_get(o, "i")) == got && strlen(s) == LINE)
                        whole++;
                else if (reply_error(o)) {
                        told = strstr(reply_error(o), "subscription dropped") != NULL;
                        json_decref(o);
                        free(s);
                        break;
                }
                got++;
                json_decref(o);
                free(s);
        }
        ok(got > 0 && whole == got && got <= sent, "stream: %d whole lines in order, of %d pushed", whole, sent);
        ok(told, "stream: then told why, in one error line");
        ok(!conn_line(&c) && c.eof, "stream: then closed");
        is_int(gone_calls, 1, "stream: gone() still once");
        conn_close(&c);
}

int main(void)
{
        _cleanup_free_ char *err = NULL;

        if (!mkdtemp(dir)) {
                printf("Bail out! mkdtemp: %s\n", strerror(errno));
                return 1;
        }
        snprintf(sa.sun_path, sizeof sa.sun_path, "%s/control.sock", dir);
        if (sd_event_new(&ev) < 0 || ctl_server_new(ev, sa.sun_path, handler, NULL, &srv, &err) < 0) {
                printf("Bail out! control socket %s: %s\n", sa.sun_path, err ? err : "failed");
                return 1;
        }
        test_framing();
        test_bad();
        test_size();
        test_limits();
        test_unread();
        test_stream();
        ctl_server_free(srv);
        ok(access(sa.sun_path, F_OK) < 0 && errno == ENOENT, "the socket file removed with the server");
        sd_event_unref(ev);
        rmdir(dir);
        return tap_done();
}
