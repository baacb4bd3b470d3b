/* manager.c - the daemon's one event loop.
 *
 * sd-event drives everything: a CLOCK_MONOTONIC timer samples every
 * interval, signals arrive through signalfd (SIGTERM/SIGINT stop, SIGHUP
 * reloads), and the watchdog is fed by the loop itself, so a hung loop
 * stops feeding it.  Samples are batched in memory and written in one
 * transaction per flush, at least once a second.
 */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "ctl.h"
#include "exchange.h"
#include "log.h"
#include "macro.h"
#include "manager.h"
#include "runs.h"
#include "sampler.h"
#include "store.h"
#include "timeutil.h"

#define FLUSH_EVERY_NS     NSEC_PER_SEC
#define CHECKPOINT_EVERY_S 60
#define SNAPSHOT_REUSE_NS  NSEC_PER_MSEC   /* run boundaries this close share a tick */
#define RETAIN_EVERY_NS    NSEC_PER_SEC
#define RETAIN_BUDGET_NS   (50 * NSEC_PER_MSEC)
#define RETAIN_MAX_TICKS   128             /* ticks merged or deleted in one transaction */
#define RETAIN_DUTY        5               /* catching up, work 1 part in 5 */
#define SIZE_CAP_KEEP_NS   (3600 * NSEC_PER_SEC)   /* max_db_size never takes the last hour */

struct manager {
        sd_event *event;
        sd_event_source *tick_src;
        sd_event_source *checkpoint_src;
        sd_event_source *retain_src;
        struct conf conf;
        char *config_path;
        bool config_missing_ok;
        struct conf overrides;
        bool override_interval, override_database, override_socket;

        struct sampler *sampler;
        struct store *store;
        struct ctl_server *ctl;
        struct runs *runs;
        int64_t host_id;

        int64_t *cpu_vals;                 /* write_batch()'s per-CPU row of one metric */
        bool *cpu_nulls;
        int cpu_cap;
        struct tick *batch;                /* ticks not yet written */
        size_t nbatch, capbatch;
        int64_t backlog_bytes;             /* memory held by batch[0..nbatch) */
        struct {                           /* intervals dropped, not yet recorded */
                int64_t start, end, intervals;
                char reason[256];
        } gap;
        char hold_reason[160];             /* why the batch is not being written */
        bool wal_held;                     /* a reader holds the WAL at wal_limit */
        uint64_t nsamples;                 /* ticks taken so far */
        struct snapshot_point last_snap;   /* the last run boundary's tick */
        uint64_t last_snap_nsamples;
        int64_t last_snap_mono;
        int64_t last_flush_mono;
        int last_flush_err;                /* to log a failing flush once */
        int last_sample_err;
        uint64_t next_usec;                /* CLOCK_MONOTONIC time of the next tick */
        int64_t tick_late_max_ns;          /* the latest a tick ran after its time */
        struct {                           /* retention (retain_work()) */
                int64_t rollup_cursor;     /* store_rollup_step()'s; -1: from the database */
                int64_t delete_cursor;     /* store_delete_step()'s */
                uint64_t merged, deleted;  /* ticks merged away and deleted since start */
                int64_t step_max_ns;       /* the longest call */
                int64_t db_bytes;          /* the database's pages in use, when last looked at */
                bool full_logged;          /* said that max_db_size cannot be kept */
                bool err_logged;
        } retain;

        int ready_fd;
        char status[256];
};

static void set_status(struct manager *m)
{
        char iv[16];
        int avail = 0, unavail = 0, online = cpumap_online_count(sampler_cpumap(m->sampler));

        for (int i = 0; i < _M_MAX; i++) {
                if (!sampler_enabled(m->sampler, i))
                        continue;
                if (sampler_available(m->sampler, i))
                        avail++;
                else
                        unavail++;
        }
        duration_format(m->conf.interval_ns, iv, sizeof iv);
        snprintf(m->status, sizeof m->status, "sampling %d CPU%s, %d metrics, %d unavailable, every %s", online,
                 online == 1 ? "" : "s", avail, unavail, iv);
        sd_notifyf(0, "STATUS=%s", m->status);
}

/* Who may use the control socket: the control group gets the socket file
 * (mode 0660) and the right to change state; at start and on reload. */
static void set_control_group(struct manager *m)
{
        const char *group = m->conf.control_group;
        int r = ctl_server_set_group(m->ctl, group);

        if (r == -ENOENT)
                log_notice("group %s does not exist: only root and uid %u may start and stop runs", group,
                           (unsigned)geteuid());
        else if (r < 0) {
                struct group *own = getgrgid(getegid());
                char gid[16];

                snprintf(gid, sizeof gid, "%u", (unsigned)getegid());
                log_notice("cannot give the control socket to group %s: %s; it keeps scalemond's group %s, so "
                           "members of %s cannot connect (add scalemond's user, uid %u, to group %s, or set "
                           "control_group to a group it is in)",
                           group, strerror(-r), own ? own->gr_name : gid, group, (unsigned)geteuid(), group);
        }
}

/* Record the catalogue (what is available and why not) in the database. */
static int sync_catalogue(struct manager *m)
{
        bool avail[_M_MAX];
        char *why[_M_MAX];
        double scale[_M_MAX];

        for (int i = 0; i < _M_MAX; i++) {
                avail[i] = sampler_available(m->sampler, i);
                why[i] = (char *)sampler_why(m->sampler, i);
                scale[i] = sampler_scale(m->sampler, i);
        }
        return store_metrics_sync(m->store, avail, why, scale);
}

