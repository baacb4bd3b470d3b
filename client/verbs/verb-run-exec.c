/* verb-run-exec.c - `scalemonctl run exec NAME -- CMD`: start a run, run
 * the command in the run's own cgroup, pass its output through (scanning it
 * for scores, under the live line), and stop the run with how the command
 * ended and what it scored. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>

#include "live.h"
#include "macro.h"
#include "run-cgroup.h"
#include "sock.h"
#include "timeutil.h"
#include "selection.h"
#include "verb-run.h"

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

/* One run exec, from the start request to the stop request. */
struct exec {
        struct exec_opts o;
        struct run_scope scope;
        struct live *lv;
        char *command;                  /* as recorded (join_argv) */
        char *recorded;                 /* the run's name as the daemon recorded it */
        int cgfd;                       /* the run's cgroup.procs, for the child */
        /* the command's output: through pipes when scores are read from
         * it, through a pty under the live line, else untouched */
        bool piped;
        int pout[2], perr[2];
        int ptm, pts, pty_out;
        struct linebuf lbo, lbe;
        pid_t pid;
        int status;
        struct rusage ru;
        int64_t t0, t1;
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

/* ---- the options ---- */

/* --score-regex K=[sum:|mean:|last:]REGEX.  0, or EXIT_USAGE after saying
 * what is wrong. */
static int add_score_regex(struct exec_opts *o, const char *arg)
{
        struct score_regex *rx = &o->rx[o->nrx];
        _cleanup_free_ char *v = NULL;
        char *k = NULL, msg[256];
        const char *pat;
        int e;

        if (o->nrx == PROTO_MAX_SCORES || parse_key_value("--score-regex", arg, false, &k, &v)) {
                free(k);
                return EXIT_USAGE;
        }
        pat = v;
        rx->mode = SCORE_LAST;
        if (startswith(v, "sum:"))
                rx->mode = SCORE_SUM, pat = v + 4;
        else if (startswith(v, "mean:"))
                rx->mode = SCORE_MEAN, pat = v + 5;
        else if (startswith(v, "last:"))
                pat = v + 5;
        for (size_t j = 0; j < o->nrx; j++)
                if (streq(o->rx[j].key, k)) {
                        ctl_fail(EXIT_USAGE, "--score-regex %s given twice", k);
                        free(k);
                        return EXIT_USAGE;
                }
        e = regcomp(&rx->re, pat, REG_EXTENDED);
        if (e != 0) {
                regerror(e, &rx->re, msg, sizeof msg);
                ctl_fail(EXIT_USAGE, "--score-regex %s: not a POSIX extended regular expression: %s", k, msg);
                free(k);
                return EXIT_USAGE;
        }
        rx->key = k;
        o->nrx++;               /* exec_opts_free() frees it from here on */
        if (rx->re.re_nsub < 1)
                return ctl_fail(EXIT_USAGE, "--score-regex %s: needs a capture group, e.g. 'jobs/min: ([0-9.]+)'", k);
        return 0;
}

static void exec_help(void)
{
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
}

/* The options, up to "--" (or the command: what follows is the
 * command's); NAME may come before or among them.  0 with *cmd the index
 * of the command in argv, EXIT_OK after --help (*cmd -1), or EXIT_USAGE. */
static int exec_parse(struct exec_opts *o, int argc, char **argv, int *cmd)
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
        int c, r = 0;

        *cmd = -1;
        while (r == 0) {
                c = ctl_getopt(argc, argv, "+", options);
                if (c < 0) {
                        if (!o->name && optind < argc && !streq(argv[optind - 1], "--")) {
                                o->name = argv[optind++];
                                continue;
                        }
                        break;
                }
                if (c == 'n' || c == 'R')
                        r = run_set_if_exists(o, c);
                else if (c == 't')
                        r = run_add_tag(o->tags, &o->ntags, optarg);
                else if (c == 'L')
                        r = run_add_lower_tag(o->tags, &o->ntags, optarg);
                else if (c == 'r')
                        r = add_score_regex(o, optarg);
                else if (c == 'G')
                        o->cgroup = NULL;
                else if (c == 'F' || c == 'J')
                        r = run_score_from_add(&o->from, c == 'J', optarg);
                else if (c == 'h') {
                        exec_help();
                        return EXIT_OK;
                } else
                        r = EXIT_USAGE;
        }
        if (r)
                return EXIT_USAGE;
        if (!o->name)
                return ctl_fail(EXIT_USAGE, "run exec needs a NAME and, after --, the command to run");
        if (optind < argc && streq(argv[optind], "--"))
                optind++;
        if (optind >= argc)
                return ctl_fail(EXIT_USAGE, "run exec %s: no command given (put it after --)", o->name);
        if ((r = run_check_name(o->name)))
                return r;
        *cmd = optind;
        return 0;
}

