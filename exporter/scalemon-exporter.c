/* scalemon-exporter - serve scalemond's counters and runs to Prometheus.
 *
 * A separate, unprivileged program, so that scalemond stays off the
 * network: it asks scalemond for its running totals over the control
 * socket and reads runs from the database read-only, per scrape.
 * libmicrohttpd does the HTTP, in one internal thread, so one scrape is
 * worked on at a time; every connection is bounded (connection count,
 * request size, idle timeout), at the connection limit the one waiting
 * longest for a request makes room (conns.h), and complaints about bad
 * clients are logged once a minute at most, with a count.
 *
 * Under systemd the listening socket comes from scalemon-exporter.socket
 * (sd_listen_fds); otherwise from --listen.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <microhttpd.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <systemd/sd-daemon.h>

#include "collect.h"
#include "conns.h"
#include "log.h"
#include "macro.h"
#include "source.h"
#include "store.h"
#include "timeutil.h"

#define DEFAULT_PORT          "9993"
#define DEFAULT_SOCKET        "/run/scalemon/control.sock"
#define DEFAULT_DB            "/var/lib/scalemon/scalemon.db"
#define DEFAULT_MAX_CONN      32
#define DEFAULT_MAX_RUNS      200
#define DEFAULT_TIMEOUT_S     10
#define DAEMON_TIMEOUT_MS     3000
#define CONN_MEMORY_LIMIT     (16 * 1024)       /* request line and headers, per connection */
#define LOG_EVERY_NS          (60 * NSEC_PER_SEC)

struct exporter {
        const char *listen;
        const char *socket_path;
        const char *db_path;
        enum collect_per per;
        int64_t runs_since_ns;          /* runs that started this long ago and later */
        unsigned max_runs;              /* at most this many of them, the newest */
        unsigned max_conn;
        unsigned timeout_s;

        struct conns *conns;            /* which wait for a request, which to shut (conns.h) */
        struct store *store;            /* opened on the first scrape that needs it */
        char *daemon_err;               /* the last failure said, to say it once */
        char *db_err;
        uint64_t scrapes;
};

/* ---- saying things once ---- */

/* Record err (NULL: it works) and log when it changes. */
static void note_state(char **last, const char *what, const char *err)
{
        if (err && (!*last || !streq(*last, err))) {
                log_warning("%s: %s", what, err);
                free(*last);
                *last = strdup(err);
        } else if (!err && *last) {
                log_info("%s: works again", what);
                free(*last);
                *last = NULL;
        }
}

/* libmicrohttpd logs every refused connection and bad request; 500 bad
 * clients must not write 500 lines.  Each message (by its format) is
 * logged the first time, then at most once a minute with how many were
 * left out. */
static void log_limited_v(const char *fmt, va_list ap)
{
        static struct {
                const char *fmt;
                int64_t last;
                unsigned skipped;
        } seen[32];
        static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
        int64_t now = now_monotonic_ns();
        char msg[512];
        size_t i, len;
        unsigned skipped = 0;
        bool say = true;

        pthread_mutex_lock(&lock);
        for (i = 0; i < ELEMENTSOF(seen) && seen[i].fmt && seen[i].fmt != fmt; i++)
                ;
        if (i < ELEMENTSOF(seen)) {
                if (seen[i].fmt && now - seen[i].last < LOG_EVERY_NS) {
                        seen[i].skipped++;
                        say = false;
                } else {
                        skipped = seen[i].skipped;
                        seen[i] = (typeof(seen[i])){ fmt, now, 0 };
                }
        }
        pthread_mutex_unlock(&lock);
        if (!say)
                return;
        vsnprintf(msg, sizeof msg, fmt, ap);
        len = strlen(msg);
        while (len > 0 && (msg[len - 1] == '\n' || msg[len - 1] == ' '))
                msg[--len] = 0;
        if (skipped)
                log_notice("http: %s (and %u more like it in the last minute)", msg, skipped);
        else
                log_notice("http: %s (further ones logged once a minute)", msg);
}

