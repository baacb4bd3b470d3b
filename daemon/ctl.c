/* ctl.c - the control socket.
 *
 * A UNIX stream socket, mode 0660, owned by the daemon's user and the
 * control group: only root, that user and the group's members may
 * connect.  Each line is one JSON request, each answer one JSON line.
 * Requests are size-limited and validated (proto.c) before use, and a bad
 * one gets {"ok": false, "error": ...} while the daemon goes on.  Requests
 * that change state (runs, reload, import) are checked again per request,
 * from SO_PEERCRED and SO_PEERGROUPS: uid 0, the daemon's own uid, or a
 * member of the control group (a peer of the daemon's group, or one that
 * was handed a connected descriptor, may only ask for status).  An import
 * passes its file as a descriptor (SCM_RIGHTS), so the daemon never opens
 * a path on a client's behalf.
 *
 * The daemon is one event loop, so a client must not be able to hold it
 * or its memory: the limits in ctl.h (invariants 1-4) bound the number of
 * connections, the input and output kept per connection, and how long a
 * connection may stay without sending a complete request.  A subscription
 * turns its connection into a stream of pushed lines (invariant 5): it
 * waits for no request, and a reader that falls behind is dropped.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "ctl.h"
#include "ctl-socket.h"
#include "log.h"
#include "macro.h"
#include "proto-reply.h"

#define IDLE_USEC ((uint64_t)CTL_IDLE_TIMEOUT_S * USEC_PER_SEC)

struct client {
        struct ctl_server *srv;
        sd_event_source *src;
        sd_event_source *idle_src;     /* closes the connection, invariant 4 */
        int fd;
        struct ucred cred;
        gid_t groups[64];              /* supplementary groups at connect time */
        int ngroups;
        char *in;                      /* unparsed input, CTL_MAX_LINE bytes (invariant 2) */
        size_t inlen;
        char *out;                     /* replies not yet written */
        size_t outlen, outoff;
        bool mid_line;                 /* out[0..outoff) sent ends inside a line */
        uint64_t requests;             /* complete requests handled */
        int passed_fd;                 /* SCM_RIGHTS, for the next request */
        bool held;                     /* input held back by invariant 3, logged */
        bool closing;                  /* close once out is written */
        bool draining;                 /* closing after an oversized line: input read and dropped */
        size_t drained;                /* bytes dropped so far, at most CTL_MAX_LINE */
        bool stream;                   /* a subscription: pushed lines (invariants 4, 5) */
        bool in_io;                    /* inside client_io(): free at its end, not now */
        bool drop;                     /* free at the end of client_io() */
        struct client *next;
};

struct ctl_server {
        sd_event *event;
        sd_event_source *listen_src;
        int listen_fd;
        bool bound;                    /* the socket file is ours to unlink */
        char *path;
        ctl_handler handler;
        void *userdata;
        bool has_group;
        gid_t group;
        char *group_name;
        struct client *clients;
        int nclients;
        unsigned refused;              /* turned away since the last log line */
        uint64_t refused_logged;       /* when that line was logged (monotonic usec) */
        ctl_stream_handler stream_handler;
        ctl_stream_gone stream_gone;
        void *stream_userdata;
};

static void client_free(struct client *c)
{
        struct client **pp;

        for (pp = &c->srv->clients; *pp; pp = &(*pp)->next)
                if (*pp == c) {
                        *pp = c->next;
                        break;
                }
        c->srv->nclients--;
        if (c->stream && c->srv->stream_gone)
                c->srv->stream_gone(c->srv->stream_userdata, (struct ctl_stream *)c);
        sd_event_source_disable_unref(c->src);
        sd_event_source_disable_unref(c->idle_src);
        if (c->fd >= 0)
                close(c->fd);
        if (c->passed_fd >= 0)
                close(c->passed_fd);
        free(c->in);
        free(c->out);
        free(c);
}

