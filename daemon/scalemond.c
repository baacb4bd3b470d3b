/* scalemond.c - scalemond: command line, configuration, daemonizing.
 *
 * Everything after start-up happens in manager.c's event loop.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "conf.h"
#include "log.h"
#include "macro.h"
#include "manager.h"
#include "simulate.h"
#include "timeutil.h"

static void help(void)
{
        printf("Usage: scalemond [OPTION]...\n"
               "Sample scalability counters per CPU and per NUMA node into SQLite.\n"
               "\n"
               "  --config FILE     configuration file (default %s; a missing default is fine)\n"
               "  --db PATH         database (default %s)\n"
               "  --socket PATH     control socket (default %s)\n"
               "  --interval DUR    sampling interval, 10ms..60s (default 1s)\n"
               "  --commit-interval DUR  commit samples to the database at least this often,\n"
               "                    0..1h (default 10m; 0: every tick)\n"
               "  --foreground      stay in the foreground and log to stderr\n"
               "  --check-config    check the configuration and exit: 0 if good\n"
               "  --simulate-cpus N for benchmarks and tests only: sample N simulated CPUs\n"
               "                    (%d..%d, %d per node) that replay this machine's\n"
               "                    counters; never on a machine whose data matters\n"
               "  --version         print the version and exit\n"
               "  --help            print this help and exit\n"
               "\n"
               "Command-line values win over the configuration file.  See scalemond(8)\n"
               "and scalemon.conf(5).\n",
               CONF_DEFAULT_PATH, CONF_DEFAULT_DATABASE, CONF_DEFAULT_SOCKET, SIM_MIN_CPUS, SIM_MAX_CPUS,
               SIM_CPUS_PER_NODE);
}

/* Make a path absolute, so that it stays right after chdir("/"). */
static char *absolute(const char *p)
{
        char cwd[4096], *r;
        if (p[0] == '/' || !getcwd(cwd, sizeof cwd))
                return strdup(p);
        if (asprintf(&r, "%s/%s", cwd, p) < 0)
                return NULL;
        return r;
}

/* Fork into the background.  The parent waits until the child says it is
 * ready (or why it is not), so errors still reach the terminal. */
static int daemonize(int *ret_ready_fd)
{
        int pfd[2];
        pid_t pid;

        if (pipe2(pfd, O_CLOEXEC) < 0)
                return negative_errno();
        pid = fork();
        if (pid < 0)
                return negative_errno();
        if (pid > 0) {
                char buf[1024];
                ssize_t k;
                close(pfd[1]);
                k = read(pfd[0], buf, sizeof buf - 1);
                if (k > 0) {
                        buf[k] = 0;
                        if (streq(buf, "ok"))
                                _exit(EXIT_SUCCESS);
                }
                /* the child logged why; it went to syslog, so say it here */
                fprintf(stderr, "scalemond: failed to start (see the system log)\n");
                _exit(EXIT_FAILURE);
        }
        close(pfd[0]);
        if (setsid() < 0)
                return negative_errno();
        pid = fork();
        if (pid < 0)
                return negative_errno();
        if (pid > 0)
                _exit(EXIT_SUCCESS);
        if (chdir("/") < 0)
                return negative_errno();
        {
                int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
                if (nul >= 0) {
                        dup2(nul, STDIN_FILENO);
                        dup2(nul, STDOUT_FILENO);
                        dup2(nul, STDERR_FILENO);
                        if (nul > 2)
                                close(nul);
                }
        }
        *ret_ready_fd = pfd[1];
        return 0;
}

/* The command line into *mo: ARGS_OK, or the exit code (after --help,
 * --version, or a bad argument, which it has reported). */
#define ARGS_OK (-1)
enum { OPT_CONFIG = 0x100, OPT_DB, OPT_SOCKET, OPT_INTERVAL, OPT_FOREGROUND, OPT_CHECK, OPT_VERSION, OPT_HELP,
       OPT_SIMULATE, OPT_COMMIT };

/* A path option: made absolute, into *dst.  ARGS_OK or an exit code. */
static int set_path(char **dst, const char *arg)
{
        free(*dst);
        *dst = absolute(arg);
        return *dst ? ARGS_OK : EXIT_FAILURE;
}

/* The value of option c.  ARGS_OK, or an exit code after saying what is
 * wrong. */
static int parse_value(int c, const char *arg, struct manager_options *mo)
{
        struct conf_source *src = &mo->source;
        int64_t ns;
        char *end;
        long n;

        switch (c) {
        case OPT_CONFIG:
                return set_path(&src->path, arg);
        case OPT_DB:
                return set_path(&src->database, arg);
        case OPT_SOCKET:
                if (set_path(&src->socket, arg) != ARGS_OK)
                        return EXIT_FAILURE;
                if (strlen(src->socket) >= 108) {
                        fprintf(stderr, "scalemond: --socket %s: path longer than a UNIX socket allows "
                                "(107 bytes); choose a shorter one\n", arg);
                        return 2;
                }
                return ARGS_OK;
        case OPT_INTERVAL:
                if (duration_parse(arg, &ns) < 0) {
                        fprintf(stderr, "scalemond: --interval %s: not a duration; use %s\n", arg, DURATION_FORMS);
                        return 2;
                }
                if (ns < CONF_MIN_INTERVAL || ns > CONF_MAX_INTERVAL) {
                        fprintf(stderr, "scalemond: --interval %s: out of range; use 10ms..60s\n", arg);
                        return 2;
                }
                src->interval_ns = ns;
                return ARGS_OK;
        case OPT_COMMIT:
                if (duration_parse(arg, &ns) < 0 || ns > CONF_MAX_COMMIT) {
                        fprintf(stderr, "scalemond: --commit-interval %s: not a duration of 0..1h; use %s\n", arg,
                                DURATION_FORMS);
                        return 2;
                }
                src->commit_interval_ns = ns;
                src->commit_interval_set = true;
                return ARGS_OK;
        default:        /* OPT_SIMULATE */
                errno = 0;
                n = strtol(arg, &end, 10);
                if (errno || end == arg || *end || n < SIM_MIN_CPUS || n > SIM_MAX_CPUS) {
                        fprintf(stderr, "scalemond: --simulate-cpus %s: use a number of CPUs, %d..%d\n", arg,
                                SIM_MIN_CPUS, SIM_MAX_CPUS);
                        return 2;
                }
                mo->simulate_cpus = (int)n;
                return ARGS_OK;
        }
}

