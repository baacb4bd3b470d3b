/* owncg.c - a run's own counters.
 *
 * `scalemonctl run exec` asks for a cgroup v2 directory of its own, which
 * this module makes under the cgroup2 mount (<mount>/scalemon/<run>) and
 * removes at the run's end; `run start --cgroup PATH` names one that
 * exists.  While the run is open, scalemond counts for the tasks in it:
 *  - perf events in cgroup mode (PERF_FLAG_PID_CGROUP, the directory's fd
 *    as pid), one per CPU online at the start and per cpu-scope perf
 *    metric of the sampler (context switches, migrations, faults, lock
 *    contentions), opened through perf.c.  The kernel switches them on and
 *    off as the cgroup's tasks are switched in and out (the cgroup's
 *    perf_cgroup time), so they count only those tasks' events and cost
 *    nothing when none of them runs;
 *  - the directory's own files: cpu.stat (user_usec, system_usec), the
 *    pressure files (cpu/memory/io.pressure: the run's tasks' stalls),
 *    and memory.stat's THP and fault counters (pgfault, pgmajfault: the
 *    run's faults with no event on the fault path) where the memory
 *    controller is on cgroup v2 (on a hybrid hierarchy it is on v1, and
 *    they are missing).
 * The events exist only while such a run is open.  Totals, at the run's
 * stop, are rows of level LEVEL_CGROUP (schema 0007) beside the machine's.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpumap.h"
#include "macro.h"
#include "metric.h"
#include "owncg.h"
#include "perf.h"
#include "procfs.h"

static const int perf_metrics[] = { M_CONTEXT_SWITCHES, M_CPU_MIGRATIONS, M_PAGE_FAULTS, M_PAGE_FAULTS_MINOR,
                                    M_PAGE_FAULTS_MAJOR, M_LOCK_CONTENTIONS, M_VOLUNTARY_SWITCHES,
                                    M_INVOLUNTARY_SWITCHES };
#define NPERF (sizeof perf_metrics / sizeof perf_metrics[0])

/* The directory's files: a key of a "key value" file, or the some/full
 * total of a pressure file (key NULL, field 0/1). */
static const struct file_counter {
        const char *file, *key;
        int field;
        int metric;
        double scale;                   /* to the catalogue unit */
} file_counters[] = {
        { "cpu.stat", "user_usec", 0, M_CPU_USER, 1e-6 },
        { "cpu.stat", "system_usec", 0, M_CPU_SYSTEM, 1e-6 },
        { "cpu.pressure", NULL, 0, M_PSI_CPU_SOME, 1 },
        { "memory.pressure", NULL, 0, M_PSI_MEMORY_SOME, 1 },
        { "memory.pressure", NULL, 1, M_PSI_MEMORY_FULL, 1 },
        { "io.pressure", NULL, 0, M_PSI_IO_SOME, 1 },
        { "io.pressure", NULL, 1, M_PSI_IO_FULL, 1 },
        { "memory.stat", "thp_fault_alloc", 0, M_THP_FAULT_ALLOC, 1 },
        { "memory.stat", "thp_collapse_alloc", 0, M_THP_COLLAPSE_ALLOC, 1 },
        { "memory.stat", "pgfault", 0, M_PGFAULT, 1 },
        { "memory.stat", "pgmajfault", 0, M_PGMAJFAULT, 1 },
};
#define NFILE (sizeof file_counters / sizeof file_counters[0])

struct owncg {
        char *path;
        bool remove;
        int dirfd;
        int events_fd;                  /* cgroup.events, kept open (owncg_state()); -1 if none */
        int ncpus;
        int *fd;                        /* [NPERF * ncpus], -1 where not open */
        bool perf_ok[NPERF];
        uint64_t start[NFILE];
        bool have[NFILE];
        uint64_t perf_prev[NPERF], file_prev[NFILE];    /* at the last tick (owncg_sample) */
};

static char *errf(const char *fmt, ...) _printf_(1, 2);
static char *errf(const char *fmt, ...)
{
        va_list ap;
        char *s = NULL;

        va_start(ap, fmt);
        if (vasprintf(&s, fmt, ap) < 0)
                s = NULL;
        va_end(ap);
        return s;
}