static void log_unavailable(struct manager *m)
{
        bool said_bpf = false;

        for (int i = 0; i < _M_MAX; i++) {
                if (!sampler_enabled(m->sampler, i) || sampler_available(m->sampler, i))
                        continue;
                /* lock wait hook: the BPF metrics share one reason, said once */
                if (metric_is_bpf(&metric_table[i]) && said_bpf)
                        continue;
                said_bpf |= metric_is_bpf(&metric_table[i]);
                log_metric(LOG_NOTICE, metric_table[i].name, "%s unavailable: %s%s", metric_table[i].name,
                           sampler_why(m->sampler, i),
                           metric_is_bpf(&metric_table[i]) ? " (so are the other lock wait metrics; "
                                                             "lock_contentions is still counted)" : "");
        }
}

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

static int record_host(struct manager *m)
{
        const struct cpumap *map = sampler_cpumap(m->sampler);
        struct host_info h = { 0 };
        struct utsname u;
        char hn[256] = "localhost";
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
        h.cpu_model = read_line("/proc/cpuinfo", "model name");
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
        r = store_host_update(m->store, &h, now_realtime_ns(), &m->host_id);
        host_info_clear(&h);
        if (r < 0)
                return r;
        return store_topology_set(m->store, map->ncpus, map->node, map->online);
}

/* ---- batching and flushing ---- */

static int64_t tick_bytes(const struct tick *t)
{
        return (int64_t)(sizeof *t + t->capv * sizeof *t->v + t->capmux * sizeof *t->mux + t->capev * sizeof *t->ev);
}

/* The backlog is full: drop its oldest eighth, and remember the span lost
 * so that it is written as a gap row with the next batch. */
static void drop_oldest(struct manager *m)
{
        size_t n = MAX(m->nbatch / 8, (size_t)1);
        char lim[32];

        if (m->gap.intervals == 0) {
                m->gap.start = m->batch[0].t;
                snprintf(m->gap.reason, sizeof m->gap.reason, "backlog_limit reached while %s", m->hold_reason);
                size_format(m->conf.backlog_limit, lim, sizeof lim);
                log_error("unwritten intervals reached backlog_limit (%s): dropping the oldest; "
                          "the gap will be recorded in the database", lim);
        }
        m->gap.end = m->batch[n - 1].t + m->batch[n - 1].dur;
        m->gap.intervals += (int64_t)n;
        for (size_t i = 0; i < n; i++) {
                m->backlog_bytes -= tick_bytes(&m->batch[i]);
                tick_clear(&m->batch[i]);
        }
        memmove(m->batch, m->batch + n, (m->nbatch - n) * sizeof *m->batch);
        memset(m->batch + m->nbatch - n, 0, n * sizeof *m->batch);
        m->nbatch -= n;
}

/* Zeros are not stored (schema invariant 1), so they are not held either;
 * while writes are failing, each held interval keeps only the memory it
 * needs, so that backlog_limit buys as many intervals as it can. */
static void compact(struct manager *m, struct tick *t)
{
        size_t k = 0;

        for (size_t i = 0; i < t->nv; i++)
                if (t->v[i].null || t->v[i].value != 0)
                        t->v[k++] = t->v[i];
        t->nv = k;
        if ((m->last_flush_err || m->wal_held) && t->capv > k && k > 0) {
                struct sample_value *v = realloc(t->v, k * sizeof *v);
                if (v) {
                        t->v = v;
                        t->capv = k;
                }
        }
}

static int take_sample(struct manager *m)
{
        struct tick *t;
        int r;

        if (m->nbatch > 0 && m->backlog_bytes >= m->conf.backlog_limit)
                drop_oldest(m);
        if (m->nbatch == m->capbatch) {
                size_t cap = m->capbatch ? m->capbatch * 2 : 16;
                struct tick *b = realloc(m->batch, cap * sizeof *b);
                if (!b)
                        return -ENOMEM;
                memset(b + m->capbatch, 0, (cap - m->capbatch) * sizeof *b);
                m->batch = b;
                m->capbatch = cap;
        }
        t = &m->batch[m->nbatch];
        r = sampler_sample(m->sampler, t);
        if (r < 0) {
                if (r != m->last_sample_err)
                        log_error("sampling failed: %s; skipping this interval", strerror(-r));
                m->last_sample_err = r;
                return r == -ENOMEM ? r : 0;
        }
        if (m->last_sample_err) {
                log_info("sampling works again");
                m->last_sample_err = 0;
        }
        if (r > 0) {
                compact(m, t);
                m->backlog_bytes += tick_bytes(t);
                m->nbatch++;
                m->nsamples++;
        }
        if (sampler_take_catalogue_change(m->sampler)) {
                /* a counter failed and stopped: say so where users look */
                if (sync_catalogue(m) < 0)
                        log_warning("cannot record the metric catalogue: %s", store_errmsg(m->store));
                set_status(m);
        }
        return 0;
}

/* A tick's cpu-scope values v[0..n), all of one metric, as one packed
 * row (schema 0004).  The sampler sorts a tick's values by metric. */
