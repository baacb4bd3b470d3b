/* cpumap.h - which CPUs exist and are online, and the node of each. */
#ifndef SCALEMON_CPUMAP_H
#define SCALEMON_CPUMAP_H

#include <stdbool.h>

struct cpumap {
        int ncpus;       /* possible CPUs: highest number + 1 */
        int nnodes;      /* highest possible node number + 1 (1 without NUMA) */
        bool *online;    /* [ncpus] */
        int *node;       /* [ncpus], node of each CPU (0 without NUMA) */
        bool *has_node;  /* [nnodes], node exists (has appeared) */
        int online_fd;   /* .../cpu/online, kept open and re-read; -1 if none */
        int node_online_fd; /* .../node/online, kept open and re-read; -1 if none */
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
/* Refresh the nodes from node/online (one pread of a file kept open): a
 * node that came online since is added to has_node, and its CPUs to
 * node[], from its cpulist under sysroot; appeared[n] (of nnodes) is set
 * for each.  Returns the number of nodes that appeared, 0 if none (and
 * always for a map without the file), -ERANGE for a node number >= nnodes,
 * -EINVAL for a malformed list, or another -errno. */
int cpumap_refresh_nodes(struct cpumap *map, const char *sysroot, bool *appeared);
int cpumap_online_count(const struct cpumap *map);
void cpumap_clear(struct cpumap *map);

#endif
