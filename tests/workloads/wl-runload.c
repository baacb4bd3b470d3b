/* wl-runload.c - many clients starting and stopping runs as fast as asked.
 *
 *   wl-runload SOCKET CLIENTS PAIRS_PER_S SECONDS PREFIX
 *
 * CLIENTS threads, each on its own connection to scalemond's control
 * socket, open and close runs named PREFIX-CLIENT-N (a run-start, then a
 * run-stop with the score n = N), paced on an absolute schedule so that
 * together they ask for PAIRS_PER_S pairs a second; a client that falls
 * behind goes as fast as the daemon answers.  No pair is begun after
 * SECONDS (one under way is finished), so the load lasts SECONDS plus at
 * most a pair however slowly the daemon answers.  Prints one line per
 * client with the runs it completed, then a summary:
 *
 *   pairs N errors E seconds S rate R p50_ms A p99_ms B max_ms C
 *
 * Exit status 0 if every request was answered with "ok": true.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

struct client {
        pthread_t thread;
        int id;
        int fd;
        double period_ns;               /* between pairs */
        long pairs, errors;
        double *lat_ms;                 /* per request */
        size_t nlat, caplat;
        char err[256];
};

static const char *sock_path, *prefix;
static double seconds;

static int64_t now_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int connect_to(const char *path)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        if (fd < 0)
                return -1;
        snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
        if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
                close(fd);
                return -1;
        }
        return fd;
}

/* Send one request line and read one reply line; 0 if it says "ok": true. */
static int request(struct client *c, const char *line)
{
        char buf[4096];
        size_t len = strlen(line), got = 0;
        int64_t t0 = now_ns();

        while (len > 0) {
                ssize_t k = write(c->fd, line, len);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return -1;
                line += k;
                len -= (size_t)k;
        }
        for (;;) {
                ssize_t k = read(c->fd, buf + got, sizeof buf - 1 - got);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return -1;
                got += (size_t)k;
                buf[got] = 0;
                if (memchr(buf, '\n', got) || got == sizeof buf - 1)
                        break;
        }
        if (c->nlat == c->caplat) {
                size_t cap = c->caplat ? c->caplat * 2 : 1024;
                double *p = realloc(c->lat_ms, cap * sizeof *p);
                if (!p)
                        return -1;
                c->lat_ms = p;
                c->caplat = cap;
        }
        c->lat_ms[c->nlat++] = (double)(now_ns() - t0) / 1e6;
        if (!strstr(buf, "\"ok\": true") && !strstr(buf, "\"ok\":true")) {
                if (!c->err[0])
                        snprintf(c->err, sizeof c->err, "%.*s", (int)strcspn(buf, "\n"), buf);
                return -1;
        }
        return 0;
}

static void *run_client(void *arg)
{
        struct client *c = arg;
        int64_t start = now_ns(), end = start + (int64_t)(seconds * 1e9);
        char line[256];

        for (long n = 0;; n++) {
                int64_t due = start + (int64_t)((double)n * c->period_ns);
                if (due >= end || now_ns() >= end)      /* the schedule's end, or the time's */
                        break;
                if (due > now_ns()) {
                        struct timespec ts = { .tv_sec = due / 1000000000, .tv_nsec = due % 1000000000 };
                        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
                }
                snprintf(line, sizeof line, "{\"cmd\": \"run-start\", \"name\": \"%s-%d-%ld\", \"tags\": {\"client\": \"%d\"}}\n",
                         prefix, c->id, n, c->id);
                if (request(c, line) < 0) {
                        c->errors++;
                        continue;
                }
                snprintf(line, sizeof line, "{\"cmd\": \"run-stop\", \"name\": \"%s-%d-%ld\", \"scores\": {\"n\": %ld}}\n",
                         prefix, c->id, n, n);
                if (request(c, line) < 0)
                        c->errors++;
                else
                        c->pairs++;
        }
        return NULL;
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
        struct client *cl;
        int nclients;
        double rate;
        long pairs = 0, errors = 0;
        size_t nlat = 0, k = 0;
        double *lat;
        int64_t t0;

        if (argc != 6) {
                fprintf(stderr, "usage: wl-runload SOCKET CLIENTS PAIRS_PER_S SECONDS PREFIX\n");
                return 2;
        }
        sock_path = argv[1];
        nclients = atoi(argv[2]);
        rate = atof(argv[3]);
        seconds = atof(argv[4]);
        prefix = argv[5];
        if (nclients < 1 || rate <= 0 || seconds <= 0) {
                fprintf(stderr, "wl-runload: CLIENTS, PAIRS_PER_S and SECONDS must be positive\n");
                return 2;
        }
        cl = calloc((size_t)nclients, sizeof *cl);
        if (!cl)
                return 1;
        for (int i = 0; i < nclients; i++) {
                cl[i].id = i;
                cl[i].period_ns = 1e9 * nclients / rate;
                cl[i].fd = connect_to(sock_path);
                if (cl[i].fd < 0) {
                        fprintf(stderr, "wl-runload: cannot connect to %s: %m\n", sock_path);
                        return 1;
                }
        }
        t0 = now_ns();
        for (int i = 0; i < nclients; i++)
                pthread_create(&cl[i].thread, NULL, run_client, &cl[i]);
        for (int i = 0; i < nclients; i++)
                pthread_join(cl[i].thread, NULL);
        seconds = (double)(now_ns() - t0) / 1e9;
        for (int i = 0; i < nclients; i++) {
                printf("client %d pairs %ld errors %ld%s%s\n", i, cl[i].pairs, cl[i].errors, cl[i].err[0] ? " first: " : "",
                       cl[i].err);
                pairs += cl[i].pairs;
                errors += cl[i].errors;
                nlat += cl[i].nlat;
        }
        lat = malloc((nlat ? nlat : 1) * sizeof *lat);
        if (!lat)
                return 1;
        for (int i = 0; i < nclients; i++)
                for (size_t j = 0; j < cl[i].nlat; j++)
                        lat[k++] = cl[i].lat_ms[j];
        qsort(lat, nlat, sizeof *lat, cmp_double);
        printf("pairs %ld errors %ld seconds %.2f rate %.1f p50_ms %.3f p99_ms %.3f max_ms %.3f\n", pairs, errors, seconds,
               (double)pairs / seconds, nlat ? lat[nlat / 2] : 0, nlat ? lat[nlat * 99 / 100] : 0,
               nlat ? lat[nlat - 1] : 0);
        for (int i = 0; i < nclients; i++) {
                close(cl[i].fd);
                free(cl[i].lat_ms);
        }
        free(cl);
        free(lat);
        return errors ? 1 : 0;
}