static int write_cpu_values(struct manager *m, int64_t tick, const struct sample_value *v, size_t n)
{
        int ncpus = 0;

        for (size_t i = 0; i < n; i++)
                if (v[i].loc >= 0)
                        ncpus = MAX(ncpus, v[i].loc + 1);
        if (ncpus > m->cpu_cap) {
                int64_t *pv = realloc(m->cpu_vals, (size_t)ncpus * sizeof *pv);
                bool *pn;
                if (!pv)
                        return -ENOMEM;
                m->cpu_vals = pv;
                pn = realloc(m->cpu_nulls, (size_t)ncpus * sizeof *pn);
                if (!pn)
                        return -ENOMEM;
                m->cpu_nulls = pn;
                m->cpu_cap = ncpus;
        }
        memset(m->cpu_vals, 0, (size_t)ncpus * sizeof *m->cpu_vals);
        memset(m->cpu_nulls, 0, (size_t)ncpus * sizeof *m->cpu_nulls);
        for (size_t i = 0; i < n; i++) {
                if (v[i].loc < 0)
                        continue;
                /* deltas of u64 counters, clamped at 0: never negative */
                m->cpu_vals[v[i].loc] = v[i].null ? 0 : MAX(v[i].value, (int64_t)0);
                m->cpu_nulls[v[i].loc] = v[i].null;
        }
        return store_add_cpu_values(m->store, tick, v[0].metric, m->cpu_vals, m->cpu_nulls, ncpus);
}

static int write_tick_values(struct manager *m, int64_t id, const struct tick *t)
{
        int r = 0;

        for (size_t k = 0; r >= 0 && k < t->nv;) {
                size_t end = k + 1;

                if (metric_table[t->v[k].metric].scope != SCOPE_CPU) {
                        r = store_add_sample(m->store, id, t->v[k].metric, t->v[k].loc, t->v[k].value, t->v[k].null);
                        k++;
                        continue;
                }
                while (end < t->nv && t->v[end].metric == t->v[k].metric)
                        end++;
                r = write_cpu_values(m, id, t->v + k, end - k);
                k = end;
        }
        return r;
}

static int write_batch(struct manager *m)
{
        int r = store_begin(m->store);

        if (r >= 0 && m->gap.intervals > 0)
                r = store_add_gap(m->store, m->gap.start, m->gap.end, m->gap.intervals, m->gap.reason);

        for (size_t i = 0; r >= 0 && i < m->nbatch; i++) {
                const struct tick *t = &m->batch[i];
                int64_t id;

                r = store_add_tick(m->store, t->t, t->dur, &id);
                if (r >= 0)
                        r = write_tick_values(m, id, t);
                for (size_t k = 0; r >= 0 && k < t->nmux; k++)
                        r = store_add_mux(m->store, id, t->mux[k].cpu, t->mux[k].grp, t->mux[k].duty);
                for (size_t k = 0; r >= 0 && k < t->nev; k++)
                        r = store_add_event(m->store, t->t + t->dur, t->ev[k].kind, t->ev[k].cpu, NULL);
        }
        if (r >= 0)
                r = store_commit(m->store);
        if (r < 0)
                store_rollback(m->store);
        return r;
}

/* A reader that keeps a read transaction open pins the write-ahead log:
 * nothing can be checkpointed past its snapshot, and every write makes
 * the file longer.  Past wal_limit, hold the batch in memory until the
 * reader lets go.  A run boundary (force) is written anyway: it is a few
 * pages, and a run that cannot start is worse. */
static bool wal_blocked(struct manager *m, bool force)
{
        char lim[32];
        int r;

        if (force || store_wal_size(m->store) < m->conf.wal_limit)
                return false;
        r = store_wal_reset(m->store);
        if (r > 0) {
                if (m->wal_held)
                        log_info("the reader let go of the database: writing %zu held interval%s", m->nbatch,
                                 m->nbatch == 1 ? "" : "s");
                m->wal_held = false;
                return false;
        }
        if (r < 0)              /* not a reader: let the write report it */
                return false;
        if (!m->wal_held) {
                size_format(m->conf.wal_limit, lim, sizeof lim);
                log_warning("the write-ahead log reached wal_limit (%s) and a reader holds the database: "
                            "keeping samples in memory until it lets go", lim);
                snprintf(m->hold_reason, sizeof m->hold_reason,
                         "a reader held the database with the write-ahead log at wal_limit");
        }
        m->wal_held = true;
        return true;
}

static int flush_batch(struct manager *m, bool force)
{
        int r;

        m->last_flush_mono = now_monotonic_ns();
        if (m->nbatch == 0 && m->gap.intervals == 0)
                return 0;
        if (wal_blocked(m, force))
                return -EBUSY;
        r = write_batch(m);
        if (r < 0) {
                if (!m->last_flush_err)
                        log_error("cannot write to the database: %s; keeping %zu interval%s in memory and retrying",
                                  store_errmsg(m->store), m->nbatch, m->nbatch == 1 ? "" : "s");
                snprintf(m->hold_reason, sizeof m->hold_reason, "the database could not be written (%.100s)",
                         store_errmsg(m->store));
                m->last_flush_err = r;
                return r;
        }
        if (m->last_flush_err)
                log_info("database writes work again: wrote %zu held interval%s", m->nbatch,
                         m->nbatch == 1 ? "" : "s");
        if (m->gap.intervals > 0)
                log_notice("recorded a gap of %" PRId64 " interval%s dropped from the backlog", m->gap.intervals,
                           m->gap.intervals == 1 ? "" : "s");
        m->last_flush_err = 0;
        m->gap.intervals = 0;
        m->nbatch = 0;
        m->backlog_bytes = 0;
        return 0;
}

static int flush(struct manager *m)
{
        return flush_batch(m, false);
}

