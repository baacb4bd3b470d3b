/* context.h - the machine's settings when a run starts. */
#ifndef SCALEMON_CONTEXT_H
#define SCALEMON_CONTEXT_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* Collect key/value pairs: kernel, cmdline, thp_enabled, thp_defrag,
 * numa_balancing, perf_event_paranoid, kvm*.PARAM, cpus_online, nodes, ...
 * Keys that cannot be read are left out.  extra[] (may be NULL) is
 * appended as is.  Free with context_free. */
int context_capture(const char *sysroot, const char *procroot, const struct store_kv *extra, size_t nextra,
                    struct store_kv **ret, size_t *ret_n);
void context_free(struct store_kv *kv, size_t n);

#endif
