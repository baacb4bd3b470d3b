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

/* The hosts the database's runs came from, with how many runs each:
 * [{"hostname", "kernel", "runs"}], most runs first. */
static json_t *run_hosts_json(struct store *s)
{
        struct run_filter f = { .since = INT64_MIN, .until = INT64_MAX };
        struct run_info *runs = NULL;
        size_t n = 0, nh = 0;
        struct { int64_t id; size_t runs; } *h;
        json_t *arr = json_array();

        if (!arr || store_runs_list(s, &f, &runs, &n) < 0 || n == 0) {
                run_infos_free(runs, n);
                return arr;
        }
        h = calloc(n, sizeof *h);
        for (size_t i = 0; h && i < n; i++) {
                size_t k;
                for (k = 0; k < nh && h[k].id != runs[i].host; k++)
                        ;
                if (k == nh)
                        h[nh++].id = runs[i].host;
                h[k].runs++;
        }
        for (size_t a = 0; h && a < nh; a++)            /* most runs first: a few hosts */
                for (size_t b = a + 1; b < nh; b++)
                        if (h[b].runs > h[a].runs) {
                                __typeof__(*h) t = h[a];
                                h[a] = h[b];
                                h[b] = t;
                        }
        for (size_t k = 0; h && k < nh; k++) {
                struct host_info hi = { 0 };
                bool known = store_host_by_id(s, h[k].id, &hi) == 0;
                json_array_append_new(arr, json_pack("{s:s,s:s,s:I}", "hostname", known && hi.hostname ? hi.hostname : "?",
                                                     "kernel", known && hi.kernel ? hi.kernel : "?", "runs",
                                                     (json_int_t)h[k].runs));
                host_info_clear(&hi);
        }
        free(h);
        run_infos_free(runs, n);
        return arr;
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

int verb_status(struct ctl *ctl, int argc, char **argv)
{
        _cleanup_free_ struct store_metric_row *rows = NULL;
        struct host_info host = { 0 };
        struct store_summary sum;
        struct store *s;
        json_t *doc;
        size_t n = 0;
        int64_t interval = 0;
        int avail = 0, unavail = 0, disabled = 0, r;
        pid_t pid;

        json_t *live = NULL, *open_runs, *other = NULL, *hosts;
        const char *status_line = NULL;
        char denied[512] = "";
        bool has_host;

        r = no_args(argc, argv);
        if (r)
                return r < 0 ? EXIT_OK : r;
        /* the daemon itself, if it answers: its pid, state and open runs */
        if (ctl_connect(ctl, true) == 0) {
                json_t *req = json_pack("{s:s}", "cmd", "status");
                if (ctl_request(ctl, req, -1, &live) != 0)
                        live = NULL;
                json_decref(req);
        } else if (ctl->sock_errno == EACCES) {
                /* Not "not running": the socket is for root, the daemon's
                 * user and the control group.  Without the database either,
                 * that is all there is to say. */
                ctl_denied_why(ctl, denied, sizeof denied);
                if (access(ctl->db_path, R_OK) < 0 && errno == EACCES)
                        return ctl_fail(EXIT_FAILED, "%s", denied);
        }
        s = ctl_store(ctl);
        if (!s) {
                json_decref(live);
                return EXIT_FAILED;
        }
        /* The daemon at the socket writes another database (--db names an
         * imported copy, say): it is not this database's daemon. */
        if (live && !same_file(json_string_value(json_object_get(live, "database")), ctl->db_path)) {
                other = live;
                live = NULL;
        }
        if (store_summary(s, &sum) < 0 || store_metrics_list(s, &rows, &n) < 0)
                return ctl_fail(EXIT_FAILED, "cannot read %s: %s", ctl->db_path, store_errmsg(s));
        has_host = store_host_get(s, &host) == 0;
        hosts = run_hosts_json(s);
        store_meta_get_int(s, "interval_ns", &interval);
        pid = daemon_pid(s);
        if (live) {
                pid = (pid_t)json_integer_value(json_object_get(live, "pid"));
                status_line = json_string_value(json_object_get(live, "status"));
                open_runs = json_incref(json_object_get(live, "open_runs"));
        } else {
                /* from the database: runs not yet closed */
                struct run_info *open = NULL;
                size_t nopen = 0;
                open_runs = json_array();
                if (store_runs_open(s, &open, &nopen) == 0)
                        for (size_t i = 0; i < nopen; i++)
                                json_array_append_new(open_runs, json_pack("{s:s,s:o}", "name", open[i].name, "start",
                                                                           json_time(open[i].start)));
                run_infos_free(open, nopen);
        }
        for (size_t i = 0; i < n; i++) {
                if (rows[i].available)
                        avail++;
                else if (startswith(rows[i].why, "disabled"))
                        disabled++;
                else
                        unavail++;
        }

        doc = json_pack("{s:{s:b,s:o,s:b,s:s,s:o},s:{s:s,s:I,s:i},s:{s:s,s:s,s:s,s:i,s:i},s:o,s:{s:i,s:i},s:i,"
                        "s:{s:i,s:i,s:i},s:{s:I,s:o,s:o}}",
                        "daemon", "running", pid > 0, "pid", pid > 0 ? json_integer(pid) : json_null(), "reachable",
                        live != NULL, "socket", ctl->socket_path, "status",
                        status_line ? json_string(status_line) : json_null(),
                        "database", "path", ctl->db_path, "size_bytes", (json_int_t)sum.size_bytes,
                        "schema", store_schema_version(s),
                        "host", "hostname", host.hostname ? host.hostname : "", "kernel",
                        host.kernel ? host.kernel : "", "cpu_model", host.cpu_model ? host.cpu_model : "",
                        "cpus", host.ncpus, "nodes", host.nnodes,
                        "interval_s", interval ? json_real((double)interval / 1e9) : json_null(),
                        "cpus", "online", sum.online_cpus, "total", sum.ncpus,
                        "nodes", sum.nnodes,
                        "metrics", "available", avail, "unavailable", unavail, "disabled", disabled,
                        "samples", "intervals", (json_int_t)sum.ticks,
                        "first", sum.ticks ? json_time(sum.first_t) : json_null(),
                        "last", sum.ticks ? json_time(sum.last_t) : json_null());
        if (doc) {
                json_object_set(doc, "open_runs", open_runs);
                json_object_set(doc, "run_hosts", hosts);
                json_object_set_new(json_object_get(doc, "metrics"), "page_faults_per_cpu",
                                    json_boolean(faults_per_cpu(rows, n)));
                json_object_set_new(json_object_get(doc, "daemon"), "writes_this_database",
                                    json_boolean(live != NULL || pid > 0));
                if (other)
                        json_object_set_new(json_object_get(doc, "daemon"), "other",
                                            json_pack("{s:O,s:O}", "pid", json_object_get(other, "pid"), "database",
                                                      json_object_get(other, "database")));
        }
        if (doc && live && json_object_get(live, "memory"))
                json_object_set(json_object_get(doc, "daemon"), "memory", json_object_get(live, "memory"));
        if (doc && live && json_object_get(live, "access"))
                json_object_set(json_object_get(doc, "daemon"), "access", json_object_get(live, "access"));
        if (doc && live && json_object_get(live, "retention"))
                json_object_set(json_object_get(doc, "daemon"), "retention", json_object_get(live, "retention"));
        if (doc && !live && ctl->sock_errno)
                json_object_set_new(json_object_get(doc, "daemon"), "why",
                                    json_string(denied[0] ? denied : strerror(ctl->sock_errno)));
        if (!doc) {
                host_info_clear(&host);
                return ctl_fail(EXIT_FAILED, "out of memory");
        }

        if (ctl->format == FORMAT_JSON)
                r = output_json(doc);
        else if (ctl->format == FORMAT_CSV) {
                json_t *rowsj = json_pack("[O]", doc);
                r = output_csv(rowsj);
                json_decref(rowsj);
        } else {
                char size[32], iv[32] = "-", first[32], last[32];
                format_bytes(sum.size_bytes, size, sizeof size);
                if (interval)
                        duration_format(interval, iv, sizeof iv);
                if (live) {
                        json_t *mem = json_object_get(live, "memory");
                        char sq[32], held[32];
                        printf("daemon:    running (pid %d): %s\n", (int)pid, status_line ? status_line : "");
                        if (json_string_value(json_object_get(live, "access")))
                                printf("access:    %s\n", json_string_value(json_object_get(live, "access")));
                        format_bytes(json_integer_value(json_object_get(mem, "sqlite_bytes")), sq, sizeof sq);
                        format_bytes(json_integer_value(json_object_get(mem, "held_bytes")), held, sizeof held);
                        if (mem)
                                printf("memory:    SQLite %s; %lld interval%s not yet written (%s)\n", sq,
                                       (long long)json_integer_value(json_object_get(mem, "held_intervals")),
                                       json_integer_value(json_object_get(mem, "held_intervals")) == 1 ? "" : "s",
                                       held);
                        mem = json_object_get(live, "retention");
                        if (mem)
                                printf("retention: %lld intervals rolled up and %lld deleted since start (longest "
                                       "slice %.1f ms; a tick ran at most %.1f ms late)\n",
                                       (long long)json_integer_value(json_object_get(mem, "merged_intervals")),
                                       (long long)json_integer_value(json_object_get(mem, "deleted_intervals")),
                                       (double)json_integer_value(json_object_get(mem, "step_max_us")) / 1e3,
                                       (double)json_integer_value(json_object_get(mem, "tick_late_max_us")) / 1e3);
                        mem = json_object_get(json_object_get(live, "totals"), "lock_wait_ns");
                        if (mem)        /* BPF is on; what its full maps lost */
                                printf("lock wait: %.3f s waited for kernel locks since start; %.0f waits lost "
                                       "(bounded BPF maps full: lock_wait_lost)\n",
                                       json_number_value(mem) / 1e9,
                                       json_number_value(json_object_get(json_object_get(live, "totals"),
                                                                         "lock_wait_lost")));
                } else if (other && pid <= 0)
                        printf("daemon:    none writes this database (the daemon at %s, pid %lld, writes %s)\n",
                               ctl->socket_path, (long long)json_integer_value(json_object_get(other, "pid")),
                               json_string_value(json_object_get(other, "database")));
                else if (denied[0] && pid > 0)
                        printf("daemon:    running (pid %d), but %s\n", (int)pid, denied);
                else if (denied[0])
                        printf("daemon:    no answer: %s\n", denied);
                else if (pid > 0)
                        printf("daemon:    running (pid %d), but its control socket %s does not answer\n", (int)pid,
                               ctl->socket_path);
                else
                        printf("daemon:    not running (no answer at %s)\n", ctl->socket_path);
                printf("database:  %s (%s, schema %d)\n", ctl->db_path, size, store_schema_version(s));
                if (has_host) {
                        printf("host:      %s, kernel %s, %s\n", host.hostname ? host.hostname : "?",
                               host.kernel ? host.kernel : "?", host.cpu_model ? host.cpu_model : "?");
                        printf("interval:  %s\n", iv);
                        printf("CPUs:      %d online of %d\n", sum.online_cpus, sum.ncpus);
                        printf("nodes:     %d\n", sum.nnodes);
                        printf("metrics:   %d available, %d unavailable, %d disabled (scalemonctl metrics)\n", avail,
                               unavail, disabled);
                        printf("faults:    %s\n", faults_per_cpu(rows, n)
                                                         ? "per CPU (page_faults*, perf events: per_cpu_faults = yes) "
                                                           "and the machine's (pgfault, pgmajfault)"
                                                         : "the machine's only (pgfault, pgmajfault from /proc/vmstat); "
                                                           "per CPU off: per_cpu_faults = yes in scalemon.conf");
                } else
                        printf("host:      none: no daemon has sampled into this database (imported runs only)\n");
                if (json_array_size(hosts) > 0) {
                        size_t i;
                        json_t *o;
                        printf("runs from:");
                        json_array_foreach(hosts, i, o)
                                printf("%s %s (kernel %s, %lld run%s)", i ? "," : "",
                                       json_string_value(json_object_get(o, "hostname")),
                                       json_string_value(json_object_get(o, "kernel")),
                                       (long long)json_integer_value(json_object_get(o, "runs")),
                                       json_integer_value(json_object_get(o, "runs")) == 1 ? "" : "s");
                        printf("\n");
                }
                if (sum.ticks) {
                        time_format_local(sum.first_t, first, sizeof first);
                        time_format_local(sum.last_t, last, sizeof last);
                        printf("samples:   %lld intervals, %s .. %s\n", (long long)sum.ticks, first, last);
                } else
                        printf("samples:   none yet\n");
                if (json_array_size(open_runs) == 0)
                        printf("open runs: none\n");
                else {
                        size_t i;
                        json_t *o;
                        printf("open runs:");
                        json_array_foreach(open_runs, i, o)
                                printf("%s %s (since %s)", i ? "," : "", json_string_value(json_object_get(o, "name")),
                                       json_string_value(json_object_get(o, "start")));
                        printf("\n");
                }
                r = EXIT_OK;
        }
        json_decref(doc);
        json_decref(open_runs);
        json_decref(hosts);
        json_decref(live);
        json_decref(other);
        host_info_clear(&host);
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
        json_t *req, *reply = NULL;
        int r = no_args(argc, argv);

        if (r)
                return r < 0 ? EXIT_OK : r;
        req = json_pack("{s:s}", "cmd", "reload");
        r = ctl_request(ctl, req, -1, &reply);
        json_decref(req);
        if (r)
                return r;
        if (ctl->format == FORMAT_JSON) {
                json_object_del(reply, "ok");
                r = output_json(reply);
        } else {
                json_t *na = json_object_get(reply, "not_applied"), *o;
                size_t i;
                printf("reloaded: %s\n", json_string_value(json_object_get(reply, "status")));
                json_array_foreach(na, i, o)
                        printf("not applied: %s = %s (%s); still %s\n", json_string_value(json_object_get(o, "key")),
                               json_string_value(json_object_get(o, "value")), json_string_value(json_object_get(o, "why")),
                               json_string_value(json_object_get(o, "running")));
        }
        json_decref(reply);
        return r;
}
