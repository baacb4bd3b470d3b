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

/* The totals reply (without "ok"; struct proto_totals, lib/proto-reply.h).
 * started_ns is the daemon's start as it recorded it in st (meta
 * daemon_started), read once.  Returns NULL on out of memory. */
json_t *totals_reply(const struct sampler *s, struct store *st, const struct totals_health *h);

#endif
