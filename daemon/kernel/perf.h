/* perf.h - perf_event_open and tracefs: the only door to the kernel's
 * counters. */
#ifndef SCALEMON_PERF_H
#define SCALEMON_PERF_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum perf_errclass {
        PERF_ERR_UNSUPPORTED,  /* skip the metric, say why */
        PERF_ERR_PERMISSION,   /* skip the metric; if nothing opens, fatal */
        PERF_ERR_OFFLINE,      /* the CPU went away */
        PERF_ERR_FATAL,        /* out of fds or memory, or unexpected */
};

/* Open one counter on one CPU, system-wide (pid -1).  Returns an O_CLOEXEC
 * fd or -errno. */
int perf_open(struct perf_event_attr *attr, int cpu, int group_fd);

/* Open one counter on one CPU for the tasks of one cgroup (cgroup_fd: its
 * cgroup v2 directory, opened O_RDONLY; daemon/sampler/owncg.c).  Counts only
 * while such a task runs on that CPU.  Returns an O_CLOEXEC fd or -errno. */
int perf_open_cgroup(struct perf_event_attr *attr, int cgroup_fd, int cpu);

/* Attach an ftrace filter to a tracepoint counter. */
int perf_set_filter(int fd, const char *filter);
/* The kernel's id of a member, to find it in a group read. */
int perf_event_id(int fd, uint64_t *ret);

enum perf_errclass perf_classify(int err);
/* One line saying why opening failed, for the catalogue and the log. */
void perf_why(int err, char *buf, size_t len);
int perf_paranoid(void);

/* Find tracefs (mounting it at /sys/kernel/tracing if it is missing and we
 * are allowed to).  *ret_path: malloc'd directory that has events/.  On
 * failure *ret_why says what is wrong and what to do. */
int tracefs_locate(bool try_mount, char **ret_path, char **ret_why);
/* Tracepoint id of "system:event".  -ENOENT: no such tracepoint. */
int tracepoint_id(const char *tracefs, const char *name, uint64_t *ret);

#endif
