/* ctl.h - the control socket server: JSON lines over a UNIX stream socket. */
#ifndef SCALEMON_CTL_SERVER_H
#define SCALEMON_CTL_SERVER_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <systemd/sd-event.h>

#include "proto.h"

struct ctl_server;

/* Called for each valid request from a permitted peer.  fd: a file
 * descriptor passed with the request (SCM_RIGHTS), or -1; the handler
 * owns it.  Returns the reply object (without "ok"), or NULL with
 * *ret_err set to a one-line reason. */
typedef json_t *(*ctl_handler)(void *userdata, const struct proto_request *req, int fd, const struct ucred *peer,
                              char **ret_err);

int ctl_server_new(sd_event *e, const char *path, ctl_handler handler, void *userdata, struct ctl_server **ret,
                   char **ret_err);
struct ctl_server *ctl_server_free(struct ctl_server *srv);   /* closes, unlinks the socket */

/* Who may change state: root, the daemon's uid, and members of group. */
int ctl_server_set_group(struct ctl_server *srv, const char *group);

#endif
