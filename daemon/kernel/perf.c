/* perf.c - perf_event_open(2), tracepoint ids, and what their errors mean.
 *
 * This is the only file that calls perf_event_open.  Errors are sorted the
 * way perf itself sorts them: ENOENT, EINVAL, EOPNOTSUPP, ENODEV and ENXIO
 * mean the machine cannot count this (skip it and say why), EACCES/EPERM
 * mean we may not (skip; fatal only if nothing opens), EMFILE and the rest
 * are fatal.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>

#include "macro.h"
#include "perf.h"

#ifndef TRACEFS_MAGIC
#define TRACEFS_MAGIC 0x74726163
#endif

int perf_open(struct perf_event_attr *attr, int cpu, int group_fd)
{
        long fd;

        attr->size = sizeof *attr;
        fd = syscall(SYS_perf_event_open, attr, -1, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        return (int)fd;
}

int perf_open_cgroup(struct perf_event_attr *attr, int cgroup_fd, int cpu)
{
        long fd;

        attr->size = sizeof *attr;
        fd = syscall(SYS_perf_event_open, attr, cgroup_fd, cpu, -1, PERF_FLAG_PID_CGROUP | PERF_FLAG_FD_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        return (int)fd;
}

int perf_set_filter(int fd, const char *filter)
{
        return ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filter) < 0 ? negative_errno() : 0;
}

int perf_event_id(int fd, uint64_t *ret)
{
        return ioctl(fd, PERF_EVENT_IOC_ID, ret) < 0 ? negative_errno() : 0;
}

enum perf_errclass perf_classify(int err)
{
        switch (-err) {
        case ENOENT:
        case EINVAL:
        case EOPNOTSUPP:
        case ENXIO:
                return PERF_ERR_UNSUPPORTED;
        case ENODEV:
                return PERF_ERR_OFFLINE;
        case EACCES:
        case EPERM:
                return PERF_ERR_PERMISSION;
        default:
                return PERF_ERR_FATAL;
        }
}

int perf_paranoid(void)
{
        char buf[32] = "";
        _cleanup_close_ int fd = open("/proc/sys/kernel/perf_event_paranoid", O_RDONLY | O_CLOEXEC);
        if (fd < 0 || read(fd, buf, sizeof buf - 1) <= 0)
                return 2;
        return atoi(buf);
}

void perf_why(int err, char *buf, size_t len)
{
        switch (perf_classify(err)) {
        case PERF_ERR_PERMISSION:
                snprintf(buf, len,
                         "permission denied (kernel.perf_event_paranoid=%d; run as root or grant CAP_PERFMON)",
                         perf_paranoid());
                break;
        case PERF_ERR_UNSUPPORTED:
                snprintf(buf, len, "not supported by this kernel or machine (perf_event_open: %s)", strerror(-err));
                break;
        case PERF_ERR_OFFLINE:
                snprintf(buf, len, "no such device (perf_event_open: %s; CPU offline or no PMU)", strerror(-err));
                break;
        case PERF_ERR_FATAL:
                if (err == -EMFILE || err == -ENFILE)
                        snprintf(buf, len, "out of file descriptors (%s; raise LimitNOFILE= / ulimit -n)",
                                 strerror(-err));
                else
                        snprintf(buf, len, "perf_event_open failed: %s", strerror(-err));
                break;
        }
}

static bool is_tracefs(const char *dir)
{
        char ev[512];
        struct statfs sfs;

        snprintf(ev, sizeof ev, "%s/events", dir);
        if (access(ev, F_OK) == 0)
                return true;
        /* mounted but unreadable (not root): still the place to look */
        return statfs(dir, &sfs) == 0 && sfs.f_type == TRACEFS_MAGIC;
}

int tracefs_locate(bool try_mount, char **ret_path, char **ret_why)
{
        static const char *const dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
        char why[512];
        int r;

        for (size_t i = 0; i < ELEMENTSOF(dirs); i++)
                if (is_tracefs(dirs[i])) {
                        *ret_path = strdup(dirs[i]);
                        return *ret_path ? 0 : -ENOMEM;
                }
        if (!try_mount) {
                snprintf(why, sizeof why,
                         "tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)");
                *ret_why = strdup(why);
                return -ENOENT;
        }
        if (mount("nodev", "/sys/kernel/tracing", "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0 &&
            is_tracefs("/sys/kernel/tracing")) {
                *ret_path = strdup("/sys/kernel/tracing");
                return *ret_path ? 1 : -ENOMEM;        /* 1: we mounted it */
        }
        r = negative_errno();
        snprintf(why, sizeof why,
                 "tracefs is not mounted and mounting it at /sys/kernel/tracing failed (%s); "
                 "mount it with: mount -t tracefs nodev /sys/kernel/tracing",
                 strerror(-r));
        *ret_why = strdup(why);
        return r;
}

int tracepoint_id(const char *tracefs, const char *name, uint64_t *ret)
{
        const char *colon = strchr(name, ':');
        char path[512], buf[32];
        _cleanup_close_ int fd = -1;
        ssize_t k;
        char *end;
        unsigned long long v;

        if (!colon)
                return -EINVAL;
        snprintf(path, sizeof path, "%s/events/%.*s/%s/id", tracefs, (int)(colon - name), name, colon + 1);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        k = read(fd, buf, sizeof buf - 1);
        if (k <= 0)
                return k < 0 ? negative_errno() : -EINVAL;
        buf[k] = 0;
        errno = 0;
        v = strtoull(buf, &end, 10);
        if (errno || end == buf || (*end && *end != '\n'))
                return -EINVAL;
        *ret = v;
        return 0;
}
