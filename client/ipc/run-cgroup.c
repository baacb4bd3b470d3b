/* run-cgroup.c - `run exec` puts its command in the run's own cgroup.
 *
 * scalemond makes the cgroup v2 directory at run-start (daemon/sampler/owncg.c)
 * and replies with its path ("cgroup"), or with why it could not
 * ("cgroup_why").  The client opens the directory's cgroup.procs before
 * forking, and the child writes itself into it before exec, so every
 * task of the command, from its first instruction, is in the cgroup and
 * scalemonctl itself is not.  A failure costs the run its own counters,
 * said once on stderr; the command runs all the same.
 *
 * Where systemd runs (sd_booted()) and its bus answers, the run's cgroup
 * is a transient scope instead (run_scope_new): StartTransientUnit of
 * scalemon-run-NAME-PID.scope with a holder process as its one PID (a
 * child of scalemonctl that only waits for the end of a pipe), polled
 * until its start job is done; the holder's 0:: line in /proc/PID/cgroup
 * is the scope's directory, which run-start then names the way
 * `run start --cgroup PATH` does.  The command joins the scope as above;
 * the holder stays until the run is stopped (so that scalemond can read
 * the scope's cpu.stat at the end), then exits, and systemd removes the
 * empty scope.  Without systemd, or if the scope cannot be made (one
 * line says why), scalemond makes a plain directory as before.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>

#include "cli.h"
#include "macro.h"
#include "run-cgroup.h"
#include "timeutil.h"

int run_cgroup_enter_fd(const char *run, const struct proto_run_reply *reply, const char *scope_why)
{
        const char *dir = reply->cgroup, *why = reply->cgroup_why;
        char path[PATH_MAX], pre[512] = "";
        int fd;

        /* one line in any case: why no scope, and what came of the fallback */
        if (scope_why)
                snprintf(pre, sizeof pre, "no transient scope (%s), and ", scope_why);
        if (!dir) {
                fprintf(stderr, "scalemonctl: run %s: its own counters are unavailable: %s%s\n", run, pre,
                        why ? why : "scalemond made no cgroup for it (a scalemond older than this scalemonctl)");
                return -1;
        }
        snprintf(path, sizeof path, "%s/cgroup.procs", dir);
        fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                fprintf(stderr, "scalemonctl: run %s: its own counters are unavailable: %scannot open %s: %s\n", run, pre,
                        path, strerror(errno));
        else if (scope_why)
                fprintf(stderr, "scalemonctl: run %s: no transient scope (%s): counted in scalemond's cgroup %s instead\n",
                        run, scope_why, dir);
        return fd;
}

void run_cgroup_enter(const char *run, int fd)
{
        if (write(fd, "0\n", 2) != 2)
                fprintf(stderr, "scalemonctl: run %s: its own counters are unavailable: cannot move the command into "
                        "its cgroup: %s\n", run, strerror(errno));
        close(fd);
}

int run_cgroup_of_unit(const char *unit, char **ret)
{
        sd_bus *bus = NULL;
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        const char *obj;
        char *cg = NULL;
        int r;

        r = sd_bus_open_system(&bus);
        if (r < 0)
                return ctl_fail(EXIT_FAILED, "--unit %s: cannot reach systemd on the system bus: %s", unit, strerror(-r));
        r = sd_bus_call_method(bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                               "org.freedesktop.systemd1.Manager", "GetUnit", &e, &reply, "s", unit);
        if (r >= 0)
                r = sd_bus_message_read(reply, "o", &obj);
        if (r >= 0)
                r = sd_bus_get_property_string(bus, "org.freedesktop.systemd1", obj, "org.freedesktop.systemd1.Unit",
                                               "ControlGroup", &e, &cg);
        sd_bus_message_unref(reply);
        sd_bus_unref(bus);
        if (r < 0 || !cg || !*cg) {
                r = ctl_fail(EXIT_FAILED, "--unit %s: %s", unit,
                             sd_bus_error_is_set(&e) ? e.message : r < 0 ? strerror(-r) : "the unit has no cgroup (not running)");
                sd_bus_error_free(&e);
                free(cg);
                return r;
        }
        sd_bus_error_free(&e);
        *ret = cg;
        return 0;
}

