/* ctl.c - the control socket.
 *
 * A UNIX stream socket that anyone may connect to; each line is one JSON
 * request, each answer one JSON line.  Requests are size-limited and
 * validated (proto.c) before use, and a bad one gets {"ok": false,
 * "error": ...} while the daemon goes on.  Requests that change state
 * (runs, reload, import) need a permitted peer, decided from SO_PEERCRED
 * and SO_PEERGROUPS: uid 0, the daemon's own uid, or a member of the
 * control group.  An import passes its file as a descriptor (SCM_RIGHTS),
 * so the daemon never opens a path on a client's behalf.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "ctl.h"
#include "log.h"
#include "macro.h"

#define MAX_CLIENTS 64

struct client {
        struct ctl_server *srv;
        sd_event_source *src;
        int fd;
        struct ucred cred;
        gid_t groups[64];              /* supplementary groups at connect time */
        int ngroups;
        char *in;                      /* partial request, up to PROTO_MAX_LINE */
        size_t inlen;
        char *out;                     /* replies not yet written */
        size_t outlen, outoff;
        int passed_fd;                 /* SCM_RIGHTS, for the next request */
        bool discarding;               /* skipping the rest of an oversized line */
        bool closing;                  /* close once out is written */
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
        sd_event_source_disable_unref(c->src);
        if (c->fd >= 0)
                close(c->fd);
        if (c->passed_fd >= 0)
                close(c->passed_fd);
        free(c->in);
        free(c->out);
        free(c);
}