/* The cgroup2 mount point, from mountinfo: "... MOUNTPOINT ... - cgroup2 ...". */
static int cgroup2_mount(const char *procroot, char **ret)
{
        char path[PATH_MAX], line[4096];
        FILE *f;
        int r = -ENOENT;

        snprintf(path, sizeof path, "%s/self/mountinfo", procroot);
        f = fopen(path, "re");
        if (!f)
                return negative_errno();
        while (fgets(line, sizeof line, f)) {
                char mnt[PATH_MAX], *sep = strstr(line, " - ");
                if (!sep || strncmp(sep + 3, "cgroup2 ", 8) != 0)
                        continue;
                if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1)
                        continue;
                *ret = strdup(mnt);
                r = *ret ? 0 : -ENOMEM;
                break;
        }
        fclose(f);
        return r;
}

int owncg_create(const char *procroot, const char *name, char **ret_path, char **ret_err)
{
        _cleanup_free_ char *mnt = NULL;
        char dir[PATH_MAX];
        int r;

        r = cgroup2_mount(procroot, &mnt);
        if (r < 0) {
                *ret_err = errf("no cgroup2 mount in %s/self/mountinfo%s", procroot,
                                r == -ENOENT ? " (cgroup v1 only: mount cgroup2, e.g. at /sys/fs/cgroup/unified)" : "");
                return r;
        }
        snprintf(dir, sizeof dir, "%s/scalemon", mnt);
        if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
                r = negative_errno();
                *ret_err = errf("cannot create cgroup %s: %s", dir, strerror(-r));
                return r;
        }
        if (snprintf(dir, sizeof dir, "%s/scalemon/%s", mnt, name) >= (int)sizeof dir)
                return -ENAMETOOLONG;
        (void)rmdir(dir);               /* left by a daemon that died: empty, or kept */
        if (mkdir(dir, 0755) < 0) {
                r = negative_errno();
                *ret_err = errf("cannot create cgroup %s: %s", dir, strerror(-r));
                return r;
        }
        *ret_path = strdup(dir);
        return *ret_path ? 0 : -ENOMEM;
}

int owncg_resolve(const char *procroot, const char *path, char **ret_path, char **ret_err)
{
        _cleanup_free_ char *mnt = NULL, *joined = NULL;
        char real[PATH_MAX], realmnt[PATH_MAX];
        size_t n;
        int r;

        r = cgroup2_mount(procroot, &mnt);
        if (r < 0) {
                *ret_err = errf("--cgroup %s: no cgroup2 mount in %s/self/mountinfo", path, procroot);
                return r;
        }
        if (path[0] != '/' && asprintf(&joined, "%s/%s", mnt, path) < 0)
                return -ENOMEM;
        if (!realpath(joined ? joined : path, real) || !realpath(mnt, realmnt)) {
                r = negative_errno();
                *ret_err = errf("--cgroup %s: %s", joined ? joined : path, strerror(-r));
                return r;
        }
        n = strlen(realmnt);
        if (strncmp(real, realmnt, n) != 0 || (real[n] != '/' && real[n] != 0)) {
                *ret_err = errf("--cgroup %s: not a directory of the cgroup2 mount %s", path, mnt);
                return -EINVAL;
        }
        *ret_path = strdup(real);
        return *ret_path ? 0 : -ENOMEM;
}

/* Read one of the directory's files into buf (NUL-terminated). */
static int read_at(int dirfd, const char *name, char *buf, size_t size, size_t *ret_len)
{
        _cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return negative_errno();
        n = read(fd, buf, size - 1);
        if (n < 0)
                return negative_errno();
        buf[n] = 0;
        *ret_len = (size_t)n;
        return 0;
}

/* The directory's file counters now: vals[i], have[i]. */
static void read_files(int dirfd, uint64_t *vals, bool *have)
{
        char buf[8192];
        const char *cur = NULL;
        size_t len = 0;
        int r = -1;

        for (size_t i = 0; i < NFILE; i++) {
                const struct file_counter *fc = &file_counters[i];
                have[i] = false;
                if (!cur || !streq(cur, fc->file)) {
                        cur = fc->file;
                        r = read_at(dirfd, fc->file, buf, sizeof buf, &len);
                }
                if (r < 0)
                        continue;
                if (fc->key) {
                        /* cpu.stat and memory.stat are "key value" lines */
                        const char *keys[1] = { fc->key };
                        if (kv_parse(buf, len, keys, 1, &vals[i], &have[i]) < 0)
                                have[i] = false;
                } else {
                        uint64_t tot[2];
                        bool found[2];
                        if (psi_parse(buf, len, tot, found) == 0 && found[fc->field]) {
                                vals[i] = tot[fc->field];
                                have[i] = true;
                        }
                }
        }
}