static int parse_args(int argc, char **argv, struct manager_options *mo, bool *foreground, bool *check)
{
        static const struct option options[] = {
                { "config", required_argument, NULL, OPT_CONFIG },
                { "db", required_argument, NULL, OPT_DB },
                { "socket", required_argument, NULL, OPT_SOCKET },
                { "interval", required_argument, NULL, OPT_INTERVAL },
                { "commit-interval", required_argument, NULL, OPT_COMMIT },
                { "foreground", no_argument, NULL, OPT_FOREGROUND },
                { "check-config", no_argument, NULL, OPT_CHECK },
                { "simulate-cpus", required_argument, NULL, OPT_SIMULATE },
                { "version", no_argument, NULL, OPT_VERSION },
                { "help", no_argument, NULL, OPT_HELP },
                {},
        };
        struct conf_source *src = &mo->source;
        int c, r;

        while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0) {
                switch (c) {
                case OPT_CONFIG:
                case OPT_DB:
                case OPT_SOCKET:
                case OPT_INTERVAL:
                case OPT_COMMIT:
                case OPT_SIMULATE:
                        r = parse_value(c, optarg, mo);
                        if (r != ARGS_OK)
                                return r;
                        break;
                case OPT_FOREGROUND:
                        *foreground = true;
                        break;
                case OPT_CHECK:
                        *check = true;
                        break;
                case OPT_VERSION:
                        printf("scalemond %s\n", PACKAGE_VERSION);
                        return EXIT_SUCCESS;
                case OPT_HELP:
                        help();
                        return EXIT_SUCCESS;
                default:
                        fprintf(stderr, "Try 'scalemond --help'.\n");
                        return 2;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "scalemond: unexpected argument '%s'; try 'scalemond --help'\n", argv[optind]);
                return 2;
        }

        src->missing_ok = !src->path;
        if (!src->path)
                src->path = strdup(CONF_DEFAULT_PATH);
        if (!src->path)
                return EXIT_FAILURE;
        return ARGS_OK;
}

int main(int argc, char **argv)
{
        struct manager_options mo = { .ready_fd = -1 };
        _cleanup_free_ char *err = NULL;
        struct conf_source *src = &mo.source;
        bool foreground = false, check = false;
        struct manager *m = NULL;
        struct conf conf = { 0 };
        int r, ret;

        ret = parse_args(argc, argv, &mo, &foreground, &check);
        if (ret != ARGS_OK)
                goto out;
        ret = EXIT_SUCCESS;

        r = conf_read(src, &conf, &err);
        if (r < 0) {
                fprintf(stderr, "scalemond: %s\n", err ? err : strerror(-r));
                ret = EXIT_FAILURE;
                goto out;
        }
        if (check) {
                char iv[16];
                int n = 0;
                for (int i = 0; i < _M_MAX; i++)
                        n += conf.enabled[i];
                duration_format(conf.interval_ns, iv, sizeof iv);
                printf("%s: ok (interval %s, database %s, socket %s, %d of %d metrics enabled%s)\n",
                       access(src->path, F_OK) == 0 ? src->path : "defaults", iv, conf.database, conf.socket,
                       n, (int)_M_MAX, conf.per_cpu_faults ? "" : "; per-CPU fault events off: per_cpu_faults = no");
                goto out;
        }

        /* Under systemd (Type=notify) there is nothing to detach from. */
        if (getenv("NOTIFY_SOCKET"))
                foreground = true;
        if (foreground)
                log_setup("scalemond", LOG_TARGET_AUTO);
        else {
                r = daemonize(&mo.ready_fd);
                if (r < 0) {
                        fprintf(stderr, "scalemond: cannot go into the background: %s\n", strerror(-r));
                        ret = EXIT_FAILURE;
                        goto out;
                }
                log_setup("scalemond", access("/run/systemd/journal/socket", F_OK) == 0 ? LOG_TARGET_JOURNAL
                                                                                        : LOG_TARGET_SYSLOG);
        }

        if (mo.simulate_cpus > 0)
                log_notice("simulating %d CPUs on %d nodes, replaying this machine's: for benchmarks and tests only",
                           mo.simulate_cpus, (mo.simulate_cpus + SIM_CPUS_PER_NODE - 1) / SIM_CPUS_PER_NODE);
        r = manager_new(&conf, &mo, &m, &err);
        if (r < 0) {
                log_error("%s", err ? err : strerror(-r));
                if (mo.ready_fd >= 0 && write(mo.ready_fd, "fail", 4) < 0) {
                        /* nothing more to do */
                }
                ret = EXIT_FAILURE;
                goto out;
        }
        r = manager_run(m);
        manager_free(m);
        if (r < 0)
                log_error("%s", strerror(-r));
        ret = r == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
out:
        conf_free(&conf);
        conf_source_free(&mo.source);
        return ret;
}