static bool permitted(struct ctl_server *srv, const struct ucred *cred, const gid_t *groups, int ngroups)
{
        if (cred->uid == 0 || cred->uid == geteuid())
                return true;
        if (!srv->has_group)
                return false;
        if (cred->gid == srv->group)
                return true;
        for (int i = 0; i < ngroups; i++)
                if (groups[i] == srv->group)
                        return true;
        return false;
}

static size_t pending(const struct client *c)
{
        return c->outlen - c->outoff;
}

static int queue(struct client *c, json_t *reply)
{
        char *s = json_dumps(reply, JSON_COMPACT | JSON_PRESERVE_ORDER);
        size_t n;
        char *p;

        if (!s)
                return -ENOMEM;
        n = strlen(s);
        p = realloc(c->out, c->outlen + n + 1);
        if (!p) {
                free(s);
                return -ENOMEM;
        }
        memcpy(p + c->outlen, s, n);
        p[c->outlen + n] = '\n';
        c->out = p;
        c->outlen += n + 1;
        free(s);
        return 0;
}

static void queue_error(struct client *c, const char *msg)
{
        json_t *o = proto_reply_error(msg);
        if (o)
                queue(c, o);
        json_decref(o);
}

static void handle_line(struct client *c, const char *line, size_t len)
{
        struct ctl_server *srv = c->srv;
        struct proto_request req;
        _cleanup_free_ char *err = NULL;
        json_t *reply;
        int fd = c->passed_fd;
        uint64_t now;

        /* A complete request: the connection is not idle (invariant 4). */
        c->requests++;
        if (sd_event_now(srv->event, CLOCK_MONOTONIC, &now) >= 0 &&
            sd_event_source_set_time(c->idle_src, now + IDLE_USEC) >= 0)
                sd_event_source_set_enabled(c->idle_src, SD_EVENT_ONESHOT);

        c->passed_fd = -1;
        if (proto_parse_request(line, len, &req, &err) < 0) {
                log_warning("control: bad request from pid %d: %s", (int)c->cred.pid, err ? err : "invalid");
                queue_error(c, err ? err : "invalid request");
                goto out;
        }
        if (proto_cmd_changes_state(req.cmd) && !permitted(srv, &c->cred, c->groups, c->ngroups)) {
                char msg[256];
                snprintf(msg, sizeof msg,
                         "permission denied: uid %u is not root, not scalemond's user and not in group %s",
                         (unsigned)c->cred.uid, srv->group_name ? srv->group_name : "(none)");
                log_warning("control: uid %u (pid %d) may not %s: %s", (unsigned)c->cred.uid, (int)c->cred.pid,
                            proto_cmd_name(req.cmd), msg);
                queue_error(c, msg);
                proto_request_free(&req);
                goto out;
        }
        if (proto_cmd_is_stream(req.cmd) && srv->stream_handler) {
                reply = srv->stream_handler(srv->stream_userdata, &req, (struct ctl_stream *)c, &c->cred, &err);
                if (reply)
                        c->stream = true;
        } else if (c->stream) {
                /* a stream's ticks may be pushed from inside a handler */
                if (asprintf(&err, "this connection is subscribed: only 'subscribe' is taken on it; "
                                   "use another connection for '%s'", proto_cmd_name(req.cmd)) < 0)
                        err = NULL;
                reply = NULL;
        } else
                reply = srv->handler(srv->userdata, &req, fd, &c->cred, &err);
        /* invariant 4: a stream is not closed for not asking */
        if (c->stream)
                sd_event_source_set_enabled(c->idle_src, SD_EVENT_OFF);
        fd = -1;
        proto_request_free(&req);
        if (!reply) {
                queue_error(c, err ? err : "failed");
                goto out;
        }
        reply = proto_reply_ok(reply);
        if (!reply || queue(c, reply) < 0)
                c->closing = true;
        json_decref(reply);
out:
        if (fd >= 0)
                close(fd);
}

/* Handle the complete lines in c->in, as long as the replies are read
 * (invariant 3); keep the partial rest.  Returns whether any was handled. */