int owncg_open(const char *path, bool remove, const struct sampler *sm, struct owncg **ret, char **ret_notes,
               char **ret_err)
{
        const struct cpumap *map = sampler_cpumap(sm);
        struct owncg *oc = calloc(1, sizeof *oc);
        char notes[1024] = "";
        size_t nl = 0;

        if (!oc)
                return -ENOMEM;
        oc->dirfd = oc->events_fd = -1;
        oc->remove = remove;
        oc->ncpus = map->ncpus;
        oc->path = strdup(path);
        oc->fd = malloc(NPERF * (size_t)map->ncpus * sizeof *oc->fd);
        if (!oc->path || !oc->fd) {
                owncg_free(oc);
                return -ENOMEM;
        }
        for (size_t i = 0; i < NPERF * (size_t)map->ncpus; i++)
                oc->fd[i] = -1;
        oc->dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (oc->dirfd < 0) {
                int r = negative_errno();
                *ret_err = errf("cannot open cgroup %s: %s", path, strerror(-r));
                oc->remove = false;
                owncg_free(oc);
                return r;
        }
        oc->events_fd = openat(oc->dirfd, "cgroup.events", O_RDONLY | O_CLOEXEC);
        for (size_t k = 0; k < NPERF; k++) {
                int m = perf_metrics[k];
                struct perf_event_attr attr = { .disabled = 0 };
                uint64_t tp;
                int err = 0;

                if (!sampler_available(sm, m))
                        continue;       /* the machine's is not counted either */
                if (metric_table[m].source == SRC_TRACEPOINT) {
                        if (sampler_tracepoint(sm, m, &tp) < 0)
                                continue;
                        attr.type = PERF_TYPE_TRACEPOINT;
                        attr.config = tp;
                } else {
                        attr.type = metric_table[m].source == SRC_PERF_HW ? PERF_TYPE_HARDWARE : PERF_TYPE_SOFTWARE;
                        attr.config = metric_table[m].perf_config;
                }
                for (int c = 0; c < map->ncpus && err >= 0; c++) {
                        if (!map->online[c])
                                continue;
                        err = perf_open_cgroup(&attr, oc->dirfd, c);
                        if (err >= 0)
                                oc->fd[k * (size_t)map->ncpus + (size_t)c] = err;
                        /* a filtered tracepoint (the switches' prev_state) */
                        if (err >= 0 && metric_table[m].filter)
                                err = perf_set_filter(err, metric_table[m].filter);
                }
                oc->perf_ok[k] = err >= 0;
                if (err < 0) {
                        char why[256];
                        for (int c = 0; c < map->ncpus; c++) {
                                int *fd = &oc->fd[k * (size_t)map->ncpus + (size_t)c];
                                if (*fd >= 0)
                                        close(*fd);
                                *fd = -1;
                        }
                        perf_why(err, why, sizeof why);
                        strbuf_appendf(notes, sizeof notes, &nl, "%s%s: %s", nl ? "; " : "", metric_table[m].name, why);
                }
        }
        read_files(oc->dirfd, oc->start, oc->have);
        memcpy(oc->file_prev, oc->start, sizeof oc->file_prev);
        if (!oc->have[NFILE - 1] && faccessat(oc->dirfd, "memory.stat", F_OK, 0) < 0)
                strbuf_appendf(notes, sizeof notes, &nl, "%sno memory.stat in %s (the memory controller is not on cgroup v2 "
                               "here: THP and fault counters of the run's own are not counted)", nl ? "; " : "", path);
        if (!oc->have[2])
                strbuf_appendf(notes, sizeof notes, &nl, "%sno cpu.pressure in %s (PSI off)", nl ? "; " : "", path);
        if (notes[0] && ret_notes)
                *ret_notes = strdup(notes);
        *ret = oc;
        return 0;
}

/* The count of perf metric k since owncg_open(), over the CPUs. */
static uint64_t perf_sum(struct owncg *oc, size_t k)
{
        uint64_t sum = 0, v;

        for (int c = 0; c < oc->ncpus; c++) {
                int fd = oc->fd[k * (size_t)oc->ncpus + (size_t)c];
                if (fd >= 0 && read(fd, &v, sizeof v) == (ssize_t)sizeof v)
                        sum += v;
        }
        return sum;
}

