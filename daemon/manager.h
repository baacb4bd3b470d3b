/* manager.h - the daemon's event loop: timer, signals, flushes, notify. */
#ifndef SCALEMON_MANAGER_H
#define SCALEMON_MANAGER_H

#include <stdbool.h>

#include "conf.h"

struct manager;

struct manager_options {
        const char *config_path;        /* re-read on SIGHUP */
        bool config_missing_ok;
        struct conf overrides;          /* command-line values, win over the file */
        bool override_interval, override_database, override_socket;
        int ready_fd;                   /* write "ok" or an error here once ready, or -1 */
        int simulate_cpus;              /* --simulate-cpus: 0, or CPUs to simulate */
};

int manager_new(const struct conf *conf, const struct manager_options *opts, struct manager **ret, char **ret_err);
struct manager *manager_free(struct manager *m);
/* Run until SIGTERM/SIGINT.  Returns 0 on a clean stop. */
int manager_run(struct manager *m);

#endif
