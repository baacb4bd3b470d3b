/* verb-run.c - `scalemonctl run start|stop|mark|exec`: mark benchmark runs
 * while they happen.  These change the daemon's state, so they go through
 * its control socket. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <pty.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>

#include "cli.h"
#include "verb-curve.h"
#include "live.h"
#include "output.h"
#include "proto.h"
#include "run-cgroup.h"
#include "verb-run.h"
#include "selection.h"
#include "sock.h"
#include "timeutil.h"
#include "verbs.h"

void exec_opts_free(struct exec_opts *o)
{
        for (size_t i = 0; i < o->ntags; i++) {
                free(o->tags[i].key);
                free(o->tags[i].value);
        }
        for (size_t i = 0; i < o->nrx; i++) {
                free(o->rx[i].key);
                regfree(&o->rx[i].re);
        }
        run_score_from_free(&o->from);
}

int run_check_name(const char *name)
{
        const char *why;
        if (!proto_valid_name(name, &why))
                return ctl_fail(EXIT_USAGE, "run name '%s': %s", name, why);
        return 0;
}

int run_add_tag(struct store_kv *tags, size_t *n, const char *arg)
{
        if (*n == PROTO_MAX_TAGS)
                return ctl_fail(EXIT_USAGE, "--tag: at most %d", PROTO_MAX_TAGS);
        if (parse_key_value("--tag", arg, false, &tags[*n].key, &tags[*n].value))
                return EXIT_USAGE;
        for (size_t i = 0; i < *n; i++)
                if (streq(tags[i].key, tags[*n].key)) {
                        ctl_fail(EXIT_USAGE, "--tag %s given twice", tags[*n].key);
                        free(tags[*n].key);
                        free(tags[*n].value);
                        return EXIT_USAGE;
                }
        (*n)++;
        return 0;
}

/* --lower-is-better K[,K...]: recorded with the run as the tag
 * lower_is_better=K,... (ANALYSIS_LOWER_TAG), which curve and report read. */
int run_add_lower_tag(struct store_kv *tags, size_t *n, const char *arg)
{
        char buf[512];
        int r = curve_check_lower(arg);

        if (r)
                return r;
        snprintf(buf, sizeof buf, "lower_is_better=%s", arg);
        return run_add_tag(tags, n, buf);
}

/* --name-suffix and --replace, for run start and run exec.  0 or EXIT_USAGE. */
int run_set_if_exists(struct exec_opts *o, int c)
{
        const char *want = c == 'n' ? "number" : "replace";
        if (o->if_exists && !streq(o->if_exists, want))
                return ctl_fail(EXIT_USAGE, "use only one of --name-suffix and --replace");
        o->if_exists = want;
        return 0;
}

static json_t *tags_json(const struct store_kv *tags, size_t n)
{
        json_t *o = json_object();
        for (size_t i = 0; i < n; i++)
                json_object_set_new(o, tags[i].key, json_string(tags[i].value));
        return o;
}

static int print_reply(struct ctl *ctl, json_t *reply, const char *fmt_table, ...) _printf_(3, 4);
static int print_reply(struct ctl *ctl, json_t *reply, const char *fmt_table, ...)
{
        int r = EXIT_OK;
        if (ctl->format == FORMAT_JSON) {
                json_object_del(reply, "ok");
                r = output_json(reply);
        } else if (ctl->format == FORMAT_CSV) {
                json_t *rows = json_array(), *run = json_object_get(reply, "run");
                json_array_append(rows, run ? run : json_object_get(reply, "mark"));
                r = output_csv(rows);
                json_decref(rows);
        } else {
                va_list ap;
                va_start(ap, fmt_table);
                vprintf(fmt_table, ap);
                va_end(ap);
        }
        return r;
}

const char *run_reply_str(json_t *reply, const char *obj, const char *key)
{
        const char *s = json_string_value(json_object_get(json_object_get(reply, obj), key));
        return s ? s : "?";
}

json_t *run_start_request(const struct exec_opts *o, const char *name, const char *command)
{
        json_t *req = json_pack("{s:s,s:s,s:o}", "cmd", "run-start", "name", name, "tags", tags_json(o->tags, o->ntags));
        if (command)
                json_object_set_new(req, "command", json_string(command));
        if (o->if_exists)
                json_object_set_new(req, "if_exists", json_string(o->if_exists));
        if (o->cgroup)
                json_object_set_new(req, "cgroup", json_string(o->cgroup));
        return req;
}

/* ---- run start ---- */

