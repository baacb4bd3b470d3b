/* context.c - what a run's numbers depend on besides the code under test:
 * kernel and command line, THP and NUMA balancing settings, the KVM
 * modules' parameters (ple_gap, ple_window, ...), CPUs online, nodes.
 * Recorded when a run starts, so that reports can say what differs
 * between the runs they compare.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "context.h"
#include "macro.h"

struct kvlist {
        struct store_kv *v;
        size_t n, cap;
};

static int add(struct kvlist *l, const char *key, const char *value)
{
        if (l->n == l->cap) {
                struct store_kv *p = realloc(l->v, (l->cap = l->cap ? l->cap * 2 : 32) * sizeof *p);
                if (!p)
                        return -ENOMEM;
                l->v = p;
        }
        l->v[l->n].key = strdup(key);
        l->v[l->n].value = strdup(value);
        l->n++;
        return l->v[l->n - 1].key && l->v[l->n - 1].value ? 0 : -ENOMEM;
}

/* First line of a small file, trimmed; NULL if unreadable. */
static char *read_value(const char *path)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        char buf[1024];
        ssize_t k;

        if (fd < 0)
                return NULL;
        k = read(fd, buf, sizeof buf - 1);
        if (k <= 0)
                return NULL;
        buf[k] = 0;
        buf[strcspn(buf, "\n")] = 0;
        for (char *p = buf; *p; p++)
                if ((unsigned char)*p < 0x20)
                        *p = ' ';
        return strdup(buf);
}

static int add_file(struct kvlist *l, const char *key, const char *path, bool bracketed)
{
        _cleanup_free_ char *v = read_value(path);
        char *b, *e;

        if (!v)
                return 0;
        /* "always [madvise] never": the choice in force is the bracketed one */
        if (bracketed && (b = strchr(v, '[')) && (e = strchr(b, ']'))) {
                *e = 0;
                return add(l, key, b + 1);
        }
        return add(l, key, v);
}

static int add_module_params(struct kvlist *l, const char *sysroot, const char *module)
{
        char dir[512];
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        int r = 0;

        snprintf(dir, sizeof dir, "%s/module/%s/parameters", sysroot, module);
        d = opendir(dir);
        if (!d)
                return 0;
        while ((de = readdir(d)) && r >= 0) {
                char path[1024], key[300];
                if (de->d_name[0] == '.')
                        continue;
                snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
                snprintf(key, sizeof key, "%s.%s", module, de->d_name);
                r = add_file(l, key, path, false);
        }
        return r;
}

static int cmp_kv(const void *a, const void *b)
{
        return strcmp(((const struct store_kv *)a)->key, ((const struct store_kv *)b)->key);
}

int context_capture(const char *sysroot, const char *procroot, const struct store_kv *extra, size_t nextra,
                    struct store_kv **ret, size_t *ret_n)
{
        static const char *const kvm_modules[] = { "kvm", "kvm_intel", "kvm_amd" };
        struct kvlist l = { 0 };
        struct utsname u;
        char path[512];
        int r = 0;

        if (uname(&u) == 0) {
                r = add(&l, "kernel", u.release);
                if (r >= 0)
                        r = add(&l, "kernel_version", u.version);
                if (r >= 0)
                        r = add(&l, "arch", u.machine);
        }
#define FILE_KEY(key, fmt, root, bracketed)                                     \
        do {                                                                    \
                if (r >= 0) {                                                   \
                        snprintf(path, sizeof path, fmt, root);                 \
                        r = add_file(&l, key, path, bracketed);                 \
                }                                                               \
        } while (0)
        FILE_KEY("cmdline", "%s/cmdline", procroot, false);
        FILE_KEY("thp_enabled", "%s/kernel/mm/transparent_hugepage/enabled", sysroot, true);
        FILE_KEY("thp_defrag", "%s/kernel/mm/transparent_hugepage/defrag", sysroot, true);
        FILE_KEY("numa_balancing", "%s/sys/kernel/numa_balancing", procroot, false);
        FILE_KEY("perf_event_paranoid", "%s/sys/kernel/perf_event_paranoid", procroot, false);
        FILE_KEY("sched_autogroup", "%s/sys/kernel/sched_autogroup_enabled", procroot, false);
        FILE_KEY("cpus_online", "%s/devices/system/cpu/online", sysroot, false);
        FILE_KEY("nodes_online", "%s/devices/system/node/online", sysroot, false);
        FILE_KEY("smt", "%s/devices/system/cpu/smt/control", sysroot, false);
        FILE_KEY("cpufreq_governor", "%s/devices/system/cpu/cpu0/cpufreq/scaling_governor", sysroot, false);
#undef FILE_KEY
        for (size_t i = 0; i < ELEMENTSOF(kvm_modules) && r >= 0; i++)
                r = add_module_params(&l, sysroot, kvm_modules[i]);
        for (size_t i = 0; i < nextra && r >= 0; i++)
                r = add(&l, extra[i].key, extra[i].value);
        if (r < 0) {
                context_free(l.v, l.n);
                return r;
        }
        qsort(l.v, l.n, sizeof *l.v, cmp_kv);
        *ret = l.v;
        *ret_n = l.n;
        return 0;
}

void context_free(struct store_kv *kv, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(kv[i].key);
                free(kv[i].value);
        }
        free(kv);
}
