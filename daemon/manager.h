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
};

int manager_new(const struct conf *conf, const struct manager_options *opts, struct manager **ret, char **ret_err);
struct manager *manager_free(struct manager *m);
/* Run until SIGTERM/SIGINT.  Returns 0 on a clean stop. */
int manager_run(struct manager *m);

/* For the request handlers (requests.c): what the manager owns. */
struct store *manager_store(struct manager *m);
struct sampler *manager_sampler(struct manager *m);
struct runs *manager_runs(struct manager *m);
struct writer *manager_writer(struct manager *m);
struct retain_sched *manager_retain(struct manager *m);
const struct conf *manager_conf(struct manager *m);
const char *manager_status(struct manager *m);
int64_t manager_host_id(struct manager *m);
int64_t manager_tick_late_max(struct manager *m);       /* the latest a tick ran after its time, ns */
/* Read the configuration again (SIGHUP, the reload request).  A broken
 * one is refused (-EINVAL, *ret_err says file:line) and the running one
 * stays; only -ENOMEM is fatal. */
int manager_reload(struct manager *m, char **ret_err);

#endif
