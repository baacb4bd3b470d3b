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
#include "verb-run-score.h"
#include "selection.h"
#include "sock.h"
#include "timeutil.h"
#include "verbs.h"

/* --score-regex K=REGEX (or K=last:REGEX): the last match's capture;
 * K=sum:REGEX and K=mean:REGEX: the sum or the mean of every match's
 * capture (per-thread figures, several matches on a line count each). */
enum score_mode { SCORE_LAST, SCORE_SUM, SCORE_MEAN };

struct score_regex {
        char *key;
        regex_t re;
        enum score_mode mode;
        bool matched;
        char value[64];         /* the last capture; the result for sum and mean */
        double sum;             /* sum and mean: of the captures so far */
        size_t count;
        bool not_number;        /* sum and mean: a capture that is not a number, in value */
};

struct exec_opts {
        const char *name;
        const char *if_exists;          /* NULL (refuse), "number" (--name-suffix), "replace" (--replace) */
        const char *cgroup;             /* the run's own cgroup: NULL none, "new" (run exec), or a directory */
        struct store_kv tags[PROTO_MAX_TAGS];
        size_t ntags;
        struct score_regex rx[PROTO_MAX_SCORES];
        size_t nrx;
        struct run_score_from from;     /* --score-from, --score-json (verb-run-score.c) */
};

static void exec_opts_free(struct exec_opts *o)
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

static int check_name(const char *name)
{
        const char *why;
        if (!proto_valid_name(name, &why))
                return ctl_fail(EXIT_USAGE, "run name '%s': %s", name, why);
        return 0;
}

static int add_tag(struct store_kv *tags, size_t *n, const char *arg)
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
static int add_lower_tag(struct store_kv *tags, size_t *n, const char *arg)
{
        char buf[512];
        int r = curve_check_lower(arg);

        if (r)
                return r;
        snprintf(buf, sizeof buf, "lower_is_better=%s", arg);
        return add_tag(tags, n, buf);
}

/* --name-suffix and --replace, for run start and run exec.  0 or EXIT_USAGE. */
static int set_if_exists(struct exec_opts *o, int c)
{
        const char *want = c == 'n' ? "number" : "replace";
        if (o->if_exists && !streq(o->if_exists, want))
                return ctl_fail(EXIT_USAGE, "use only one of --name-suffix and --replace");
        o->if_exists = want;
        return 0;
}

/* The run-start request for NAME. */
static json_t *start_request(const struct exec_opts *o, const char *name, const char *command);

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

static const char *reply_str(json_t *reply, const char *obj, const char *key)
{
        const char *s = json_string_value(json_object_get(json_object_get(reply, obj), key));
        return s ? s : "?";
}

