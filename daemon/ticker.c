/* ticker.c - the tick path, in one place:
 *
 *   timer (manager.c on_tick) or a run boundary (ticker_snapshot)
 *   -> writer_slot()        the writer's next slot
 *   -> sampler_sample()     every source through sampler_ops, the open
 *                           runs' own cgroups last (owncg.c), into a
 *                           struct tick
 *   -> writer_take()        kept in the backlog, appended to the head file
 *   -> runs_watch_own()     a run's cgroup frozen or removed: a mark
 *   -> subscribe_tick()     pushed to the subscribers
 *   -> on_catalogue()       a counter that failed and stopped: recorded
 *   then writer_tick_done() or writer_flush() -> store
 *
 * The writer takes ticks and owns no sampler; the sampler knows neither
 * the writer nor the runs (their own cgroups reach it as a hook).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "ticker.h"
#include "timeutil.h"

#define SNAPSHOT_REUSE_NS NSEC_PER_MSEC         /* run boundaries this close share a tick */

int ticker_sample(struct ticker *tk)
{
        struct tick *slot = writer_slot(tk->writer);
        const struct tick *t;
        int r;

        if (!slot)
                return -ENOMEM;
        r = sampler_sample(tk->sampler, slot);
        if (r < 0) {
                if (r != tk->last_err)
                        log_error("sampling failed: %s; skipping this interval", strerror(-r));
                tk->last_err = r;
                return r == -ENOMEM ? r : 0;
        }
        if (tk->last_err) {
                log_info("sampling works again");
                tk->last_err = 0;
        }
        if (r > 0) {
                t = writer_take(tk->writer);
                runs_watch_own(tk->runs, tk->store);
                if (tk->subs)
                        subscribe_tick(tk->subs, t, tk->runs);
        }
        if (sampler_take_catalogue_change(tk->sampler) && tk->on_catalogue)
                tk->on_catalogue(tk->userdata);
        return 0;
}

int ticker_prime(struct ticker *tk)
{
        int r = ticker_sample(tk);

        if (r < 0)
                return r;
        writer_start(tk->writer);
        return 0;
}

int ticker_snapshot(struct ticker *tk, struct snapshot_point *pt, char **ret_err)
{
        int64_t now = now_monotonic_ns();
        int r;

        if (tk->last_snap_mono && writer_samples(tk->writer) == tk->last_snap_samples &&
            writer_backlog(tk->writer, NULL) == 0 && now - tk->last_snap_mono < SNAPSHOT_REUSE_NS) {
                *pt = tk->last_snap;
                return 0;
        }
        r = ticker_sample(tk);
        if (r >= 0)
                r = writer_flush(tk->writer, true);
        if (r >= 0)
                r = store_last_tick(tk->store, &pt->tick, &pt->time);
        pt->mono = sampler_last_mono(tk->sampler);
        if (r >= 0) {
                tk->last_snap = *pt;
                tk->last_snap_samples = writer_samples(tk->writer);
                tk->last_snap_mono = now_monotonic_ns();
        }
        if (r < 0 && asprintf(ret_err, "cannot take a snapshot: %s",
                              r == -ENOMEM ? "out of memory" : store_errmsg(tk->store)) < 0)
                *ret_err = NULL;
        return r;
}
