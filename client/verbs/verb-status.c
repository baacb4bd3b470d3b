/* verb-status.c - `scalemonctl status` and `scalemonctl metrics`. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "output.h"
#include "proto-reply.h"
#include "selection.h"
#include "sock.h"
#include "timeutil.h"
#include "verbs.h"

/* No options: anything after the verb is a usage error. */
static int no_args(int argc, char **argv)
{
        static const struct option options[] = { { "help", no_argument, NULL, 'h' }, {} };
        int c;

        while ((c = ctl_getopt(argc, argv, "", options)) >= 0) {
                if (c == 'h') {
                        printf("Usage: scalemonctl %s\n", argv[0]);
                        return -1;
                }
                return EXIT_USAGE;
        }
        if (optind < argc)
                return ctl_fail(EXIT_USAGE, "%s takes no arguments, got '%s'", argv[0], argv[optind]);
        return 0;
}

/* Is the daemon that last wrote this database alive?  It records its pid
 * at start and clears it on a clean stop. */
static pid_t daemon_pid(struct store *s)
{
        char comm[64] = "", path[64];
        int64_t pid;
        FILE *f;

        if (store_meta_get_int(s, "daemon_pid", &pid) < 0 || pid <= 0)
                return 0;
        if (kill((pid_t)pid, 0) < 0 && errno != EPERM)
                return 0;
        snprintf(path, sizeof path, "/proc/%lld/comm", (long long)pid);
        f = fopen(path, "re");
        if (f) {
                if (!fgets(comm, sizeof comm, f))
                        comm[0] = 0;
                fclose(f);
        }
        if (!startswith(comm, "scalemond"))
                return 0;
        /* a killed daemon not yet reaped is not running */
        snprintf(path, sizeof path, "/proc/%lld/stat", (long long)pid);
        f = fopen(path, "re");
        if (f) {
                char line[512], *rp;
                bool zombie = fgets(line, sizeof line, f) && (rp = strrchr(line, ')')) && rp[1] == ' ' && rp[2] == 'Z';
                fclose(f);
                if (zombie)
                        return 0;
        }
        return (pid_t)pid;
}

/* Does the daemon's database (its status reply's "database") name the
 * same file as path?  By inode: paths may differ and mean one file. */