/* ---- event sources ---- */

static uint64_t interval_usec(const struct manager *m)
{
        return (uint64_t)(m->conf.interval_ns / NSEC_PER_USEC);
}

static int on_tick(sd_event_source *src, uint64_t usec, void *userdata)
{
        struct manager *m = userdata;
        uint64_t now;
        int r;

        sd_event_now(m->event, CLOCK_MONOTONIC, &now);
        if (now > usec)
                m->tick_late_max_ns = MAX(m->tick_late_max_ns, (int64_t)(now - usec) * NSEC_PER_USEC);

        r = take_sample(m);
        if (r < 0) {
                log_error("out of memory while sampling, stopping");
                return sd_event_exit(m->event, EXIT_FAILURE);
        }
        if (m->conf.interval_ns >= FLUSH_EVERY_NS || now_monotonic_ns() - m->last_flush_mono >= FLUSH_EVERY_NS)
                flush(m);

        /* Next tick on the grid, without drift; if we fell behind by
         * more than an interval, skip ahead rather than catch up. */
        sd_event_now(m->event, CLOCK_MONOTONIC, &now);
        m->next_usec = usec + interval_usec(m);
        if (m->next_usec <= now)
                m->next_usec = now + interval_usec(m);
        r = sd_event_source_set_time(src, m->next_usec);
        if (r >= 0)
                r = sd_event_source_set_enabled(src, SD_EVENT_ONESHOT);
        if (r < 0) {
                log_error("cannot re-arm the sampling timer: %s", strerror(-r));
                return sd_event_exit(m->event, EXIT_FAILURE);
        }
        return 0;
}

/* One slice of retention: the oldest ticks outside runs deleted while
 * the database is over max_db_size or past retain_rollup, then raw ticks
 * past retain_raw rolled up, one transaction at a time for at most half
 * an interval (and RETAIN_BUDGET_NS), so that a tick waits at most that
 * plus one transaction.  Returns true if work is left. */
static bool retain_work(struct manager *m)
{
        int64_t start = now_monotonic_ns(), budget = MIN(m->conf.interval_ns / 2, RETAIN_BUDGET_NS);
        const struct conf *c = &m->conf;
        int r;

        /* while writes fail or are held, the flush has said so; this
         * would only make the log longer */
        if (m->last_flush_err || m->wal_held)
                return false;
        do {
                int64_t now = now_realtime_ns();
                size_t n = 0;

                r = 0;
                if (c->max_db_size > 0 && store_db_bytes(m->store, &m->retain.db_bytes) >= 0 &&
                    m->retain.db_bytes > c->max_db_size) {
                        r = store_delete_step(m->store, now - SIZE_CAP_KEEP_NS, RETAIN_MAX_TICKS,
                                              &m->retain.delete_cursor, &n);
                        if (r == 0 && !m->retain.full_logged) {
                                char cap[16];
                                size_format(c->max_db_size, cap, sizeof cap);
                                log_warning("the database uses %.1f MiB, over max_db_size (%s), and what is left is "
                                            "inside runs or from the last hour: delete old runs (scalemonctl run "
                                            "delete) or raise max_db_size",
                                            (double)m->retain.db_bytes / (1 << 20), cap);
                                m->retain.full_logged = true;
                        }
                } else
                        m->retain.full_logged = false;
                if (r == 0 && c->retain_rollup_ns > 0)
                        r = store_delete_step(m->store, now - c->retain_rollup_ns, RETAIN_MAX_TICKS,
                                              &m->retain.delete_cursor, &n);
                if (r > 0)
                        m->retain.deleted += n;
                else if (r == 0 && c->retain_raw_ns > 0 && c->rollup_interval_ns > c->interval_ns) {
                        r = store_rollup_step(m->store, now - c->retain_raw_ns, c->rollup_interval_ns,
                                              RETAIN_MAX_TICKS, &m->retain.rollup_cursor, &n);
                        m->retain.merged += n;
                }
        } while (r > 0 && now_monotonic_ns() - start < budget);
        if (r < 0 && !m->retain.err_logged) {
                log_warning("cannot roll up or delete old samples: %s; trying again every second",
                            r == -ENOMEM ? "out of memory" : store_errmsg(m->store));
                m->retain.err_logged = true;
        } else if (r >= 0)
                m->retain.err_logged = false;
        m->retain.step_max_ns = MAX(m->retain.step_max_ns, now_monotonic_ns() - start);
        return r > 0;
}

/* "raw samples kept 7d, then 1m rollups to 90d, database capped at 10G" */
static void retention_format(const struct conf *c, char *buf, size_t len)
{
        char raw[16], every[16], keep[16], cap[16];
        size_t n;

        duration_format(c->retain_raw_ns, raw, sizeof raw);
        duration_format(c->rollup_interval_ns, every, sizeof every);
        duration_format(c->retain_rollup_ns, keep, sizeof keep);
        if (c->retain_raw_ns == 0 || (c->retain_rollup_ns > 0 && c->retain_rollup_ns <= c->retain_raw_ns) ||
            c->rollup_interval_ns <= c->interval_ns)
                snprintf(buf, len, "samples kept %s", c->retain_rollup_ns ? keep : "forever");
        else
                snprintf(buf, len, "raw samples kept %s, then %s rollups %s%s", raw, every,
                         c->retain_rollup_ns ? "to " : "", c->retain_rollup_ns ? keep : "forever");
        n = strlen(buf);
        if (c->max_db_size > 0 && n < len) {
                size_format(c->max_db_size, cap, sizeof cap);
                snprintf(buf + n, len - n, ", database capped at %s", cap);
        }
}

