/* sock.h - scalemonctl's side of the control socket (sock.c). */
#ifndef SCALEMON_CLIENT_SOCK_H
#define SCALEMON_CLIENT_SOCK_H

#include <jansson.h>
#include <stdbool.h>

#include "cli.h"
#include "proto.h"

/* The daemon: connect (printing why not, unless quiet), and one request,
 * encoded by proto_request_to_json(), with its reply (proto_reply_parse():
 * "ok" taken out, for a proto-reply.h decoder); pass_fd rides along if
 * >= 0.  Returns 0, or an exit code after printing the daemon's error. */
int ctl_connect(struct ctl *ctl, bool quiet);
int ctl_request(struct ctl *ctl, const struct proto_request *req, int pass_fd, json_t **ret_reply);
/* Why a connect() failed with EACCES, as one phrase: "permission denied on
 * SOCKET: only root, scalemond's user and members of group G may use it
 * (ask to be added to the group)". */
void ctl_denied_why(const struct ctl *ctl, char *buf, size_t len);

#endif
