/* owncg.h - a run's own counters: what the tasks of one cgroup v2
 * directory did while the run was open (daemon/sampler/owncg.c). */
#ifndef SCALEMON_OWNCG_H
#define SCALEMON_OWNCG_H

#include <stdbool.h>
#include <stddef.h>

#include "sampler.h"
#include "store.h"

struct owncg;

/* Make a new cgroup v2 directory for run `name`: <cgroup2 mount>/scalemon/
 * <name>, the mount found in <procroot>/self/mountinfo.  *ret_path: the
 * directory (malloc'd).  On failure *ret_err says why, in words a user can
 * act on (no cgroup2 mount, read-only, permission). */
int owncg_create(const char *procroot, const char *name, char **ret_path, char **ret_err);

/* A directory the user named (run start --cgroup PATH): PATH absolute, or
 * relative to the cgroup2 mount; it must be a directory of that mount.
 * *ret_path: the absolute directory. */
int owncg_resolve(const char *procroot, const char *path, char **ret_path, char **ret_err);

/* Start counting for the tasks in directory path: per online CPU, perf
 * events in cgroup mode for the cpu-scope perf metrics the sampler has,
 * and the directory's cpu.stat, memory.stat and pressure files as they
 * are now.  remove: rmdir the directory in owncg_free() (owncg_create()
 * made it).  *ret_notes: NULL, or one line saying what cannot be counted
 * and why (for the log; the run goes on). */
int owncg_open(const char *path, bool remove, const struct sampler *sm, struct owncg **ret, char **ret_notes,
               char **ret_err);

/* One tick: the deltas since the last call (or owncg_open()) into
 * t->own, for run id `run`; zeros are left out.  0 or -ENOMEM. */
int owncg_sample(struct owncg *oc, int64_t run, struct tick *t);

/* Append the totals since owncg_open() to *rows (level LEVEL_CGROUP, loc 0,
 * catalogue units), growing it; *n counts them. */
int owncg_totals(struct owncg *oc, struct store_total **rows, size_t *n);

/* What someone else may have done to the directory, from its
 * cgroup.events (one pread of a file kept open): nothing, frozen it
 * (cgroup.freeze), or removed it (its counters then stop). */
enum owncg_state { OWNCG_RUNNING, OWNCG_FROZEN, OWNCG_REMOVED };
enum owncg_state owncg_state(const struct owncg *oc);

const char *owncg_path(const struct owncg *oc);

/* Close the events; remove the directory if owncg_open() was told to (it
 * must be empty by then: -EBUSY is logged by the caller).  Returns 0 or
 * the rmdir's -errno; oc is freed either way. */
int owncg_free(struct owncg *oc);

#endif