static int on_retain(sd_event_source *src, uint64_t usec, void *userdata)
{
        struct manager *m = userdata;
        int64_t t0 = now_monotonic_ns(), t1, next;
        bool more = retain_work(m);

        (void)usec;
        t1 = now_monotonic_ns();
        /* catching up: again soon, but resting RETAIN_DUTY - 1 times as
         * long as it worked */
        next = more ? t1 + MAX((t1 - t0) * (RETAIN_DUTY - 1), NSEC_PER_MSEC) : t1 + RETAIN_EVERY_NS;
        sd_event_source_set_time(src, (uint64_t)(next / NSEC_PER_USEC));
        return sd_event_source_set_enabled(src, SD_EVENT_ONESHOT);
}

static int on_checkpoint(sd_event_source *src, uint64_t usec, void *userdata)
{
        struct manager *m = userdata;
        int r;

        /* while writes fail, the flush has said so once; retrying the
         * checkpoint would only say it again */
        if (!m->last_flush_err) {
                r = store_checkpoint(m->store, false);
                if (r < 0)
                        log_warning("WAL checkpoint failed: %s", store_errmsg(m->store));
        }
        sd_event_source_set_time(src, usec + CHECKPOINT_EVERY_S * USEC_PER_SEC);
        return sd_event_source_set_enabled(src, SD_EVENT_ONESHOT);
}

static int on_stop(sd_event_source *src, const struct signalfd_siginfo *si, void *userdata)
{
        struct manager *m = userdata;

        log_info("received %s, stopping", strsignal((int)si->ssi_signo));
        return sd_event_exit(m->event, 0);
}

static void apply_overrides(struct manager *m, struct conf *c)
{
        if (m->override_interval)
                c->interval_ns = m->overrides.interval_ns;
        if (m->override_database) {
                free(c->database);
                c->database = strdup(m->overrides.database);
        }
        if (m->override_socket) {
                free(c->socket);
                c->socket = strdup(m->overrides.socket);
        }
}

/* SIGHUP or the reload request: read the configuration again.  A broken
 * one is refused (-EINVAL, *ret_err says file:line) and the running one
 * stays; a good one applies without a gap in the samples.  Either way the
 * daemon goes on; only -ENOMEM is fatal. */
static int reload(struct manager *m, char **ret_err)
{
        struct conf c;
        _cleanup_free_ char *err = NULL;
        bool metrics_changed;
        char iv[16];
        int r;

        conf_defaults(&c);
        r = conf_load(m->config_path, m->config_missing_ok, &c, &err);
        if (r < 0) {
                log_error("reload refused, keeping the running configuration: %s", err ? err : strerror(-r));
                if (asprintf(ret_err, "reload refused, keeping the running configuration: %s",
                             err ? err : strerror(-r)) < 0)
                        *ret_err = NULL;
                conf_free(&c);
                return r == -ENOMEM ? r : -EINVAL;
        }
        apply_overrides(m, &c);
        if (!c.database || !c.socket) {
                conf_free(&c);
                return -ENOMEM;
        }
        if (!streq(c.database, m->conf.database))
                log_warning("database path changed to %s: it applies at the next restart, not on reload", c.database);
        if (!streq(c.socket, m->conf.socket))
                log_warning("socket path changed to %s: it applies at the next restart, not on reload", c.socket);

        sd_notify(0, "RELOADING=1");
        /* Close the current interval at the old settings first. */
        r = take_sample(m);
        if (r < 0)
                goto out;
        metrics_changed = memcmp(c.enabled, m->conf.enabled, sizeof c.enabled) != 0;
        if (metrics_changed) {
                _cleanup_free_ char *serr = NULL;
                r = sampler_reconfigure(m->sampler, c.enabled, &serr);
                if (r < 0) {
                        log_error("reload: cannot open the new metric set: %s", serr ? serr : strerror(-r));
                        if (asprintf(ret_err, "reload: cannot open the new metric set: %s",
                                     serr ? serr : strerror(-r)) < 0)
                                *ret_err = NULL;
                        goto out;
                }
                log_unavailable(m);
        }
        if (c.interval_ns != m->conf.interval_ns) {
                uint64_t now;
                sd_event_now(m->event, CLOCK_MONOTONIC, &now);
                m->next_usec = now + (uint64_t)(c.interval_ns / NSEC_PER_USEC);
                sd_event_source_set_time(m->tick_src, m->next_usec);
        }
        free(m->conf.database);
        free(m->conf.socket);
        free(m->conf.control_group);
        m->conf = c;
        memset(&c, 0, sizeof c);
        set_control_group(m);

        r = flush(m);
        if (r >= 0 && metrics_changed)
                r = sync_catalogue(m);
        if (r >= 0)
                r = store_meta_set_int(m->store, "interval_ns", m->conf.interval_ns);
        duration_format(m->conf.interval_ns, iv, sizeof iv);
        if (r >= 0)
                r = store_add_event(m->store, now_realtime_ns(), "reload", -1, iv);
        if (r < 0)
                log_error("reload: cannot record the new settings: %s", store_errmsg(m->store));
        set_status(m);
        log_info("configuration reloaded: %s", m->status);
        r = 0;
out:
        conf_free(&c);
        sd_notify(0, "READY=1");
        return r;
}