static void mhd_logger(void *cls, const char *fmt, va_list ap)
{
        (void)cls;
        log_limited_v(fmt, ap);
}

static void log_limited(const char *fmt, ...) _printf_(1, 2);
static void log_limited(const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        log_limited_v(fmt, ap);
        va_end(ap);
}

/* ---- connections (conns.h) ---- */

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
        struct exporter *x = cls;
        const union MHD_ConnectionInfo *ci;
        struct conn *n = NULL;
        int r;

        if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
                conns_closed(x->conns, *socket_context);
                *socket_context = NULL;
                return;
        }
        ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        r = ci ? conns_started(x->conns, ci->connect_fd, &n) : -EBADF;
        if (r < 0) {
                log_limited("cannot keep track of a connection (%s); it is never shut to make room", strerror(-r));
                return;
        }
        *socket_context = n;
        if (r > 0)
                log_limited("the longest of %u connections waiting for a request was closed to make room for a new one",
                            x->max_conn);
}

/* the socket context, or NULL: a connection libmicrohttpd did not tell of */
static struct conn *conn_of(struct MHD_Connection *conn)
{
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

        return ci ? ci->socket_context : NULL;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **req_cls, enum MHD_RequestTerminationCode toe)
{
        struct exporter *x = cls;

        (void)req_cls, (void)toe;
        conns_idle(x->conns, conn_of(conn));
}

/* ---- answers ---- */

static enum MHD_Result reply_text(struct MHD_Connection *conn, unsigned status, const char *type, char *body,
                                  size_t len, bool take)
{
        struct MHD_Response *resp = MHD_create_response_from_buffer(len, body, take ? MHD_RESPMEM_MUST_FREE
                                                                                    : MHD_RESPMEM_PERSISTENT);
        enum MHD_Result r;

        if (!resp) {
                if (take)
                        free(body);
                return MHD_NO;
        }
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
        if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
                MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
        r = MHD_queue_response(conn, status, resp);
        MHD_destroy_response(resp);
        return r;
}

static char landing[] =
        "<html><head><title>scalemon exporter</title></head><body>\n"
        "<h1>scalemon exporter</h1>\n"
        "<p>scalemond's counters and runs for Prometheus: <a href=\"/metrics\">/metrics</a>.</p>\n"
        "<p>See scalemon-exporter(8).</p>\n"
        "</body></html>\n";
static char not_found[] =
        "404 Not Found: scalemon-exporter serves only /metrics (GET), in the Prometheus text format or, "
        "when the Accept header asks for it, OpenMetrics.\n";
static char bad_method[] = "405 Method Not Allowed: /metrics answers GET and HEAD only.\n";

static enum MHD_Result scrape(struct exporter *x, struct MHD_Connection *conn)
{
        const char *accept = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
        enum expo_format f = expo_negotiate(accept);
        struct src_totals totals = { 0 };
        struct src_run *runs = NULL;
        size_t nruns = 0, len = 0;
        _cleanup_free_ char *err = NULL;
        char *body = NULL;
        bool have_totals, runs_read = false;
        int r;

        x->scrapes++;
        r = src_totals_fetch(x->socket_path, DAEMON_TIMEOUT_MS, &totals, &err);
        have_totals = r >= 0;
        note_state(&x->daemon_err, "scalemond", have_totals ? NULL : err ? err : strerror(-r));
        free(err);
        err = NULL;

        if (!x->store) {
                r = store_open(x->db_path, STORE_READ, &x->store, &err);
                if (r < 0)
                        note_state(&x->db_err, "database", err ? err : strerror(-r));
        }
        if (x->store) {
                r = src_runs_read(x->store, now_realtime_ns() - x->runs_since_ns, x->max_runs, &runs, &nruns);
                if (r < 0) {
                        char msg[512];
                        snprintf(msg, sizeof msg, "cannot read runs from %s: %s", x->db_path,
                                 r == -ENOMEM ? "out of memory" : store_errmsg(x->store));
                        note_state(&x->db_err, "database", msg);
                        x->store = store_close(x->store);      /* reopened next time */
                } else {
                        runs_read = true;
                        note_state(&x->db_err, "database", NULL);
                }
        }

