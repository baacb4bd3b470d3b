/* cpumap.h - which CPUs exist and are online, and the node of each. */
#ifndef SCALEMON_CPUMAP_H
#define SCALEMON_CPUMAP_H

#include <stdbool.h>

struct cpumap {
        int ncpus;       /* possible CPUs: highest number + 1 */
        int nnodes;      /* highest node number + 1 (1 without NUMA) */
        bool *online;    /* [ncpus] */
        int *node;       /* [ncpus], node of each CPU (0 without NUMA) */
        bool *has_node;  /* [nnodes], node exists */
        int online_fd;   /* .../cpu/online, kept open and re-read; -1 if none */
        bool *scratch;   /* [ncpus], for refreshes */
};

/* Parse a kernel CPU list ("0-3,8,10-11\n") into set[0..n-1].
 * -EINVAL: malformed; -ERANGE: a number >= n. */
int cpulist_parse(const char *s, bool *set, int n);

/* Read the map from sysfs under root ("/sys" normally; a fixture tree in
 * tests). */
int cpumap_read(const char *sysroot, struct cpumap *ret);
/* A simulated map (scalemond --simulate-cpus): ncpus CPUs, all online,
 * CPU c on node c / per_node.  It has no online file: refreshing it
 * changes nothing. */
int cpumap_simulate(int ncpus, int per_node, struct cpumap *ret);
/* Refresh only the online set (cheap: one pread of a file kept open).
 * Returns 1 if it changed, 0 if not. */
int cpumap_refresh_online(struct cpumap *map);
int cpumap_online_count(const struct cpumap *map);
void cpumap_clear(struct cpumap *map);

#endif