static int on_reload(sd_event_source *src, const struct signalfd_siginfo *si, void *userdata)
{
        struct manager *m = userdata;
        _cleanup_free_ char *err = NULL;
        int r = reload(m, &err);

        if (r == -ENOMEM) {
                log_error("out of memory while reloading, stopping");
                return sd_event_exit(m->event, EXIT_FAILURE);
        }
        return 0;
}

/* ---- control requests ---- */

/* An immediate sample, written at once: a run's boundary falls exactly on
 * a tick boundary, and its totals are exact there.  Requests that come
 * within SNAPSHOT_REUSE_NS of the last boundary, with no tick since, share
 * its tick: under a burst of run starts and stops from many clients the
 * daemon samples once per burst, not once per request. */
static int snapshot(struct manager *m, struct snapshot_point *pt, char **ret_err)
{
        int64_t now = now_monotonic_ns();
        int r;

        if (m->last_snap_mono && m->nsamples == m->last_snap_nsamples && m->nbatch == 0 &&
            now - m->last_snap_mono < SNAPSHOT_REUSE_NS) {
                *pt = m->last_snap;
                return 0;
        }
        r = take_sample(m);
        if (r >= 0)
                r = flush_batch(m, true);
        if (r >= 0)
                r = store_last_tick(m->store, &pt->tick, &pt->time);
        pt->mono = sampler_last_mono(m->sampler);
        if (r >= 0) {
                m->last_snap = *pt;
                m->last_snap_nsamples = m->nsamples;
                m->last_snap_mono = now_monotonic_ns();
        }
        if (r < 0 && asprintf(ret_err, "cannot take a snapshot: %s",
                              r == -ENOMEM ? "out of memory" : store_errmsg(m->store)) < 0)
                *ret_err = NULL;
        return r;
}

static json_t *status_json(struct manager *m)
{
        const struct cpumap *map = sampler_cpumap(m->sampler);
        const int64_t *tot = sampler_totals(m->sampler);
        int nloc = sampler_nloc(m->sampler);
        json_t *totals = json_object(), *o;
        int64_t last_tick = 0, last_end = 0;
        char t[40] = "";

        for (int i = 0; i < _M_MAX; i++) {
                double sum = 0;
                if (!sampler_available(m->sampler, i))
                        continue;
                for (int l = 0; l < nloc; l++)
                        sum += (double)tot[i * nloc + l];
                json_object_set_new(totals, metric_table[i].name, json_real(sum * sampler_scale(m->sampler, i)));
        }
        if (store_last_tick(m->store, &last_tick, &last_end) == 0)
                time_format_rfc3339(last_end, t, sizeof t);
        store_db_bytes(m->store, &m->retain.db_bytes);
        o = json_pack("{s:i,s:s,s:s,s:f,s:i,s:i,s:s,s:o,s:s,s:I,s:o,s:{s:I,s:I,s:I},s:{s:I,s:I,s:I,s:I,s:I}}",
                      "pid", (int)getpid(), "version", PACKAGE_VERSION, "status", m->status, "interval_s",
                      (double)m->conf.interval_ns / 1e9, "cpus_online", cpumap_online_count(map), "cpus", map->ncpus, "database", m->conf.database,
                      "open_runs", runs_open_json(m->runs), "sampled_at", t, "sampled_at_ns", (json_int_t)last_end,
                      "totals", totals, "memory", "sqlite_bytes", (json_int_t)store_memory_used(),
                      "held_intervals", (json_int_t)m->nbatch, "held_bytes", (json_int_t)m->backlog_bytes,
                      "retention", "merged_intervals", (json_int_t)m->retain.merged, "deleted_intervals",
                      (json_int_t)m->retain.deleted, "step_max_us", (json_int_t)(m->retain.step_max_ns / NSEC_PER_USEC),
                      "tick_late_max_us", (json_int_t)(m->tick_late_max_ns / NSEC_PER_USEC), "db_bytes",
                      (json_int_t)m->retain.db_bytes);
        return o;
}