static bool permitted(struct ctl_server *srv, const struct client *c)
{
        if (c->cred.uid == 0 || c->cred.uid == geteuid())
                return true;
        if (!srv->has_group)
                return false;
        if (c->cred.gid == srv->group)
                return true;
        for (int i = 0; i < c->ngroups; i++)
                if (c->groups[i] == srv->group)
                        return true;
        return false;
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
        json_t *o = json_pack("{s:b,s:s}", "ok", 0, "error", msg);
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

        c->passed_fd = -1;
        if (proto_parse_request(line, len, &req, &err) < 0) {
                log_warning("control: bad request from pid %d: %s", (int)c->cred.pid, err ? err : "invalid");
                queue_error(c, err ? err : "invalid request");
                goto out;
        }
        if (proto_cmd_changes_state(req.cmd) && !permitted(srv, c)) {
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
        reply = srv->handler(srv->userdata, &req, fd, &c->cred, &err);
        fd = -1;
        proto_request_free(&req);
        if (!reply) {
                queue_error(c, err ? err : "failed");
                goto out;
        }
        json_object_set_new(reply, "ok", json_true());
        if (queue(c, reply) < 0)
                c->closing = true;
        json_decref(reply);
out:
        if (fd >= 0)
                close(fd);
}

static int flush_out(struct client *c)
{
        while (c->outoff < c->outlen) {
                ssize_t k = send(c->fd, c->out + c->outoff, c->outlen - c->outoff, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (k < 0) {
                        if (errno == EAGAIN || errno == EINTR)
                                return 0;
                        return negative_errno();
                }
                c->outoff += (size_t)k;
        }
        c->outlen = c->outoff = 0;
        return 0;
}

static int on_client(sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
        struct client *c = userdata;
        char cbuf[CMSG_SPACE(sizeof(int) * 4)];
        char buf[8192];
        struct iovec iov = { .iov_base = buf, .iov_len = sizeof buf };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf };
        ssize_t k;

        if (revents & EPOLLIN && !c->closing) {
                k = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
                if (k < 0 && (errno == EAGAIN || errno == EINTR))
                        goto write;
                if (k <= 0) {
                        client_free(c);
                        return 0;
                }
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
                for (ssize_t i = 0; i < k; i++) {
                        if (buf[i] == '\n') {
                                if (!c->discarding)
                                        handle_line(c, c->in ? c->in : "", c->inlen);
                                c->discarding = false;
                                c->inlen = 0;
                                continue;
                        }
                        if (c->discarding)
                                continue;
                        if (c->inlen + 1 >= PROTO_MAX_LINE) {
                                /* answer now, drop the rest of the line */
                                queue_error(c, "request longer than 65536 bytes");
                                log_warning("control: request from pid %d longer than 65536 bytes, ignored",
                                            (int)c->cred.pid);
                                c->discarding = true;
                                c->inlen = 0;
                                continue;
                        }
                        if (!c->in) {
                                c->in = malloc(PROTO_MAX_LINE);
                                if (!c->in) {
                                        client_free(c);
                                        return 0;
                                }
                        }
                        c->in[c->inlen++] = buf[i];
                }
        } else if (revents & (EPOLLHUP | EPOLLERR) && !(revents & EPOLLOUT)) {
                client_free(c);
                return 0;
        }
write:
        if (flush_out(c) < 0) {
                client_free(c);
                return 0;
        }
        if (c->closing && c->outlen == 0) {
                client_free(c);
                return 0;
        }
        sd_event_source_set_io_events(src, c->outlen ? EPOLLIN | EPOLLOUT : EPOLLIN);
        return 0;
}

static int on_accept(sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
        struct ctl_server *srv = userdata;
        struct client *c;
        socklen_t len;
        int cfd, r;

        cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (cfd < 0)
                return 0;
        if (srv->nclients >= MAX_CLIENTS) {
                static const char msg[] = "{\"ok\":false,\"error\":\"too many connections; try again\"}\n";
                if (send(cfd, msg, sizeof msg - 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
                        /* it is being turned away anyway */
                }
                close(cfd);
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
        len = sizeof c->cred;
        if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &c->cred, &len) < 0) {
                c->cred.uid = (uid_t)-1;
                c->cred.gid = (gid_t)-1;
        }
        len = sizeof c->groups;
        if (getsockopt(cfd, SOL_SOCKET, SO_PEERGROUPS, c->groups, &len) == 0)
                c->ngroups = (int)(len / sizeof(gid_t));
        r = sd_event_add_io(srv->event, &c->src, cfd, EPOLLIN, on_client, c);
        if (r < 0) {
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

        free(srv->group_name);
        srv->group_name = group ? strdup(group) : NULL;
        srv->has_group = g != NULL;
        if (g)
                srv->group = g->gr_gid;
        return g ? 0 : -ENOENT;
}

/* Is someone listening on path?  Then it is not ours to replace. */
static bool socket_in_use(const char *path)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        if (fd < 0)
                return false;
        snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
        return connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
}

int ctl_server_new(sd_event *e, const char *path, ctl_handler handler, void *userdata, struct ctl_server **ret,
                   char **ret_err)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        struct ctl_server *srv;
        struct stat st;
        _cleanup_free_ char *dir = NULL;
        char *slash;
        int r;

        if (strlen(path) >= sizeof sa.sun_path) {
                if (asprintf(ret_err, "control socket path %s is longer than %zu bytes", path,
                             sizeof sa.sun_path - 1) < 0)
                        *ret_err = NULL;
                return -ENAMETOOLONG;
        }
        srv = calloc(1, sizeof *srv);
        if (!srv)
                return -ENOMEM;
        srv->listen_fd = -1;
        srv->event = sd_event_ref(e);
        srv->handler = handler;
        srv->userdata = userdata;
        srv->path = strdup(path);
        dir = strdup(path);
        if (!srv->path || !dir) {
                ctl_server_free(srv);
                return -ENOMEM;
        }
        slash = strrchr(dir, '/');
        if (slash && slash != dir) {
                *slash = 0;
                if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
                        r = negative_errno();
                        if (asprintf(ret_err, "cannot create the socket directory %s: %s", dir, strerror(-r)) < 0)
                                *ret_err = NULL;
                        ctl_server_free(srv);
                        return r;
                }
        }
        if (lstat(path, &st) == 0) {
                if (!S_ISSOCK(st.st_mode)) {
                        if (asprintf(ret_err, "%s exists and is not a socket; remove it or use another --socket",
                                     path) < 0)
                                *ret_err = NULL;
                        ctl_server_free(srv);
                        return -EEXIST;
                }
                if (socket_in_use(path)) {
                        if (asprintf(ret_err, "control socket %s is in use by another scalemond; stop it or use "
                                              "another --socket", path) < 0)
                                *ret_err = NULL;
                        ctl_server_free(srv);
                        return -EADDRINUSE;
                }
                unlink(path);   /* left behind by a daemon that died */
        }
        srv->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (srv->listen_fd < 0) {
                r = negative_errno();
                goto fail;
        }
        snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
        if (bind(srv->listen_fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
                r = negative_errno();
                goto fail;
        }
        srv->bound = true;
        /* Anyone may connect and read the status; changes are checked per
         * request against the peer's credentials. */
        if (chmod(path, 0666) < 0 || listen(srv->listen_fd, 16) < 0) {
                r = negative_errno();
                goto fail;
        }
        r = sd_event_add_io(e, &srv->listen_src, srv->listen_fd, EPOLLIN, on_accept, srv);
        if (r < 0)
                goto fail;
        *ret = srv;
        return 0;
fail:
        if (asprintf(ret_err, "cannot listen on %s: %s", path, strerror(-r)) < 0)
                *ret_err = NULL;
        ctl_server_free(srv);
        return r;
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