        r = collect_exposition(&(struct collect_input){ .totals = have_totals ? &totals : NULL, .runs = runs,
                                                         .nruns = nruns, .runs_read = runs_read, .per = x->per },
                               f, &body, &len, NULL);
        src_totals_clear(&totals);
        src_runs_free(runs, nruns);
        if (r < 0) {
                static char oops[] = "500 Internal Server Error: cannot format the metrics (see the exporter's log)\n";
                log_error("cannot format the metrics: %s", strerror(-r));
                return reply_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain; charset=utf-8", oops,
                                  sizeof oops - 1, false);
        }
        return reply_text(conn, MHD_HTTP_OK, expo_content_type(f), body, len, true);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
        struct exporter *x = cls;
        bool get = streq(method, MHD_HTTP_METHOD_GET) || streq(method, MHD_HTTP_METHOD_HEAD);

        /* Answered at the first call, which sees the headers: nothing here
         * takes a body, and one sent anyway (a POST) is then not read at
         * all, libmicrohttpd closes the connection after the answer. */
        (void)version, (void)upload_data, (void)upload_data_size, (void)con_cls;
        conns_busy(x->conns, conn_of(conn));
        if (streq(url, "/metrics")) {
                if (!get)
                        return reply_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain; charset=utf-8", bad_method,
                                          sizeof bad_method - 1, false);
                return scrape(x, conn);
        }
        if (streq(url, "/") && get)
                return reply_text(conn, MHD_HTTP_OK, "text/html; charset=utf-8", landing, sizeof landing - 1, false);
        return reply_text(conn, MHD_HTTP_NOT_FOUND, "text/plain; charset=utf-8", not_found, sizeof not_found - 1,
                          false);
}

/* ---- the listening socket ---- */

/* ADDR:PORT, [ADDR6]:PORT or :PORT (every address). */
static int listen_on(const char *spec, int *ret_fd, char **ret_err)
{
        struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
        _cleanup_free_ char *host = NULL;
        struct addrinfo *ai = NULL;
        const char *colon = strrchr(spec, ':'), *port;
        int fd, r, one = 1;

        if (!colon || !colon[1]) {
                if (asprintf(ret_err, "--listen %s: give ADDR:PORT, [ADDR]:PORT or :PORT", spec) < 0)
                        *ret_err = NULL;
                return -EINVAL;
        }
        port = colon + 1;
        {
                char *end;
                long v;

                errno = 0;
                v = strtol(port, &end, 10);
                if (errno || *end || v < 1 || v > 65535) {
                        if (asprintf(ret_err, "--listen %s: the port is a number from 1 to 65535", spec) < 0)
                                *ret_err = NULL;
                        return -EINVAL;
                }
        }
        if (spec[0] == '[' && colon > spec + 1 && colon[-1] == ']')
                host = strndup(spec + 1, (size_t)(colon - spec - 2));
        else if (colon > spec)
                host = strndup(spec, (size_t)(colon - spec));
        r = getaddrinfo(host && *host ? host : NULL, port, &hints, &ai);
        if (r != 0) {
                if (asprintf(ret_err, "--listen %s: %s", spec, gai_strerror(r)) < 0)
                        *ret_err = NULL;
                return -EINVAL;
        }
        fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
            bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 128) < 0) {
                r = -errno;
                if (asprintf(ret_err, "cannot listen on %s: %s", spec, strerror(errno)) < 0)
                        *ret_err = NULL;
                if (fd >= 0)
                        close(fd);
                freeaddrinfo(ai);
                return r;
        }
        freeaddrinfo(ai);
        *ret_fd = fd;
        return 0;
}

/* ---- command line ---- */

