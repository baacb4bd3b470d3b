/* requests.h - the control requests: each decoded request (proto.h) to a
 * typed call, and its result to the reply. */
#ifndef SCALEMON_REQUESTS_H
#define SCALEMON_REQUESTS_H

#include <jansson.h>
#include <sys/socket.h>

#include "proto.h"

struct manager;

/* The ctl_handler of the daemon's control socket (ctl.h); userdata is
 * the struct manager. */
json_t *requests_handle(void *userdata, const struct proto_request *req, int fd, const struct ucred *peer,
                        char **ret_err);
/* Does every command of proto.h have a handler?  -ENOSYS names the first
 * that has none in *ret_cmd (checked at start, and by test-proto). */
int requests_check(const char **ret_cmd);

#endif