static bool handle_input(struct client *c)
{
        size_t start = 0;
        char *nl;

        while (!c->closing && pending(c) <= CTL_MAX_OUTPUT &&
               (nl = memchr(c->in + start, '\n', c->inlen - start))) {
                size_t len = (size_t)(nl - (c->in + start));
                handle_line(c, c->in + start, len);
                start += len + 1;
        }
        if (start > 0) {
                memmove(c->in, c->in + start, c->inlen - start);
                c->inlen -= start;
        }
        if (!c->closing && c->inlen >= CTL_MAX_LINE) {
                /* invariant 2: a full buffer and no newline */
                char msg[96];
                snprintf(msg, sizeof msg, "request longer than %d bytes; closing the connection", CTL_MAX_LINE);
                queue_error(c, msg);
                log_warning("control: request from pid %d (uid %u) longer than %d bytes, connection closed",
                            (int)c->cred.pid, (unsigned)c->cred.uid, CTL_MAX_LINE);
                /* The client may still be writing the line: read and drop
                 * up to as much again, so that it sees the answer rather
                 * than a broken pipe, then close. */
                c->closing = c->draining = true;
                c->inlen = 0;
        }
        if (!c->closing && pending(c) > CTL_MAX_OUTPUT && !c->held) {
                log_notice("control: pid %d (uid %u) does not read its replies (%zu bytes waiting); "
                           "its further requests wait", (int)c->cred.pid, (unsigned)c->cred.uid, pending(c));
                c->held = true;
        }
        return start > 0;
}

static int flush_out(struct client *c)
{
        while (c->outoff < c->outlen) {
                ssize_t k = send(c->fd, c->out + c->outoff, c->outlen - c->outoff, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (k < 0) {
                        if (errno == EAGAIN || errno == EINTR)
                                break;
                        return negative_errno();
                }
                c->outoff += (size_t)k;
        }
        if (c->outoff > 0)
                c->mid_line = c->out[c->outoff - 1] != '\n';
        if (c->outoff == c->outlen) {
                c->outlen = c->outoff = 0;
                c->held = false;
        } else if (c->outoff >= CTL_MAX_OUTPUT) {
                memmove(c->out, c->out + c->outoff, c->outlen - c->outoff);
                c->outlen -= c->outoff;
                c->outoff = 0;
        }
        return 0;
}

/* Read what the client sent, with any descriptor passed along. */
static int read_input(struct client *c)
{
        char cbuf[CMSG_SPACE(sizeof(int) * 4)];
        struct iovec iov;
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf };
        ssize_t k;

        if (!c->in) {
                c->in = malloc(CTL_MAX_LINE);
                if (!c->in)
                        return -ENOMEM;
        }
        iov = (struct iovec){ .iov_base = c->in + c->inlen, .iov_len = CTL_MAX_LINE - c->inlen };
        k = recvmsg(c->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        if (k < 0)
                return errno == EAGAIN || errno == EINTR ? 0 : negative_errno();
        if (k == 0)
                return -ECONNRESET;
        for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
                if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
                        size_t nfds = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                        int *fds = (int *)CMSG_DATA(cm);
                        for (size_t i = 0; i < nfds; i++) {
                                if (c->passed_fd < 0 && i == 0)
                                        c->passed_fd = fds[i];
                                else
                                        close(fds[i]);
                        }
                }
        c->inlen += (size_t)k;
        return 1;
}

/* After an oversized line: drop input until the client stops sending or
 * another CTL_MAX_LINE bytes came.  Returns whether to close now. */
static bool drain_input(struct client *c)
{
        char buf[8192];
        ssize_t k = recv(c->fd, buf, sizeof buf, MSG_DONTWAIT);

        if (k < 0)
                return !(errno == EAGAIN || errno == EINTR);
        if (k == 0)
                return true;
        c->drained += (size_t)k;
        return c->drained > CTL_MAX_LINE;
}