static int add_own(struct tick *t, int64_t run, int metric, double value)
{
        if (value == 0)
                return 0;
        if (t->nown == t->capown) {
                size_t cap = t->capown ? t->capown * 2 : 16;
                struct own_value *p = realloc(t->own, cap * sizeof *p);
                if (!p)
                        return -ENOMEM;
                t->own = p;
                t->capown = cap;
        }
        t->own[t->nown++] = (struct own_value){ .run = run, .metric = (uint16_t)metric, .value = value };
        return 0;
}

int owncg_sample(struct owncg *oc, int64_t run, struct tick *t)
{
        uint64_t now[NFILE];
        bool have[NFILE];
        int r;

        for (size_t k = 0; k < NPERF; k++) {
                uint64_t sum;
                if (!oc->perf_ok[k])
                        continue;
                sum = perf_sum(oc, k);
                r = add_own(t, run, perf_metrics[k], sum >= oc->perf_prev[k] ? (double)(sum - oc->perf_prev[k]) : 0);
                if (r < 0)
                        return r;
                oc->perf_prev[k] = sum;
        }
        read_files(oc->dirfd, now, have);
        for (size_t i = 0; i < NFILE; i++) {
                if (!oc->have[i] || !have[i])
                        continue;
                r = add_own(t, run, file_counters[i].metric,
                            now[i] >= oc->file_prev[i] ? (double)(now[i] - oc->file_prev[i]) * file_counters[i].scale : 0);
                if (r < 0)
                        return r;
                oc->file_prev[i] = now[i];
        }
        return 0;
}

int owncg_totals(struct owncg *oc, struct store_total **rows, size_t *n)
{
        uint64_t now[NFILE];
        bool have[NFILE];
        struct store_total *t = realloc(*rows, (*n + NPERF + NFILE) * sizeof *t);

        if (!t)
                return -ENOMEM;
        *rows = t;
        for (size_t k = 0; k < NPERF; k++) {
                uint64_t sum;
                if (!oc->perf_ok[k])
                        continue;
                sum = perf_sum(oc, k);
                t[*n] = (struct store_total){ .level = LEVEL_CGROUP, .loc = 0, .value = (double)sum };
                snprintf(t[*n].metric, sizeof t[*n].metric, "%s", metric_table[perf_metrics[k]].name);
                (*n)++;
        }
        read_files(oc->dirfd, now, have);
        for (size_t i = 0; i < NFILE; i++) {
                const struct file_counter *fc = &file_counters[i];
                if (!oc->have[i] || !have[i])
                        continue;
                t[*n] = (struct store_total){ .level = LEVEL_CGROUP, .loc = 0,
                                              .value = (double)(now[i] >= oc->start[i] ? now[i] - oc->start[i] : 0) *
                                                       fc->scale };
                snprintf(t[*n].metric, sizeof t[*n].metric, "%s", metric_table[fc->metric].name);
                (*n)++;
        }
        return 0;
}

enum owncg_state owncg_state(const struct owncg *oc)
{
        char buf[256];
        ssize_t k;

        if (oc->events_fd < 0)
                return OWNCG_RUNNING;
        k = pread(oc->events_fd, buf, sizeof buf - 1, 0);
        if (k < 0)              /* ENODEV: the directory was removed */
                return OWNCG_REMOVED;
        buf[k] = 0;
        return strstr(buf, "frozen 1\n") ? OWNCG_FROZEN : OWNCG_RUNNING;
}

const char *owncg_path(const struct owncg *oc)
{
        return oc->path;
}

int owncg_free(struct owncg *oc)
{
        int r = 0;

        if (!oc)
                return 0;
        for (size_t i = 0; oc->fd && i < NPERF * (size_t)oc->ncpus; i++)
                if (oc->fd[i] >= 0)
                        close(oc->fd[i]);
        if (oc->dirfd >= 0)
                close(oc->dirfd);
        if (oc->events_fd >= 0)
                close(oc->events_fd);
        if (oc->remove && oc->path && rmdir(oc->path) < 0)
                r = negative_errno();
        free(oc->fd);
        free(oc->path);
        free(oc);
        return r;
}