/* ---- start, run, stop ---- */

/* The run-start request, in the run's cgroup: a transient systemd scope
 * where systemd runs, else one that scalemond makes; scalemond counts it
 * either way (client/ipc/run-cgroup.c).  0 or an exit code. */
static int exec_start(struct ctl *ctl, struct exec *x)
{
        json_t *req, *reply = NULL;
        int r;

        if (x->o.cgroup && run_scope_new(x->o.name, &x->scope) > 0)
                x->o.cgroup = x->scope.cgroup;
        req = run_start_request(&x->o, x->o.name, x->command ? x->command : "");
        r = ctl_request(ctl, req, -1, &reply);
        json_decref(req);
        if (r)
                return r;
        /* with --name-suffix the daemon may have chosen another name */
        x->recorded = strdup(run_reply_str(reply, "run", "name"));
        if (x->recorded && x->o.cgroup)
                x->cgfd = run_cgroup_enter_fd(x->recorded, reply, x->scope.why);
        json_decref(reply);
        if (!x->recorded)
                return ctl_fail(EXIT_FAILED, "out of memory");
        if (!streq(x->recorded, x->o.name)) {
                fprintf(stderr, "scalemonctl: a run named %s exists: recording this one as %s\n", x->o.name,
                        x->recorded);
                live_set_name(x->lv, x->recorded);
        }
        x->o.name = x->recorded;
        return 0;
}

/* Where the command's output goes: through pipes when scores are read
 * from it; with the live line, through a pty (so that the command still
 * writes to a terminal, line-buffered, in colour) and the line is erased
 * before it (live.c).  0 or an exit code. */
static int exec_io_open(struct exec *x)
{
        struct winsize ws;
        struct termios tio;
        bool have_ws, have_tio;

        x->piped = x->o.nrx > 0 || x->o.from.n > 0;
        if (x->piped && (pipe2(x->pout, O_CLOEXEC) < 0 || pipe2(x->perr, O_CLOEXEC) < 0))
                return ctl_fail(EXIT_FAILED, "cannot make pipes: %s", strerror(errno));
        if (!x->lv || x->piped)
                return 0;
        have_ws = ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0;
        have_tio = tcgetattr(STDERR_FILENO, &tio) == 0;
        if (openpty(&x->ptm, &x->pts, NULL, have_tio ? &tio : NULL, have_ws ? &ws : NULL) == 0) {
                fcntl(x->ptm, F_SETFD, FD_CLOEXEC);
                fcntl(x->pts, F_SETFD, FD_CLOEXEC);
                x->pty_out = isatty(STDOUT_FILENO) ? STDOUT_FILENO : STDERR_FILENO;
        } else
                x->lv = live_free(x->lv);       /* no pty: no line, rather than one glued to the output */
        return 0;
}

static _noreturn_ void exec_child(struct ctl *ctl, struct exec *x, char **cmd)
{
        if (x->piped) {
                dup2(x->pout[1], STDOUT_FILENO);
                dup2(x->perr[1], STDERR_FILENO);
        }
        if (x->pts >= 0) {
                if (isatty(STDOUT_FILENO))
                        dup2(x->pts, STDOUT_FILENO);
                dup2(x->pts, STDERR_FILENO);
        }
        if (ctl->sock_fd >= 0)
                close(ctl->sock_fd);
        if (x->cgfd >= 0)
                run_cgroup_enter(x->o.name, x->cgfd);
        execvp(cmd[0], cmd);
        fprintf(stderr, "scalemonctl: cannot run '%s': %s\n", cmd[0], strerror(errno));
        _exit(errno == ENOENT ? 127 : 126);
}

static bool ready(const struct pollfd *p, int np, int fd)
{
        for (int i = 0; i < np; i++)
                if (p[i].fd == fd && p[i].revents)
                        return true;
        return false;
}

/* What the command wrote: to the terminal (under the live line), and
 * through the score scanners. */
static void exec_pump(struct exec *x, const struct pollfd *p, int np)
{
        char buf[65536];
        ssize_t n;

        for (int k = 0; k < 2; k++) {
                int *fd = k == 0 ? &x->pout[0] : &x->perr[0];
                struct linebuf *lb = k == 0 ? &x->lbo : &x->lbe;
                if (*fd < 0 || !ready(p, np, *fd))
                        continue;
                n = read(*fd, buf, sizeof buf);
                if (n > 0) {
                        live_output(x->lv, k == 0 ? STDOUT_FILENO : STDERR_FILENO, buf, (size_t)n);
                        scan(&x->o, lb, buf, (size_t)n, false);
                        if (x->o.from.n > 0)
                                score_capture_add(&x->o.from.cap, k, buf, (size_t)n);
                } else if (n == 0 || errno != EINTR) {
                        scan(&x->o, lb, "", 0, true);
                        close(*fd);
                        *fd = -1;
                }
        }
        if (x->ptm >= 0 && ready(p, np, x->ptm)) {
                n = read(x->ptm, buf, sizeof buf);
                if (n > 0)
                        live_output(x->lv, x->pty_out, buf, (size_t)n);
                else if (n == 0 || errno != EINTR) {
                        close(x->ptm);          /* EIO: the command's side is closed */
                        x->ptm = -1;
                }
        }
}