static json_t *on_request(void *userdata, const struct proto_request *req, int fd, const struct ucred *peer,
                          char **ret_err)
{
        struct manager *m = userdata;
        struct snapshot_point pt = { 0 };
        json_t *reply = NULL;

        switch (req->cmd) {
        case CMD_STATUS:
                reply = status_json(m);
                break;
        case CMD_RUN_START:
                if (snapshot(m, &pt, ret_err) >= 0)
                        reply = runs_start(m->runs, m->store, m->sampler, m->host_id, m->conf.interval_ns, &pt, req,
                                           ret_err);
                break;
        case CMD_RUN_STOP: {
                /* check the name before taking a snapshot for nothing */
                int i = runs_pick(m->runs, req->name, ret_err);
                if (i == -ENOENT && req->name) {
                        free(*ret_err);
                        *ret_err = NULL;
                        reply = runs_stop(m->runs, m->store, m->sampler, &pt, req, ret_err);
                } else if (i >= 0 && snapshot(m, &pt, ret_err) >= 0)
                        reply = runs_stop(m->runs, m->store, m->sampler, &pt, req, ret_err);
                break;
        }
        case CMD_RUN_MARK:
                reply = runs_mark(m->runs, m->store, req, ret_err);
                break;
        case CMD_RUN_DELETE: {
                int r = runs_pick(m->runs, req->name, ret_err) >= 0 ? -EBUSY : store_run_delete(m->store, req->name);
                if (r == 0) {
                        log_run(LOG_INFO, req->name, "run %s deleted (uid %u)", req->name, (unsigned)peer->uid);
                        m->retain.delete_cursor = 0;    /* its intervals may go now */
                        reply = json_pack("{s:s}", "deleted", req->name);
                        break;
                }
                if (r == -ENOENT)
                        r = asprintf(ret_err, "no run named %s (scalemonctl runs lists them)", req->name);
                else if (r == -EBUSY)
                        r = asprintf(ret_err, "run %s is still running: stop it first (scalemonctl run stop %s)",
                                     req->name, req->name);
                else
                        r = asprintf(ret_err, "cannot delete run %s: %s", req->name, store_errmsg(m->store));
                if (r < 0)
                        *ret_err = NULL;
                break;
        }
        case CMD_RELOAD:
                if (reload(m, ret_err) >= 0)
                        reply = json_pack("{s:s}", "status", m->status);
                break;
        case CMD_IMPORT: {
                size_t nruns = 0;
                if (fd < 0) {
                        if (asprintf(ret_err, "import needs the file passed as a descriptor") < 0)
                                *ret_err = NULL;
                        break;
                }
                if (exchange_import_fd(m->store, fd, &nruns, ret_err) >= 0) {
                        log_info("imported %zu run%s (uid %u)", nruns, nruns == 1 ? "" : "s", (unsigned)peer->uid);
                        reply = json_pack("{s:I}", "imported", (json_int_t)nruns);
                }
                break;
        }
        default:
                break;
        }
        if (fd >= 0)
                close(fd);
        if (!reply && !*ret_err && asprintf(ret_err, "out of memory") < 0)
                *ret_err = NULL;
        return reply;
}

/* ---- life cycle ---- */

/* CAP_DAC_READ_SEARCH is needed for one thing: reading tracepoint ids
 * through tracefs' mode 0700 (scalemon.service grants it for that).  The
 * sampler reads them once, in sampler_new(), and keeps them, so the
 * capability goes from the effective, permitted and inheritable sets right
 * after; the kernel then clears it from the ambient set too.  The same for
 * the lock wait hook's CAP_BPF, which loads the BPF program in
 * sampler_new() too (its maps are read through descriptors held since;
 * kernels before 6.5 with kernel.unprivileged_bpf_disabled want CAP_BPF
 * for that too: then runs record no locks, and say so), and CAP_SYSLOG,
 * which a root daemon holds when it opens /proc/kallsyms (lockwait.c keeps
 * the file).  CAP_PERFMON stays: hotplug and reloads open counters.
 * Returns 1 if one was dropped, 0 if none was held. */
static int drop_dac_read_search(void)
{
        static const int caps[] = { CAP_DAC_READ_SEARCH, CAP_BPF, CAP_SYSLOG };
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = {};
        bool held = false;

        if (syscall(SYS_capget, &h, d) < 0)
                return negative_errno();
        for (size_t k = 0; k < ELEMENTSOF(caps); k++) {
                const int i = CAP_TO_INDEX(caps[k]);
                const uint32_t bit = CAP_TO_MASK(caps[k]);
                if (!((d[i].effective | d[i].permitted | d[i].inheritable) & bit))
                        continue;
                held = true;
                d[i].effective &= ~bit;
                d[i].permitted &= ~bit;
                d[i].inheritable &= ~bit;
        }
        if (!held)
                return 0;
        if (syscall(SYS_capset, &h, d) < 0)
                return negative_errno();
        return 1;
}

struct manager *manager_free(struct manager *m)
{
        if (!m)
                return NULL;
        ctl_server_free(m->ctl);
        runs_free(m->runs);
        sd_event_source_unref(m->tick_src);
        sd_event_source_unref(m->checkpoint_src);
        sd_event_source_unref(m->retain_src);
        sd_event_unref(m->event);
        for (size_t i = 0; i < m->capbatch; i++)
                tick_clear(&m->batch[i]);
        free(m->batch);
        free(m->cpu_vals);
        free(m->cpu_nulls);
        sampler_free(m->sampler);
        store_close(m->store);
        conf_free(&m->conf);
        conf_free(&m->overrides);
        free(m->config_path);
        if (m->ready_fd >= 0)
                close(m->ready_fd);
        free(m);
        return NULL;
}

static void tell_parent(struct manager *m, const char *msg)
{
        if (m->ready_fd < 0)
                return;
        if (write(m->ready_fd, msg, strlen(msg)) < 0) {
                /* the parent is gone; nothing to tell */
        }
        close(m->ready_fd);
        m->ready_fd = -1;
}