/* ---- a transient systemd scope (run exec where systemd runs) ---- */

/* The system bus, or (as root, where no bus daemon runs) systemd's
 * private socket, which systemctl uses the same way. */
static int scope_bus(sd_bus **ret)
{
        sd_bus *bus = NULL;
        int r = sd_bus_open_system(&bus);

        if (r >= 0) {
                *ret = bus;
                return 0;
        }
        if (geteuid() != 0)
                return r;
        if (sd_bus_new(&bus) < 0)
                return r;
        if (sd_bus_set_address(bus, "unix:path=/run/systemd/private") < 0 || sd_bus_start(bus) < 0) {
                sd_bus_unref(bus);
                return r;
        }
        *ret = bus;
        return 0;
}

/* A unit name's characters: [A-Za-z0-9:_.-]; others as \xNN. */
static void scope_name(char *buf, size_t size, const char *run, pid_t pid)
{
        size_t n = (size_t)snprintf(buf, size, "scalemon-run-");
        for (const unsigned char *c = (const unsigned char *)run; *c && n + 8 < size; c++)
                n += (size_t)snprintf(buf + n, size - n,
                                      (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                                      *c == ':' || *c == '_' || *c == '.' || *c == '-' ? "%c" : "\\x%02x", *c);
        snprintf(buf + n, size - n, "-%ld.scope", (long)pid);
}

/* The holder's cgroup v2 path (the 0:: line), relative to the mount. */
static int scope_cgroup_of(pid_t pid, char **ret)
{
        char path[64], line[PATH_MAX + 8];
        _cleanup_fclose_ FILE *f = NULL;

        snprintf(path, sizeof path, "/proc/%ld/cgroup", (long)pid);
        f = fopen(path, "re");
        if (!f)
                return -errno;
        while (fgets(line, sizeof line, f))
                if (strncmp(line, "0::/", 4) == 0) {
                        line[strcspn(line, "\n")] = 0;
                        if (!line[4])
                                return -ENOENT;         /* the root: not a scope */
                        *ret = strdup(line + 4);
                        return *ret ? 0 : -ENOMEM;
                }
        return -ENOENT;
}

/* Start the scope and wait for its job (the job object exists until the
 * job is done: polled, which works on the private socket too, where
 * systemd sends no JobRemoved unless subscribed); then its state must be
 * "active".  On failure *ret_why says why (malloc'd). */
static int scope_start(sd_bus *bus, const char *unit, const char *run, pid_t holder, char **ret_why)
{
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *m = NULL, *reply = NULL;
        _cleanup_free_ char *job = NULL, *state = NULL, *desc = NULL;
        const char *j;
        int64_t deadline = now_monotonic_ns() + 10 * NSEC_PER_SEC;
        int r;

        if (asprintf(&desc, "scalemon run %s", run) < 0)
                return -ENOMEM;
        r = sd_bus_message_new_method_call(bus, &m, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                           "org.freedesktop.systemd1.Manager", "StartTransientUnit");
        if (r >= 0)
                r = sd_bus_message_append(m, "ss", unit, "fail");
        if (r >= 0)
                r = sd_bus_message_append(m, "a(sv)", 3, "PIDs", "au", 1, (uint32_t)holder, "Description", "s", desc,
                                          "CollectMode", "s", "inactive-or-failed");
        if (r >= 0)
                r = sd_bus_message_append(m, "a(sa(sv))", 0);
        if (r >= 0)
                r = sd_bus_call(bus, m, 10 * 1000000ULL, &e, &reply);
        if (r >= 0)
                r = sd_bus_message_read(reply, "o", &j);
        if (r >= 0 && !(job = strdup(j)))
                r = -ENOMEM;
        sd_bus_message_unref(m);
        sd_bus_message_unref(reply);
        if (r < 0) {
                if (asprintf(ret_why, "StartTransientUnit %s: %s", unit,
                             sd_bus_error_is_set(&e) ? e.message : strerror(-r)) < 0)
                        *ret_why = NULL;
                sd_bus_error_free(&e);
                return r;
        }
        for (;;) {
                char *s = NULL;
                r = sd_bus_get_property_string(bus, "org.freedesktop.systemd1", job, "org.freedesktop.systemd1.Job",
                                               "State", &e, &s);
                free(s);
                sd_bus_error_free(&e);
                if (r < 0)
                        break;                  /* the job is gone: done */
                if (now_monotonic_ns() > deadline) {
                        if (asprintf(ret_why, "%s: its start job did not finish in 10 s", unit) < 0)
                                *ret_why = NULL;
                        return -ETIMEDOUT;
                }
                usleep(2000);
        }
        {
                sd_bus_message *u = NULL;
                const char *o;
                _cleanup_free_ char *obj = NULL;
                r = sd_bus_call_method(bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                       "org.freedesktop.systemd1.Manager", "GetUnit", &e, &u, "s", unit);
                if (r >= 0)
                        r = sd_bus_message_read(u, "o", &o);
                if (r >= 0 && !(obj = strdup(o)))
                        r = -ENOMEM;
                sd_bus_message_unref(u);
                if (r >= 0)
                        r = sd_bus_get_property_string(bus, "org.freedesktop.systemd1", obj,
                                                       "org.freedesktop.systemd1.Unit", "ActiveState", &e, &state);
        }
        if (r < 0 || !streq(state, "active")) {
                if (asprintf(ret_why, "%s: %s", unit,
                             r < 0 ? (sd_bus_error_is_set(&e) ? e.message : strerror(-r)) : state) < 0)
                        *ret_why = NULL;
                sd_bus_error_free(&e);
                return r < 0 ? r : -EIO;
        }
        return 0;
}

int run_scope_new(const char *run, struct run_scope *s)
{
        sd_bus *bus = NULL;
        _cleanup_free_ char *why = NULL;
        char unit[256];
        int p[2], r;
        pid_t pid;

        *s = (struct run_scope){ .holder = -1, .hold_fd = -1 };
        if (sd_booted() <= 0)
                return 0;                       /* no systemd: scalemond's own directory */
        r = scope_bus(&bus);
        if (r < 0) {
                if (asprintf(&s->why, "systemd's bus: %s", strerror(-r)) < 0)
                        s->why = NULL;
                return r;
        }
        if (pipe2(p, O_CLOEXEC) < 0) {
                r = -errno;
                sd_bus_unref(bus);
                return r;
        }
        pid = fork();
        if (pid < 0) {
                r = -errno;
                close(p[0]);
                close(p[1]);
                sd_bus_unref(bus);
                return r;
        }
        if (pid == 0) {
                /* the holder: keeps the scope alive until the run is stopped */
                char c;
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                close(p[1]);
                while (read(p[0], &c, 1) != 0 && errno == EINTR)
                        ;
                _exit(0);
        }
        close(p[0]);
        s->holder = pid;
        s->hold_fd = p[1];
        scope_name(unit, sizeof unit, run, pid);
        r = scope_start(bus, unit, run, pid, &why);
        sd_bus_flush(bus);
        sd_bus_unref(bus);
        if (r >= 0 && (r = scope_cgroup_of(pid, &s->cgroup)) < 0 &&
            asprintf(&why, "cannot read the scope's cgroup from /proc/%ld/cgroup: %s", (long)pid, strerror(-r)) < 0)
                why = NULL;
        if (r < 0) {
                run_scope_release(s);
                s->why = why ? TAKE_PTR(why) : strdup(strerror(-r));
                return r;
        }
        if (!(s->unit = strdup(unit))) {
                run_scope_release(s);
                return -ENOMEM;
        }
        return 1;
}

void run_scope_release(struct run_scope *s)
{
        if (s->hold_fd >= 0)
                close(s->hold_fd);
        if (s->holder > 0)
                while (waitpid(s->holder, NULL, 0) < 0 && errno == EINTR)
                        ;
        free(s->cgroup);
        free(s->unit);
        free(s->why);
        *s = (struct run_scope){ .holder = -1, .hold_fd = -1 };
}
