/* fault.c - faults injected for tests: a fake, named as one.
 *
 * Two failures of perf counters cannot be caused for real on a test
 * machine: a read() of a counter group that returns an error, and a
 * tracepoint that goes away while it is counted (the kernel pins a module
 * while its tracepoints are in use, so rmmod refuses).  The sampler's
 * handling of both is tested by pretending.  When the environment variable
 * SCALEMON_TEST_FAULTS names a file, it is re-read at each tick whose
 * modification time changed, and its lines say what fails:
 *
 *      read-error CPU [sw|hw]  every read() of that CPU's group fails (EIO)
 *      vanish METRIC           opening METRIC's event fails with ENOENT,
 *                              as for a tracepoint id that no longer exists
 *
 * Without the variable, fault_refresh() returns at once and nothing fails.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "fault.h"
#include "macro.h"
#include "metric.h"

#define FAULT_MAX_CPUS 4096

static struct {
        bool looked;
        const char *path;
        struct timespec mtime;
        bool read_error[2][FAULT_MAX_CPUS];     /* [0] sw, [1] hw */
        bool vanish[_M_MAX];
} fault;

static void fault_parse(FILE *f)
{
        char line[256];

        memset(fault.read_error, 0, sizeof fault.read_error);
        memset(fault.vanish, 0, sizeof fault.vanish);
        while (fgets(line, sizeof line, f)) {
                char what[32] = "", arg[128] = "", grp[8] = "sw";
                int n = sscanf(line, "%31s %127s %7s", what, arg, grp);
                if (n >= 2 && streq(what, "read-error")) {
                        int cpu = atoi(arg);
                        if (cpu >= 0 && cpu < FAULT_MAX_CPUS)
                                fault.read_error[streq(grp, "hw")][cpu] = true;
                } else if (n >= 2 && streq(what, "vanish")) {
                        int m = metric_id_by_name(arg);
                        if (m >= 0)
                                fault.vanish[m] = true;
                }
        }
}

void fault_refresh(void)
{
        struct stat st;
        FILE *f;

        if (!fault.looked) {
                fault.path = getenv(FAULT_ENV);
                fault.looked = true;
        }
        if (!fault.path)
                return;
        if (stat(fault.path, &st) < 0) {
                memset(fault.read_error, 0, sizeof fault.read_error);
                memset(fault.vanish, 0, sizeof fault.vanish);
                fault.mtime = (struct timespec){ 0 };
                return;
        }
        if (st.st_mtim.tv_sec == fault.mtime.tv_sec && st.st_mtim.tv_nsec == fault.mtime.tv_nsec)
                return;
        fault.mtime = st.st_mtim;
        f = fopen(fault.path, "re");
        if (!f)
                return;
        fault_parse(f);
        fclose(f);
}

bool fault_read_error(int cpu, const char *grp)
{
        return fault.path && cpu >= 0 && cpu < FAULT_MAX_CPUS && fault.read_error[streq(grp, "hw")][cpu];
}

bool fault_vanished(int metric)
{
        return fault.path && metric >= 0 && metric < _M_MAX && fault.vanish[metric];
}
