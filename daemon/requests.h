/* requests.h - the control requests: each decoded request (proto.h) to a
 * typed call, and its result to the reply. */
#ifndef SCALEMON_REQUESTS_H
#define SCALEMON_REQUESTS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "conf.h"
#include "proto.h"

/* What the handlers act on, given by the daemon's owner (manager.c), which
 * keeps it up to date: the parts it owns, borrowed, and its reload. */
struct requests_ctx {
        struct store *store;
        struct sampler *sampler;
        struct runs *runs;
        struct writer *writer;
        struct ticker *ticker;                  /* a run boundary's tick (ticker_snapshot()) */
        struct retain_sched *retain;
        struct subscribers *subs;
        const struct conf *conf;                /* the running settings */
        const char *status;                     /* in words, kept current by the owner */
        const char *access;                     /* who may start and stop runs, in words */
        const char *sysroot, *procroot;
        int64_t host_id;
        const int64_t *tick_late_max_ns;        /* the latest a tick ran after its time */
        /* Read the configuration again; a broken one is refused (-EINVAL,
         * *ret_err) and the running one stays. */
        int (*reload)(void *owner, char **ret_err);
        /* What the last reload did not apply (a key, its new value, the
         * running one): entry i, and how many there are. */
        size_t (*not_applied)(void *owner, size_t i, const char **ret_key, const char **ret_value,
                              const char **ret_running);
        void *owner;
};

/* The ctl_handler of the daemon's control socket (ctl.h); userdata is a
 * struct requests_ctx. */
json_t *requests_handle(void *userdata, const struct proto_request *req, int fd, const struct ucred *peer,
                        char **ret_err);
/* Does every command of proto.h have a handler?  -ENOSYS names the first
 * that has none in *ret_cmd (checked at start, and by test-proto). */
int requests_check(const char **ret_cmd);

#endif
