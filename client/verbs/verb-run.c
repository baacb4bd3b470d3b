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

int run_add_tag(struct proto_kv *tags, size_t *n, const char *arg)
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
int run_add_lower_tag(struct proto_kv *tags, size_t *n, const char *arg)
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
        enum proto_if_exists want = c == 'n' ? PROTO_IF_EXISTS_NUMBER : PROTO_IF_EXISTS_REPLACE;
        if (o->if_exists != PROTO_IF_EXISTS_REFUSE && o->if_exists != want)
                return ctl_fail(EXIT_USAGE, "use only one of --name-suffix and --replace");
        o->if_exists = want;
        return 0;
}

/* A reply, re-encoded (doc: NULL when out of memory): as it is for
 * --format json, its one object for csv, else fmt_table. */
static int print_reply(struct ctl *ctl, json_t *doc, const char *fmt_table, ...) _printf_(3, 4);
static int print_reply(struct ctl *ctl, json_t *doc, const char *fmt_table, ...)
{
        int r = EXIT_OK;

        if (ctl->format != FORMAT_TABLE && !doc)
                return ctl_fail(EXIT_FAILED, "out of memory");
        if (ctl->format == FORMAT_JSON)
                r = output_json(doc);
        else if (ctl->format == FORMAT_CSV) {
                json_t *rows = json_array(), *run = json_object_get(doc, "run");
                json_array_append(rows, run ? run : json_object_get(doc, "mark"));
                r = output_csv(rows);
                json_decref(rows);
        } else {
                va_list ap;
                va_start(ap, fmt_table);
                vprintf(fmt_table, ap);
                va_end(ap);
        }
        json_decref(doc);
        return r;
}

int run_request(struct ctl *ctl, const struct proto_request *req, struct proto_run_reply *ret)
{
        json_t *reply = NULL;
        int r = ctl_request(ctl, req, -1, &reply);

        if (r)
                return r;
        r = proto_run_reply_from_json(reply, ret);
        json_decref(reply);
        if (r == -ENOMEM)
                return ctl_fail(EXIT_FAILED, "out of memory");
        if (r < 0)
                return ctl_fail(EXIT_FAILED, "scalemond's reply to %s names no run", proto_cmd_name(req->cmd));
        return 0;
}

struct proto_request run_start_request(const struct exec_opts *o, const char *name, const char *command)
{
        return (struct proto_request){ .cmd = CMD_RUN_START, .name = (char *)name,
                                       .tags = (struct proto_kv *)o->tags, .ntags = o->ntags,
                                       .command = (char *)command, .if_exists = o->if_exists,
                                       .cgroup = (char *)o->cgroup };
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
        struct proto_request req;
        struct proto_run_reply rr;
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
        r = run_request(ctl, &req, &rr);
        exec_opts_free(&o);
        if (r)
                return r;
        r = print_reply(ctl, proto_run_reply_to_json(&rr), "run %s started at %s\n", rr.name, rr.start);
        proto_run_reply_clear(&rr);
        return r;
}

/* ---- run stop ---- */

/* --score K=V: one more score, not given before.  0 or EXIT_USAGE. */
static int add_score(struct run_scores *scores, const char *arg)
{
        char *k = NULL, *v = NULL;
        int r = parse_key_value("--score", arg, true, &k, &v);

        if (r == 0 && run_scores_has(scores, k))
                r = ctl_fail(EXIT_USAGE, "--score %s given twice", k);
        if (r == 0 && run_scores_add(scores, k, strtod(v, NULL)) < 0)
                r = ctl_fail(EXIT_USAGE, "--score: at most %d", PROTO_MAX_SCORES);
        free(k);
        free(v);
        return r;
}

static int run_stop(struct ctl *ctl, int argc, char **argv)
{
        static const struct option options[] = {
                { "score", required_argument, NULL, 's' },
                { "exit-status", required_argument, NULL, 'e' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        struct run_scores scores = { .n = 0 };
        struct proto_request req = { .cmd = CMD_RUN_STOP, .scores = scores.v };
        struct proto_run_reply rr;
        long ex;
        int c, r = 0;

        while (r == 0 && (c = ctl_getopt(argc, argv, "", options)) >= 0) {
                switch (c) {
                case 's':
                        r = add_score(&scores, optarg);
                        break;
                case 'e':
                        r = ctl_int("--exit-status", optarg, 0, 255, &ex);
                        req.has_exit_status = r == 0;
                        req.exit_status = (int)ex;
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
                req.name = argv[optind];
        }
        req.nscores = scores.n;
        if (r == 0)
                r = run_request(ctl, &req, &rr);
        run_scores_clear(&scores);
        if (r)
                return r < 0 ? EXIT_OK : r;
        r = print_reply(ctl, proto_run_reply_to_json(&rr), "run %s stopped: %s after %.3fs\n", rr.name,
                        rr.status ? rr.status : "?", rr.duration_s);
        proto_run_reply_clear(&rr);
        return r;
}

/* ---- run mark ---- */

static int run_mark(struct ctl *ctl, int argc, char **argv)
{
        static const struct option options[] = { { "help", no_argument, NULL, 'h' }, {} };
        struct proto_request req = { .cmd = CMD_RUN_MARK };
        struct proto_mark_reply mr;
        json_t *reply = NULL;
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
        req.text = argv[argc - 1];
        if (argc - optind == 2) {
                if ((r = run_check_name(argv[optind])))
                        return r;
                req.name = argv[optind];
        }
        r = ctl_request(ctl, &req, -1, &reply);
        if (r)
                return r;
        r = proto_mark_reply_from_json(reply, &mr);
        json_decref(reply);
        if (r < 0)
                return ctl_fail(EXIT_FAILED, r == -ENOMEM ? "out of memory" : "scalemond's reply to run-mark names no mark");
        r = print_reply(ctl, proto_mark_reply_to_json(&mr), "run %s: marked '%s' at %s\n", mr.run, mr.text, mr.time);
        proto_mark_reply_clear(&mr);
        return r;
}

/* ---- run delete ---- */

/* Through the daemon when it holds the database, else directly. */
static int run_delete(struct ctl *ctl, int argc, char **argv)
{
        static const struct option options[] = { { "help", no_argument, NULL, 'h' }, {} };
        _cleanup_free_ char *err = NULL;
        struct store *w = NULL;
        json_t *reply = NULL;
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
                struct proto_request req = { .cmd = CMD_RUN_DELETE, .name = (char *)name };
                r = ctl_request(ctl, &req, -1, &reply);
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
