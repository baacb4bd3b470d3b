/* fuzz-subscribe.c - libFuzzer target: what a client sends on a
 * connection to the control socket, as the subscribe path takes it: the
 * real server (ctl.c) and subscriptions (subscribe.c) over a sampler on a
 * small fixture tree that this target writes once.  The input is sent on
 * a fresh connection; then a tick is sampled and pushed.  Whatever
 * arrives, every line the daemon answers is one JSON object: an error
 * with its reason, a subscription's reply with a metric for each asked,
 * or a tick; a subscribed connection gets the tick; nothing leaks. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl.h"
#include "runs.h"
#include "sampler.h"
#include "subscribe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct {
        char root[64], sock[128];
        sd_event *e;
        struct sampler *sm;
        struct ctl_server *ctl;
        struct subscribers *subs;
        struct runs *runs;
        int64_t interval_ns;
} F;

static void put(const char *rel, const char *text)
{
        char path[256];
        FILE *f;

        snprintf(path, sizeof path, "%s/%s", F.root, rel);
        f = fopen(path, "w");
        assert(f && fputs(text, f) >= 0 && fclose(f) == 0);
}

static json_t *no_requests(void *userdata, const struct proto_request *req, int fd, const struct ucred *peer,
                           char **ret_err)
{
        if (fd >= 0)
                close(fd);
        *ret_err = strdup("only subscribe here");
        return NULL;
}

static void cleanup(void)
{
        F.ctl = ctl_server_free(F.ctl);
        F.subs = subscribe_free(F.subs);
        F.runs = runs_free(F.runs);
        F.sm = sampler_free(F.sm);
        F.e = sd_event_unref(F.e);
        if (F.root[0]) {
                char cmd[128];
                snprintf(cmd, sizeof cmd, "rm -rf '%s'", F.root);
                if (system(cmd) != 0)
                        fprintf(stderr, "cannot remove %s\n", F.root);
        }
}

/* A 4-CPU, one-node machine with /proc/stat only; everything else is
 * unavailable, which the replies must say. */
static void setup(void)
{
        struct sampler_config cfg = { .mount_tracefs = false };
        char sys[96], proc[96], *err = NULL;

        snprintf(F.root, sizeof F.root, "/tmp/fuzz-subscribe.XXXXXX");
        assert(mkdtemp(F.root));
        snprintf(sys, sizeof sys, "%s/sys", F.root);
        snprintf(proc, sizeof proc, "%s/proc", F.root);
        assert(mkdir(sys, 0755) == 0 && mkdir(proc, 0755) == 0);
        snprintf(sys, sizeof sys, "%s/sys/devices", F.root);
        assert(mkdir(sys, 0755) == 0);
        snprintf(sys, sizeof sys, "%s/sys/devices/system", F.root);
        assert(mkdir(sys, 0755) == 0);
        snprintf(sys, sizeof sys, "%s/sys/devices/system/cpu", F.root);
        assert(mkdir(sys, 0755) == 0);
        put("sys/devices/system/cpu/possible", "0-3\n");
        put("sys/devices/system/cpu/online", "0-3\n");
        put("proc/stat", "cpu  4 0 4 40 0 0 0 0 0 0\ncpu0 1 0 1 10 0 0 0 0 0 0\ncpu1 1 0 1 10 0 0 0 0 0 0\n"
                         "cpu2 1 0 1 10 0 0 0 0 0 0\ncpu3 1 0 1 10 0 0 0 0 0 0\nintr 1\n");
        snprintf(sys, sizeof sys, "%s/sys", F.root);
        cfg.sysroot = sys;
        cfg.procroot = proc;
        for (int m = 0; m < _M_MAX; m++)
                cfg.enabled[m] = metric_table[m].source == SRC_PROCSTAT;
        assert(sampler_new(&cfg, &F.sm, &err) == 0);
        F.interval_ns = 1000000000;
        snprintf(F.sock, sizeof F.sock, "%s/control.sock", F.root);
        assert(sd_event_new(&F.e) >= 0);
        assert(ctl_server_new(F.e, F.sock, no_requests, NULL, &F.ctl, &err) == 0);
        assert(subscribe_new(F.ctl, F.sm, &F.interval_ns, &F.subs) == 0);
        assert(runs_new(&F.runs) == 0);
        atexit(cleanup);
}

/* Run the daemon's loop until nothing is pending. */
static void spin(void)
{
        for (int i = 0; i < 64 && sd_event_run(F.e, 0) > 0; i++)
                ;
}

/* Read what the daemon sent on fd, without waiting. */
static size_t drain(int fd, char *buf, size_t cap, size_t len)
{
        for (;;) {
                ssize_t k;
                spin();
                if (len >= cap - 1)
                        break;
                k = recv(fd, buf + len, cap - 1 - len, MSG_DONTWAIT);
                if (k <= 0)
                        break;
                len += (size_t)k;
        }
        buf[len] = 0;
        return len;
}

/* Every complete line is an object: {"ok": false, "error": "..."}, or
 * {"ok": true, "subscribed": {..."metrics": [...]}}, or a tick.  Returns
 * whether a subscription was made and whether a tick came. */
static void check_lines(const char *buf, size_t len, bool *subscribed, bool *ticked)
{
        const char *p = buf, *end = buf + len;

        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                json_error_t jerr;
                json_t *o, *x;

                if (!nl)
                        break;          /* cut by the buffer's end */
                o = json_loadb(p, (size_t)(nl - p), 0, &jerr);
                assert(json_is_object(o));
                if ((x = json_object_get(o, "tick"))) {
                        assert(json_is_object(x) && json_is_object(json_object_get(o, "values")));
                        *ticked = true;
                } else if (json_is_true(json_object_get(o, "ok"))) {
                        x = json_object_get(o, "subscribed");
                        assert(json_is_object(x) && json_is_array(json_object_get(x, "metrics")));
                        assert(json_integer_value(json_object_get(x, "cpus")) == 4);
                        *subscribed = true;
                } else {
                        x = json_object_get(o, "error");
                        assert(json_is_false(json_object_get(o, "ok")) && json_is_string(x) &&
                               json_string_length(x) > 0 && !memchr(json_string_value(x), '\n', json_string_length(x)));
                }
                json_decref(o);
                p = nl + 1;
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        static char buf[1 << 20];
        struct tick t = { 0 };
        bool subscribed = false, ticked = false;
        size_t len = 0, sent = 0;
        int fd, rounds = 0;

        if (!F.e)
                setup();
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert(fd >= 0);
        memcpy(sa.sun_path, F.sock, strlen(F.sock) + 1);
        assert(connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0);
        spin();
        while (sent < size && rounds++ < 100000) {
                ssize_t k = send(fd, data + sent, size - sent, MSG_DONTWAIT | MSG_NOSIGNAL);
                if (k <= 0 && errno != EAGAIN)
                        break;          /* the daemon closed it (a line too long) */
                if (k > 0)
                        sent += (size_t)k;
                len = drain(fd, buf, sizeof buf, len);
        }
        len = drain(fd, buf, sizeof buf, len);
        check_lines(buf, len, &subscribed, &ticked);
        if (subscribed) {
                assert(sampler_sample(F.sm, &t) >= 0);
                subscribe_tick(F.subs, &t, F.runs);
                len = drain(fd, buf, sizeof buf, len);
                subscribed = false;
                check_lines(buf, len, &subscribed, &ticked);
                assert(ticked || len >= sizeof buf - 1);
        }
        tick_clear(&t);
        close(fd);
        spin();
        return 0;
}
