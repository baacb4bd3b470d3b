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

/* For the request handlers (requests.c): what the manager owns. */
struct store *manager_store(struct manager *m);
struct sampler *manager_sampler(struct manager *m);
struct runs *manager_runs(struct manager *m);
struct writer *manager_writer(struct manager *m);
struct retain_sched *manager_retain(struct manager *m);
const struct conf *manager_conf(struct manager *m);
const char *manager_status(struct manager *m);
const char *manager_access(struct manager *m);     /* who may start and stop runs, in words */
const char *manager_sysroot(struct manager *m);
const char *manager_procroot(struct manager *m);
int64_t manager_host_id(struct manager *m);
int64_t manager_tick_late_max(struct manager *m);       /* the latest a tick ran after its time, ns */
struct subscribers *manager_subscribers(struct manager *m);      /* subscribe.c: the pushed ticks */
/* Read the configuration again (SIGHUP, the reload request).  A broken
 * one is refused (-EINVAL, *ret_err says file:line) and the running one
 * stays; only -ENOMEM is fatal. */
int manager_reload(struct manager *m, char **ret_err);
/* What the last reload read and did not apply, because only a restart
 * can (database, socket): entry i's key, its new value and the running
 * one (borrowed).  Returns how many there are; sets nothing if i is past
 * them. */
size_t manager_not_applied(const struct manager *m, size_t i, const char **ret_key, const char **ret_value,
                           const char **ret_running);

#endif