/* Read, handle, write.  Returns -1 once c has been freed. */
static int client_io(struct client *c, uint32_t revents)
{
        uint32_t events;

        c->in_io = true;
        if (revents & (EPOLLIN | EPOLLHUP | EPOLLERR) && c->draining) {
                if (drain_input(c)) {
                        flush_out(c);
                        goto gone;
                }
        } else if (revents & EPOLLIN && !c->closing && pending(c) <= CTL_MAX_OUTPUT && c->inlen < CTL_MAX_LINE) {
                int r = read_input(c);
                if (r == -ECONNRESET && c->stream)
                        goto gone;      /* a subscriber went away: nothing more to tell it */
                if (r == -ECONNRESET && pending(c) > 0)
                        c->closing = true;      /* it sent all it will: answer, then close */
                else if (r < 0)
                        goto gone;
        } else if (revents & (EPOLLHUP | EPOLLERR) && !(revents & EPOLLOUT) && pending(c) == 0)
                goto gone;
        for (;;) {
                bool handled = handle_input(c);
                size_t before = pending(c);

                if (flush_out(c) < 0)
                        goto gone;
                /* written out: requests held back by invariant 3 may go on */
                if (!handled && pending(c) == before)
                        break;
        }
        if (c->drop || (c->closing && !c->draining && pending(c) == 0))
                goto gone;
        events = 0;
        if (c->draining || (!c->closing && pending(c) <= CTL_MAX_OUTPUT && c->inlen < CTL_MAX_LINE))
                events |= EPOLLIN;
        if (pending(c) > 0)
                events |= EPOLLOUT;
        sd_event_source_set_io_events(c->src, events);
        c->in_io = false;
        return 0;
gone:
        client_free(c);
        return -1;
}

/* ---- streams (invariant 5) ---- */

void ctl_server_set_stream(struct ctl_server *srv, ctl_stream_handler handler, ctl_stream_gone gone, void *userdata)
{
        srv->stream_handler = handler;
        srv->stream_gone = gone;
        srv->stream_userdata = userdata;
}

/* Invariant 5: a stream over its bound stops being one.  Its unsent
 * ticks are discarded (but the rest of a line it has begun to receive),
 * it is told why in one error line, and the connection closes once that
 * is read, or after CTL_IDLE_TIMEOUT_S (on_idle()). */
static void stream_drop(struct client *c)
{
        size_t unsent = pending(c), keep = c->outoff;
        uint64_t now;
        char msg[200];

        log_notice("control: dropping the subscription of pid %d (uid %u): %zu bytes of ticks unsent, over the "
                   "bound of %d; it does not read them fast enough", (int)c->cred.pid, (unsigned)c->cred.uid, unsent,
                   CTL_MAX_STREAM_OUTPUT);
        if (c->mid_line) {
                const char *nl = memchr(c->out + c->outoff, '\n', unsent);
                keep = nl ? (size_t)(nl - c->out) + 1 : c->outlen;
        }
        c->outlen = keep;
        if (c->srv->stream_gone)
                c->srv->stream_gone(c->srv->stream_userdata, (struct ctl_stream *)c);
        c->stream = false;
        c->closing = true;
        snprintf(msg, sizeof msg, "subscription dropped: %zu bytes of ticks unsent, over the bound of %d; "
                 "read them faster, or ask for fewer metrics", unsent, CTL_MAX_STREAM_OUTPUT);
        queue_error(c, msg);
        flush_out(c);
        if (sd_event_now(c->srv->event, CLOCK_MONOTONIC, &now) >= 0 &&
            sd_event_source_set_time(c->idle_src, now + IDLE_USEC) >= 0)
                sd_event_source_set_enabled(c->idle_src, SD_EVENT_ONESHOT);
        if (!c->in_io)
                sd_event_source_set_io_events(c->src, pending(c) > 0 ? EPOLLOUT : 0);
}

