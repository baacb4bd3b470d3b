/* test-parsers.c - the daemon's readers of kernel text, on fixture files
 * (copies of this machine's files, and malformed ones). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
        int r = procstat_parse(buf, len, ncpus, vals, present, NULL);
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

        {
                /* with bad[]: a malformed line loses only its CPU */
                static const char txt[] = "cpu  9 9 9 9\ncpu0 1 2 3 4 5\ncpu1 1 2 x3 4\ncpu2 1 2\ncpu9 1 2 3 4\n"
                                          "cpu3 10 20 30 40 50 60 70 80 90 100\nintr 1\n";
                bool bad[4];
                r = procstat_parse(txt, sizeof txt - 1, 4, v, present, bad);
                is_int(r, 2, "with bad[]: the 2 good lines parsed");
                ok(present[0] && !present[1] && !present[2] && present[3] && v[3][9] == 100 && v[0][4] == 5,
                   "cpu0 and cpu3 present with their values");
                ok(!bad[0] && bad[1] && bad[2] && !bad[3], "cpu1 (letters) and cpu2 (short) marked bad; cpu9 is no CPU");
        }
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

static int kvs(const char *name, const char *const *keys, size_t n, uint64_t *vals, bool *found, size_t *end)
{
        struct kvset k;
        size_t len;
        char *buf = fixture(name, &len);
        int r = kvset_init(&k, keys, n);

        if (r >= 0)
                r = kvset_parse(&k, buf, len, vals, found, end);
        free(buf);
        return r;
}

/* kvset_parse(): only the keys in use, the same values as kv_parse() */
static void test_kvset(void)
{
        static const char *const keys[] = { "thp_fault_alloc", "thp_split_pmd", "numa_hint_faults", "no_such_key" };
        static const char *const two[] = { "thp_fault_alloc", "thp_split_pmd" };
        const char *many[KVSET_MAX + 1];
        uint64_t v[4], w[4];
        bool f[4], g[4];
        struct kvset k;
        size_t len, end;
        char *buf;
        int r;

        for (size_t i = 0; i <= KVSET_MAX; i++)
                many[i] = "k";
        is_int(kvset_init(&k, many, KVSET_MAX + 1), -E2BIG, "kvset: more than KVSET_MAX keys refused");
        is_int(kvset_init(&k, (const char *const[]){ "a", "" }, 2), -EINVAL, "kvset: an empty key refused");

        is_int(kvs("vmstat.txt", keys, 4, v, f, &end), 3, "kvset: 3 of the 4 keys in this machine's /proc/vmstat");
        is_int(kv("vmstat.txt", keys, 4, w, g), 0, "kv_parse on the same file");
        ok(f[0] && f[1] && f[2] && !f[3] && v[0] == w[0] && v[1] == w[1] && v[2] == w[2],
           "kvset: the same keys and values as kv_parse");
        buf = fixture("vmstat.txt", &len);
        {
                const char *last = strstr(buf, "\nthp_split_pmd ");   /* the last of the three in the file */
                const char *eol = last ? strchr(last + 1, '\n') : NULL;
                ok(eol && end == (size_t)(eol + 1 - buf), "kvset: the end is just past the last wanted line");
        }
        free(buf);

        /* the scan stops once all are found: what follows is not read */
        {
                static const char txt[] = "nr_free_pages 12\nthp_split_pmd 5\nthp_fault_alloc 7\ngarbage line here\n";
                r = kvset_init(&k, two, 2);
                ok(r == 0 && kvset_parse(&k, txt, sizeof txt - 1, v, f, &end) == 2 && v[0] == 7 && v[1] == 5 &&
                   end == sizeof txt - 1 - strlen("garbage line here\n"),
                   "kvset: keys in another order found, the scan stops after the last");
        }
        {
                static const char txt[] = "bad line\nthp_split_pmdx 9\nthp_split 8\nthp_split_pmd 5\n";
                ok(kvset_init(&k, two, 2) == 0 && kvset_parse(&k, txt, sizeof txt - 1, v, f, &end) == 1 &&
                   !f[0] && f[1] && v[1] == 5, "kvset: other lines skipped unread, longer and shorter names not taken");
        }
        is_int(kvs("vmstat-missing-value.txt", keys, 4, v, f, NULL), -EINVAL, "kvset: wanted key without value refused");
        is_int(kvs("vmstat-negative.txt", keys, 4, v, f, NULL), -EINVAL, "kvset: negative value refused");
        is_int(kvs("vmstat-two-values.txt", keys, 4, v, f, NULL), -EINVAL, "kvset: two values refused");
        ok(kvs("vmstat-no-final-newline.txt", keys, 4, v, f, NULL) == 1 && f[0] && v[0] == 7,
           "kvset: no final newline is fine");
        is_int(kvs("vmstat-no-final-newline.txt", (const char *const[]){ "nr_free_pages" }, 1, v, f, &end), 1,
               "kvset: first line");
        ok(v[0] == 12 && end == strlen("nr_free_pages 12\n"), "kvset: its value and end");
}

