/* manager.h - the daemon's event loop and life cycle: timer, signals,
 * checkpoints, reload, notify. */
#ifndef SCALEMON_MANAGER_H
#define SCALEMON_MANAGER_H

#include <stdbool.h>
#include <stdint.h>

#include "conf.h"

struct manager;

struct manager_options {
        struct conf_source source;      /* where conf came from; read again on SIGHUP */
        int ready_fd;                   /* write "ok" or an error here once ready, or -1 */
        int simulate_cpus;              /* --simulate-cpus: 0, or CPUs to simulate */
        const char *sysroot;            /* where sysfs is: NULL for "/sys" (tests: a fixture tree) */
        const char *procroot;           /* where procfs is: NULL for "/proc" */
};

int manager_new(const struct conf *conf, const struct manager_options *opts, struct manager **ret, char **ret_err);
struct manager *manager_free(struct manager *m);
/* Run until SIGTERM/SIGINT.  Returns 0 on a clean stop. */
int manager_run(struct manager *m);

#endif
