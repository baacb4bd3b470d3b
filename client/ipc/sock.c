/* sock.c - talk to scalemond over its control socket: one JSON request
 * per line, one JSON reply per line. */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "cli.h"
#include "proto.h"
#include "proto-reply.h"
#include "sock.h"
#include "timeutil.h"

#define REPLY_TIMEOUT_MS 30000

/* The socket is mode 0660, owned by scalemond's user and the control group
 * (scalemond(8)): name the group, which the client cannot know otherwise. */
void ctl_denied_why(const struct ctl *ctl, char *buf, size_t len)
{
        char group[64] = "the socket's group";
        struct stat st;

        if (stat(ctl->socket_path, &st) == 0) {
                struct group *g = getgrgid(st.st_gid);
                if (g)
                        snprintf(group, sizeof group, "group %s", g->gr_name);
                else
                        snprintf(group, sizeof group, "group %u", (unsigned)st.st_gid);
        }
        snprintf(buf, len, "permission denied on %s: only root, scalemond's user and members of %s may use it "
                           "(ask to be added to the group)", ctl->socket_path, group);
}

int ctl_connect(struct ctl *ctl, bool quiet)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd, r;

        if (ctl->sock_fd >= 0) {
                /* The daemon sends nothing unasked: a reused connection that
                 * is readable was closed as idle (scalemond(8)); connect again. */
                struct pollfd p = { .fd = ctl->sock_fd, .events = POLLIN };
                if (poll(&p, 1, 0) == 0)
                        return 0;
                close(ctl->sock_fd);
                ctl->sock_fd = -1;
        }
        ctl->sock_errno = 0;
        if (strlen(ctl->socket_path) >= sizeof sa.sun_path) {
                ctl->sock_errno = ENAMETOOLONG;
                return quiet ? EXIT_FAILED
                             : ctl_fail(EXIT_USAGE, "--socket %s: longer than a UNIX socket path may be",
                                        ctl->socket_path);
        }
        snprintf(sa.sun_path, sizeof sa.sun_path, "%s", ctl->socket_path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
                ctl->sock_errno = errno;
                return quiet ? EXIT_FAILED : ctl_fail(EXIT_FAILED, "cannot create a socket: %s", strerror(errno));
        }
        if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
                r = errno;
                close(fd);
                ctl->sock_errno = r;
                if (quiet)
                        return EXIT_FAILED;
                if (r == EACCES) {
                        char why[512];
                        ctl_denied_why(ctl, why, sizeof why);
                        return ctl_fail(EXIT_FAILED, "%s", why);
                }
                return ctl_fail(EXIT_FAILED,
                                "cannot reach scalemond at %s: %s (is scalemond running? --socket chooses another)",
                                ctl->socket_path, strerror(r));
        }
        ctl->sock_fd = fd;
        return 0;
}

static int send_all(int fd, const char *buf, size_t len, int pass_fd)
{
        bool first = true;

        while (len > 0) {
                struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
                char cbuf[CMSG_SPACE(sizeof(int))];
                struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
                ssize_t k;

                if (first && pass_fd >= 0) {
                        struct cmsghdr *cm;
                        memset(cbuf, 0, sizeof cbuf);
                        mh.msg_control = cbuf;
                        mh.msg_controllen = sizeof cbuf;
                        cm = CMSG_FIRSTHDR(&mh);
                        cm->cmsg_level = SOL_SOCKET;
                        cm->cmsg_type = SCM_RIGHTS;
                        cm->cmsg_len = CMSG_LEN(sizeof(int));
                        memcpy(CMSG_DATA(cm), &pass_fd, sizeof(int));
                }
                k = sendmsg(fd, &mh, MSG_NOSIGNAL);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                first = false;
                buf += k;
                len -= (size_t)k;
        }
        return 0;
}

/* Read one line of reply (the daemon sends nothing unasked). */
static int read_line(struct ctl *ctl, char **ret)
{
        size_t len = 0, cap = 0;
        char *buf = NULL;

        for (;;) {
                struct pollfd p = { .fd = ctl->sock_fd, .events = POLLIN };
                char c[4096];
                ssize_t k;
                char *nl;

                if (poll(&p, 1, REPLY_TIMEOUT_MS) == 0) {
                        free(buf);
                        return -ETIMEDOUT;
                }
                k = recv(ctl->sock_fd, c, sizeof c, MSG_PEEK);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0) {
                        free(buf);
                        return k == 0 ? -ECONNRESET : -errno;
                }
                nl = memchr(c, '\n', (size_t)k);
                if (nl)
                        k = nl - c + 1;
                k = recv(ctl->sock_fd, c, (size_t)k, 0);
                if (k <= 0) {
                        free(buf);
                        return -ECONNRESET;
                }
                if (len + (size_t)k + 1 > cap) {
                        char *p2 = realloc(buf, cap = (len + (size_t)k + 1) * 2);
                        if (!p2) {
                                free(buf);
                                return -ENOMEM;
                        }
                        buf = p2;
                }
                memcpy(buf + len, c, (size_t)k);
                len += (size_t)k;
                if (nl) {
                        buf[len - 1] = 0;
                        *ret = buf;
                        return 0;
                }
                if (len > 16 << 20) {
                        free(buf);
                        return -EMSGSIZE;
                }
        }
}

int ctl_request(struct ctl *ctl, const struct proto_request *req, int pass_fd, json_t **ret_reply)
{
        _cleanup_free_ char *line = NULL, *reply = NULL, *err = NULL;
        json_t *o;
        int r;

        r = ctl_connect(ctl, false);
        if (r)
                return r;
        line = proto_request_line(req);
        if (!line)
                return ctl_fail(EXIT_FAILED, "out of memory");
        r = send_all(ctl->sock_fd, line, strlen(line), pass_fd);
        if (r >= 0)
                r = read_line(ctl, &reply);
        if (r < 0)
                return ctl_fail(EXIT_FAILED, "lost the connection to scalemond at %s: %s", ctl->socket_path,
                                r == -ETIMEDOUT ? "no reply within 30s" : strerror(-r));
        r = proto_reply_parse(reply, &o, &err);
        if (r == -EINVAL)
                return ctl_fail(EXIT_FAILED, "scalemond sent something that is not a reply: %.80s", reply);
        if (r == -EPROTO)
                return ctl_fail(EXIT_FAILED, "%s", err ? err : "scalemond refused the request");
        if (r < 0)
                return ctl_fail(EXIT_FAILED, "out of memory");
        *ret_reply = o;
        return 0;
}
