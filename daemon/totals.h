/* totals.h - the "totals" request: every counter's running total since the
 * daemon started, and the daemon's health, for scalemon-exporter. */
#ifndef SCALEMON_TOTALS_H
#define SCALEMON_TOTALS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "sampler.h"
#include "store.h"

/* What the event loop knows of its own health (the manager fills it). */
struct totals_health {
        int64_t interval_ns;            /* the sampling interval */
        uint64_t ticks;                 /* intervals sampled since start */
        int64_t tick_late_max_ns;       /* the latest a tick ran after its time */
        size_t held_intervals;          /* sampled, not yet written to the database */
};

/* The reply to {"cmd":"totals"} (without "ok"):
 *   {"started_ns", "sampled_at_ns", "interval_s", "ticks", "tick_late_max_us",
 *    "held_intervals", "cpus", "cpu_node": [N], "nodes": [N],
 *    "metrics": [{"name", "scope", "unit", "scale", "values": [N]}],
 *    "unavailable": [{"name", "why"}]}
 * values are raw totals (multiply by scale for the catalogue unit): one
 * per CPU 0..cpus-1 for cpu metrics, one per node 0..max(nodes) for node
 * metrics, one for system metrics.  started_ns is the daemon's start as it
 * recorded it in st (meta daemon_started), read once.  Returns NULL on out
 * of memory. */
json_t *totals_reply(const struct sampler *s, struct store *st, const struct totals_health *h);

#endif
