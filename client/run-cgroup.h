/* run-cgroup.h - run exec's command in the run's own cgroup (run-cgroup.c). */
#ifndef SCALEMON_RUN_CGROUP_H
#define SCALEMON_RUN_CGROUP_H

#include <jansson.h>

/* From run-start's reply: an fd of the run's cgroup.procs, to move the
 * command in; or -1, after one line on stderr saying that the run's own
 * counters are unavailable and why. */
int run_cgroup_enter_fd(const char *run, json_t *reply);
/* In the child, before exec: move itself into the cgroup (one line on
 * stderr if it cannot; the command runs anyway). */
void run_cgroup_enter(const char *run, int fd);

/* The cgroup of systemd unit `unit` (run start --unit), through sd-bus:
 * its ControlGroup, a path under the cgroup2 mount.  *ret (malloc'd);
 * on failure one line on stderr, and EXIT_FAILED. */
int run_cgroup_of_unit(const char *unit, char **ret);

#endif