static json_t *start_request(const struct exec_opts *o, const char *name, const char *command)
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
                        if (set_if_exists(&o, c)) {
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
                    (r = c == 'L' ? add_lower_tag(o.tags, &o.ntags, optarg) : add_tag(o.tags, &o.ntags, optarg))) {
                        exec_opts_free(&o);
                        return EXIT_USAGE;
                }
        }
        if (optind + 1 != argc) {
                exec_opts_free(&o);
                return ctl_fail(EXIT_USAGE, optind >= argc ? "run start needs a NAME"
                                                           : "run start takes one NAME; tags are --tag K=V");
        }
        if ((r = check_name(argv[optind]))) {
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
        req = start_request(&o, argv[optind], NULL);
        exec_opts_free(&o);
        r = ctl_request(ctl, req, -1, &reply);
        json_decref(req);
        if (r)
                return r;
        r = print_reply(ctl, reply, "run %s started at %s\n", reply_str(reply, "run", "name"),
                        reply_str(reply, "run", "start"));
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
                r = check_name(argv[optind]);
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
        r = print_reply(ctl, reply, "run %s stopped: %s after %.3fs\n", reply_str(reply, "run", "name"),
                        reply_str(reply, "run", "status"),
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
                if ((r = check_name(argv[optind]))) {
                        json_decref(req);
                        return r;
                }
                json_object_set_new(req, "name", json_string(argv[optind]));
        }
        r = ctl_request(ctl, req, -1, &reply);
        json_decref(req);
        if (r)
                return r;
        r = print_reply(ctl, reply, "run %s: marked '%s' at %s\n", reply_str(reply, "mark", "run"),
                        reply_str(reply, "mark", "text"), reply_str(reply, "mark", "time"));
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
        if ((r = check_name(name)))
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

/* ---- run exec ---- */

static volatile sig_atomic_t forward_sig, got_winch;

static void on_forward(int sig)
{
        if (sig == SIGWINCH)
                got_winch = 1;
        else
                forward_sig = sig;
}

struct linebuf {
        char buf[8192];
        size_t len;
};

static void capture(struct score_regex *rx, const char *s, size_t n)
{
        char *end;
        double v;

        if (n >= sizeof rx->value)
                n = sizeof rx->value - 1;
        if (rx->not_number)
                return;                 /* keep the first bad capture for the message */
        memcpy(rx->value, s, n);
        rx->value[n] = 0;
        rx->matched = true;
        errno = 0;
        v = strtod(rx->value, &end);
        if (errno || end == rx->value || *end || !isfinite(v)) {
                rx->not_number = true;
                return;
        }
        rx->sum += v;
        rx->count++;
}

static void scan_line(struct exec_opts *o, const char *line)
{
        for (size_t i = 0; i < o->nrx; i++) {
                regmatch_t m[2];
                if (o->rx[i].mode != SCORE_LAST) {
                        const char *p = line;
                        int flags = 0;
                        while (*p && regexec(&o->rx[i].re, p, 2, m, flags) == 0 && m[1].rm_so >= 0) {
                                capture(&o->rx[i], p + m[1].rm_so, (size_t)(m[1].rm_eo - m[1].rm_so));
                                p += m[0].rm_eo > 0 ? m[0].rm_eo : 1;   /* an empty match moves on one */
                                flags = REG_NOTBOL;
                        }
                        continue;
                }
                if (regexec(&o->rx[i].re, line, 2, m, 0) == 0 && m[1].rm_so >= 0) {
                        size_t n = (size_t)(m[1].rm_eo - m[1].rm_so);
                        if (n >= sizeof o->rx[i].value)
                                n = sizeof o->rx[i].value - 1;
                        memcpy(o->rx[i].value, line + m[1].rm_so, n);
                        o->rx[i].value[n] = 0;
                        o->rx[i].matched = true;   /* the last match wins */
                }
        }
}

static void scan(struct exec_opts *o, struct linebuf *lb, const char *data, size_t n, bool eof)
{
        for (size_t i = 0; i < n; i++) {
                if (data[i] == '\n' || lb->len == sizeof lb->buf - 1) {
                        lb->buf[lb->len] = 0;
                        scan_line(o, lb->buf);
                        lb->len = 0;
                        if (data[i] == '\n')
                                continue;
                }
                lb->buf[lb->len++] = data[i];
        }
        if (eof && lb->len) {
                lb->buf[lb->len] = 0;
                scan_line(o, lb->buf);
                lb->len = 0;
        }
}

/* The command as run exec records it: for people to read, so arguments
 * with spaces are quoted, and what the protocol refuses in a text (control
 * characters, bytes that are not UTF-8) is shown as \xNN.  It is cut at
 * PROTO_MAX_COMMAND bytes, between characters. */
static char *join_argv(char **argv, int n)
{
        size_t len = 1, o = 0;
        char *s;

        for (int i = 0; i < n; i++)
                len += strlen(argv[i]) * 4 + 3;
        s = calloc(1, len);
        if (!s)
                return NULL;
        for (int i = 0; i < n; i++) {
                bool quote = strpbrk(argv[i], " \t'\"$") != NULL;
                if (i)
                        s[o++] = ' ';
                if (quote)
                        s[o++] = '\'';
                for (const char *p = argv[i]; *p;) {
                        size_t k = proto_utf8_char(p);
                        if (k == 0) {
                                o += (size_t)sprintf(s + o, "\\x%02x", (unsigned char)*p);
                                p++;
                        } else {
                                memcpy(s + o, p, k);
                                o += k;
                                p += k;
                        }
                }
                if (quote)
                        s[o++] = '\'';
        }
        s[o] = 0;
        if (o > PROTO_MAX_COMMAND) {
                size_t cut = PROTO_MAX_COMMAND;
                while (cut > 0 && ((unsigned char)s[cut] & 0xc0) == 0x80)
                        cut--;
                s[cut] = 0;
        }
        return s;
}

static int run_exec(struct ctl *ctl, int argc, char **argv)
{
        static const struct option options[] = {
                { "tag", required_argument, NULL, 't' },
                { "score-regex", required_argument, NULL, 'r' },
                { "score-from", required_argument, NULL, 'F' },
                { "score-json", required_argument, NULL, 'J' },
                { "lower-is-better", required_argument, NULL, 'L' },
                { "name-suffix", no_argument, NULL, 'n' },
                { "replace", no_argument, NULL, 'R' },
                { "no-cgroup", no_argument, NULL, 'G' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        struct exec_opts o = { .cgroup = "new" };      /* --no-cgroup: none */
        struct run_scope scope = { .holder = -1, .hold_fd = -1 };
        struct live *lv = NULL;
        int cgfd = -1;
        struct linebuf lbo = { .len = 0 }, lbe = { .len = 0 };
        int pout[2] = { -1, -1 }, perr[2] = { -1, -1 }, pidfd = -1, status = 0, c, r, code;
        int ptm = -1, pts = -1, pty_out = -1;    /* the live line's pty: master, slave, where it goes */
        bool piped;                              /* the command's output through pout and perr */
        char from_sc[512] = "";                  /* " K=V" of the --score-from scores, for the summary */
        size_t from_len = 0;
        struct sigaction sa = { .sa_handler = on_forward }, old_int, old_quit, old_term, old_hup, old_winch;
        json_t *req, *reply = NULL, *scores;
        _cleanup_free_ char *command = NULL, *recorded = NULL;
        struct rusage ru;
        int64_t t0, t1;
        pid_t pid;

        /* Options stop at "--" (or at the command): what follows is the
         * command's.  NAME may come before or among the options. */
        for (;;) {
                c = ctl_getopt(argc, argv, "+", options);
                if (c < 0) {
                        if (!o.name && optind < argc && !streq(argv[optind - 1], "--")) {
                                o.name = argv[optind++];
                                continue;
                        }
                        break;
                }
                switch (c) {
                case 'n':
                case 'R':
                        if (set_if_exists(&o, c)) {
                                exec_opts_free(&o);
                                return EXIT_USAGE;
                        }
                        break;
                case 't':
                case 'L':
                        if (c == 'L' ? add_lower_tag(o.tags, &o.ntags, optarg) : add_tag(o.tags, &o.ntags, optarg)) {
                                exec_opts_free(&o);
                                return EXIT_USAGE;
                        }
                        break;
                case 'r': {
                        char *k = NULL, *v = NULL;
                        int e;
                        const char *pat;
                        if (o.nrx == PROTO_MAX_SCORES || parse_key_value("--score-regex", optarg, false, &k, &v)) {
                                free(k);
                                exec_opts_free(&o);
                                return EXIT_USAGE;
                        }
                        pat = v;
                        o.rx[o.nrx].mode = SCORE_LAST;
                        if (startswith(v, "sum:"))
                                o.rx[o.nrx].mode = SCORE_SUM, pat = v + 4;
                        else if (startswith(v, "mean:"))
                                o.rx[o.nrx].mode = SCORE_MEAN, pat = v + 5;
                        else if (startswith(v, "last:"))
                                pat = v + 5;
                        for (size_t j = 0; j < o.nrx; j++)
                                if (streq(o.rx[j].key, k)) {
                                        ctl_fail(EXIT_USAGE, "--score-regex %s given twice", k);
                                        free(k);
                                        free(v);
                                        exec_opts_free(&o);
                                        return EXIT_USAGE;
                                }
                        e = regcomp(&o.rx[o.nrx].re, pat, REG_EXTENDED);
                        if (e != 0) {
                                char msg[256];
                                regerror(e, &o.rx[o.nrx].re, msg, sizeof msg);
                                ctl_fail(EXIT_USAGE, "--score-regex %s: not a POSIX extended regular expression: %s", k,
                                         msg);
                                free(k);
                                free(v);
                                exec_opts_free(&o);
                                return EXIT_USAGE;
                        }
                        o.rx[o.nrx].key = k;
                        if (o.rx[o.nrx].re.re_nsub < 1) {
                                o.nrx++;
                                ctl_fail(EXIT_USAGE, "--score-regex %s: needs a capture group, e.g. 'jobs/min: ([0-9.]+)'",
                                         k);
                                free(v);
                                exec_opts_free(&o);
                                return EXIT_USAGE;
                        }
                        free(v);
                        o.nrx++;
                        break;
                }
                case 'G':
                        o.cgroup = NULL;
                        break;
                case 'F':
                case 'J':
                        if (run_score_from_add(&o.from, c == 'J', optarg)) {
                                exec_opts_free(&o);
                                return EXIT_USAGE;
                        }
                        break;
                case 'h':
                        printf("Usage: scalemonctl run exec NAME [--tag K=V]... [--score-regex K=[sum:|mean:|last:]REGEX]...\n"
                               "                            [--score-from stress-ng|perf-bench|fio|json:FILE:PATH]...\n"
                               "                            [--score-json FILE:PATH]... [--lower-is-better K,...]\n"
                               "                            [--name-suffix | --replace] [--no-cgroup] -- CMD [ARG]...\n"
                               "  --score-regex K=REGEX takes the last match's capture (also last:); sum: and mean: add\n"
                               "    up (or average) every match's.\n"
                               "  --score-from reads the scores a tool prints, named as it names them: stress-ng's\n"
                               "    bogo ops/s per stressor (--metrics-brief, --metrics or --yaml FILE), perf bench's\n"
                               "    total_time, usecs_per_op, ops_per_sec, gb_per_sec, fio's read.iops, read.bw_bytes,\n"
                               "    read.lat_ns.mean (--output-format=json), or the number at PATH (a.b.0.c) in the JSON\n"
                               "    FILE (- for the command's output); --score-json FILE:PATH is json:FILE:PATH.\n"
                               "  --lower-is-better K,...: these scores are times (lower is better), for curve and report.\n"
                               "  --name-suffix: if NAME is taken, record NAME-2, NAME-3... (the first free)\n"
                               "  --replace: if a finished run is called NAME, delete it and record this one\n"
                               "  --no-cgroup: run the command in scalemonctl's own cgroup, not one of the run's own\n");
                        exec_opts_free(&o);
                        return EXIT_OK;
                default:
                        exec_opts_free(&o);
                        return EXIT_USAGE;
                }
        }
        if (!o.name) {
                exec_opts_free(&o);
                return ctl_fail(EXIT_USAGE, "run exec needs a NAME and, after --, the command to run");
        }
        if (optind < argc && streq(argv[optind], "--"))
                optind++;
        if (optind >= argc) {
                exec_opts_free(&o);
                return ctl_fail(EXIT_USAGE, "run exec %s: no command given (put it after --)", o.name);
        }
        if ((r = check_name(o.name))) {
                exec_opts_free(&o);
                return r;
        }
        command = join_argv(argv + optind, argc - optind);
        /* subscribed before the run starts: the line counts the ticks that
         * have the run open (live.c) */
        lv = live_new(ctl, o.name);

        /* The run's cgroup: a transient systemd scope where systemd runs,
         * else one that scalemond makes; scalemond counts it either way
         * (client/ipc/run-cgroup.c) */
        if (o.cgroup && run_scope_new(o.name, &scope) > 0)
                o.cgroup = scope.cgroup;
        req = start_request(&o, o.name, command ? command : "");
        r = ctl_request(ctl, req, -1, &reply);
        json_decref(req);
        if (r) {
                run_scope_release(&scope);
                live_free(lv);
                exec_opts_free(&o);
                return r;
        }
        /* with --name-suffix the daemon may have chosen another name */
        recorded = strdup(reply_str(reply, "run", "name"));
        if (recorded && o.cgroup)
                cgfd = run_cgroup_enter_fd(recorded, reply, scope.why);
        json_decref(reply);
        reply = NULL;
        if (!recorded) {
                run_scope_release(&scope);
                live_free(lv);
                exec_opts_free(&o);
                return ctl_fail(EXIT_FAILED, "out of memory");
        }
        if (!streq(recorded, o.name)) {
                fprintf(stderr, "scalemonctl: a run named %s exists: recording this one as %s\n", o.name, recorded);
                live_set_name(lv, recorded);
        }
        o.name = recorded;

        /* the output goes through us when scores are read from it */
        piped = o.nrx > 0 || o.from.n > 0;
        if (piped && (pipe2(pout, O_CLOEXEC) < 0 || pipe2(perr, O_CLOEXEC) < 0)) {
                r = ctl_fail(EXIT_FAILED, "cannot make pipes: %s", strerror(errno));
                goto stop;
        }
        /* With the live line, what the command writes to the terminal
         * passes through us, so that the line is erased before it
         * (live.c): through a pty, so that the command still writes to a
         * terminal (line-buffered, in colour). */
        if (lv && !piped) {
                struct winsize ws;
                struct termios tio;
                bool have_ws = ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0, have_tio = tcgetattr(STDERR_FILENO, &tio) == 0;
                if (openpty(&ptm, &pts, NULL, have_tio ? &tio : NULL, have_ws ? &ws : NULL) == 0) {
                        fcntl(ptm, F_SETFD, FD_CLOEXEC);
                        fcntl(pts, F_SETFD, FD_CLOEXEC);
                        pty_out = isatty(STDOUT_FILENO) ? STDOUT_FILENO : STDERR_FILENO;
                } else
                        lv = live_free(lv);     /* no pty: no line, rather than one glued to the output */
        }
        fflush(stdout);
        fflush(stderr);
        t0 = now_monotonic_ns();
        pid = fork();
        if (pid < 0) {
                r = ctl_fail(EXIT_FAILED, "cannot fork: %s", strerror(errno));
                goto stop;
        }
        if (pid == 0) {
                if (piped) {
                        dup2(pout[1], STDOUT_FILENO);
                        dup2(perr[1], STDERR_FILENO);
                }
                if (pts >= 0) {
                        if (isatty(STDOUT_FILENO))
                                dup2(pts, STDOUT_FILENO);
                        dup2(pts, STDERR_FILENO);
                }
                if (ctl->sock_fd >= 0)
                        close(ctl->sock_fd);
                if (cgfd >= 0)
                        run_cgroup_enter(o.name, cgfd);
                execvp(argv[optind], argv + optind);
                fprintf(stderr, "scalemonctl: cannot run '%s': %s\n", argv[optind], strerror(errno));
                _exit(errno == ENOENT ? 127 : 126);
        }
        /* The terminal's ^C reaches the command as well; we wait for it and
         * record how it ended.  A SIGTERM or SIGHUP sent to us is passed on. */
        sigaction(SIGINT, &sa, &old_int);
        sigaction(SIGQUIT, &sa, &old_quit);
        sigaction(SIGTERM, &sa, &old_term);
        sigaction(SIGHUP, &sa, &old_hup);
        sigaction(SIGWINCH, &sa, &old_winch);
        if (piped) {
                close(pout[1]);
                close(perr[1]);
                pout[1] = perr[1] = -1;
        }
        if (pts >= 0) {
                close(pts);
                pts = -1;
        }
        pidfd = (int)syscall(SYS_pidfd_open, pid, 0);

        for (;;) {
                struct pollfd p[5];
                int np = 0, timeout;
                pid_t w;

                if (pidfd >= 0)
                        p[np++] = (struct pollfd){ .fd = pidfd, .events = POLLIN };
                if (pout[0] >= 0)
                        p[np++] = (struct pollfd){ .fd = pout[0], .events = POLLIN };
                if (perr[0] >= 0)
                        p[np++] = (struct pollfd){ .fd = perr[0], .events = POLLIN };
                if (ptm >= 0)
                        p[np++] = (struct pollfd){ .fd = ptm, .events = POLLIN };
                if (live_fd(lv) >= 0)
                        p[np++] = (struct pollfd){ .fd = live_fd(lv), .events = POLLIN };
                timeout = pidfd >= 0 ? -1 : 100;
                poll(p, (nfds_t)np, timeout);
                if (forward_sig) {
                        if (forward_sig == SIGTERM || forward_sig == SIGHUP)
                                kill(pid, forward_sig);
                        forward_sig = 0;
                }
                if (got_winch) {
                        /* the terminal was resized: so is the command's */
                        struct winsize ws;
                        got_winch = 0;
                        if (ptm >= 0 && ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0)
                                ioctl(ptm, TIOCSWINSZ, &ws);
                }
                for (int k = 0; k < 2; k++) {
                        int *fd = k == 0 ? &pout[0] : &perr[0];
                        char buf[65536];
                        ssize_t n;
                        if (*fd < 0)
                                continue;
                        for (int i = 0; i < np; i++)
                                if (p[i].fd == *fd && p[i].revents) {
                                        n = read(*fd, buf, sizeof buf);
                                        if (n > 0) {
                                                live_output(lv, k == 0 ? STDOUT_FILENO : STDERR_FILENO, buf,
                                                            (size_t)n);
                                                scan(&o, k == 0 ? &lbo : &lbe, buf, (size_t)n, false);
                                                if (o.from.n > 0)
                                                        score_capture_add(&o.from.cap, k, buf, (size_t)n);
                                        } else if (n == 0 || errno != EINTR) {
                                                scan(&o, k == 0 ? &lbo : &lbe, "", 0, true);
                                                close(*fd);
                                                *fd = -1;
                                        }
                                }
                }
                if (ptm >= 0)
                        for (int i = 0; i < np; i++)
                                if (p[i].fd == ptm && p[i].revents) {
                                        char buf[65536];
                                        ssize_t n = read(ptm, buf, sizeof buf);
                                        if (n > 0)
                                                live_output(lv, pty_out, buf, (size_t)n);
                                        else if (n == 0 || errno != EINTR) {
                                                /* EIO: the command's side is closed */
                                                close(ptm);
                                                ptm = -1;
                                        }
                                        break;
                                }
                live_read(lv);
                if (pout[0] < 0 && perr[0] < 0 && ptm < 0) {
                        w = wait4(pid, &status, WNOHANG, &ru);
                        if (w == pid)
                                break;
                }
        }
        t1 = now_monotonic_ns();
        lv = live_free(lv);
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGQUIT, &old_quit, NULL);
        sigaction(SIGTERM, &old_term, NULL);
        sigaction(SIGHUP, &old_hup, NULL);
        sigaction(SIGWINCH, &old_winch, NULL);
        if (pidfd >= 0)
                close(pidfd);
        if (cgfd >= 0)
                close(cgfd);
        code = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;

        scores = json_object();
        for (size_t i = 0; i < o.nrx; i++) {
                char *end;
                double v;
                if (!o.rx[i].matched) {
                        fprintf(stderr, "scalemonctl: score %s: the command's output never matched its regex\n",
                                o.rx[i].key);
                        continue;
                }
                if (o.rx[i].mode != SCORE_LAST) {
                        if (o.rx[i].not_number) {
                                fprintf(stderr, "scalemonctl: score %s: captured '%s', which is not a number\n",
                                        o.rx[i].key, o.rx[i].value);
                                o.rx[i].matched = false;
                                continue;
                        }
                        v = o.rx[i].mode == SCORE_SUM ? o.rx[i].sum : o.rx[i].sum / (double)o.rx[i].count;
                        snprintf(o.rx[i].value, sizeof o.rx[i].value, "%.17g", v);
                        json_object_set_new(scores, o.rx[i].key, json_real(v));
                        continue;
                }
                errno = 0;
                v = strtod(o.rx[i].value, &end);
                if (errno || end == o.rx[i].value || *end || !isfinite(v)) {
                        fprintf(stderr, "scalemonctl: score %s: captured '%s', which is not a number\n", o.rx[i].key,
                                o.rx[i].value);
                        continue;
                }
                json_object_set_new(scores, o.rx[i].key, json_real(v));
        }
        run_score_from_collect(&o.from, argv + optind, scores, from_sc, sizeof from_sc, &from_len);
        req = json_pack("{s:s,s:s,s:o,s:i,s:f,s:f,s:f}", "cmd", "run-stop", "name", o.name, "scores", scores,
                        "exit_status", code, "wall_s", (double)(t1 - t0) / 1e9, "user_s",
                        (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6, "sys_s",
                        (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6);
        /* the command's own voluntary and involuntary switches (as /proc/PID/status counts them) */
        json_object_set_new(req, "voluntary_switches", json_integer(ru.ru_nvcsw));
        json_object_set_new(req, "involuntary_switches", json_integer(ru.ru_nivcsw));
        r = ctl_request(ctl, req, -1, &reply);
        json_decref(req);
        run_scope_release(&scope);      /* after run-stop: scalemond has read the scope's files */
        if (r == 0 && isatty(STDERR_FILENO)) {
                char sc[512] = "";
                size_t len = 0;
                for (size_t i = 0; i < o.nrx && len < sizeof sc - 80; i++)
                        if (o.rx[i].matched)
                                strbuf_appendf(sc, sizeof sc, &len, " %s=%s", o.rx[i].key, o.rx[i].value);
                fprintf(stderr, "scalemonctl: run %s: %s, exit %d, real %.3fs user %.3fs sys %.3fs%s%s\n", o.name,
                        reply_str(reply, "run", "status"), code, (double)(t1 - t0) / 1e9,
                        (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6,
                        (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6, sc, from_sc);
        }
        json_decref(reply);
        exec_opts_free(&o);
        /* the command's status, unless it succeeded and the run could not be recorded */
        return code != 0 ? code : r;

stop:
        /* the command never ran: close the run as failed */
        live_free(lv);
        if (ptm >= 0)
                close(ptm);
        if (pts >= 0)
                close(pts);
        req = json_pack("{s:s,s:s,s:i}", "cmd", "run-stop", "name", o.name, "exit_status", 127);
        ctl_request(ctl, req, -1, &reply);
        json_decref(req);
        json_decref(reply);
        run_scope_release(&scope);
        exec_opts_free(&o);
        return r;
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
