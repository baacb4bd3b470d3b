/* procfs.h - /proc/stat, /proc/vmstat and node numastat: parsers of the
 * text (tested on fixture files) and readers that keep the file open. */
#ifndef SCALEMON_PROCFS_H
#define SCALEMON_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Columns of a cpuN line: user nice system idle iowait irq softirq steal
 * guest guest_nice (older kernels have fewer: missing ones read as 0). */
#define PROCSTAT_FIELDS 10

/* Parse the cpuN lines of /proc/stat into vals[cpu][field] (USER_HZ ticks)
 * for cpu < ncpus; present[cpu] says which lines were there (offline CPUs
 * have none).  Returns the number of cpuN lines, -EINVAL when a cpu line is
 * malformed, -ERANGE for a CPU number >= ncpus or a number too large. */
int procstat_parse(const char *buf, size_t len, int ncpus, uint64_t (*vals)[PROCSTAT_FIELDS], bool *present);

/* Parse "name value" lines (/proc/vmstat, numastat): for each keys[i]
 * found, vals[i] and found[i] are set.  Unknown names are skipped.
 * Returns 0, or -EINVAL for a line that is not "name number". */
int kv_parse(const char *buf, size_t len, const char *const *keys, size_t nkeys, uint64_t *vals, bool *found);

/* A file kept open and re-read from offset 0 on every call, into a buffer
 * that grows as needed.  stop_prefix, if set, ends the read early once a
 * line starting with something else than it has been seen (the cpuN lines
 * of /proc/stat come first; its long "intr" line is not needed). */
struct procfile {
        int fd;
        char *buf;
        size_t cap;
        size_t len;
};
int procfile_open(struct procfile *f, const char *path);
int procfile_read(struct procfile *f, const char *stop_prefix);
void procfile_close(struct procfile *f);

/* A /proc/pressure file (cpu, memory, io): the total= of its "some" line
 * into totals[0] and of its "full" line into totals[1] (microseconds of
 * stall since boot); found[] says which lines were there.  Returns 0, or
 * -EINVAL for a line that is neither. */
int psi_parse(const char *buf, size_t len, uint64_t totals[2], bool found[2]);

/* /proc/schedstat, versions 15 to 17 (their cpuN lines have the same
 * fields; Documentation/scheduler/sched-stats.rst): field `field` (1 =
 * the first number after "cpuN") of each cpuN line into vals[cpu] for cpu
 * < ncpus, present[cpu] for the lines that were there; the domainN lines
 * are skipped.  Returns the number of cpuN lines, -EPROTONOSUPPORT for
 * another version, -EINVAL for a malformed file, -ERANGE for a CPU >=
 * ncpus. */
#define SCHEDSTAT_VERSION_MIN 15
#define SCHEDSTAT_VERSION_MAX 17
#define SCHEDSTAT_RUN_DELAY 8   /* ns tasks waited on this CPU's run queue */
int schedstat_parse(const char *buf, size_t len, int ncpus, int field, uint64_t *vals, bool *present);

#endif