int manager_new(const struct conf *conf, const struct manager_options *opts, struct manager **ret, char **ret_err)
{
        struct manager *m = calloc(1, sizeof *m);
        struct sampler_config sc = { .sysroot = "/sys", .procroot = "/proc", .mount_tracefs = true };
        sigset_t ss;
        int r;

        if (!m)
                return -ENOMEM;
        m->ready_fd = opts->ready_fd;
        m->config_missing_ok = opts->config_missing_ok;
        m->override_interval = opts->override_interval;
        m->override_database = opts->override_database;
        m->override_socket = opts->override_socket;
        r = conf_copy(&m->conf, conf);
        if (r >= 0)
                r = conf_copy(&m->overrides, &opts->overrides);
        m->config_path = strdup(opts->config_path);
        if (r < 0 || !m->config_path) {
                manager_free(m);
                return -ENOMEM;
        }

        /* Database first: a second daemon on the same file stops here,
         * before it opens a single counter. */
        r = store_open(m->conf.database, STORE_WRITE, &m->store, ret_err);
        if (r < 0)
                goto fail;

        memcpy(sc.enabled, m->conf.enabled, sizeof sc.enabled);
        sc.simulate_cpus = opts->simulate_cpus;
        r = sampler_new(&sc, &m->sampler, ret_err);
        if (r < 0)
                goto fail;
        r = drop_dac_read_search();
        if (r < 0)
                log_warning("cannot drop CAP_DAC_READ_SEARCH, CAP_BPF and CAP_SYSLOG after start-up, keeping them: %s",
                            strerror(-r));

        r = runs_new(&m->runs);
        if (r < 0)
                goto fail;
        r = record_host(m);
        if (r >= 0)
                r = sync_catalogue(m);
        if (r >= 0)
                r = store_meta_set_int(m->store, "interval_ns", m->conf.interval_ns);
        if (r >= 0)
                r = store_meta_set_int(m->store, "daemon_pid", getpid());
        if (r >= 0)
                r = store_meta_set_int(m->store, "daemon_started", now_realtime_ns());
        if (r >= 0)
                r = store_meta_set(m->store, "daemon_version", PACKAGE_VERSION);
        if (r >= 0)
                r = store_add_event(m->store, now_realtime_ns(), "start", -1, PACKAGE_VERSION);
        if (r >= 0)
                r = runs_recover(m->store, m->sampler);
        if (r < 0) {
                if (asprintf(ret_err, "cannot initialise database %s: %s", m->conf.database, store_errmsg(m->store)) < 0)
                        *ret_err = NULL;
                goto fail;
        }

        r = sd_event_default(&m->event);
        if (r < 0)
                goto fail;
        sigemptyset(&ss);
        sigaddset(&ss, SIGTERM);
        sigaddset(&ss, SIGINT);
        sigaddset(&ss, SIGHUP);
        sigprocmask(SIG_BLOCK, &ss, NULL);
        r = sd_event_add_signal(m->event, NULL, SIGTERM, on_stop, m);
        if (r >= 0)
                r = sd_event_add_signal(m->event, NULL, SIGINT, on_stop, m);
        if (r >= 0)
                r = sd_event_add_signal(m->event, NULL, SIGHUP, on_reload, m);
        if (r >= 0)
                r = sd_event_set_watchdog(m->event, true);
        if (r < 0)
                goto fail;
        r = ctl_server_new(m->event, m->conf.socket, on_request, m, &m->ctl, ret_err);
        if (r < 0)
                goto fail;
        set_control_group(m);
        *ret = m;
        return 0;
fail:
        if (ret_err && !*ret_err)
                *ret_err = strdup(strerror(-r));
        manager_free(m);
        return r;
}

int manager_run(struct manager *m)
{
        uint64_t now;
        int r;

        /* Prime the counters: the first interval starts now. */
        r = take_sample(m);
        if (r < 0)
                return r;
        m->last_flush_mono = now_monotonic_ns();
        sd_event_now(m->event, CLOCK_MONOTONIC, &now);
        m->next_usec = now + interval_usec(m);
        r = sd_event_add_time(m->event, &m->tick_src, CLOCK_MONOTONIC, m->next_usec, 1, on_tick, m);
        /* the tick goes before any client request waiting in the same
         * iteration: a burst of requests must not delay sampling */
        if (r >= 0)
                r = sd_event_source_set_priority(m->tick_src, SD_EVENT_PRIORITY_IMPORTANT);
        if (r >= 0)
                r = sd_event_add_time(m->event, &m->checkpoint_src, CLOCK_MONOTONIC,
                                      now + CHECKPOINT_EVERY_S * USEC_PER_SEC, USEC_PER_SEC, on_checkpoint, m);
        /* retention at once (a backlog starts shrinking), then in slices
         * that give way to ticks and requests */
        m->retain.rollup_cursor = -1;
        if (r >= 0)
                r = sd_event_add_time(m->event, &m->retain_src, CLOCK_MONOTONIC, now, 1000, on_retain, m);
        if (r >= 0)
                r = sd_event_source_set_priority(m->retain_src, SD_EVENT_PRIORITY_IDLE);
        if (r < 0)
                return r;

        log_unavailable(m);
        set_status(m);
        {
                char keep[128];
                retention_format(&m->conf, keep, sizeof keep);
                log_info("started: %s, database %s, %s", m->status, m->conf.database, keep);
        }
        sd_notify(0, "READY=1");
        tell_parent(m, "ok");

        r = sd_event_loop(m->event);

        sd_notify(0, "STOPPING=1\nSTATUS=stopping: writing the last interval");
        /* The last, partial interval; runs still open end there. */
        {
                struct snapshot_point pt;
                _cleanup_free_ char *err = NULL;
                if (snapshot(m, &pt, &err) < 0)
                        log_error("the last %zu interval%s could not be written: %s", m->nbatch,
                                  m->nbatch == 1 ? "" : "s", err ? err : "");
                else if (runs_count(m->runs) > 0)
                        runs_interrupt_all(m->runs, m->store, m->sampler, &pt);
        }
        m->ctl = ctl_server_free(m->ctl);
        store_add_event(m->store, now_realtime_ns(), "stop", -1, NULL);
        store_meta_set(m->store, "daemon_pid", "");
        store_checkpoint(m->store, true);
        log_info("stopped");
        return r;
}