/* Until the command has ended and its output is read to the end. */
static void exec_wait(struct exec *x, int pidfd)
{
        for (;;) {
                struct pollfd p[5];
                int np = 0;
                struct winsize ws;

                if (pidfd >= 0)
                        p[np++] = (struct pollfd){ .fd = pidfd, .events = POLLIN };
                if (x->pout[0] >= 0)
                        p[np++] = (struct pollfd){ .fd = x->pout[0], .events = POLLIN };
                if (x->perr[0] >= 0)
                        p[np++] = (struct pollfd){ .fd = x->perr[0], .events = POLLIN };
                if (x->ptm >= 0)
                        p[np++] = (struct pollfd){ .fd = x->ptm, .events = POLLIN };
                if (live_fd(x->lv) >= 0)
                        p[np++] = (struct pollfd){ .fd = live_fd(x->lv), .events = POLLIN };
                poll(p, (nfds_t)np, pidfd >= 0 ? -1 : 100);
                if (forward_sig) {
                        if (forward_sig == SIGTERM || forward_sig == SIGHUP)
                                kill(x->pid, forward_sig);
                        forward_sig = 0;
                }
                if (got_winch) {
                        /* the terminal was resized: so is the command's */
                        got_winch = 0;
                        if (x->ptm >= 0 && ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0)
                                ioctl(x->ptm, TIOCSWINSZ, &ws);
                }
                exec_pump(x, p, np);
                live_read(x->lv);
                if (x->pout[0] < 0 && x->perr[0] < 0 && x->ptm < 0 &&
                    wait4(x->pid, &x->status, WNOHANG, &x->ru) == x->pid)
                        return;
        }
}

/* Fork the command and wait for it.  The terminal's ^C reaches the
 * command as well; we wait for it and record how it ended.  A SIGTERM or
 * SIGHUP sent to us is passed on.  0 or an exit code. */
static int exec_command(struct ctl *ctl, struct exec *x, char **cmd)
{
        static const int sigs[] = { SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGWINCH };
        struct sigaction sa = { .sa_handler = on_forward }, old[ELEMENTSOF(sigs)];
        int pidfd;

        fflush(stdout);
        fflush(stderr);
        x->t0 = now_monotonic_ns();
        x->pid = fork();
        if (x->pid < 0)
                return ctl_fail(EXIT_FAILED, "cannot fork: %s", strerror(errno));
        if (x->pid == 0)
                exec_child(ctl, x, cmd);
        for (size_t i = 0; i < ELEMENTSOF(sigs); i++)
                sigaction(sigs[i], &sa, &old[i]);
        if (x->piped) {
                close(x->pout[1]);
                close(x->perr[1]);
                x->pout[1] = x->perr[1] = -1;
        }
        if (x->pts >= 0) {
                close(x->pts);
                x->pts = -1;
        }
        pidfd = (int)syscall(SYS_pidfd_open, x->pid, 0);
        exec_wait(x, pidfd);
        x->t1 = now_monotonic_ns();
        x->lv = live_free(x->lv);
        for (size_t i = 0; i < ELEMENTSOF(sigs); i++)
                sigaction(sigs[i], &old[i], NULL);
        if (pidfd >= 0)
                close(pidfd);
        return 0;
}

/* The --score-regex scores, into a new object; a score that never matched
 * or is not a number is said on stderr and left out. */
static json_t *regex_scores(struct exec_opts *o)
{
        json_t *scores = json_object();

        for (size_t i = 0; i < o->nrx; i++) {
                struct score_regex *rx = &o->rx[i];
                char *end;
                double v;
                if (!rx->matched) {
                        fprintf(stderr, "scalemonctl: score %s: the command's output never matched its regex\n",
                                rx->key);
                        continue;
                }
                if (rx->mode != SCORE_LAST && !rx->not_number) {
                        v = rx->mode == SCORE_SUM ? rx->sum : rx->sum / (double)rx->count;
                        snprintf(rx->value, sizeof rx->value, "%.17g", v);
                        json_object_set_new(scores, rx->key, json_real(v));
                        continue;
                }
                if (rx->not_number) {
                        fprintf(stderr, "scalemonctl: score %s: captured '%s', which is not a number\n", rx->key,
                                rx->value);
                        rx->matched = false;
                        continue;
                }
                errno = 0;
                v = strtod(rx->value, &end);
                if (errno || end == rx->value || *end || !isfinite(v)) {
                        fprintf(stderr, "scalemonctl: score %s: captured '%s', which is not a number\n", rx->key,
                                rx->value);
                        continue;
                }
                json_object_set_new(scores, rx->key, json_real(v));
        }
        return scores;
}