int ctl_stream_send(struct ctl_stream *st, const char *line, size_t len)
{
        struct client *c = (struct client *)st;
        char *p;

        if (c->drop || c->closing || !c->stream)
                return -ENOBUFS;
        p = realloc(c->out, c->outlen + len + 1);
        if (!p)
                return -ENOMEM;
        memcpy(p + c->outlen, line, len);
        p[c->outlen + len] = '\n';
        c->out = p;
        c->outlen += len + 1;
        if (flush_out(c) < 0) {
                if (c->in_io)
                        c->drop = true;
                else
                        client_free(c);
                return -ENOBUFS;
        }
        if (pending(c) > CTL_MAX_STREAM_OUTPUT) {
                stream_drop(c);
                if (!c->in_io && pending(c) == 0)
                        client_free(c);
                return -ENOBUFS;
        }
        sd_event_source_set_io_events(c->src, pending(c) > 0 ? EPOLLIN | EPOLLOUT : EPOLLIN);
        return 0;
}

static int on_client(sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
        client_io(userdata, revents);
        return 0;
}

static int on_idle(sd_event_source *src, uint64_t usec, void *userdata)
{
        struct client *c = userdata;
        uint64_t before = c->requests;
        int avail = 0;

        if (c->closing) {       /* told why it is closed, and did not read it */
                log_debug("control: closing the connection of pid %d (uid %u)", (int)c->cred.pid,
                          (unsigned)c->cred.uid);
                client_free(c);
                return 0;
        }
        /* A request that arrived with the deadline is still served. */
        if (ioctl(c->fd, FIONREAD, &avail) == 0 && avail > 0) {
                if (client_io(c, EPOLLIN) < 0 || c->requests != before)
                        return 0;
        }
        if (pending(c) > CTL_MAX_OUTPUT)
                log_notice("control: closing the connection of pid %d (uid %u): %zu bytes of replies unread for "
                           "%ds", (int)c->cred.pid, (unsigned)c->cred.uid, pending(c), CTL_IDLE_TIMEOUT_S);
        else if (c->inlen > 0)
                log_notice("control: closing the connection of pid %d (uid %u): %zu bytes without a newline "
                           "for %ds", (int)c->cred.pid, (unsigned)c->cred.uid, c->inlen, CTL_IDLE_TIMEOUT_S);
        else
                log_debug("control: closing the idle connection of pid %d (uid %u)", (int)c->cred.pid,
                         (unsigned)c->cred.uid);
        if (pending(c) <= CTL_MAX_OUTPUT) {
                /* said once, if it fits; the daemon does not wait for it */
                char msg[96];
                snprintf(msg, sizeof msg, "idle for %ds without a complete request; closing the connection",
                         CTL_IDLE_TIMEOUT_S);
                queue_error(c, msg);
                flush_out(c);
        }
        client_free(c);
        return 0;
}

/* Invariant 1: turn a connection away with one line; log once per burst
 * (at most once per idle timeout while it lasts). */
