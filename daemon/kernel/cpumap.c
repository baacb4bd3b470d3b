/* cpumap.c - CPUs and nodes from sysfs.
 *
 * /sys/devices/system/cpu/{possible,online} give the CPU sets; each
 * /sys/devices/system/node/nodeN/cpulist gives a node's CPUs.  A kernel
 * without NUMA has no node directory: every CPU is on node 0.  The node
 * numbers go up to the highest in node/possible (or of a directory, if
 * higher), so that a node that comes online later (memory hot-added, a
 * CXL expander) fits the arrays sized at start; node/online says when.
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
        if (map->node_online_fd >= 0)
                close(map->node_online_fd);
        memset(map, 0, sizeof *map);
        map->online_fd = map->node_online_fd = -1;
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

#define MAX_NODES 4096         /* node numbers 0..4095 */

/* N of a sysfs "nodeN" directory entry (0..4095), or -1 for any other name. */
static long node_dir_number(const char *name)
{
        const char *num = startswith(name, "node");
        char *end;
        long node;

        if (!num || !isdigit((unsigned char)*num))
                return -1;
        node = strtol(num, &end, 10);
        return *end || node < 0 || node >= MAX_NODES ? -1 : node;
}

/* Set node[] for the CPUs in node's cpulist (a node without the file
 * or without CPUs changes nothing). */
static int read_node_cpus(const char *sysroot, struct cpumap *m, long node, bool *set)
{
        char path[512], buf[4096];
        int r;

        snprintf(path, sizeof path, "%s/devices/system/node/node%ld/cpulist", sysroot, node);
        if (read_small(path, buf, sizeof buf) < 0)
                return 0;
        r = cpulist_parse(buf, set, m->ncpus);
        if (r < 0)
                return r;
        for (int c = 0; c < m->ncpus; c++)
                if (set[c])
                        m->node[c] = (int)node;
        return 0;
}

/* The nodes of m (ncpus set): the nodeN directories there are, sized by
 * node/possible; node/online opened to follow them. */
static int read_nodes(const char *sysroot, struct cpumap *m)
{
        _cleanup_closedir_ DIR *d = NULL;
        _cleanup_free_ bool *set = calloc(m->ncpus, sizeof *set);
        char path[512], buf[4096];
        struct dirent *de;
        int r;

        if (!set)
                return -ENOMEM;
        m->nnodes = 1;
        snprintf(path, sizeof path, "%s/devices/system/node/possible", sysroot);
        if (read_small(path, buf, sizeof buf) >= 0 && (r = cpulist_max(buf)) > 0)
                m->nnodes = MIN(r, MAX_NODES);
        snprintf(path, sizeof path, "%s/devices/system/node", sysroot);
        d = opendir(path);
        if (d)
                while ((de = readdir(d))) {
                        long node = node_dir_number(de->d_name);

                        if (node < 0)
                                continue;
                        r = read_node_cpus(sysroot, m, node, set);
                        if (r < 0)
                                return r;
                        if (node + 1 > m->nnodes)
                                m->nnodes = (int)node + 1;
                }
        m->has_node = calloc(m->nnodes, sizeof *m->has_node);
        if (!m->has_node)
                return -ENOMEM;
        if (!d) {
                m->has_node[0] = true;
                return 0;
        }
        rewinddir(d);
        while ((de = readdir(d))) {
                long node = node_dir_number(de->d_name);
                if (node >= 0 && node < m->nnodes)
                        m->has_node[node] = true;
        }
        snprintf(path, sizeof path, "%s/devices/system/node/online", sysroot);
        m->node_online_fd = open(path, O_RDONLY | O_CLOEXEC);
        return 0;
}

int cpumap_refresh_nodes(struct cpumap *map, const char *sysroot, bool *appeared)
{
        _cleanup_free_ bool *set = NULL;
        bool online[MAX_NODES];
        char buf[4096];
        ssize_t k;
        int r, n = 0;

        if (map->node_online_fd < 0)
                return 0;
        k = pread(map->node_online_fd, buf, sizeof buf - 1, 0);
        if (k < 0)
                return negative_errno();
        buf[k] = 0;
        r = cpulist_parse(buf, online, map->nnodes);
        if (r < 0)
                return r;
        for (int nd = 0; nd < map->nnodes; nd++) {
                appeared[nd] = false;
                if (!online[nd] || map->has_node[nd])
                        continue;
                if (!set && !(set = calloc(map->ncpus, sizeof *set)))
                        return -ENOMEM;
                r = read_node_cpus(sysroot, map, nd, set);
                if (r < 0)
                        return r;
                map->has_node[nd] = appeared[nd] = true;
                n++;
        }
        return n;
}

int cpumap_read(const char *sysroot, struct cpumap *ret)
{
        struct cpumap m = { .online_fd = -1, .node_online_fd = -1 };
        char path[512], buf[4096];
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

        r = read_nodes(sysroot, &m);
        if (r < 0) {
                cpumap_clear(&m);
                return r;
        }
        *ret = m;
        return 0;
}

int cpumap_simulate(int ncpus, int per_node, struct cpumap *ret)
{
        struct cpumap m = { .online_fd = -1, .node_online_fd = -1 };

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
