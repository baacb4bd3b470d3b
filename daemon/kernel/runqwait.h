/* runqwait.h - run-queue wait per CPU from BPF on sched_switch
 * (bpf/runqwait.bpf.c), for kernels without /proc/schedstat.
 * Loaded by the schedstat source (sampler-pressure.c) only where that
 * file is missing and runqueue_wait_ns is enabled. */
#pragma once

#include <stdint.h>

struct runqwait;

/* Load and attach the program with at least slots per-CPU slots (the
 * sampler's CPU count).  On failure, *ret_why (to free) says why in one
 * line. */
int runqwait_open(int slots, struct runqwait **ret, char **ret_why);
struct runqwait *runqwait_free(struct runqwait *rq);

/* The CPUs the kernel may have (slots beyond are never written). */
int runqwait_ncpus(const struct runqwait *rq);

/* CPU cpu's running total of run-queue wait, in ns. */
uint64_t runqwait_read_cpu(const struct runqwait *rq, int cpu);