static int run_start(struct ctl *ctl, int argc, char **argv)
{
        static const struct option options[] = {
                { "tag", required_argument, NULL, 't' },
                { "lower-is-better", required_argument, NULL, 'L' },
                { "name-suffix", no_argument, NULL, 'n' },
                { "replace", no_argument, NULL, 'R' },
                { "cgroup", required_argument, NULL, 'g' },
                { "unit", required_argument, NULL, 'u' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        struct exec_opts o = { 0 };
        json_t *req, *reply = NULL;
        const char *cgroup = NULL, *unit = NULL;
        _cleanup_free_ char *unit_cg = NULL;
        int c, r;

        while ((c = ctl_getopt(argc, argv, "", options)) >= 0) {
                if (c == 'h') {
                        printf("Usage: scalemonctl run start NAME [--tag K=V]... [--lower-is-better K,...]\n"
                               "                             [--name-suffix | --replace] [--cgroup PATH | --unit NAME]\n"
                               "  --name-suffix: if NAME is taken, record NAME-2, NAME-3... (the first free)\n"
                               "  --replace: if a finished run is called NAME, delete it and record this one\n"
                               "  --cgroup, --unit: the benchmark's cgroup v2 directory or systemd unit: its own counters\n");
                        exec_opts_free(&o);
                        return EXIT_OK;
                }
                if (c == 'n' || c == 'R') {
                        if (run_set_if_exists(&o, c)) {
                                exec_opts_free(&o);
                                return EXIT_USAGE;
                        }
                        continue;
                }
                if (c == 'g' || c == 'u') {     /* the benchmark's cgroup v2 directory, or unit: its own counters */
                        *(c == 'g' ? &cgroup : &unit) = optarg;
                        continue;
                }
                if ((c != 't' && c != 'L') ||
                    (r = c == 'L' ? run_add_lower_tag(o.tags, &o.ntags, optarg) : run_add_tag(o.tags, &o.ntags, optarg))) {
                        exec_opts_free(&o);
                        return EXIT_USAGE;
                }
        }
        if (optind + 1 != argc) {
                exec_opts_free(&o);
                return ctl_fail(EXIT_USAGE, optind >= argc ? "run start needs a NAME"
                                                           : "run start takes one NAME; tags are --tag K=V");
        }
        if ((r = run_check_name(argv[optind]))) {
                exec_opts_free(&o);
                return r;
        }
        if (cgroup && unit) {
                exec_opts_free(&o);
                return ctl_fail(EXIT_USAGE, "run start takes --cgroup or --unit, not both");
        }
        if (unit && (r = run_cgroup_of_unit(unit, &unit_cg))) {
                exec_opts_free(&o);
                return r;
        }
        if (unit_cg)
                cgroup = unit_cg[0] == '/' ? unit_cg + 1 : unit_cg;    /* relative to the cgroup2 mount */
        o.cgroup = cgroup;
        req = run_start_request(&o, argv[optind], NULL);
        exec_opts_free(&o);
        r = ctl_request(ctl, req, -1, &reply);
        json_decref(req);
        if (r)
                return r;
        r = print_reply(ctl, reply, "run %s started at %s\n", run_reply_str(reply, "run", "name"),
                        run_reply_str(reply, "run", "start"));
        json_decref(reply);
        return r;
}

/* ---- run stop ---- */

static int run_stop(struct ctl *ctl, int argc, char **argv)
{
        static const struct option options[] = {
                { "score", required_argument, NULL, 's' },
                { "exit-status", required_argument, NULL, 'e' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        json_t *req = json_pack("{s:s}", "cmd", "run-stop"), *scores = json_object(), *reply = NULL;
        long ex;
        int c, r = 0;

        while (r == 0 && (c = ctl_getopt(argc, argv, "", options)) >= 0) {
                char *k = NULL, *v = NULL;
                switch (c) {
                case 's':
                        r = parse_key_value("--score", optarg, true, &k, &v);
                        if (r == 0) {
                                if (json_object_get(scores, k))
                                        r = ctl_fail(EXIT_USAGE, "--score %s given twice", k);
                                json_object_set_new(scores, k, json_real(strtod(v, NULL)));
                        }
                        free(k);
                        free(v);
                        break;
                case 'e':
                        r = ctl_int("--exit-status", optarg, 0, 255, &ex);
                        if (r == 0)
                                json_object_set_new(req, "exit_status", json_integer(ex));
                        break;
                case 'h':
                        printf("Usage: scalemonctl run stop [NAME] [--score K=V]... [--exit-status N]\n");
                        r = -1;
                        break;
                default:
                        r = EXIT_USAGE;
                }
        }
        if (r == 0 && optind + 1 < argc)
                r = ctl_fail(EXIT_USAGE, "run stop takes at most one NAME; scores are --score K=V");
        if (r == 0 && optind < argc) {
                r = run_check_name(argv[optind]);
                json_object_set_new(req, "name", json_string(argv[optind]));
        }
        if (r) {
                json_decref(req);
                json_decref(scores);
                return r < 0 ? EXIT_OK : r;
        }
        json_object_set_new(req, "scores", scores);
        r = ctl_request(ctl, req, -1, &reply);
        json_decref(req);
        if (r)
                return r;
        r = print_reply(ctl, reply, "run %s stopped: %s after %.3fs\n", run_reply_str(reply, "run", "name"),
                        run_reply_str(reply, "run", "status"),
                        json_number_value(json_object_get(json_object_get(reply, "run"), "duration_s")));
        json_decref(reply);
        return r;
}

/* ---- run mark ---- */

static int run_mark(struct ctl *ctl, int argc, char **argv)
{
        static const struct option options[] = { { "help", no_argument, NULL, 'h' }, {} };
        json_t *req, *reply = NULL;
        const char *why;
        int c, r;

        while ((c = ctl_getopt(argc, argv, "", options)) >= 0) {
                if (c == 'h') {
                        printf("Usage: scalemonctl run mark [NAME] TEXT\n");
                        return EXIT_OK;
                }
                return EXIT_USAGE;
        }
        if (argc - optind < 1 || argc - optind > 2)
                return ctl_fail(EXIT_USAGE, "run mark takes [NAME] TEXT (quote TEXT if it has spaces)");
        if (!proto_valid_text(argv[argc - 1], PROTO_MAX_TEXT, &why))
                return ctl_fail(EXIT_USAGE, "run mark TEXT: %s", why);
        req = json_pack("{s:s,s:s}", "cmd", "run-mark", "text", argv[argc - 1]);
        if (argc - optind == 2) {
                if ((r = run_check_name(argv[optind]))) {
                        json_decref(req);
                        return r;
                }
                json_object_set_new(req, "name", json_string(argv[optind]));
        }
        r = ctl_request(ctl, req, -1, &reply);
        json_decref(req);
        if (r)
                return r;
        r = print_reply(ctl, reply, "run %s: marked '%s' at %s\n", run_reply_str(reply, "mark", "run"),
                        run_reply_str(reply, "mark", "text"), run_reply_str(reply, "mark", "time"));
        json_decref(reply);
        return r;
}

/* ---- run delete ---- */

/* Through the daemon when it holds the database, else directly. */
static int run_delete(struct ctl *ctl, int argc, char **argv)
{
        static const struct option options[] = { { "help", no_argument, NULL, 'h' }, {} };
        _cleanup_free_ char *err = NULL;
        struct store *w = NULL;
        json_t *req, *reply = NULL;
        const char *name;
        int c, r;

        while ((c = ctl_getopt(argc, argv, "", options)) >= 0) {
                if (c == 'h') {
                        printf("Usage: scalemonctl run delete NAME\n");
                        return EXIT_OK;
                }
                return EXIT_USAGE;
        }
        if (argc - optind != 1)
                return ctl_fail(EXIT_USAGE, "run delete takes one NAME (scalemonctl runs lists them)");
        name = argv[optind];
        if ((r = run_check_name(name)))
                return r;
        if (access(ctl->db_path, F_OK) < 0)
                return ctl_fail(EXIT_FAILED, "no database at %s (give --db)", ctl->db_path);
        r = store_open(ctl->db_path, STORE_WRITE, &w, &err);
        if (r == -EBUSY) {
                /* a daemon has the database: it deletes */
                req = json_pack("{s:s,s:s}", "cmd", "run-delete", "name", name);
                r = ctl_request(ctl, req, -1, &reply);
                json_decref(req);
                if (r)
                        return r;
                json_decref(reply);
        } else if (r < 0)
                return ctl_fail(EXIT_FAILED, "%s", err ? err : strerror(-r));
        else {
                r = store_run_delete(w, name);
                if (r == -ENOENT)
                        ctl_fail(EXIT_FAILED, "no run named %s (scalemonctl runs lists them)", name);
                else if (r == -EBUSY)
                        ctl_fail(EXIT_FAILED, "run %s is marked running but no daemon holds the database: "
                                              "start scalemond, which closes it as interrupted", name);
                else if (r < 0)
                        ctl_fail(EXIT_FAILED, "cannot delete run %s: %s", name, store_errmsg(w));
                store_close(w);
                if (r < 0)
                        return EXIT_FAILED;
        }
        if (ctl->format == FORMAT_JSON) {
                json_t *doc = json_pack("{s:s}", "deleted", name);
                r = output_json(doc);
                json_decref(doc);
                return r;
        }
        printf("deleted run %s\n", name);
        return EXIT_OK;
}

int verb_run(struct ctl *ctl, int argc, char **argv)
{
        if (argc < 2)
                return ctl_fail(EXIT_USAGE, "run needs start, stop, exec, mark or delete");
        if (streq(argv[1], "start") || streq(argv[1], "stop") || streq(argv[1], "exec") || streq(argv[1], "mark") ||
            streq(argv[1], "delete"))
                ctl_verb = streq(argv[1], "start") ? "run start" : streq(argv[1], "stop") ? "run stop"
                         : streq(argv[1], "exec") ? "run exec" : streq(argv[1], "mark") ? "run mark" : "run delete";
        if (streq(argv[1], "start"))
                return run_start(ctl, argc - 1, argv + 1);
        if (streq(argv[1], "stop"))
                return run_stop(ctl, argc - 1, argv + 1);
        if (streq(argv[1], "exec"))
                return run_exec(ctl, argc - 1, argv + 1);
        if (streq(argv[1], "mark"))
                return run_mark(ctl, argc - 1, argv + 1);
        if (streq(argv[1], "delete"))
                return run_delete(ctl, argc - 1, argv + 1);
        return ctl_fail(EXIT_USAGE, "unknown run verb '%s': use start, stop, exec, mark or delete", argv[1]);
}