static void refuse(struct ctl_server *srv, int cfd)
{
        static const char msg[] = "{\"ok\":false,\"error\":\"too many connections; try again later\"}\n";
        uint64_t now = 0;

        if (send(cfd, msg, sizeof msg - 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
                /* it is being turned away anyway */
        }
        close(cfd);
        sd_event_now(srv->event, CLOCK_MONOTONIC, &now);
        srv->refused++;
        if (srv->refused_logged == 0 || now >= srv->refused_logged + IDLE_USEC) {
                log_warning("control: too many connections (%d open, at most %d, %d of them kept for peers who may "
                            "change state): turning new ones away (%u since the last such message)",
                            srv->nclients, CTL_MAX_CLIENTS, CTL_RESERVED_CLIENTS, srv->refused);
                srv->refused_logged = now;
                srv->refused = 0;
        }
}

static int on_accept(sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
        struct ctl_server *srv = userdata;
        struct client *c;
        struct ucred cred = { .pid = 0, .uid = (uid_t)-1, .gid = (gid_t)-1 };
        gid_t groups[64];
        int ngroups = 0;
        socklen_t len;
        bool may_change;
        uint64_t now;
        int cfd, r;

        cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (cfd < 0)
                return 0;
        len = sizeof cred;
        if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
                cred.uid = (uid_t)-1;
                cred.gid = (gid_t)-1;
        }
        len = sizeof groups;
        if (getsockopt(cfd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) == 0)
                ngroups = (int)(len / sizeof(gid_t));
        may_change = permitted(srv, &cred, groups, ngroups);
        if (srv->nclients >= CTL_MAX_CLIENTS ||
            (!may_change && srv->nclients >= CTL_MAX_CLIENTS - CTL_RESERVED_CLIENTS)) {
                refuse(srv, cfd);
                return 0;
        }
        c = calloc(1, sizeof *c);
        if (!c) {
                close(cfd);
                return 0;
        }
        c->srv = srv;
        c->fd = cfd;
        c->passed_fd = -1;
        c->cred = cred;
        memcpy(c->groups, groups, sizeof groups);
        c->ngroups = ngroups;
        r = sd_event_now(srv->event, CLOCK_MONOTONIC, &now);
        if (r >= 0)
                r = sd_event_add_time(srv->event, &c->idle_src, CLOCK_MONOTONIC, now + IDLE_USEC, USEC_PER_SEC / 10,
                                      on_idle, c);
        if (r >= 0)
                r = sd_event_add_io(srv->event, &c->src, cfd, EPOLLIN, on_client, c);
        if (r < 0) {
                sd_event_source_disable_unref(c->idle_src);
                close(cfd);
                free(c);
                return 0;
        }
        c->next = srv->clients;
        srv->clients = c;
        srv->nclients++;
        return 0;
}

int ctl_server_set_group(struct ctl_server *srv, const char *group)
{
        struct group *g = group ? getgrnam(group) : NULL;
        int r = 0;

        free(srv->group_name);
        srv->group_name = group ? strdup(group) : NULL;
        srv->has_group = g != NULL;
        if (!g)
                r = -ENOENT;
        else {
                srv->group = g->gr_gid;
                r = ctl_socket_chgrp(srv->path, g->gr_gid);
        }
        /* Without the control group the file has the daemon's own, never
         * the control group of before a reload. */
        if (r < 0) {
                int k = ctl_socket_chgrp(srv->path, getegid());
                if (k < 0)
                        log_warning("control socket %s: cannot give it back to gid %u: %s", srv->path,
                                    (unsigned)getegid(), strerror(-k));
        }
        return r;
}

int ctl_server_new(sd_event *e, const char *path, ctl_handler handler, void *userdata, struct ctl_server **ret,
                   char **ret_err)
{
        struct ctl_server *srv;
        int r;

        srv = calloc(1, sizeof *srv);
        if (!srv)
                return -ENOMEM;
        srv->listen_fd = -1;
        srv->event = sd_event_ref(e);
        srv->handler = handler;
        srv->userdata = userdata;
        srv->path = strdup(path);
        if (!srv->path) {
                ctl_server_free(srv);
                return -ENOMEM;
        }
        srv->listen_fd = ctl_socket_listen(path, ret_err);
        if (srv->listen_fd < 0) {
                r = srv->listen_fd;
                ctl_server_free(srv);
                return r;
        }
        srv->bound = true;
        r = sd_event_add_io(e, &srv->listen_src, srv->listen_fd, EPOLLIN, on_accept, srv);
        if (r < 0) {
                if (asprintf(ret_err, "cannot listen on %s: %s", path, strerror(-r)) < 0)
                        *ret_err = NULL;
                ctl_server_free(srv);
                return r;
        }
        *ret = srv;
        return 0;
}

struct ctl_server *ctl_server_free(struct ctl_server *srv)
{
        if (!srv)
                return NULL;
        while (srv->clients)
                client_free(srv->clients);
        sd_event_source_disable_unref(srv->listen_src);
        if (srv->listen_fd >= 0)
                close(srv->listen_fd);
        if (srv->bound)
                unlink(srv->path);
        sd_event_unref(srv->event);
        free(srv->path);
        free(srv->group_name);
        free(srv);
        return NULL;
}
