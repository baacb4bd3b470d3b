/* hostinfo.c - this machine in the database: its identity (machine id,
 * hostname, kernel, CPU model) and its topology (CPUs and their nodes),
 * recorded when the daemon starts. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "hostinfo.h"
#include "macro.h"
#include "timeutil.h"

/* The first line of path (prefix NULL), or the value after "prefix ...:"
 * of the first line that starts with prefix; NULL if none or no memory. */
static char *read_line(const char *path, const char *prefix)
{
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        char buf[1024];

        if (!f)
                return NULL;
        while (fgets(buf, sizeof buf, f)) {
                const char *v = prefix ? startswith(buf, prefix) : buf;
                if (!v)
                        continue;
                if (prefix) {
                        v = strchr(v, ':');
                        if (!v)
                                continue;
                        v++;
                }
                while (*v == ' ' || *v == '\t')
                        v++;
                buf[strcspn(buf, "\n")] = 0;
                return strdup(v);
        }
        return NULL;
}

int hostinfo_record(struct store *st, const struct cpumap *map, const char *procroot, int64_t *ret_host_id)
{
        struct host_info h = { 0 };
        struct utsname u;
        char hn[256] = "localhost";
        char path[PATH_MAX];
        int nnodes = 0, r;

        uname(&u);
        gethostname(hn, sizeof hn - 1);
        h.machine_id = read_line("/etc/machine-id", NULL);
        if (!h.machine_id || strlen(h.machine_id) < 8) {
                free(h.machine_id);
                if (asprintf(&h.machine_id, "hostname:%s", hn) < 0)
                        h.machine_id = NULL;
        }
        h.hostname = strdup(hn);
        h.kernel = strdup(u.release);
        snprintf(path, sizeof path, "%s/cpuinfo", procroot);
        h.cpu_model = read_line(path, "model name");
        if (!h.cpu_model)
                h.cpu_model = strdup(u.machine);
        h.ncpus = map->ncpus;
        for (int n = 0; n < map->nnodes; n++)
                nnodes += map->has_node[n];
        h.nnodes = nnodes;
        if (!h.machine_id || !h.hostname || !h.kernel || !h.cpu_model) {
                host_info_clear(&h);
                return -ENOMEM;
        }
        r = store_host_update(st, &h, now_realtime_ns(), ret_host_id);
        host_info_clear(&h);
        if (r < 0)
                return r;
        return store_topology_set(st, map->ncpus, map->node, map->online);
}
