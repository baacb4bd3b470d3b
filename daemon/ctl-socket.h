/* ctl-socket.h - the control socket's file: checked, bound, given to the
 * control group. */
#ifndef SCALEMON_CTL_SOCKET_H
#define SCALEMON_CTL_SOCKET_H

#include <sys/types.h>

/* The socket file's mode, never world-writable: only its owner (the
 * daemon's user) and its group (the control group, ctl_server_set_group())
 * may connect.  Who may change state is still decided per request from the
 * peer's credentials, for a peer that got a descriptor some other way. */
#define CTL_SOCKET_MODE      0660
#define CTL_SOCKET_DIR_MODE  0755

/* What would make ctl_server_new() refuse path, checked without creating
 * anything: too long, a foreign symlink, not a socket, or a socket another
 * daemon listens on (-EADDRINUSE).  0, or -errno with *ret_err. */
int ctl_socket_check(const char *path, char **ret_err);
/* Make path's directory (CTL_SOCKET_DIR_MODE) if missing, check path again
 * (what a dead daemon left goes), bind a listening, non-blocking socket
 * there with CTL_SOCKET_MODE.  The descriptor, or -errno with *ret_err
 * (and nothing left at path). */
int ctl_socket_listen(const char *path, char **ret_err);
/* Give the socket file at path to gid: 0, or -errno of lchown(2). */
int ctl_socket_chgrp(const char *path, gid_t gid);

#endif