static double tv_s(struct timeval tv)
{
        return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

/* The run-stop request with how the command ended and what it scored,
 * and the summary line on a terminal.  0 or an exit code. */
static int exec_stop(struct ctl *ctl, struct exec *x, char **cmd, int code)
{
        char sc[512] = "", from_sc[512] = "";
        size_t len = 0, from_len = 0;
        json_t *req, *reply = NULL, *scores = regex_scores(&x->o);
        int r;

        run_score_from_collect(&x->o.from, cmd, scores, from_sc, sizeof from_sc, &from_len);
        req = json_pack("{s:s,s:s,s:o,s:i,s:f,s:f,s:f}", "cmd", "run-stop", "name", x->o.name, "scores", scores,
                        "exit_status", code, "wall_s", (double)(x->t1 - x->t0) / 1e9, "user_s",
                        tv_s(x->ru.ru_utime), "sys_s", tv_s(x->ru.ru_stime));
        /* the command's own voluntary and involuntary switches (as /proc/PID/status counts them) */
        json_object_set_new(req, "voluntary_switches", json_integer(x->ru.ru_nvcsw));
        json_object_set_new(req, "involuntary_switches", json_integer(x->ru.ru_nivcsw));
        r = ctl_request(ctl, req, -1, &reply);
        json_decref(req);
        run_scope_release(&x->scope);   /* after run-stop: scalemond has read the scope's files */
        if (r == 0 && isatty(STDERR_FILENO)) {
                for (size_t i = 0; i < x->o.nrx && len < sizeof sc - 80; i++)
                        if (x->o.rx[i].matched)
                                strbuf_appendf(sc, sizeof sc, &len, " %s=%s", x->o.rx[i].key, x->o.rx[i].value);
                fprintf(stderr, "scalemonctl: run %s: %s, exit %d, real %.3fs user %.3fs sys %.3fs%s%s\n", x->o.name,
                        run_reply_str(reply, "run", "status"), code, (double)(x->t1 - x->t0) / 1e9,
                        tv_s(x->ru.ru_utime), tv_s(x->ru.ru_stime), sc, from_sc);
        }
        json_decref(reply);
        return r;
}

/* The command never ran: close the run as failed. */
static void exec_abandon(struct ctl *ctl, struct exec *x)
{
        json_t *req, *reply = NULL;

        req = json_pack("{s:s,s:s,s:i}", "cmd", "run-stop", "name", x->o.name, "exit_status", 127);
        ctl_request(ctl, req, -1, &reply);
        json_decref(req);
        json_decref(reply);
}

static void exec_free(struct exec *x)
{
        live_free(x->lv);
        run_scope_release(&x->scope);
        closep(&x->cgfd);
        closep(&x->ptm);
        closep(&x->pts);
        for (int i = 0; i < 2; i++) {
                closep(&x->pout[i]);
                closep(&x->perr[i]);
        }
        exec_opts_free(&x->o);
        free(x->command);
        free(x->recorded);
}

int run_exec(struct ctl *ctl, int argc, char **argv)
{
        struct exec x = {
                .o = { .cgroup = "new" },       /* --no-cgroup: none */
                .scope = { .holder = -1, .hold_fd = -1 },
                .cgfd = -1, .pout = { -1, -1 }, .perr = { -1, -1 }, .ptm = -1, .pts = -1, .pty_out = -1,
        };
        int cmd, r, code;

        r = exec_parse(&x.o, argc, argv, &cmd);
        if (r || cmd < 0) {
                exec_free(&x);
                return r;
        }
        x.command = join_argv(argv + cmd, argc - cmd);
        /* subscribed before the run starts: the line counts the ticks that
         * have the run open (live.c) */
        x.lv = live_new(ctl, x.o.name);
        r = exec_start(ctl, &x);
        if (r == 0 && x.recorded && (r = exec_io_open(&x)) == 0)
                r = exec_command(ctl, &x, argv + cmd);
        if (r) {
                if (x.recorded)
                        exec_abandon(ctl, &x);
                exec_free(&x);
                return r;
        }
        code = WIFEXITED(x.status) ? WEXITSTATUS(x.status) : WIFSIGNALED(x.status) ? 128 + WTERMSIG(x.status) : 1;
        r = exec_stop(ctl, &x, argv + cmd, code);
        exec_free(&x);
        /* the command's status, unless it succeeded and the run could not be recorded */
        return code != 0 ? code : r;
}
