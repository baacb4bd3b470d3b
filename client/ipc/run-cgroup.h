/* run-cgroup.h - run exec's command in the run's own cgroup (run-cgroup.c). */
#ifndef SCALEMON_RUN_CGROUP_H
#define SCALEMON_RUN_CGROUP_H

#include <sys/types.h>

#include "proto-reply.h"

/* From run-start's reply: an fd of the run's cgroup.procs, to move the
 * command in; or -1, after one line on stderr saying that the run's own
 * counters are unavailable and why.  scope_why (or NULL): why no systemd
 * scope was made (run_scope_new), said on the same line. */
int run_cgroup_enter_fd(const char *run, const struct proto_run_reply *reply, const char *scope_why);
/* In the child, before exec: move itself into the cgroup (one line on
 * stderr if it cannot; the command runs anyway). */
void run_cgroup_enter(const char *run, int fd);

/* The cgroup of systemd unit `unit` (run start --unit), through sd-bus:
 * its ControlGroup, a path under the cgroup2 mount.  *ret (malloc'd);
 * on failure one line on stderr, and EXIT_FAILED. */
int run_cgroup_of_unit(const char *unit, char **ret);

/* run exec where systemd runs: a transient scope for the run's command
 * (run-cgroup.c).  1 with s->cgroup (relative to the cgroup2 mount) and
 * s->unit set; 0 where systemd does not run (s empty); negative where
 * none could be made.  Whatever it
 * returns, run_scope_release(s) at the end (after run-stop): the scope's
 * holder process exits, and systemd removes the empty scope.  Negative:
 * nothing printed, s->why says why (for run_cgroup_enter_fd's line). */
struct run_scope {
        pid_t holder;                   /* the scope's first process, waiting on hold_fd; -1 none */
        int hold_fd;                    /* the write end of its pipe: closed, it exits */
        char *cgroup;                   /* the scope's directory, relative to the cgroup2 mount */
        char *unit;                     /* scalemon-run-NAME-PID.scope */
        char *why;                      /* why none could be made, or NULL */
};
int run_scope_new(const char *run, struct run_scope *s);
void run_scope_release(struct run_scope *s);

#endif