static void help(void)
{
        printf("Usage: scalemon-exporter [OPTION]...\n"
               "Serve scalemond's counters and runs to Prometheus on GET /metrics.\n\n"
               "  -l, --listen ADDR:PORT   where to listen: 127.0.0.1:9993, [::1]:9993, :9993 (default :%s);\n"
               "                           under systemd the socket unit gives the socket instead\n"
               "  -s, --socket PATH        scalemond's control socket (default %s)\n"
               "  -d, --db PATH            the database, read-only, for runs (default %s)\n"
               "      --per cpu|node       cpu counters per CPU (default), or summed per NUMA node\n"
               "      --runs-since DUR     runs that started within DUR (default 7d), and any still running\n"
               "      --max-runs N         at most the newest N of those (default %d)\n"
               "      --max-connections N  connections at once (default %d); at the limit the one that has\n"
               "                           waited longest for a request is closed\n"
               "      --timeout DUR        close a connection idle this long (default %ds)\n"
               "  -h, --help               this text\n"
               "      --version            the version\n\n"
               "See scalemon-exporter(8).\n",
               DEFAULT_PORT, DEFAULT_SOCKET, DEFAULT_DB, DEFAULT_MAX_RUNS, DEFAULT_MAX_CONN, DEFAULT_TIMEOUT_S);
}

static int usage(const char *fmt, ...) _printf_(1, 2);
static int usage(const char *fmt, ...)
{
        va_list ap;

        fputs("scalemon-exporter: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputs(" (scalemon-exporter --help lists the options)\n", stderr);
        return 2;
}

static int parse_args(int argc, char **argv, struct exporter *x)
{
        enum { OPT_PER = 256, OPT_RUNS_SINCE, OPT_MAX_RUNS, OPT_MAX_CONN, OPT_TIMEOUT, OPT_VERSION };
        static const struct option opts[] = {
                { "listen", required_argument, NULL, 'l' },
                { "socket", required_argument, NULL, 's' },
                { "db", required_argument, NULL, 'd' },
                { "per", required_argument, NULL, OPT_PER },
                { "runs-since", required_argument, NULL, OPT_RUNS_SINCE },
                { "max-runs", required_argument, NULL, OPT_MAX_RUNS },
                { "max-connections", required_argument, NULL, OPT_MAX_CONN },
                { "timeout", required_argument, NULL, OPT_TIMEOUT },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, OPT_VERSION },
                {}
        };
        int c;

        while ((c = getopt_long(argc, argv, "l:s:d:h", opts, NULL)) >= 0) {
                int64_t ns;
                char *end;
                long v;

                switch (c) {
                case 'l':
                        x->listen = optarg;
                        break;
                case 's':
                        x->socket_path = optarg;
                        break;
                case 'd':
                        x->db_path = optarg;
                        break;
                case OPT_PER:
                        if (streq(optarg, "cpu"))
                                x->per = COLLECT_PER_CPU;
                        else if (streq(optarg, "node"))
                                x->per = COLLECT_PER_NODE;
                        else
                                return usage("--per %s: give cpu or node", optarg);
                        break;
                case OPT_RUNS_SINCE:
                        if (duration_parse(optarg, &ns) < 0 || ns <= 0)
                                return usage("--runs-since %s: give %s", optarg, DURATION_FORMS);
                        x->runs_since_ns = ns;
                        break;
                case OPT_MAX_RUNS:
                        errno = 0;
                        v = strtol(optarg, &end, 10);
                        if (errno || *end || end == optarg || v < 0 || v > 100000)
                                return usage("--max-runs %s: give a number from 0 to 100000", optarg);
                        x->max_runs = (unsigned)v;
                        break;
                case OPT_MAX_CONN:
                        errno = 0;
                        v = strtol(optarg, &end, 10);
                        if (errno || *end || v < 2 || v > 4096)
                                return usage("--max-connections %s: give a number from 2 to 4096", optarg);
                        x->max_conn = (unsigned)v;
                        break;
                case OPT_TIMEOUT:
                        if (duration_parse(optarg, &ns) < 0 || ns < NSEC_PER_SEC || ns > 3600 * NSEC_PER_SEC)
                                return usage("--timeout %s: give 1s to 1h", optarg);
                        x->timeout_s = (unsigned)(ns / NSEC_PER_SEC);
                        break;
                case 'h':
                        help();
                        exit(0);
                case OPT_VERSION:
                        printf("scalemon-exporter %s\n", PACKAGE_VERSION);
                        exit(0);
                default:
                        return 2;
                }
        }
        if (optind < argc)
                return usage("unexpected argument '%s'", argv[optind]);
        return 0;
}

