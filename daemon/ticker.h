/* ticker.h - one tick, from the sampler to the writer and the subscribers. */
#ifndef SCALEMON_TICKER_H
#define SCALEMON_TICKER_H

#include <stdint.h>

#include "runs.h"
#include "sampler.h"
#include "store.h"
#include "subscribe.h"
#include "writer.h"

/* The parts a tick passes through, borrowed (the manager's); the state of
 * the tick path itself.  Set the parts, zero the rest. */
struct ticker {
        struct sampler *sampler;
        struct writer *writer;
        struct runs *runs;
        struct store *store;
        struct subscribers *subs;               /* NULL: none yet */
        /* the sampler's catalogue changed (a counter failed and stopped) */
        void (*on_catalogue)(void *userdata);
        void *userdata;

        int last_err;                           /* the last failed sample's, to log it once */
        struct snapshot_point last_snap;        /* the last run boundary's tick */
        uint64_t last_snap_samples;             /* writer_samples() then */
        int64_t last_snap_mono;                 /* when it was taken */
};

/* One tick: the sampler fills the writer's next slot (every source, the
 * open runs' own cgroups among them), the writer keeps it, the runs' own
 * cgroups are checked (frozen, removed), the subscribers get it, and a
 * catalogue change is passed on.  A failed sample is logged once and
 * skipped; only -ENOMEM is returned.  The first call primes the counters
 * and keeps nothing. */
int ticker_sample(struct ticker *tk);
/* The first sample, and the writer's flush clock starts. */
int ticker_prime(struct ticker *tk);
/* A run's boundary: a tick sampled and committed at once, so that a run's
 * totals are exact there; *pt is where it ended.  Boundaries within a
 * millisecond of the last, with no tick since, share its tick: a burst of
 * run starts and stops samples once.  0, or -errno with *ret_err. */
int ticker_snapshot(struct ticker *tk, struct snapshot_point *pt, char **ret_err);

#endif
