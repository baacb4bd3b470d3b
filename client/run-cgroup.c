/* run-cgroup.c - `run exec` puts its command in the run's own cgroup.
 *
 * scalemond makes the cgroup v2 directory at run-start (daemon/owncg.c)
 * and replies with its path ("cgroup"), or with why it could not
 * ("cgroup_why").  The client opens the directory's cgroup.procs before
 * forking, and the child writes itself into it before exec, so every
 * task of the command, from its first instruction, is in the cgroup and
 * scalemonctl itself is not.  A failure costs the run its own counters,
 * said once on stderr; the command runs all the same.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <stdlib.h>
#include <systemd/sd-bus.h>

#include "cli.h"
#include "macro.h"
#include "run-cgroup.h"

int run_cgroup_enter_fd(const char *run, json_t *reply)
{
        json_t *r = json_object_get(reply, "run");
        const char *dir = json_string_value(json_object_get(r, "cgroup"));
        const char *why = json_string_value(json_object_get(r, "cgroup_why"));
        char path[PATH_MAX];
        int fd;

        if (!dir) {
                fprintf(stderr, "scalemonctl: run %s: its own counters are unavailable: %s\n", run,
                        why ? why : "scalemond made no cgroup for it (a scalemond older than this scalemonctl)");
                return -1;
        }
        snprintf(path, sizeof path, "%s/cgroup.procs", dir);
        fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                fprintf(stderr, "scalemonctl: run %s: its own counters are unavailable: cannot open %s: %s\n", run, path,
                        strerror(errno));
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
