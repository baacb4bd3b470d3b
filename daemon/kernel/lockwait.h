/* lockwait.h - kernel lock wait time from BPF on lock:contention_begin/end:
 * load and attach bpf/lockwait.bpf.c, read its per-CPU totals every tick,
 * and give each run its contended locks (per caller and lock type).
 *
 * Without BPF (built without it, no CAP_BPF, bpf() filtered, a kernel
 * without the tracepoints) lockwait_open() fails with one reason that the
 * sampler shows for every lock wait metric. */
#ifndef SCALEMON_LOCKWAIT_H
#define SCALEMON_LOCKWAIT_H

#include <stddef.h>
#include <stdint.h>

#include "lockwait-decode.h"

struct lockwait;

/* slots: how many per-CPU slots to map (at least the possible CPUs; more
 * with --simulate-cpus, so that reading costs what it would there).
 * On failure *ret_why says why, in words a user can act on. */
int lockwait_open(int slots, struct lockwait **ret, char **ret_why);
struct lockwait *lockwait_free(struct lockwait *lw);

/* Number of CPUs the program writes slots for (the possible CPUs). */
int lockwait_ncpus(const struct lockwait *lw);
/* CPU cpu's running totals (read straight from the mapped slot; the
 * values only grow), and its longest wait since the last call for that
 * CPU (swapped with 0; ret_max NULL: left alone). */
void lockwait_read_cpu(struct lockwait *lw, int cpu, struct lw_cpu *ret, uint64_t *ret_max);

/* A run's contended locks.  lockwait_run_start() and _stop() are run
 * boundaries: the per-caller map is read, folded into every open run, and
 * a new max/min epoch begins. */
struct lockwait_run;
int lockwait_run_start(struct lockwait *lw, struct lockwait_run **ret);
/* The run's tasks are those of cgroup v2 directory cgroup: their waits
 * are told apart from the machine's from now on.  -ENOSPC: LW_OWN_MAX
 * cgroups are registered already. */
int lockwait_run_own(struct lockwait_run *run, const char *cgroup);
/* The run's rows by caller and by lock (callers and locks named now, with
 * /proc/kallsyms, read the first time), largest total first; the run is
 * freed, whatever the result.  lw_result_clear() frees *ret. */
int lockwait_run_stop(struct lockwait_run *run, struct lw_result *ret);
/* Forget a run without a result (NULL is fine; so is a run whose
 * lockwait was freed meanwhile). */
void lockwait_run_free(struct lockwait_run *run);

#endif
