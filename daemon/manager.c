/* manager.c - the daemon's one event loop and its life cycle.
 *
 * sd-event drives everything: a CLOCK_MONOTONIC timer samples every
 * interval, signals arrive through signalfd (SIGTERM/SIGINT stop, SIGHUP
 * reloads), and the watchdog is fed by the loop itself, so a hung loop
 * stops feeding it.  The parts it drives live apart: the batch writer
 * (writer.c), retention's schedule (retain-sched.c), runs (runs.c) and
 * the control requests (requests.c).
 */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "caps.h"
#include "ctl.h"
#include "ctl-socket.h"
#include "hostinfo.h"
#include "log.h"
#include "macro.h"
#include "manager.h"
#include "requests.h"
#include "retain-sched.h"
#include "runs.h"
#include "sampler.h"
#include "store.h"
#include "subscribe.h"
#include "ticker.h"
#include "timeutil.h"
#include "writer.h"

#define CHECKPOINT_EVERY_S 60
/* The minute's checkpoint once the log holds this much, or once it is
 * quiet (a commit since the last checkpoint, none in the last minute):
 * each checkpoint copies every page changed since the last one, the hot
 * pages (the header, the tables' last leaves) every time, so committing
 * every second it waits for 1 MiB (once a minute was half the bytes
 * written); at the default commit_interval each commit's pages are copied
 * a minute or two after it, its cost whole within the commit's cycle.
 * The 4 MiB autocheckpoint (store.c) still bounds the log. */
#define CHECKPOINT_MIN_WAL (1LL << 20)

struct manager {
        sd_event *event;
        sd_event_source *tick_src;
        sd_event_source *checkpoint_src;
        bool start_checkpointed;           /* what the start wrote is in the database file */
        struct conf conf;                  /* the running settings: writer and retain_sched read them */
        struct conf_source source;         /* where they came from, read again on reload */

        struct sampler *sampler;
        struct store *store;
        struct writer *writer;
        struct retain_sched *retain;
        struct ctl_server *ctl;
        struct subscribers *subs;          /* subscriptions: ticks pushed as they end */
        struct runs *runs;
        struct ticker ticker;              /* the tick path: sampler -> writer -> subscribers */
        struct requests_ctx req;           /* what the request handlers act on */
        int64_t host_id;
        char *sysroot, *procroot;          /* "/sys" and "/proc", or a fixture tree's (tests) */

        uint64_t next_usec;                /* CLOCK_MONOTONIC time of the next tick */
        int64_t tick_late_max_ns;          /* the latest a tick ran after its time */
        int ready_fd;
        char status[256];
        char access[320];                  /* who may start and stop runs (the status request) */
        /* what the last reload read and could not apply: a key that needs
         * a restart, its new value (the running one stays in conf) */
        struct { const char *key; char *value; } not_applied[2];
        size_t n_not_applied;
};

/* What the last reload read and did not apply, because only a restart
 * can (database, socket): entry i's key, its new value and the running
 * one (borrowed).  Returns how many there are; sets nothing if i is past
 * them.  The requests' not_applied(). */
static size_t not_applied(void *owner, size_t i, const char **ret_key, const char **ret_value,
                          const char **ret_running)
{
        const struct manager *m = owner;

        if (i >= m->n_not_applied)
                return m->n_not_applied;
        *ret_key = m->not_applied[i].key;
        *ret_value = m->not_applied[i].value;
        *ret_running = streq(m->not_applied[i].key, "database") ? m->conf.database : m->conf.socket;
        return m->n_not_applied;
}

static void not_applied_clear(struct manager *m)
{
        for (size_t i = 0; i < m->n_not_applied; i++)
                free(m->not_applied[i].value);
        m->n_not_applied = 0;
}

/* A key of c that needs a restart and differs from the running one:
 * remembered, logged, and the running value kept in c. */
static int keep_running(struct manager *m, const char *key, char **newv, char **running)
{
        if (streq(*newv, *running))
                return 0;
        log_warning("%s changed to %s: not applied, scalemond keeps %s until it restarts", key, *newv, *running);
        m->not_applied[m->n_not_applied].key = key;
        m->not_applied[m->n_not_applied].value = *newv;
        m->n_not_applied++;
        *newv = strdup(*running);
        return *newv ? 0 : -ENOMEM;
}

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
 * (mode 0660) and the right to change state; at start and on reload.  A
 * missing group is normal for a daemon run by hand as root: the status
 * request says who may change state (m->access), the log does not. */