static bool has_key5(const char *buf, size_t len, void *userdata)
{
        return memmem(buf, len, "\nkey5 ", 6) != NULL;
}

static int write_lines(const char *path, int n)
{
        FILE *fp = fopen(path, "w");
        int r;

        if (!fp)
                return -errno;
        for (int i = 0; i < n; i++)
                fprintf(fp, "key%d %d\n", i, i * 7);
        r = ferror(fp) ? -EIO : 0;
        if (fclose(fp) != 0)
                r = -EIO;
        return r;
}

/* procfile: the buffer grows with the file; reads go on past a short one;
 * done() stops them; a /proc seq_file larger than a page is read whole */
static void test_procfile(void)
{
        char path[] = "/tmp/scalemon-procfile.XXXXXX";
        struct procfile f;
        int fd = mkstemp(path), r;
        size_t lines;

        if (fd < 0) {
                ok(0, "mkstemp: %s", strerror(errno));
                return;
        }
        close(fd);
        r = write_lines(path, 1000);            /* about 11 KB */
        is_int(r, 0, "procfile: a file of 1000 lines");
        is_int(procfile_open(&f, path), 0, "procfile_open");
        r = procfile_read(&f, NULL);
        lines = 0;
        for (size_t i = 0; i < f.len; i++)
                lines += f.buf[i] == '\n';
        ok(r == 0 && lines == 1000 && f.cap >= f.len, "procfile: all 1000 lines, the buffer grown past 4096");
        write_lines(path, 5000);                /* the file grows */
        r = procfile_read(&f, NULL);
        lines = 0;
        for (size_t i = 0; i < f.len; i++)
                lines += f.buf[i] == '\n';
        ok(r == 0 && lines == 5000 && f.len >= 14 && memcmp(f.buf + f.len - 14, "key4999 34993\n", 14) == 0,
           "procfile: the file grew, all 5000 lines read again");
        write_lines(path, 3);                   /* and shrinks */
        r = procfile_read(&f, NULL);
        ok(r == 0 && f.len == strlen("key0 0\nkey1 7\nkey2 14\n") && memcmp(f.buf, "key0 0\n", 7) == 0,
           "procfile: the file shrank: only what it holds now");
        write_lines(path, 1000);
        f.ask = 100;
        r = procfile_read_until(&f, has_key5, NULL);
        ok(r == 0 && f.len > 0 && f.len <= 100 && f.buf[f.len - 1] == '\n' && memmem(f.buf, f.len, "\nkey5 35\n", 9),
           "procfile: done() stops at the complete lines holding what is wanted, within ask");
        f.ask = 50;
        r = procfile_read(&f, NULL);
        lines = 0;
        for (size_t i = 0; i < f.len; i++)
                lines += f.buf[i] == '\n';
        ok(r == 0 && lines == 1000, "procfile: a small ask, the reads go on to the end");
        procfile_close(&f);
        unlink(path);

        /* /proc/kallsyms: a seq_file of short lines, megabytes long; one
         * read() gives about a page of it, whatever the buffer's size */
        if (procfile_open(&f, "/proc/kallsyms") < 0) {
                ok(1, "# SKIP no /proc/kallsyms");
                return;
        }
        /* The file changes when a module or a BPF program loads (another
         * test's, say): the two reads are compared up to three times, and
         * fail only if no pair agrees. */
        {
                size_t want = 0, got = 0;
                for (int attempt = 0; attempt < 3; attempt++) {
                        FILE *fp;
                        int c;
                        f.len = 0;
                        r = procfile_read(&f, NULL);
                        fp = fopen("/proc/kallsyms", "r");
                        want = got = 0;
                        while (fp && (c = getc_unlocked(fp)) != EOF)
                                want += c == '\n';
                        if (fp)
                                fclose(fp);
                        for (size_t i = 0; r == 0 && i < f.len; i++)
                                got += f.buf[i] == '\n';
                        if (r != 0 || got == want)
                                break;
                }
                ok(r == 0 && want > 1000 && got == want && f.len > 65536 && f.buf[f.len - 1] == '\n',
                   "procfile: /proc/kallsyms read whole (%zu bytes, %zu lines, as stdio reads %zu)", f.len, got, want);
        }
        procfile_close(&f);
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
        test_kvset();
        test_procfile();
        test_pressure();
        return tap_done();
}
