/* ctl.h - the control socket server: JSON lines over a UNIX stream socket. */
#ifndef SCALEMON_CTL_SERVER_H
#define SCALEMON_CTL_SERVER_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <systemd/sd-event.h>

#include "ctl-socket.h"
#include "proto.h"

struct ctl_server;

/* Limits, so that no client can exhaust the daemon (scalemond(8), CONTROL
 * SOCKET).  Invariants, enforced in ctl.c:
 *   1. at most CTL_MAX_CLIENTS connections at once, and at most
 *      CTL_MAX_CLIENTS - CTL_RESERVED_CLIENTS from peers who may not change
 *      state; a connection over the limit gets one error line and is closed;
 *   2. a client's unparsed input is at most CTL_MAX_LINE bytes: a longer
 *      line gets an error and the connection is closed;
 *   3. while more than CTL_MAX_OUTPUT bytes of replies wait unsent, the
 *      client's next requests are not read;
 *   4. a connection without a complete request for CTL_IDLE_TIMEOUT_S
 *      seconds is closed, whatever partial line it has sent; a stream
 *      (a subscription, invariant 5) is exempt: it listens, it does not ask;
 *   5. a stream's unsent lines are at most CTL_MAX_STREAM_OUTPUT bytes: a
 *      stream whose reader falls further behind is dropped, with one log
 *      line: its unsent ticks are discarded, it is told why in one error
 *      line, and it is closed when that is read or after
 *      CTL_IDLE_TIMEOUT_S, so that a slow reader costs the daemon neither
 *      time nor more memory than that. */
#define CTL_MAX_CLIENTS      64
#define CTL_RESERVED_CLIENTS 8
#define CTL_MAX_LINE         PROTO_MAX_LINE
#define CTL_MAX_OUTPUT       (256 * 1024)
#define CTL_IDLE_TIMEOUT_S   10
#define CTL_MAX_STREAM_OUTPUT (512 * 1024)
/* Called for each valid request from a permitted peer.  fd: a file
 * descriptor passed with the request (SCM_RIGHTS), or -1; the handler
 * owns it.  Returns the reply object (without "ok"), or NULL with
 * *ret_err set to a one-line reason. */
typedef json_t *(*ctl_handler)(void *userdata, const struct proto_request *req, int fd, const struct ucred *peer,
                              char **ret_err);

int ctl_server_new(sd_event *e, const char *path, ctl_handler handler, void *userdata, struct ctl_server **ret,
                   char **ret_err);
struct ctl_server *ctl_server_free(struct ctl_server *srv);   /* closes, unlinks the socket */

/* Streams: a request for which proto says so (subscribe) goes to the
 * stream handler with the connection as a stream, to which lines may be
 * pushed later with ctl_stream_send().  A non-NULL reply makes the
 * connection a stream (invariants 4 and 5); a stream may only send the
 * stream request again (to change what it gets).  gone() is called once
 * when a stream's connection closes or is dropped; the stream is invalid
 * after. */
struct ctl_stream;
typedef json_t *(*ctl_stream_handler)(void *userdata, const struct proto_request *req, struct ctl_stream *st,
                                      const struct ucred *peer, char **ret_err);
typedef void (*ctl_stream_gone)(void *userdata, struct ctl_stream *st);
void ctl_server_set_stream(struct ctl_server *srv, ctl_stream_handler handler, ctl_stream_gone gone, void *userdata);
/* Queue line (len bytes, no newline; one is added) and try to send it.
 * Returns 0, or -ENOBUFS after dropping the stream (invariant 5: gone()
 * has been called, and st is invalid), or -ENOMEM. */
int ctl_stream_send(struct ctl_stream *st, const char *line, size_t len);

/* Who may change state: root, the daemon's uid, and members of group; the
 * socket file is given to group, so that its members may connect.
 * Returns 0; -ENOENT if group does not exist (the file then has the
 * daemon's own group); or the -errno of chown(2) when the file cannot be
 * given to group (-EPERM: the daemon is not root and not in it), which
 * keeps its group, while members of group may still change state. */
int ctl_server_set_group(struct ctl_server *srv, const char *group);

#endif
