/* subscribe.h - subscriptions: each tick's deltas pushed to the clients
 * that asked ({"cmd": "subscribe"}: scalemonctl top, run exec's live line). */
#ifndef SCALEMON_SUBSCRIBE_H
#define SCALEMON_SUBSCRIBE_H

#include <stdint.h>

#include "ctl.h"
#include "runs.h"
#include "sampler.h"

struct subscribers;

/* Take the subscribe requests of ctl.  The sampler gives the catalogue and
 * the CPU map; *interval_ns is read at each request (it changes on reload). */
int subscribe_new(struct ctl_server *ctl, const struct sampler *sm, const int64_t *interval_ns,
                  struct subscribers **ret);
/* After ctl_server_free() (which ends the streams). */
struct subscribers *subscribe_free(struct subscribers *s);

/* The hook at the end of a tick: push t (its deltas, the open runs with
 * their last marks) to every subscriber.  Costs nothing without one; a
 * subscriber that does not keep up is dropped by ctl.c (invariant 5). */
void subscribe_tick(struct subscribers *s, const struct tick *t, const struct runs *rs);
/* The CPU map, the interval or the catalogue changed (a reload, a metric
 * that stopped): each subscriber gets its reply again before the next
 * tick.  A tick with a hotplug event does the same by itself. */
void subscribe_changed(struct subscribers *s);
/* The hook after a mark in open run `run` at `time` (ns since the epoch):
 * pushed ticks show it with its run. */
void subscribe_mark(struct subscribers *s, const char *run, int64_t time, const char *text);

#endif