static void set_control_group(struct manager *m)
{
        const char *group = m->conf.control_group;
        int r = ctl_server_set_group(m->ctl, group);
        unsigned uid = (unsigned)geteuid();

        if (r == 0)
                snprintf(m->access, sizeof m->access, "root, uid %u and members of group %s may start and stop runs",
                         uid, group);
        else if (r == -ENOENT)
                snprintf(m->access, sizeof m->access,
                         "root and uid %u may start and stop runs (group %s does not exist: groupadd %s, and its "
                         "members may too)", uid, group, group);
        else {
                struct group *own = getgrgid(getegid());
                char gid[16];

                snprintf(gid, sizeof gid, "%u", (unsigned)getegid());
                snprintf(m->access, sizeof m->access,
                         "root and uid %u may start and stop runs (members of group %s may too, but cannot connect: "
                         "the control socket keeps group %s)", uid, group, own ? own->gr_name : gid);
                log_notice("cannot give the control socket to group %s: %s; it keeps scalemond's group %s, so "
                           "members of %s cannot connect (add scalemond's user, uid %u, to group %s, or set "
                           "control_group to a group it is in)",
                           group, strerror(-r), own ? own->gr_name : gid, group, uid, group);
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

/* The sampler's own-cgroups source: the open runs' own counters. */
static int own_sample(void *userdata, struct tick *t)
{
        struct manager *m = userdata;

        return runs_own_sample(m->runs, t);
}

/* A counter failed and stopped during a tick: say so where users look. */
static void on_catalogue_change(void *userdata)
{
        struct manager *m = userdata;

        if (sync_catalogue(m) < 0)
                log_warning("cannot record the metric catalogue: %s", store_errmsg(m->store));
        set_status(m);
        subscribe_changed(m->subs);
}

static void log_unavailable(struct manager *m)
{
        bool said_bpf = false;

        for (int i = 0; i < _M_MAX; i++) {
                if (!sampler_enabled(m->sampler, i) || sampler_available(m->sampler, i))
                        continue;
                /* the BPF metrics share one reason, said once */
                if (metric_is_bpf(&metric_table[i]) && said_bpf)
                        continue;
                said_bpf |= metric_is_bpf(&metric_table[i]);
                log_metric(LOG_NOTICE, metric_table[i].name, "%s unavailable: %s%s", metric_table[i].name,
                           sampler_why(m->sampler, i),
                           metric_is_bpf(&metric_table[i]) ? " (so are the other lock wait metrics; "
                                                             "lock_contentions is still counted)" : "");
        }
}

/* The daemon's start in the database: this host, the catalogue, the
 * settings, a start event; and the runs a previous daemon left open,
 * closed as interrupted. */
static int record_start(struct manager *m)
{
        /* one commit for the records below (each alone was a commit of its
         * own: a new database's start wrote ten) */
        int r = store_begin(m->store);

        if (r >= 0)
                r = hostinfo_record(m->store, sampler_cpumap(m->sampler), m->procroot, &m->host_id);
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
                r = store_commit(m->store);
        else
                store_rollback(m->store);
        if (r >= 0)
                r = runs_recover(m->store, m->sampler);
        return r;
}

/* ---- event sources ---- */

static uint64_t interval_usec(const struct manager *m)
{
        return (uint64_t)(m->conf.interval_ns / NSEC_PER_USEC);
}

/* The next tick on the grid, without drift; if the loop fell behind by
 * more than an interval, skip ahead rather than catch up. */
static int rearm(struct manager *m, sd_event_source *src, uint64_t usec)
{
        uint64_t now;
        int r;

        sd_event_now(m->event, CLOCK_MONOTONIC, &now);
        m->next_usec = usec + interval_usec(m);
        if (m->next_usec <= now)
                m->next_usec = now + interval_usec(m);
        r = sd_event_source_set_time(src, m->next_usec);
        if (r >= 0)
                r = sd_event_source_set_enabled(src, SD_EVENT_ONESHOT);
        return r;
}

/* The timer: one tick (ticker.c), a commit if one is due, the next tick. */
static int on_tick(sd_event_source *src, uint64_t usec, void *userdata)
{
        struct manager *m = userdata;
        uint64_t now;
        int r;

        sd_event_now(m->event, CLOCK_MONOTONIC, &now);
        if (now > usec)
                m->tick_late_max_ns = MAX(m->tick_late_max_ns, (int64_t)(now - usec) * NSEC_PER_USEC);
        if (ticker_sample(&m->ticker) < 0) {
                log_error("out of memory while sampling, stopping");
                return sd_event_exit(m->event, EXIT_FAILURE);
        }
        writer_tick_done(m->writer, m->conf.interval_ns);
        r = rearm(m, src, usec);
        if (r < 0) {
                log_error("cannot re-arm the sampling timer: %s", strerror(-r));
                return sd_event_exit(m->event, EXIT_FAILURE);
        }
        return 0;
}

static int on_checkpoint(sd_event_source *src, uint64_t usec, void *userdata)
{
        struct manager *m = userdata;
        int r;

        /* the first, half an interval after the first tick: what the start
         * wrote (the schema, the catalogue) goes into the database file, a
         * start-up cost, not carried in the log into the steady state, and
         * not before the first tick, which does not need it */
        if (!m->start_checkpointed) {
                m->start_checkpointed = true;
                if (store_checkpoint(m->store, true) < 0)
                        log_warning("WAL checkpoint failed: %s", store_errmsg(m->store));
        /* while writes fail, the flush has said so once; retrying the
         * checkpoint would only say it again */
        } else if (!writer_failing(m->writer)) {
                r = store_checkpoint_due(m->store, CHECKPOINT_MIN_WAL);
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

/* SIGHUP or the reload request: read the configuration again.  A broken
 * one is refused (-EINVAL, *ret_err says file:line) and the running one
 * stays; a good one applies without a gap in the samples.  Either way the
 * daemon goes on; only -ENOMEM is fatal. */
static int manager_reload(struct manager *m, char **ret_err)
{
        struct conf c;
        _cleanup_free_ char *err = NULL;
        bool metrics_changed;
        char iv[16];
        int r;

        r = conf_read(&m->source, &c, &err);
        if (r < 0) {
                log_error("reload refused, keeping the running configuration: %s", err ? err : strerror(-r));
                if (asprintf(ret_err, "reload refused, keeping the running configuration: %s",
                             err ? err : strerror(-r)) < 0)
                        *ret_err = NULL;
                conf_free(&c);
                return r == -ENOMEM ? r : -EINVAL;
        }
        /* The database is opened and the socket bound once, at start: a
         * new path is reported, not applied, and the running one stays. */
        not_applied_clear(m);
        if (keep_running(m, "database", &c.database, &m->conf.database) < 0 ||
            keep_running(m, "socket", &c.socket, &m->conf.socket) < 0) {
                conf_free(&c);
                return -ENOMEM;
        }

        sd_notify(0, "RELOADING=1");
        /* Close the current interval at the old settings first. */
        r = ticker_sample(&m->ticker);
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

        r = writer_flush(m->writer, false);
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
        subscribe_changed(m->subs);
        log_info("configuration reloaded: %s", m->status);
        r = 0;
out:
        conf_free(&c);
        sd_notify(0, "READY=1");
        return r;
}

/* The requests' reload(). */
static int reload(void *owner, char **ret_err)
{
        return manager_reload(owner, ret_err);
}

static int on_reload(sd_event_source *src, const struct signalfd_siginfo *si, void *userdata)
{
        struct manager *m = userdata;
        _cleanup_free_ char *err = NULL;
        int r = manager_reload(m, &err);

        if (r == -ENOMEM) {
                log_error("out of memory while reloading, stopping");
                return sd_event_exit(m->event, EXIT_FAILURE);
        }
        return 0;
}

/* ---- life cycle ---- */

struct manager *manager_free(struct manager *m)
{
        if (!m)
                return NULL;
        ctl_server_free(m->ctl);
        subscribe_free(m->subs);        /* after the streams ended */
        runs_free(m->runs);
        sd_event_source_unref(m->tick_src);
        sd_event_source_unref(m->checkpoint_src);
        retain_sched_free(m->retain);
        sd_event_unref(m->event);
        writer_free(m->writer);
        sampler_free(m->sampler);
        store_close(m->store);
        conf_free(&m->conf);
        not_applied_clear(m);
        conf_source_free(&m->source);
        free(m->sysroot);
        free(m->procroot);
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

/* A database file this start created, with its -wal and -shm. */
static void remove_database(const char *path)
{
        static const char *const suffix[] = { "", "-wal", "-shm", "-journal", "-head" };
        char buf[PATH_MAX];

        for (size_t i = 0; i < ELEMENTSOF(suffix); i++) {
                snprintf(buf, sizeof buf, "%s%s", path, suffix[i]);
                (void)unlink(buf);
        }
}

/* The control socket checked, the database opened (*db_created: by this
 * start), the sampler and the writer made, the start recorded. */
static int manager_open(struct manager *m, const struct manager_options *opts, bool *db_created, char **db_path,
                        char **ret_err)
{
        struct sampler_config sc = { 0 };
        int r;

        /* Every refusal that can be known before creating a file comes
         * first: the control socket another daemon listens on (a second
         * daemon with another --db must not leave a database behind). */
        r = ctl_socket_check(m->conf.socket, ret_err);
        if (r < 0)
                return r;
        /* Then the database: a second daemon on the same file stops here,
         * before it opens a single counter.  One this start creates is
         * removed again if the start fails after all. */
        *db_created = access(m->conf.database, F_OK) < 0 && errno == ENOENT;
        *db_path = strdup(m->conf.database);
        if (!*db_path)
                return -ENOMEM;
        /* a new database's page size from the CPU count */
        r = store_open_sized(m->conf.database,
                             store_page_size_for(opts->simulate_cpus ? opts->simulate_cpus
                                                                     : (int)sysconf(_SC_NPROCESSORS_CONF)),
                             &m->store, ret_err);
        if (r < 0) {
                *db_created = false;
                return r;
        }

        memcpy(sc.enabled, m->conf.enabled, sizeof sc.enabled);
        sc.sysroot = m->sysroot;
        sc.procroot = m->procroot;
        sc.mount_tracefs = !opts->sysroot;      /* never mount anything under a fixture tree */
        sc.simulate_cpus = opts->simulate_cpus;
        r = sampler_new(&sc, &m->sampler, ret_err);
        if (r < 0)
                return r;
        r = caps_drop_start_up();
        if (r < 0)
                log_warning("cannot drop CAP_DAC_READ_SEARCH, CAP_BPF and CAP_SYSLOG after start-up, keeping them: %s",
                            strerror(-r));

        r = runs_new(&m->runs);
        if (r >= 0)
                r = writer_new(m->store, &m->conf, &m->writer);
        if (r < 0)
                return r;
        r = writer_open_head(m->writer, ret_err);
        if (r < 0)
                return r;
        sampler_set_own(m->sampler, own_sample, m);
        m->ticker = (struct ticker){ .sampler = m->sampler, .writer = m->writer, .runs = m->runs, .store = m->store,
                                     .on_catalogue = on_catalogue_change, .userdata = m };
        r = record_start(m);
        if (r < 0) {
                if (asprintf(ret_err, "cannot initialise database %s: %s", m->conf.database, store_errmsg(m->store)) < 0)
                        *ret_err = NULL;
                return r;
        }

        return 0;
}

/* The event loop: the signals, the watchdog, the control socket and the
 * subscriptions. */
static int manager_events(struct manager *m, char **ret_err)
{
        sigset_t ss;
        int r;

        r = sd_event_default(&m->event);
        if (r < 0)
                return r;
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
                return r;
        r = ctl_server_new(m->event, m->conf.socket, requests_handle, &m->req, &m->ctl, ret_err);
        if (r >= 0)
                r = subscribe_new(m->ctl, m->sampler, &m->conf.interval_ns, &m->subs);
        if (r < 0)
                return r;
        m->ticker.subs = m->subs;
        /* what the requests act on; retention's schedule is added when
         * the loop starts, before the first request is read */
        m->req = (struct requests_ctx){
                .store = m->store, .sampler = m->sampler, .runs = m->runs, .writer = m->writer, .ticker = &m->ticker,
                .subs = m->subs, .conf = &m->conf, .status = m->status, .access = m->access,
                .sysroot = m->sysroot, .procroot = m->procroot, .host_id = m->host_id,
                .tick_late_max_ns = &m->tick_late_max_ns, .reload = reload, .not_applied = not_applied, .owner = m,
        };
        return 0;
}

int manager_new(const struct conf *conf, const struct manager_options *opts, struct manager **ret, char **ret_err)
{
        _cleanup_free_ char *db_path = NULL;
        bool db_created = false;
        struct manager *m;
        const char *cmd;
        int r;

        if (requests_check(&cmd) < 0) {
                /* a command added to proto.h and not to requests.c */
                if (asprintf(ret_err, "internal error: no handler for the '%s' request", cmd) < 0)
                        *ret_err = NULL;
                return -ENOSYS;
        }
        m = calloc(1, sizeof *m);
        if (!m)
                return -ENOMEM;
        m->ready_fd = opts->ready_fd;
        m->sysroot = strdup(opts->sysroot ?: "/sys");
        m->procroot = strdup(opts->procroot ?: "/proc");
        r = m->sysroot && m->procroot ? conf_copy(&m->conf, conf) : -ENOMEM;
        if (r >= 0)
                r = conf_source_copy(&m->source, &opts->source);
        if (r < 0) {
                manager_free(m);
                return -ENOMEM;
        }

        r = manager_open(m, opts, &db_created, &db_path, ret_err);
        if (r >= 0)
                r = manager_events(m, ret_err);
        if (r < 0)
                goto fail;
        set_control_group(m);
        *ret = m;
        return 0;
fail:
        if (ret_err && !*ret_err)
                *ret_err = strdup(strerror(-r));
        manager_free(m);
        if (db_created)
                remove_database(db_path);
        return r;
}

int manager_run(struct manager *m)
{
        uint64_t now;
        int r;

        /* Prime the counters: the first interval starts now. */
        r = ticker_prime(&m->ticker);
        if (r < 0)
                return r;
        sd_event_now(m->event, CLOCK_MONOTONIC, &now);
        m->next_usec = now + interval_usec(m);
        r = sd_event_add_time(m->event, &m->tick_src, CLOCK_MONOTONIC, m->next_usec, 1, on_tick, m);
        /* the tick goes before any client request waiting in the same
         * iteration: a burst of requests must not delay sampling */
        if (r >= 0)
                r = sd_event_source_set_priority(m->tick_src, SD_EVENT_PRIORITY_IMPORTANT);
        if (r >= 0)
                r = sd_event_add_time(m->event, &m->checkpoint_src, CLOCK_MONOTONIC,
                                      m->next_usec + interval_usec(m) / 2, USEC_PER_SEC, on_checkpoint, m);
        /* retention half an interval after the first tick (a backlog
         * starts shrinking), in slices that give way to ticks and requests */
        if (r >= 0)
                r = retain_sched_new(m->event, m->store, m->writer, &m->conf, m->next_usec + interval_usec(m) / 2,
                                     &m->retain);
        if (r < 0)
                return r;
        m->req.retain = m->retain;

        log_unavailable(m);
        set_status(m);
        {
                char keep[128];
                retain_sched_format(&m->conf, keep, sizeof keep);
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
                if (ticker_snapshot(&m->ticker, &pt, &err) < 0) {
                        size_t held = writer_backlog(m->writer, NULL);
                        log_error("the last %zu interval%s could not be written: %s", held, held == 1 ? "" : "s",
                                  err ? err : "");
                } else if (runs_count(m->runs) > 0)
                        runs_interrupt_all(m->runs, m->store, m->sampler, &pt);
        }
        m->ctl = ctl_server_free(m->ctl);
        store_add_event(m->store, now_realtime_ns(), "stop", -1, NULL);
        store_meta_set(m->store, "daemon_pid", "");
        store_checkpoint(m->store, true);
        log_info("stopped");
        return r;
}