int main(int argc, char **argv)
{
        struct exporter x = {
                .listen = NULL,
                .socket_path = DEFAULT_SOCKET,
                .db_path = DEFAULT_DB,
                .per = COLLECT_PER_CPU,
                .runs_since_ns = 7 * 24 * 3600 * NSEC_PER_SEC,
                .max_runs = DEFAULT_MAX_RUNS,
                .max_conn = DEFAULT_MAX_CONN,
                .timeout_s = DEFAULT_TIMEOUT_S,
        };
        struct MHD_Daemon *d;
        _cleanup_free_ char *err = NULL;
        int r, fd = -1, n, sig;
        sigset_t mask;

        r = parse_args(argc, argv, &x);
        if (r)
                return r;
        log_setup("scalemon-exporter", LOG_TARGET_AUTO);

        n = sd_listen_fds(1);
        if (n > 1) {
                log_error("systemd passed %d sockets; scalemon-exporter.socket should have one ListenStream=", n);
                return 1;
        }
        if (n == 1 && !x.listen)
                fd = SD_LISTEN_FDS_START;
        else {
                char def[32];
                snprintf(def, sizeof def, ":%s", DEFAULT_PORT);
                r = listen_on(x.listen ? x.listen : def, &fd, &err);
                if (r < 0) {
                        fprintf(stderr, "scalemon-exporter: %s\n", err ? err : strerror(-r));
                        return r == -EINVAL ? 2 : 1;    /* a malformed --listen is bad usage */
                }
        }

        r = conns_new(x.max_conn, &x.conns);
        if (r < 0) {
                log_error("cannot start: %s", strerror(-r));
                return 1;
        }
        /* the signals go to sigwait() below, not to libmicrohttpd's thread */
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGPIPE);
        pthread_sigmask(SIG_BLOCK, &mask, NULL);

        d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG, 0, NULL, NULL,
                             on_request, &x,
                             MHD_OPTION_EXTERNAL_LOGGER, mhd_logger, NULL,
                             MHD_OPTION_LISTEN_SOCKET, fd,
                             MHD_OPTION_CONNECTION_LIMIT, x.max_conn,
                             MHD_OPTION_CONNECTION_TIMEOUT, x.timeout_s,
                             MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONN_MEMORY_LIMIT,
                             MHD_OPTION_NOTIFY_CONNECTION, on_connection, &x,
                             MHD_OPTION_NOTIFY_COMPLETED, on_completed, &x,
                             MHD_OPTION_END);
        if (!d) {
                log_error("cannot start the HTTP server (libmicrohttpd) on the listening socket");
                return 1;
        }
        log_info("serving /metrics%s%s; scalemond at %s, database %s, at most %u connections, idle timeout %us",
                 n == 1 && !x.listen ? " on the socket systemd passed" : " on ", n == 1 && !x.listen ? "" :
                 x.listen ? x.listen : ":" DEFAULT_PORT, x.socket_path, x.db_path, x.max_conn, x.timeout_s);
        sd_notify(0, "READY=1");

        sigdelset(&mask, SIGPIPE);
        do
                r = sigwait(&mask, &sig);
        while (r == EINTR);
        sd_notify(0, "STOPPING=1");
        MHD_stop_daemon(d);
        x.conns = conns_free(x.conns);
        x.store = store_close(x.store);
        free(x.daemon_err);
        free(x.db_err);
        log_info("stopped after %" PRIu64 " scrape%s", x.scrapes, x.scrapes == 1 ? "" : "s");
        return 0;
}
