/* source.c - fetch what the exporter shows: scalemond's running totals
 * over the control socket, and recent runs from the database (read-only).
 *
 * The control socket speaks JSON lines (lib/proto.c, lib/proto-reply.c);
 * the exporter sends the totals request, which any peer that may connect
 * may ask (it changes nothing), and reads one line back, within a
 * deadline, so a stuck daemon cannot hold a scrape for longer than the
 * scraper waits; proto_totals_decode() reads it.
 */
#include "config.h"

#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "macro.h"
#include "proto.h"
#include "source.h"
#include "timeutil.h"

#define MAX_REPLY (16 << 20)

static int remaining_ms(int64_t deadline)
{
        int64_t left = (deadline - now_monotonic_ns()) / NSEC_PER_MSEC;
        return left < 0 ? 0 : (int)MIN(left, (int64_t)60000);
}

int src_totals_fetch(const char *socket_path, int timeout_ms, struct proto_totals *ret, char **ret_err)
{
        _cleanup_free_ char *req = proto_request_line(&(struct proto_request){ .cmd = CMD_TOTALS });
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int64_t deadline = now_monotonic_ns() + (int64_t)timeout_ms * NSEC_PER_MSEC;
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, cap = 0, sent = 0;

        *ret_err = NULL;
        if (!req)
                return ret_errf(ret_err, -ENOMEM, "out of memory");
        if (strlen(socket_path) >= sizeof sa.sun_path)
                return ret_errf(ret_err, -ENAMETOOLONG, "--socket %s: too long for a UNIX socket path", socket_path);
        snprintf(sa.sun_path, sizeof sa.sun_path, "%s", socket_path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return ret_errf(ret_err, -errno, "cannot create a socket: %s", strerror(errno));
        if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0 && errno != EINPROGRESS) {
                int e = errno;
                return ret_errf(ret_err, -e, "cannot reach scalemond at %s: %s%s", socket_path, strerror(e),
                            e == EACCES ? " (the exporter's user must be in the control group, scalemon)" : "");
        }
        while (sent < strlen(req)) {
                struct pollfd p = { .fd = fd, .events = POLLOUT };
                ssize_t k;

                if (poll(&p, 1, remaining_ms(deadline)) <= 0)
                        return ret_errf(ret_err, -ETIMEDOUT, "scalemond at %s did not take the request in time",
                                    socket_path);
                k = send(fd, req + sent, strlen(req) - sent, MSG_NOSIGNAL);
                if (k < 0 && errno != EAGAIN && errno != EINTR)
                        return ret_errf(ret_err, -errno, "cannot send to scalemond at %s: %s", socket_path,
                                    strerror(errno));
                if (k > 0)
                        sent += (size_t)k;
        }
        for (;;) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                ssize_t k;

                if (len + 65536 + 1 > cap) {
                        char *b = realloc(buf, cap = MAX(cap * 2, (size_t)131072));
                        if (!b)
                                return ret_errf(ret_err, -ENOMEM, "out of memory");
                        buf = b;
                }
                if (poll(&p, 1, remaining_ms(deadline)) <= 0)
                        return ret_errf(ret_err, -ETIMEDOUT, "scalemond at %s did not answer within %d ms", socket_path,
                                    timeout_ms);
                k = recv(fd, buf + len, cap - len - 1, 0);
                if (k < 0 && (errno == EAGAIN || errno == EINTR))
                        continue;
                if (k <= 0)
                        return ret_errf(ret_err, -ECONNRESET, "scalemond at %s closed the connection: %s", socket_path,
                                    k < 0 ? strerror(errno) : "no reply");
                if (memchr(buf + len, '\n', (size_t)k)) {
                        len += (size_t)k;
                        buf[len] = 0;
                        break;
                }
                len += (size_t)k;
                if (len > MAX_REPLY)
                        return ret_errf(ret_err, -EMSGSIZE, "scalemond's reply is longer than %d bytes", MAX_REPLY);
        }
        return proto_totals_decode(buf, ret, ret_err);
}

void src_runs_free(struct src_run *r, size_t n)
{
        for (size_t i = 0; r && i < n; i++) {
                for (size_t k = 0; k < r[i].ntags; k++) {
                        free(r[i].tags[k].key);
                        free(r[i].tags[k].value);
                }
                free(r[i].tags);
                for (size_t k = 0; k < r[i].nscores; k++)
                        free(r[i].scores[k].key);
                free(r[i].scores);
        }
        free(r);
}

int src_runs_read(struct store *st, int64_t since_ns, size_t max_runs, struct src_run **ret, size_t *ret_n)
{
        struct run_filter f = { .since = since_ns, .until = INT64_MAX };
        struct run_info *ri = NULL, *open = NULL;
        size_t nri = 0, nopen = 0, n = 0;
        struct src_run *out = NULL;
        int r;

        r = store_runs_list(st, &f, &ri, &nri);
        if (r >= 0)
                r = store_runs_open(st, &open, &nopen);
        if (r < 0)
                goto out;
        out = calloc(nri + nopen + 1, sizeof *out);
        if (!out) {
                r = -ENOMEM;
                goto out;
        }
        /* by start, oldest first: the newest are the last max_runs */
        for (size_t i = nri > max_runs ? nri - max_runs : 0; i < nri + nopen; i++) {
                const struct run_info *x = i < nri ? &ri[i] : &open[i - nri];
                struct run_detail d = { 0 };
                bool dup = false;

                for (size_t k = 0; k < n && !dup; k++)
                        dup = streq(out[k].name, x->name);
                if (dup)
                        continue;       /* an open run that also started in the window */
                r = store_run_detail_parts(st, x->id, RUN_TAGS | RUN_SCORES, &d);
                if (r < 0)
                        goto out;
                snprintf(out[n].name, sizeof out[n].name, "%s", x->name);
                snprintf(out[n].status, sizeof out[n].status, "%s", x->status);
                out[n].start = x->start;
                out[n].end = x->end;
                out[n].tags = TAKE_PTR(d.tags);
                out[n].ntags = d.ntags;
                out[n].scores = TAKE_PTR(d.scores);
                out[n].nscores = d.nscores;
                d.ntags = d.nscores = 0;
                run_detail_free(&d);
                n++;
        }
        *ret = TAKE_PTR(out);
        *ret_n = n;
        r = 0;
out:
        src_runs_free(out, n);
        run_infos_free(ri, nri);
        run_infos_free(open, nopen);
        return r;
}
