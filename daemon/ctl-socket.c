/* ctl-socket.c - the control socket's file: checked before anything is
 * created (not too long, not a foreign symlink, not another daemon's),
 * bound with its mode, and given to the control group.  The connections
 * on it are ctl.c's. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl-socket.h"
#include "macro.h"
#include "pathsec.h"

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

int ctl_socket_check(const char *path, char **ret_err)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        uid_t link_uid, dir_uid;
        struct stat st;

        if (strlen(path) >= sizeof sa.sun_path) {
                if (asprintf(ret_err, "control socket path %s is longer than %zu bytes", path,
                             sizeof sa.sun_path - 1) < 0)
                        *ret_err = NULL;
                return -ENAMETOOLONG;
        }
        if (path_foreign_symlink(path, &link_uid, &dir_uid) > 0) {
                if (asprintf(ret_err, "control socket %s is a symlink owned by uid %u, neither scalemond's user "
                                      "(uid %u) nor the owner of its directory (uid %u): refusing to follow it; "
                                      "remove it or use another --socket",
                             path, (unsigned)link_uid, (unsigned)geteuid(), (unsigned)dir_uid) < 0)
                        *ret_err = NULL;
                return -ELOOP;
        }
        if (lstat(path, &st) == 0) {
                if (!S_ISSOCK(st.st_mode)) {
                        if (asprintf(ret_err, "%s exists and is not a socket; remove it or use another --socket",
                                     path) < 0)
                                *ret_err = NULL;
                        return -EEXIST;
                }
                if (socket_in_use(path)) {
                        if (asprintf(ret_err, "control socket %s is in use by another scalemond; stop it or use "
                                              "another --socket", path) < 0)
                                *ret_err = NULL;
                        return -EADDRINUSE;
                }
        }
        return 0;
}

/* Give the socket file to gid: the file is ours (bound by us, not a
 * symlink: lchown), and nothing to do when it has that group already (the
 * service's system call filter may not allow chown(2) at all). */
int ctl_socket_chgrp(const char *path, gid_t gid)
{
        struct stat st;

        if (lstat(path, &st) == 0 && st.st_gid == gid)
                return 0;
        return lchown(path, (uid_t)-1, gid) < 0 ? negative_errno() : 0;
}

int ctl_socket_listen(const char *path, char **ret_err)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_free_ char *dir = NULL;
        mode_t old_umask;
        char *slash;
        int fd, r;

        r = ctl_socket_check(path, ret_err);
        if (r < 0)
                return r;
        dir = strdup(path);
        if (!dir)
                return -ENOMEM;
        slash = strrchr(dir, '/');
        if (slash && slash != dir) {
                *slash = 0;
                if (mkdir(dir, CTL_SOCKET_DIR_MODE) < 0 && errno != EEXIST) {
                        r = negative_errno();
                        if (asprintf(ret_err, "cannot create the socket directory %s: %s", dir, strerror(-r)) < 0)
                                *ret_err = NULL;
                        return r;
                }
        }
        /* checked again now that the directory exists: what a daemon that
         * died left behind goes */
        r = ctl_socket_check(path, ret_err);
        if (r < 0)
                return r;
        unlink(path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0) {
                r = negative_errno();
                goto fail;
        }
        snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
        /* bind() creates the file with 0777 less the umask: under a narrow
         * one, so that it is never more open than CTL_SOCKET_MODE, not even
         * until the chmod below (one thread: the umask is ours). */
        old_umask = umask(0777 & ~CTL_SOCKET_MODE);
        r = bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 ? negative_errno() : 0;
        umask(old_umask);
        if (r < 0)
                goto fail;
        /* Only the daemon's user and group (the control group, once
         * ctl_server_set_group() gives it the file) may connect; changes
         * are checked again per request.  The mode is set, not left to
         * the umask, so that it is the same under any. */
        if (chmod(path, CTL_SOCKET_MODE) < 0 || listen(fd, SOMAXCONN) < 0) {
                r = negative_errno();
                unlink(path);
                goto fail;
        }
        return fd;
fail:
        if (fd >= 0)
                close(fd);
        if (asprintf(ret_err, "cannot listen on %s: %s", path, strerror(-r)) < 0)
                *ret_err = NULL;
        return r;
}
