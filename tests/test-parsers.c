/* test-parsers.c - the daemon's readers of kernel text, on fixture files
 * (copies of this machine's files, and malformed ones). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "cpumap.h"
#include "procfs.h"
#include "tap.h"

static void test_cpulist(void)
{
        bool set[16];

        ok(cpulist_parse("0-3,8,10-11\n", set, 16) == 0 && set[0] && set[3] && !set[4] && set[8] && !set[9] &&
           set[10] && set[11] && !set[12], "cpulist 0-3,8,10-11");
        ok(cpulist_parse("0\n", set, 16) == 0 && set[0] && !set[1], "cpulist single CPU");
        ok(cpulist_parse("", set, 16) == 0 && !set[0], "empty cpulist (a node without CPUs)");
        ok(cpulist_parse("\n", set, 16) == 0 && !set[0], "newline-only cpulist");
        is_int(cpulist_parse("0-16", set, 16), -ERANGE, "CPU beyond the map refused");
        is_int(cpulist_parse("3-1", set, 16), -EINVAL, "backwards range refused");
        is_int(cpulist_parse("0-", set, 16), -EINVAL, "open range refused");
        is_int(cpulist_parse("0,,2", set, 16), -EINVAL, "double comma refused");
        is_int(cpulist_parse("a", set, 16), -EINVAL, "letters refused");
        is_int(cpulist_parse("1,", set, 16), -EINVAL, "trailing comma refused");
        is_int(cpulist_parse("1 2", set, 16), -EINVAL, "space refused");
        is_int(cpulist_parse("99999999999999999999999", set, 16), -ERANGE, "huge number refused");
}

static void test_cpumap(void)
{
        const char *srcdir = getenv("srcdir");
        char root[1024];
        struct cpumap m;
        int r;

        snprintf(root, sizeof root, "%s/tests/fixtures/sys-numa", srcdir ? srcdir : ".");
        r = cpumap_read(root, &m);
        is_int(r, 0, "cpumap of a two-node fixture");
        if (r == 0) {
                is_int(m.ncpus, 8, "8 possible CPUs");
                is_int(cpumap_online_count(&m), 7, "7 online (cpu6 offline)");
                ok(!m.online[6] && m.online[7], "cpu6 offline, cpu7 online");
                is_int(m.nnodes, 3, "node numbers up to 2");
                ok(m.has_node[0] && !m.has_node[1] && m.has_node[2], "nodes 0 and 2 exist, 1 does not");
                ok(m.node[0] == 0 && m.node[3] == 0 && m.node[4] == 2 && m.node[7] == 2, "cpu to node map");
                cpumap_clear(&m);
        }
        snprintf(root, sizeof root, "%s/tests/fixtures/sys-nonuma", srcdir ? srcdir : ".");
        r = cpumap_read(root, &m);
        ok(r == 0 && m.nnodes == 1 && m.has_node[0] && m.node[3] == 0, "no node directory: all CPUs on node 0");
        if (r == 0)
                cpumap_clear(&m);
        snprintf(root, sizeof root, "%s/tests/fixtures/sys-badlist", srcdir ? srcdir : ".");
        is_int(cpumap_read(root, &m), -EINVAL, "malformed online list refused");
        is_int(cpumap_read("/nonexistent", &m), -ENOENT, "missing sysfs reported");
}

static int procstat(const char *name, int ncpus, uint64_t (*vals)[PROCSTAT_FIELDS], bool *present)
{
        size_t len;
        char *buf = fixture(name, &len);
        int r = procstat_parse(buf, len, ncpus, vals, present);
        free(buf);
        return r;
}

static void test_procstat(void)
{
        uint64_t v[4][PROCSTAT_FIELDS];
        bool present[4];
        int r;

        r = procstat("procstat-2cpu.txt", 2, v, present);
        is_int(r, 2, "this machine's /proc/stat: 2 cpu lines");
        ok(present[0] && present[1], "both CPUs present");
        {
                /* the aggregate line is the sum of the cpuN lines: an
                 * independent check of every column we parsed */
                size_t len;
                char *buf = fixture("procstat-2cpu.txt", &len);
                unsigned long long agg[PROCSTAT_FIELDS] = { 0 };
                int k = sscanf(buf, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &agg[0], &agg[1],
                               &agg[2], &agg[3], &agg[4], &agg[5], &agg[6], &agg[7], &agg[8], &agg[9]);
                bool sum_ok = k == PROCSTAT_FIELDS;
                /* the kernel rounds each line from nanoseconds on its
                 * own: allow one tick per CPU */
                for (int f = 0; f < PROCSTAT_FIELDS && sum_ok; f++)
                        sum_ok = llabs((long long)(v[0][f] + v[1][f]) - (long long)agg[f]) <= 2;
                ok(sum_ok, "per-CPU columns add up to the aggregate 'cpu' line (within rounding)");
                free(buf);
        }

        r = procstat("procstat-offline.txt", 4, v, present);
        is_int(r, 3, "offline CPU: 3 lines");
        ok(present[0] && present[1] && !present[2] && present[3], "cpu2 has no line");
        ok(v[3][0] == 1080 && v[3][3] == 415929 && v[3][6] == 21, "cpu3 values");

        r = procstat("procstat-old-kernel.txt", 2, v, present);
        ok(r == 2 && v[1][7] == 9 && v[1][8] == 0 && v[1][9] == 0, "8-column kernel: guest columns read as 0");

        is_int(procstat("procstat-bad-number.txt", 2, v, present), -EINVAL, "letters in a column refused");
        is_int(procstat("procstat-short-line.txt", 2, v, present), -EINVAL, "3-column cpu line refused");
        is_int(procstat("procstat-cpu-out-of-range.txt", 2, v, present), -ERANGE, "cpu7 on a 2-CPU map refused");
        is_int(procstat("procstat-overflow.txt", 2, v, present), -ERANGE, "64-bit overflow refused");
        is_int(procstat("procstat-bad-cpu.txt", 2, v, present), -EINVAL, "cpu0x refused");
}