static bool same_file(const char *a, const char *b)
{
        struct stat sa, sb;

        if (!a || !b || stat(a, &sa) < 0 || stat(b, &sb) < 0)
                return false;
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* How page faults are counted here: per CPU with perf events, or only
 * the machine's from /proc/vmstat (per_cpu_faults = no, the default). */
static bool faults_per_cpu(const struct store_metric_row *rows, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (streq(rows[i].name, "page_faults"))
                        return rows[i].available;
        return false;
}

/* What status shows: the daemon's reply (decoded) merged with what the
 * database says, computed before anything is printed. */
struct run_host {
        char *hostname, *kernel;
        size_t runs;
};

struct status_view {
        const struct proto_status_reply *live;  /* the daemon that writes this database; NULL: none answered */
        const struct proto_status_reply *other; /* the daemon at the socket, writing another database */
        pid_t pid;                              /* the running daemon's, from live or the database; 0: none */
        char denied[512];                       /* why the socket refused us; "" if it did not */
        struct store_summary sum;
        int schema;
        struct host_info host;
        bool has_host;
        int64_t interval;
        int avail, unavail, disabled;
        bool faults_per_cpu;                    /* page faults per CPU (perf events), not only the machine's */
        bool lock_avail;                        /* lock wait (BPF) is counted */
        char lock_why[256];                     /* if not, why ("disabled ..." if so configured) */
        struct run_host *hosts;                 /* most runs first */
        size_t nhosts;
        struct proto_open_run *open_runs;       /* from live (borrowed) or the database (owned) */
        size_t nopen_runs;
        bool own_open_runs;
};

static void status_view_clear(struct status_view *v)
{
        for (size_t i = 0; i < v->nhosts; i++) {
                free(v->hosts[i].hostname);
                free(v->hosts[i].kernel);
        }
        free(v->hosts);
        for (size_t i = 0; v->own_open_runs && i < v->nopen_runs; i++)
                free(v->open_runs[i].name);
        if (v->own_open_runs)
                free(v->open_runs);
        host_info_clear(&v->host);
}

/* The hosts the database's runs came from, with how many runs each, most
 * runs first. */
static void run_hosts(struct store *s, struct status_view *v)
{
        struct run_filter f = { .since = INT64_MIN, .until = INT64_MAX };
        struct run_info *runs = NULL;
        size_t n = 0;

        if (store_runs_list(s, &f, &runs, &n) < 0 || n == 0 || !(v->hosts = calloc(n, sizeof *v->hosts))) {
                run_infos_free(runs, n);
                return;
        }
        _cleanup_free_ int64_t *ids = calloc(n, sizeof *ids);
        for (size_t i = 0; ids && i < n; i++) {
                size_t k;
                for (k = 0; k < v->nhosts && ids[k] != runs[i].host; k++)
                        ;
                if (k == v->nhosts)
                        ids[v->nhosts++] = runs[i].host;
                v->hosts[k].runs++;
        }
        for (size_t a = 0; a < v->nhosts; a++)          /* most runs first: a few hosts */
                for (size_t b = a + 1; b < v->nhosts; b++)
                        if (v->hosts[b].runs > v->hosts[a].runs) {
                                struct run_host t = v->hosts[a];
                                int64_t id = ids[a];
                                v->hosts[a] = v->hosts[b];
                                v->hosts[b] = t;
                                ids[a] = ids[b];
                                ids[b] = id;
                        }
        for (size_t k = 0; k < v->nhosts; k++) {
                struct host_info hi = { 0 };
                bool known = store_host_by_id(s, ids[k], &hi) == 0;
                v->hosts[k].hostname = strdup(known && hi.hostname ? hi.hostname : "?");
                v->hosts[k].kernel = strdup(known && hi.kernel ? hi.kernel : "?");
                host_info_clear(&hi);
        }
        run_infos_free(runs, n);
}

/* The database's side of the view.  0 or an exit code. */
static int status_gather(struct ctl *ctl, struct store *s, struct status_view *v)
{
        _cleanup_free_ struct store_metric_row *rows = NULL;
        size_t n = 0;

        if (store_summary(s, &v->sum) < 0 || store_metrics_list(s, &rows, &n) < 0)
                return ctl_fail(EXIT_FAILED, "cannot read %s: %s", ctl->db_path, store_errmsg(s));
        v->schema = store_schema_version(s);
        v->has_host = store_host_get(s, &v->host) == 0;
        run_hosts(s, v);
        store_meta_get_int(s, "interval_ns", &v->interval);
        v->pid = v->live ? (pid_t)v->live->pid : daemon_pid(s);
        if (v->live) {
                v->open_runs = v->live->open_runs;
                v->nopen_runs = v->live->nopen_runs;
        } else {
                /* from the database: runs not yet closed */
                struct run_info *open = NULL;
                size_t nopen = 0;
                v->own_open_runs = true;
                if (store_runs_open(s, &open, &nopen) == 0 && (v->open_runs = calloc(nopen + 1, sizeof *v->open_runs)))
                        for (size_t i = 0; i < nopen; i++) {
                                v->open_runs[v->nopen_runs].name = strdup(open[i].name);
                                time_format_rfc3339(open[i].start, v->open_runs[v->nopen_runs].start,
                                                    sizeof v->open_runs[0].start);
                                v->nopen_runs += v->open_runs[v->nopen_runs].name != NULL;
                        }
                run_infos_free(open, nopen);
        }
        v->faults_per_cpu = faults_per_cpu(rows, n);
        for (size_t i = 0; i < n; i++)
                if (streq(rows[i].name, "lock_wait_ns")) {
                        v->lock_avail = rows[i].available;
                        snprintf(v->lock_why, sizeof v->lock_why, "%s", rows[i].available ? "" : rows[i].why);
                }
        for (size_t i = 0; i < n; i++) {
                if (rows[i].available)
                        v->avail++;
                else if (startswith(rows[i].why, "disabled"))
                        v->disabled++;
                else
                        v->unavail++;
        }
        return 0;
}

/* The daemon object of status --format json. */
static json_t *status_daemon_json(struct ctl *ctl, const struct status_view *v)
{
        const struct proto_status_reply *live = v->live;
        json_t *d = json_pack("{s:b,s:o,s:b,s:s,s:o,s:b}", "running", v->pid > 0, "pid",
                              v->pid > 0 ? json_integer(v->pid) : json_null(), "reachable", live != NULL, "socket",
                              ctl->socket_path, "status", live && live->status ? json_string(live->status) : json_null(),
                              "writes_this_database", live != NULL || v->pid > 0);

        if (d && v->other)
                json_object_set_new(d, "other", json_pack("{s:i,s:o}", "pid", v->other->pid, "database",
                                                          v->other->database ? json_string(v->other->database)
                                                                             : json_null()));
        if (d && live && live->has_memory)
                json_object_set_new(d, "memory", proto_status_memory_to_json(live));
        if (d && live && live->access)
                json_object_set_new(d, "access", json_string(live->access));
        if (d && live && live->has_retention)
                json_object_set_new(d, "retention", proto_status_retention_to_json(live));
        if (d && !live && ctl->sock_errno)
                json_object_set_new(d, "why", json_string(v->denied[0] ? v->denied : strerror(ctl->sock_errno)));
        return d;
}

static json_t *status_json(struct ctl *ctl, const struct status_view *v)
{
        const struct store_summary *sum = &v->sum;
        json_t *runs = json_array(), *hosts = json_array();

        for (size_t i = 0; runs && i < v->nopen_runs; i++)
                json_array_append_new(runs, json_pack("{s:s,s:s}", "name", v->open_runs[i].name, "start",
                                                      v->open_runs[i].start));
        for (size_t i = 0; hosts && i < v->nhosts; i++)
                json_array_append_new(hosts, json_pack("{s:s,s:s,s:I}", "hostname", v->hosts[i].hostname, "kernel",
                                                       v->hosts[i].kernel, "runs", (json_int_t)v->hosts[i].runs));
        return json_pack("{s:o,s:{s:s,s:I,s:i},s:{s:s,s:s,s:s,s:i,s:i},s:o,s:{s:i,s:i},s:i,"
                         "s:{s:i,s:i,s:i,s:b},s:{s:b,s:o},s:{s:I,s:o,s:o},s:o,s:o}",
                         "daemon", status_daemon_json(ctl, v),
                         "database", "path", ctl->db_path, "size_bytes", (json_int_t)sum->size_bytes, "schema",
                         v->schema,
                         "host", "hostname", v->host.hostname ? v->host.hostname : "", "kernel",
                         v->host.kernel ? v->host.kernel : "", "cpu_model", v->host.cpu_model ? v->host.cpu_model : "",
                         "cpus", v->host.ncpus, "nodes", v->host.nnodes,
                         "interval_s", v->interval ? json_real((double)v->interval / 1e9) : json_null(),
                         "cpus", "online", sum->online_cpus, "total", sum->ncpus,
                         "nodes", sum->nnodes,
                         "metrics", "available", v->avail, "unavailable", v->unavail, "disabled", v->disabled,
                         "page_faults_per_cpu", v->faults_per_cpu,
                         "lock_wait", "available", v->lock_avail, "why",
                         v->lock_why[0] ? json_string(v->lock_why) : json_null(),
                         "samples", "intervals", (json_int_t)sum->ticks,
                         "first", sum->ticks ? json_time(sum->first_t) : json_null(),
                         "last", sum->ticks ? json_time(sum->last_t) : json_null(),
                         "open_runs", runs, "run_hosts", hosts);
}

/* The daemon's lines of the table. */
static void status_print_daemon(struct ctl *ctl, const struct status_view *v)
{
        const struct proto_status_reply *live = v->live;

        if (live) {
                const struct proto_total *lw = proto_status_total(live, "lock_wait_ns");
                const struct proto_total *lost = proto_status_total(live, "lock_wait_lost");
                char sq[32], held[32];
                printf("daemon:    running (pid %d): %s\n", (int)v->pid, live->status ? live->status : "");
                if (live->access)
                        printf("access:    %s\n", live->access);
                format_bytes(live->memory.sqlite_bytes, sq, sizeof sq);
                format_bytes(live->memory.held_bytes, held, sizeof held);
                if (live->has_memory)
                        printf("memory:    SQLite %s; %lld interval%s not yet written (%s)\n", sq,
                               (long long)live->memory.held_intervals, live->memory.held_intervals == 1 ? "" : "s",
                               held);
                if (live->has_retention)
                        printf("retention: %lld intervals rolled up and %lld deleted since start (longest "
                               "slice %.1f ms; a tick ran at most %.1f ms late)\n",
                               (long long)live->retention.merged_intervals, (long long)live->retention.deleted_intervals,
                               (double)live->retention.step_max_us / 1e3, (double)live->retention.tick_late_max_us / 1e3);
                if (lw)         /* BPF is on; what its full maps lost */
                        printf("lock wait: %.3f s waited for kernel locks since start; %.0f waits lost "
                               "(bounded BPF maps full: lock_wait_lost)\n",
                               lw->value / 1e9, lost ? lost->value : 0.0);
        } else if (v->other && v->pid <= 0)
                printf("daemon:    none writes this database (the daemon at %s, pid %lld, writes %s)\n",
                       ctl->socket_path, (long long)v->other->pid, v->other->database ? v->other->database : "(null)");
        else if (v->denied[0] && v->pid > 0)
                printf("daemon:    running (pid %d), but %s\n", (int)v->pid, v->denied);
        else if (v->denied[0])
                printf("daemon:    no answer: %s\n", v->denied);
        else if (v->pid > 0)
                printf("daemon:    running (pid %d), but its control socket %s does not answer\n", (int)v->pid,
                       ctl->socket_path);
        else
                printf("daemon:    not running (no answer at %s)\n", ctl->socket_path);
}

static void status_print(struct ctl *ctl, const struct status_view *v)
{
        const struct store_summary *sum = &v->sum;
        char size[32], iv[32] = "-", first[32], last[32];

        format_bytes(sum->size_bytes, size, sizeof size);
        if (v->interval)
                duration_format(v->interval, iv, sizeof iv);
        status_print_daemon(ctl, v);
        printf("database:  %s (%s, schema %d)\n", ctl->db_path, size, v->schema);
        if (v->has_host) {
                printf("host:      %s, kernel %s, %s\n", v->host.hostname ? v->host.hostname : "?",
                       v->host.kernel ? v->host.kernel : "?", v->host.cpu_model ? v->host.cpu_model : "?");
                printf("interval:  %s\n", iv);
                printf("CPUs:      %d online of %d\n", sum->online_cpus, sum->ncpus);
                printf("nodes:     %d\n", sum->nnodes);
                printf("metrics:   %d available, %d unavailable, %d disabled (scalemonctl metrics)\n", v->avail,
                       v->unavail, v->disabled);
                if (!v->lock_avail && v->lock_why[0] && !startswith(v->lock_why, "disabled"))
                        printf("lock wait: not counted: %s\n", v->lock_why);
                printf("faults:    %s\n", v->faults_per_cpu
                                                 ? "per CPU (page_faults*, perf events: per_cpu_faults = yes) "
                                                   "and the machine's (pgfault, pgmajfault)"
                                                 : "the machine's only (pgfault, pgmajfault from /proc/vmstat); "
                                                   "per CPU off: per_cpu_faults = yes in scalemon.conf");
        } else
                printf("host:      none: no daemon has sampled into this database (imported runs only)\n");
        if (v->nhosts > 0) {
                printf("runs from:");
                for (size_t i = 0; i < v->nhosts; i++)
                        printf("%s %s (kernel %s, %zu run%s)", i ? "," : "", v->hosts[i].hostname,
                               v->hosts[i].kernel, v->hosts[i].runs, v->hosts[i].runs == 1 ? "" : "s");
                printf("\n");
        }
        if (sum->ticks) {
                time_format_local(sum->first_t, first, sizeof first);
                time_format_local(sum->last_t, last, sizeof last);
                printf("samples:   %lld intervals, %s .. %s\n", (long long)sum->ticks, first, last);
        } else
                printf("samples:   none yet\n");
        if (v->nopen_runs == 0)
                printf("open runs: none\n");
        else {
                printf("open runs:");
                for (size_t i = 0; i < v->nopen_runs; i++)
                        printf("%s %s (since %s)", i ? "," : "", v->open_runs[i].name, v->open_runs[i].start);
                printf("\n");
        }
}

/* The daemon's status reply, if it answers at the socket.  0, or an exit
 * code when there is nothing more to say. */
static int status_ask(struct ctl *ctl, struct proto_status_reply *live, bool *ret_have, char *denied, size_t len)
{
        *ret_have = false;
        if (ctl_connect(ctl, true) == 0) {
                struct proto_request req = { .cmd = CMD_STATUS };
                json_t *reply = NULL;
                if (ctl_request(ctl, &req, -1, &reply) == 0)
                        *ret_have = proto_status_reply_from_json(reply, live) == 0;
                json_decref(reply);
        } else if (ctl->sock_errno == EACCES) {
                /* Not "not running": the socket is for root, the daemon's
                 * user and the control group.  Without the database either,
                 * that is all there is to say. */
                ctl_denied_why(ctl, denied, len);
                if (access(ctl->db_path, R_OK) < 0 && errno == EACCES)
                        return ctl_fail(EXIT_FAILED, "%s", denied);
        }
        return 0;
}

int verb_status(struct ctl *ctl, int argc, char **argv)
{
        struct proto_status_reply live = { 0 };
        struct status_view v = { 0 };
        struct store *s;
        bool have;
        json_t *doc;
        int r;

        r = no_args(argc, argv);
        if (r)
                return r < 0 ? EXIT_OK : r;
        r = status_ask(ctl, &live, &have, v.denied, sizeof v.denied);
        s = r ? NULL : ctl_store(ctl);
        if (!s) {
                proto_status_reply_clear(&live);
                return r ? r : EXIT_FAILED;
        }
        /* The daemon at the socket writes another database (--db names an
         * imported copy, say): it is not this database's daemon. */
        if (have)
                *(same_file(live.database, ctl->db_path) ? &v.live : &v.other) = &live;
        r = status_gather(ctl, s, &v);
        if (r == 0 && ctl->format == FORMAT_TABLE)
                status_print(ctl, &v);
        else if (r == 0) {
                doc = status_json(ctl, &v);
                if (!doc)
                        r = ctl_fail(EXIT_FAILED, "out of memory");
                else if (ctl->format == FORMAT_JSON)
                        r = output_json(doc);
                else {
                        json_t *rowsj = json_pack("[o]", doc);
                        r = output_csv(rowsj);
                        doc = rowsj;
                }
                json_decref(doc);
        }
        status_view_clear(&v);
        proto_status_reply_clear(&live);
        return r;
}

int verb_metrics(struct ctl *ctl, int argc, char **argv)
{
        static const char *const cols[] = { "NAME", "SCOPE", "UNIT", "SOURCE", "AVAILABLE", NULL };
        _cleanup_free_ struct store_metric_row *rows = NULL;
        struct store *s;
        json_t *arr, *doc;
        size_t n = 0;
        int r;

        r = no_args(argc, argv);
        if (r)
                return r < 0 ? EXIT_OK : r;
        s = ctl_store(ctl);
        if (!s)
                return EXIT_FAILED;
        if (store_metrics_list(s, &rows, &n) < 0)
                return ctl_fail(EXIT_FAILED, "cannot read %s: %s", ctl->db_path, store_errmsg(s));

        if (ctl->format == FORMAT_TABLE) {
                struct libscols_table *tb = table_new(cols, NULL);
                if (!tb)
                        return ctl_fail(EXIT_FAILED, "out of memory");
                for (size_t i = 0; i < n; i++) {
                        char avail[300];
                        if (rows[i].available)
                                snprintf(avail, sizeof avail, "yes");
                        else
                                snprintf(avail, sizeof avail, "no: %s", rows[i].why);
                        table_row(tb, rows[i].name, rows[i].scope, rows[i].unit, rows[i].source, avail);
                }
                return table_print(tb);
        }

        arr = json_array();
        for (size_t i = 0; i < n; i++) {
                json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:b}", "name", rows[i].name, "scope", rows[i].scope, "unit",
                                      rows[i].unit, "source", rows[i].source, "available", rows[i].available);
                if (!rows[i].available)
                        json_object_set_new(o, "why", json_string(rows[i].why));
                json_array_append_new(arr, o);
        }
        if (ctl->format == FORMAT_CSV)
                r = output_csv(arr);
        else {
                doc = json_pack("{s:O}", "metrics", arr);
                r = output_json(doc);
                json_decref(doc);
        }
        json_decref(arr);
        return r;
}

int verb_reload(struct ctl *ctl, int argc, char **argv)
{
        struct proto_request req = { .cmd = CMD_RELOAD };
        struct proto_reload_reply rr;
        json_t *reply = NULL;
        int r = no_args(argc, argv);

        if (r)
                return r < 0 ? EXIT_OK : r;
        r = ctl_request(ctl, &req, -1, &reply);
        if (r)
                return r;
        r = proto_reload_reply_from_json(reply, &rr);
        json_decref(reply);
        if (r < 0)
                return ctl_fail(EXIT_FAILED, "scalemond's reply to reload has no status");
        if (ctl->format == FORMAT_JSON) {
                json_t *doc = proto_reload_reply_to_json(&rr);
                r = doc ? output_json(doc) : ctl_fail(EXIT_FAILED, "out of memory");
                json_decref(doc);
        } else {
                printf("reloaded: %s\n", rr.status);
                for (size_t i = 0; i < rr.nnot_applied; i++)
                        printf("not applied: %s = %s (%s); still %s\n", rr.not_applied[i].key,
                               rr.not_applied[i].value, rr.not_applied[i].why, rr.not_applied[i].running);
        }
        proto_reload_reply_clear(&rr);
        return r;
}
