/* hostinfo.h - this machine's identity and topology in the database. */
#ifndef SCALEMON_HOSTINFO_H
#define SCALEMON_HOSTINFO_H

#include <stdint.h>

#include "cpumap.h"
#include "store.h"

/* Record this host (machine id, or "hostname:NAME" without one; hostname,
 * kernel release, CPU model from procroot's cpuinfo) and map's topology
 * in st; *ret_host_id is the host's row.  0, or -ENOMEM, or store_*'s
 * -errno with store_errmsg(st). */
int hostinfo_record(struct store *st, const struct cpumap *map, const char *procroot, int64_t *ret_host_id);

#endif