static int kv(const char *name, const char *const *keys, size_t n, uint64_t *vals, bool *found)
{
        size_t len;
        char *buf = fixture(name, &len);
        int r = kv_parse(buf, len, keys, n, vals, found);
        free(buf);
        return r;
}

static void test_vmstat(void)
{
        static const char *const keys[] = { "thp_fault_alloc", "thp_split_pmd", "numa_hint_faults", "no_such_key" };
        static const char *const numa[] = { "numa_hit", "local_node", "other_node", "interleave_hit" };
        uint64_t v[4];
        bool f[4];
        size_t len;
        char *buf;
        unsigned long long want;
        const char *p;

        is_int(kv("vmstat.txt", keys, 4, v, f), 0, "this machine's /proc/vmstat parses");
        ok(f[0] && f[1] && !f[3], "THP keys found, unknown key not");
        buf = fixture("vmstat.txt", &len);
        p = strstr(buf, "\nthp_split_pmd ");
        ok(p && sscanf(p, "\nthp_split_pmd %llu", &want) == 1 && v[1] == want, "thp_split_pmd value matches the text");
        free(buf);

        is_int(kv("numastat-node0.txt", numa, 4, v, f), 0, "node0 numastat parses");
        buf = fixture("numastat-node0.txt", &len);
        p = strstr(buf, "local_node ");
        ok(f[0] && f[1] && f[2] && f[3] && p && sscanf(p, "local_node %llu", &want) == 1 && v[1] == want,
           "all numastat keys found, local_node matches the text");
        free(buf);

        is_int(kv("vmstat-missing-value.txt", keys, 4, v, f), -EINVAL, "key without value refused");
        is_int(kv("vmstat-negative.txt", keys, 4, v, f), -EINVAL, "negative value refused");
        is_int(kv("vmstat-two-values.txt", keys, 4, v, f), -EINVAL, "two values refused");
        ok(kv("vmstat-no-final-newline.txt", keys, 4, v, f) == 0 && f[0] && v[0] == 7, "no final newline is fine");
}

static void test_pressure(void)
{
        static const char psi[] = "some avg10=95.38 avg60=94.02 avg300=64.59 total=2086036384\n"
                                  "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
        static const char ss[] = "version 17\ntimestamp 4300000000\n"
                                 "cpu0 0 0 0 0 0 0 11 22 33\ndomain0 MC 03 1 2 3\n"
                                 "cpu1 0 0 0 0 0 0 44 55 66\ndomain0 MC 03 1 2 3\n";
        uint64_t tot[2], v[2];
        bool found[2], present[2];

        ok(psi_parse(psi, sizeof psi - 1, tot, found) == 0 && found[0] && found[1] && tot[0] == 2086036384ULL &&
           tot[1] == 0, "psi: some and full totals");
        ok(psi_parse("some avg10=0.00 avg60=0.00 avg300=0.00 total=7", 46, tot, found) == 0 && found[0] &&
           !found[1] && tot[0] == 7, "psi: some only, no newline");
        is_int(psi_parse("some avg10=0.00 total=x\n", 24, tot, found), -EINVAL, "psi: total not a number refused");
        is_int(psi_parse("half total=1\n", 13, tot, found), -EINVAL, "psi: unknown line refused");
        is_int(psi_parse("some avg10=0.00\n", 16, tot, found), -EINVAL, "psi: no total refused");
        is_int(schedstat_parse(ss, sizeof ss - 1, 2, SCHEDSTAT_RUN_DELAY, v, present), 2, "schedstat: 2 cpu lines");
        ok(present[0] && present[1] && v[0] == 22 && v[1] == 55, "schedstat: field 8 is run_delay");
        is_int(schedstat_parse("version 14\ncpu0 1 2 3 4 5 6 7 8 9 10 11 12\n", 44, 2, 8, v, present),
               -EPROTONOSUPPORT, "schedstat: version 14 refused");
        is_int(schedstat_parse("cpu0 1 2 3 4 5 6 7 8 9\n", 23, 2, 8, v, present), -EINVAL,
               "schedstat: no version line refused");
        is_int(schedstat_parse("version 15\ncpu0 1 2 3\n", 22, 2, 8, v, present), -EINVAL,
               "schedstat: short cpu line refused");
        is_int(schedstat_parse("version 15\ncpu5 1 2 3 4 5 6 7 8 9\n", 34, 2, 8, v, present), -ERANGE,
               "schedstat: CPU beyond the map refused");
}

int main(void)
{
        test_cpulist();
        test_cpumap();
        test_procstat();
        test_vmstat();
        test_pressure();
        return tap_done();
}
