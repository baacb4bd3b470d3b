/* cpumap.c - CPUs and nodes from sysfs.
 *
 * /sys/devices/system/cpu/{possible,online} give the CPU sets; each
 * /sys/devices/system/node/nodeN/cpulist gives a node's CPUs.  A kernel
 * without NUMA has no node directory: every CPU is on node 0.
 */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "cpumap.h"
#include "macro.h"

int cpulist_parse(const char *s, bool *set, int n)
{
        const char *p = s;

        for (int i = 0; i < n; i++)
                set[i] = false;
        while (*p && *p != '\n') {
                char *end;
                unsigned long a, b;

                if (!isdigit((unsigned char)*p))
                        return -EINVAL;
                errno = 0;
                a = strtoul(p, &end, 10);
                if (errno)
                        return -ERANGE;
                b = a;
                p = end;
                if (*p == '-') {
                        p++;
                        if (!isdigit((unsigned char)*p))
                                return -EINVAL;
                        b = strtoul(p, &end, 10);
                        if (errno)
                                return -ERANGE;
                        p = end;
                        if (b < a)
                                return -EINVAL;
                }
                if (b >= (unsigned long)n)
                        return -ERANGE;
                for (unsigned long i = a; i <= b; i++)
                        set[i] = true;
                if (*p == ',') {
                        p++;
                        if (!isdigit((unsigned char)*p))
                                return -EINVAL;
                } else if (*p && *p != '\n')
                        return -EINVAL;
        }
        if (*p == '\n' && p[1])
                return -EINVAL;
        return 0;
}

static int read_small(const char *path, char *buf, size_t len)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t k;

        if (fd < 0)
                return negative_errno();
        k = read(fd, buf, len - 1);
        if (k < 0)
                return negative_errno();
        buf[k] = 0;
        return 0;
}

/* Highest CPU number in a list + 1, or -EINVAL. */
static int cpulist_max(const char *s)
{
        int max = -1;
        for (const char *p = s; *p;) {
                if (isdigit((unsigned char)*p)) {
                        long v = strtol(p, (char **)&p, 10);
                        if (v > 65535)
                                return -ERANGE;
                        if (v > max)
                                max = (int)v;
                } else
                        p++;
        }
        return max < 0 ? -EINVAL : max + 1;
}

void cpumap_clear(struct cpumap *map)
{
        free(map->online);
        free(map->node);
        free(map->has_node);
        free(map->scratch);
        if (map->online_fd >= 0)
                close(map->online_fd);
        memset(map, 0, sizeof *map);
        map->online_fd = -1;
}

int cpumap_refresh_online(struct cpumap *map)
{
        char buf[4096];
        ssize_t k;
        int r, changed = 0;

        if (map->online_fd < 0)         /* a simulated map: fixed */
                return 0;
        k = pread(map->online_fd, buf, sizeof buf - 1, 0);
        if (k < 0)
                return negative_errno();
        buf[k] = 0;
        r = cpulist_parse(buf, map->scratch, map->ncpus);
        if (r < 0)
                return r;
        for (int c = 0; c < map->ncpus; c++)
                if (map->scratch[c] != map->online[c]) {
                        map->online[c] = map->scratch[c];
                        changed = 1;
                }
        return changed;
}

/* N of a sysfs "nodeN" directory entry (0..4095), or -1 for any other name. */
static long node_dir_number(const char *name)
{
        const char *num = startswith(name, "node");
        char *end;
        long node;

        if (!num || !isdigit((unsigned char)*num))
                return -1;
        node = strtol(num, &end, 10);
        return *end || node < 0 || node > 4095 ? -1 : node;
}

int cpumap_read(const char *sysroot, struct cpumap *ret)
{
        struct cpumap m = { .online_fd = -1 };
        char path[512], buf[4096];
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        int r, n;

        snprintf(path, sizeof path, "%s/devices/system/cpu/possible", sysroot);
        r = read_small(path, buf, sizeof buf);
        if (r < 0)
                return r;
        n = cpulist_max(buf);
        if (n < 0)
                return n;
        m.ncpus = n;
        m.online = calloc(n, sizeof *m.online);
        m.node = calloc(n, sizeof *m.node);
        m.scratch = calloc(n, sizeof *m.scratch);
        if (!m.online || !m.node || !m.scratch) {
                cpumap_clear(&m);
                return -ENOMEM;
        }
        snprintf(path, sizeof path, "%s/devices/system/cpu/online", sysroot);
        m.online_fd = open(path, O_RDONLY | O_CLOEXEC);
        if (m.online_fd < 0) {
                r = negative_errno();
                cpumap_clear(&m);
                return r;
        }
        r = cpumap_refresh_online(&m);
        if (r < 0) {
                cpumap_clear(&m);
                return r;
        }

        m.nnodes = 1;
        snprintf(path, sizeof path, "%s/devices/system/node", sysroot);
        d = opendir(path);
        if (d) {
                _cleanup_free_ bool *set = calloc(n, sizeof *set);
                if (!set) {
                        cpumap_clear(&m);
                        return -ENOMEM;
                }
                while ((de = readdir(d))) {
                        long node = node_dir_number(de->d_name);

                        if (node < 0)
                                continue;
                        snprintf(path, sizeof path, "%s/devices/system/node/%s/cpulist", sysroot, de->d_name);
                        if (read_small(path, buf, sizeof buf) < 0)
                                continue;
                        r = cpulist_parse(buf, set, n);
                        if (r < 0) {
                                cpumap_clear(&m);
                                return r;
                        }
                        if (node + 1 > m.nnodes)
                                m.nnodes = (int)node + 1;
                        for (int c = 0; c < n; c++)
                                if (set[c])
                                        m.node[c] = (int)node;
                }
        }
        m.has_node = calloc(m.nnodes, sizeof *m.has_node);
        if (!m.has_node) {
                cpumap_clear(&m);
                return -ENOMEM;
        }
        if (d) {
                rewinddir(d);
                while ((de = readdir(d))) {
                        long node = node_dir_number(de->d_name);
                        if (node >= 0 && node < m.nnodes)
                                m.has_node[node] = true;
                }
        } else
                m.has_node[0] = true;
        *ret = m;
        return 0;
}

int cpumap_simulate(int ncpus, int per_node, struct cpumap *ret)
{
        struct cpumap m = { .online_fd = -1 };

        if (ncpus < 1 || per_node < 1)
                return -EINVAL;
        m.ncpus = ncpus;
        m.nnodes = (ncpus + per_node - 1) / per_node;
        m.online = calloc(ncpus, sizeof *m.online);
        m.node = calloc(ncpus, sizeof *m.node);
        m.scratch = calloc(ncpus, sizeof *m.scratch);
        m.has_node = calloc(m.nnodes, sizeof *m.has_node);
        if (!m.online || !m.node || !m.scratch || !m.has_node) {
                cpumap_clear(&m);
                return -ENOMEM;
        }
        for (int c = 0; c < ncpus; c++) {
                m.online[c] = true;
                m.node[c] = c / per_node;
        }
        for (int n = 0; n < m.nnodes; n++)
                m.has_node[n] = true;
        *ret = m;
        return 0;
}

int cpumap_online_count(const struct cpumap *map)
{
        int k = 0;
        for (int c = 0; c < map->ncpus; c++)
                k += map->online[c];
        return k;
}
