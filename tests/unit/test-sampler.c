/* test-sampler.c - the sampler, whole, against a fake /proc and /sys tree
 * written by this test into a temporary directory: no root, no kernel
 * counters (every perf metric is disabled, so no perf group has a member).
 * Last, the whole daemon (manager_new/manager_run, in a child process) on
 * the same tree, writing a real SQLite file that the test reads back.
 *
 * The test is the writer of the files, so it knows the truth: every value
 * the sampler emits must be the difference of what the files said at the
 * two ends of its interval.  Between ticks it changes the tree as the
 * kernel would: counters grow, a CPU goes offline (its bit leaves
 * cpu/online and its cpuN line leaves /proc/stat) and comes back, a
 * /proc/stat line and a node's numastat are malformed for one interval,
 * a node appears (its directory, and its bit in node/online).
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conf.h"
#include "manager.h"
#include "metric.h"
#include "sampler.h"
#include "store.h"
#include "tap.h"

#define NCPUS  4
#define NNODES 3        /* node2 appears during the test */
#define NFIELDS 10

static char root[256];
static uint64_t stat_v[NCPUS][NFIELDS];
static bool online[NCPUS] = { true, true, true, true };
static bool stat_bad;                   /* write a malformed cpu1 line */
static bool numa_bad;                   /* write a malformed numa_hit line in node1's numastat */
static uint64_t vm_v[_M_MAX];
static uint64_t numa_v[NNODES][_M_MAX];
static bool node_exists[NNODES] = { true, true, false };
static int step;

static void put(const char *rel, const char *text)
{
        char path[512];
        FILE *f;

        snprintf(path, sizeof path, "%s/%s", root, rel);
        f = fopen(path, "w");   /* in place: the sampler keeps the files open */
        if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
                printf("Bail out! cannot write %s\n", path);
                exit(1);
        }
}

static void mkdirs(const char *rel)
{
        char path[512];

        snprintf(path, sizeof path, "%s/%s", root, rel);
        for (char *p = path + strlen(root) + 1; *p; p++)
                if (*p == '/') {
                        *p = 0;
                        mkdir(path, 0755);
                        *p = '/';
                }
        mkdir(path, 0755);
}

/* Write the whole tree from the model. */
static void write_tree(void)
{
        char buf[8192], *p;
        uint64_t agg[NFIELDS] = { 0 };

        p = buf;
        p += sprintf(p, "0-%d\n", NCPUS - 1);
        put("sys/devices/system/cpu/possible", buf);
        p = buf;
        *p = 0;
        for (int c = 0; c < NCPUS; c++)
                if (online[c])
                        p += sprintf(p, "%s%d", p == buf ? "" : ",", c);
        strcpy(p, "\n");
        put("sys/devices/system/cpu/online", buf);

        for (int c = 0; c < NCPUS; c++)
                for (int f = 0; f < NFIELDS; f++)
                        agg[f] += online[c] ? stat_v[c][f] : 0;
        p = buf + sprintf(buf, "cpu ");
        for (int f = 0; f < NFIELDS; f++)
                p += sprintf(p, " %llu", (unsigned long long)agg[f]);
        *p++ = '\n';
        for (int c = 0; c < NCPUS; c++) {
                if (!online[c])
                        continue;       /* as the kernel: no line for an offline CPU */
                p += sprintf(p, "cpu%d", c);
                for (int f = 0; f < NFIELDS; f++)
                        p += (stat_bad && c == 1 && f == 3) ? sprintf(p, " 12x4")
                                                             : sprintf(p, " %llu", (unsigned long long)stat_v[c][f]);
                *p++ = '\n';
        }
        p += sprintf(p, "intr 12345 0 9 0\nctxt 987654\nbtime 1700000000\nprocesses 4242\n");
        put("proc/stat", buf);

        p = buf + sprintf(buf, "nr_free_pages 1234567\nnr_zone_inactive_anon 42\n");
        for (int m = 0; m < _M_MAX; m++)
                if (metric_table[m].source == SRC_VMSTAT)
                        p += sprintf(p, "%s %llu\n", metric_table[m].key, (unsigned long long)vm_v[m]);
        p += sprintf(p, "pgfault 99999\n");
        put("proc/vmstat", buf);

        mkdirs("sys/devices/system/node");
        sprintf(buf, "0-%d\n", NNODES - 1);
        put("sys/devices/system/node/possible", buf);
        p = buf;
        *p = 0;
        for (int n = 0; n < NNODES; n++)
                if (node_exists[n])
                        p += sprintf(p, "%s%d", p == buf ? "" : ",", n);
        strcpy(p, "\n");
        put("sys/devices/system/node/online", buf);
        for (int n = 0; n < NNODES; n++) {
                char rel[128];
                if (!node_exists[n])
                        continue;
                snprintf(rel, sizeof rel, "sys/devices/system/node/node%d", n);
                mkdirs(rel);
                /* node0: CPUs 0-1, node1: 2-3, node2: memory only (CXL-like) */
                snprintf(rel, sizeof rel, "sys/devices/system/node/node%d/cpulist", n);
                put(rel, n == 0 ? "0-1\n" : n == 1 ? "2-3\n" : "\n");
                p = buf;
                for (int m = 0; m < _M_MAX; m++)
                        if (metric_table[m].source == SRC_NUMASTAT && numa_bad && n == 1 && m == M_NUMA_HIT)
                                p += sprintf(p, "%s 12x4\n", metric_table[m].key);
                        else if (metric_table[m].source == SRC_NUMASTAT)
                                p += sprintf(p, "%s %llu\n", metric_table[m].key, (unsigned long long)numa_v[n][m]);
                snprintf(rel, sizeof rel, "sys/devices/system/node/node%d/numastat", n);
                put(rel, buf);
        }
}

/* The kernel's counters grow by a known amount, different for each value
 * and each step.  The increments are kept in inc_* for the checks. */
static uint64_t inc_stat[NCPUS][NFIELDS], inc_vm[_M_MAX], inc_numa[NNODES][_M_MAX];

static void advance(void)
{
        step++;
        for (int c = 0; c < NCPUS; c++)
                for (int f = 0; f < NFIELDS; f++) {
                        inc_stat[c][f] = 1 + (uint64_t)((step * 7 + c * 13 + f * 3) % 97);
                        stat_v[c][f] += inc_stat[c][f];
                }
        for (int m = 0; m < _M_MAX; m++) {
                inc_vm[m] = (uint64_t)((step * 11 + m * 5) % 1000);
                vm_v[m] += inc_vm[m];
                for (int n = 0; n < NNODES; n++) {
                        inc_numa[n][m] = 100 + (uint64_t)((step * 17 + n * 31 + m) % 5000);
                        numa_v[n][m] += inc_numa[n][m];
                }
        }
        write_tree();
}

/* ---- reading a tick ---- */

static const struct sample_value *find(const struct tick *t, int metric, int loc)
{
        for (size_t i = 0; i < t->nv; i++)
                if (t->v[i].metric == metric && t->v[i].loc == loc)
                        return &t->v[i];
        return NULL;
}

static size_t count_loc(const struct tick *t, int loc, enum metric_source src)
{
        size_t k = 0;
        for (size_t i = 0; i < t->nv; i++)
                k += t->v[i].loc == loc && metric_table[t->v[i].metric].source == src;
        return k;
}

static size_t count_null(const struct tick *t, int loc, enum metric_source src)
{
        size_t k = 0;
        for (size_t i = 0; i < t->nv; i++)
                k += t->v[i].loc == loc && metric_table[t->v[i].metric].source == src && t->v[i].null;
        return k;
}

static size_t count_src(enum metric_source src)
{
        size_t k = 0;
        for (int m = 0; m < _M_MAX; m++)
                k += metric_table[m].source == src;
        return k;
}

/* Every /proc/stat value of cpu c is the sum of the last `span` steps'
 * increments (span > 1 after an interval that was skipped). */
static bool cpu_rows_right(const struct tick *t, int c, const uint64_t (*want)[NFIELDS], char *why, size_t len)
{
        for (int m = 0; m < _M_MAX; m++) {
                const struct sample_value *v;
                if (metric_table[m].source != SRC_PROCSTAT)
                        continue;
                v = find(t, m, c);
                if (!v || v->null || (uint64_t)v->value != want[c][metric_table[m].field]) {
                        snprintf(why, len, "cpu%d %s: got %s%lld, want %llu", c, metric_table[m].name,
                                 !v ? "no row " : v->null ? "NULL " : "", v ? (long long)v->value : 0LL,
                                 (unsigned long long)want[c][metric_table[m].field]);
                        return false;
                }
        }
        return true;
}

static bool vm_rows_right(const struct tick *t, const uint64_t *want, char *why, size_t len)
{
        for (int m = 0; m < _M_MAX; m++) {
                const struct sample_value *v;
                if (metric_table[m].source != SRC_VMSTAT)
                        continue;
                v = find(t, m, 0);
                if (!v || v->null || (uint64_t)v->value != want[m]) {
                        snprintf(why, len, "%s: got %s%lld, want %llu", metric_table[m].name, !v ? "no row " : "",
                                 v ? (long long)v->value : 0LL, (unsigned long long)want[m]);
                        return false;
                }
        }
        return true;
}

static bool node_rows_right(const struct tick *t, int n, const uint64_t (*want)[_M_MAX], char *why, size_t len)
{
        for (int m = 0; m < _M_MAX; m++) {
                const struct sample_value *v;
                if (metric_table[m].source != SRC_NUMASTAT)
                        continue;
                v = find(t, m, n);
                if (!v || v->null || (uint64_t)v->value != want[n][m]) {
                        snprintf(why, len, "node%d %s: got %s%lld, want %llu", n, metric_table[m].name,
                                 !v ? "no row " : "", v ? (long long)v->value : 0LL,
                                 (unsigned long long)want[n][m]);
                        return false;
                }
        }
        return true;
}

static bool has_event(const struct tick *t, const char *kind, int cpu)
{
        for (size_t i = 0; i < t->nev; i++)
                if (strcmp(t->ev[i].kind, kind) == 0 && t->ev[i].cpu == cpu)
                        return true;
        return false;
}

/* ---- the daemon over the tree ---- */

static int64_t db_count(const char *db, const char *sql)
{
        sqlite3 *h = NULL;
        sqlite3_stmt *st = NULL;
        int64_t n = -1;

        if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
            sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
                n = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        sqlite3_close(h);
        return n;
}

/* The sum of a metric's stored deltas in its raw unit (cpu_* in USER_HZ
 * ticks): one CPU, one node, or (loc < 0) the system value. */
static int64_t db_sum(struct store *st, const char *metric, int loc, bool node)
{
        struct series_point *p = NULL;
        size_t n = 0;
        double sum = 0, scale = 1;
        const struct metric_def *def = metric_by_name(metric);

        if (store_series(st, metric, loc < 0 ? SERIES_ALL : node ? SERIES_NODE : SERIES_CPU, loc, 0, INT64_MAX, 0,
                         &p, &n) < 0)
                return -1;
        for (size_t i = 0; i < n; i++)
                sum += p[i].value;
        free(p);
        if (def && def->source == SRC_PROCSTAT)
                scale = 1.0 / (double)sysconf(_SC_CLK_TCK);
        return llround(sum / scale);
}

/* scalemond's manager, whole, on the fixture tree at a 50 ms interval:
 * the tree changes under it (counters grow, cpu2 goes away and comes
 * back with a jump in its counters), then SIGTERM; what the database
 * holds must be the fixture's own deltas. */
static void manager_over_tree(void)
{
        char db[300], sock[300], confpath[300], sys[300], proc[300], text[4096], ready[64] = "";
        uint64_t base_stat[NCPUS][NFIELDS], base_vm[_M_MAX], base_numa[NNODES][_M_MAX], lost2 = 0, before2 = 0;
        struct conf_source src = { 0 };
        struct conf c;
        struct store *st = NULL;
        char *err = NULL;
        int pfd[2], status = -1;
        size_t len = 0;
        pid_t pid;
        int r;

        snprintf(db, sizeof db, "%s/scalemon.db", root);
        snprintf(sock, sizeof sock, "%s/control.sock", root);
        snprintf(confpath, sizeof confpath, "%s/scalemon.conf", root);
        snprintf(sys, sizeof sys, "%s/sys", root);
        snprintf(proc, sizeof proc, "%s/proc", root);
        /* every metric the tree can give, none from perf */
        len = (size_t)snprintf(text, sizeof text, "interval = 50ms\ndatabase = %s\nsocket = %s\nmetrics = ", db, sock);
        for (int m = 0, first = 1; m < _M_MAX; m++)
                if (!metric_is_perf(&metric_table[m])) {
                        len += (size_t)snprintf(text + len, sizeof text - len, "%s%s", first ? "" : ", ",
                                                metric_table[m].name);
                        first = 0;
                }
        snprintf(text + len, sizeof text - len, "\n");
        put("scalemon.conf", text);
        src.path = confpath;
        r = conf_read(&src, &c, &err);
        ok(r == 0, "manager: the configuration reads%s%s", err ? ": " : "", err ? err : "");
        if (r < 0) {
                conf_free(&c);
                free(err);
                return;
        }

        node_exists[2] = false;         /* the tree the daemon starts on: 4 CPUs, nodes 0 and 1 */
        online[0] = online[1] = online[2] = online[3] = true;
        write_tree();
        memcpy(base_stat, stat_v, sizeof base_stat);
        memcpy(base_vm, vm_v, sizeof base_vm);
        memcpy(base_numa, numa_v, sizeof base_numa);

        if (pipe(pfd) < 0) {
                printf("Bail out! pipe: %s\n", strerror(errno));
                exit(1);
        }
        fflush(stdout);
        pid = fork();
        if (pid == 0) {
                struct manager_options o = { .source = src, .ready_fd = pfd[1], .sysroot = sys, .procroot = proc };
                struct manager *m = NULL;
                close(pfd[0]);
                r = manager_new(&c, &o, &m, &err);
                if (r < 0) {
                        dprintf(pfd[1], "%s", err ? err : strerror(-r));
                        _exit(2);
                }
                r = manager_run(m);
                manager_free(m);
                _exit(r < 0 ? 1 : 0);
        }
        close(pfd[1]);
        {
                struct pollfd p = { .fd = pfd[0], .events = POLLIN };
                if (poll(&p, 1, 10000) > 0 && read(pfd[0], ready, sizeof ready - 1) < 0)
                        ready[0] = 0;
        }
        close(pfd[0]);
        ok(strcmp(ready, "ok") == 0, "manager: scalemond's manager starts on the fixture tree (%s)", ready);
        if (strcmp(ready, "ok") != 0) {
                kill(pid, SIGKILL);
                waitpid(pid, NULL, 0);
                conf_free(&c);
                return;
        }

        /* 3 steps, cpu2 away for 2 (its counters jump meanwhile), back for 3.
         * The kernel makes each /proc file anew at every read; this tree's
         * files are rewritten in place, so the daemon is stopped while the
         * tree changes: it never reads a file half written. */
        for (int i = 0; i < 8; i++) {
                uint64_t v = stat_v[2][0];
                int ws;

                kill(pid, SIGSTOP);
                waitpid(pid, &ws, WUNTRACED);
                if (i == 3)
                        online[2] = false;
                if (i == 4)
                        stat_v[2][0] += 500000;
                if (i == 5)
                        online[2] = true;
                advance();
                if (i < 3)
                        before2 += inc_stat[2][0];
                else if (i < 6)         /* away, and its first interval back: not counted */
                        lost2 += stat_v[2][0] - v;
                kill(pid, SIGCONT);
                usleep(200000);         /* four ticks on each state of the tree */
        }
        kill(pid, SIGTERM);
        waitpid(pid, &status, 0);
        ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "manager: stops cleanly on SIGTERM (status %d)", status);

        r = store_open(db, STORE_READ, &st, NULL);
        is_int(r, 0, "manager: the database it wrote opens");
        if (r < 0) {
                conf_free(&c);
                return;
        }
        ok(db_count(db, "SELECT count(*) FROM tick") >= 20, "manager: it wrote ticks (%lld)",
           (long long)db_count(db, "SELECT count(*) FROM tick"));
        for (int cpu = 0; cpu < NCPUS; cpu++) {
                int64_t got = db_sum(st, "cpu_user", cpu, false);
                int64_t want = (int64_t)(stat_v[cpu][0] - base_stat[cpu][0]);
                if (cpu == 2)
                        ok(got >= (int64_t)before2 && got <= want - (int64_t)lost2,
                           "manager: cpu2's cpu_user %lld: at least its %llu before it left, at most all but the "
                           "%llu of its absence and first interval back", (long long)got,
                           (unsigned long long)before2, (unsigned long long)lost2);
                else
                        ok(got == want, "manager: cpu%d's cpu_user in the database = the fixture's delta (%lld, %lld)",
                           cpu, (long long)got, (long long)want);
        }
        is_int(db_sum(st, "cpu_system", 0, false), (int64_t)(stat_v[0][2] - base_stat[0][2]),
               "manager: cpu0's cpu_system = the fixture's delta");
        is_int(db_sum(st, "thp_fault_alloc", -1, false), (int64_t)(vm_v[M_THP_FAULT_ALLOC] - base_vm[M_THP_FAULT_ALLOC]),
               "manager: thp_fault_alloc (vmstat) = the fixture's delta");
        for (int n = 0; n < 2; n++)
                ok(db_sum(st, "numa_hit", n, true) == (int64_t)(numa_v[n][M_NUMA_HIT] - base_numa[n][M_NUMA_HIT]),
                   "manager: node%d's numa_hit = the fixture's delta", n);
        is_int(db_count(db, "SELECT count(*) FROM event WHERE kind = 'cpu-offline' AND cpu = 2"), 1,
               "manager: one cpu-offline event for cpu2 in the database");
        is_int(db_count(db, "SELECT count(*) FROM event WHERE kind = 'cpu-online' AND cpu = 2"), 1,
               "manager: one cpu-online event for cpu2");
        is_int(db_count(db, "SELECT ncpus FROM host"), NCPUS, "manager: the host row has the tree's 4 CPUs");
        store_close(st);
        conf_free(&c);
}

/* ---- the scenarios ---- */

static struct sampler_config config(void)
{
        static char sys[300], proc[300];
        struct sampler_config cfg = { .mount_tracefs = false };

        snprintf(sys, sizeof sys, "%s/sys", root);
        snprintf(proc, sizeof proc, "%s/proc", root);
        cfg.sysroot = sys;
        cfg.procroot = proc;
        for (int m = 0; m < _M_MAX; m++)       /* the fixture tree only: no perf, no BPF, not the process's
                                                 * own CPU time (test-sampler-self.c) */
                cfg.enabled[m] = !metric_is_perf(&metric_table[m]) && !metric_is_bpf(&metric_table[m]) &&
                                 metric_table[m].source != SRC_SELF;
        return cfg;
}

/* --simulate-cpus 8 on the 4-CPU fixture: simulated CPU c replays fixture
 * CPU c % 4, its values scaled by a fixed factor, 1 for c < 4
 * (simulate.c, invariants 1 and 2). */
static void simulated(void)
{
        struct sampler_config cfg = config();
        struct sampler *s = NULL;
        struct tick t = { 0 };
        char *err = NULL, why[256];
        bool good, differs = false, in_range = true;
        int r;

        cfg.simulate_cpus = 8;
        r = sampler_new(&cfg, &s, &err);
        is_int(r, 0, "simulated: sampler_new with 8 CPUs from the fixture's 4");
        if (r < 0) {
                printf("# %s\n", err ? err : strerror(-r));
                free(err);
                return;
        }
        is_int(sampler_cpumap(s)->ncpus, 8, "simulated: 8 CPUs");
        ok(!sampler_available(s, M_RUNQUEUE_WAIT) && sampler_why(s, M_RUNQUEUE_WAIT) &&
           strstr(sampler_why(s, M_RUNQUEUE_WAIT), "not simulated"), "simulated: runqueue_wait_ns is not: %s",
           sampler_why(s, M_RUNQUEUE_WAIT) ? sampler_why(s, M_RUNQUEUE_WAIT) : "(no reason)");
        sampler_sample(s, &t);
        advance();
        is_int(sampler_sample(s, &t), 1, "simulated: tick");
        good = true;
        for (int c = 0; c < NCPUS && good; c++)
                good = cpu_rows_right(&t, c, inc_stat, why, sizeof why);
        ok(good, "simulated: CPUs 0-3 are the fixture's CPUs' deltas%s%s", good ? "" : ": ", good ? "" : why);
        for (int c = NCPUS; c < 2 * NCPUS; c++)
                for (int m = M_CPU_USER; m <= M_CPU_GUEST; m++) {
                        const struct sample_value *v = find(&t, m, c);
                        double want = (double)inc_stat[c - NCPUS][metric_table[m].field];
                        if (!v || v->null || (double)v->value < 0.5 * want - 1 || (double)v->value > 1.5 * want + 1) {
                                in_range = false;
                                printf("# cpu%d %s: %lld for %.0f\n", c, metric_table[m].name,
                                       v ? (long long)v->value : -1LL, want);
                        }
                        differs |= v && (double)v->value != want;
                }
        ok(in_range, "simulated: CPUs 4-7 within 0.5..1.5 of the CPU they replay");
        ok(differs, "simulated: and not copies of it");
        good = node_rows_right(&t, 0, inc_numa, why, sizeof why);
        ok(good, "simulated: node0 replays fixture node0%s%s", good ? "" : ": ", good ? "" : why);

        online[1] = false;
        advance();
        is_int(sampler_sample(s, &t), 1, "simulated: tick with fixture cpu1 offline");
        ok(has_event(&t, "cpu-offline", 1) && has_event(&t, "cpu-offline", 5) && t.nev == 2,
           "simulated: CPUs 1 and 5 went offline with it");
        ok(count_loc(&t, 1, SRC_PROCSTAT) + count_loc(&t, 5, SRC_PROCSTAT) == 0, "simulated: no rows for them");
        online[1] = true;
        advance();
        is_int(sampler_sample(s, &t), 1, "simulated: tick with cpu1 back");
        ok(has_event(&t, "cpu-online", 1) && has_event(&t, "cpu-online", 5) && t.nev == 2,
           "simulated: CPUs 1 and 5 came back");
        ok(count_loc(&t, 1, SRC_PROCSTAT) + count_loc(&t, 5, SRC_PROCSTAT) == 0,
           "simulated: no rows for their first interval back");
        advance();
        is_int(sampler_sample(s, &t), 1, "simulated: next tick");
        good = cpu_rows_right(&t, 1, inc_stat, why, sizeof why);
        ok(good && count_loc(&t, 5, SRC_PROCSTAT) == (size_t)(M_CPU_GUEST - M_CPU_USER + 1),
           "simulated: CPUs 1 and 5 count again%s%s", good ? "" : ": ", good ? "" : why);
        tick_clear(&t);
        sampler_free(s);
}

static int64_t total(struct sampler *s, int m, int loc)
{
        return sampler_totals(s)[m * sampler_nloc(s) + loc];
}

/* ---- scheduler pressure (sampler-pressure.c) on its own /proc tree ---- */

static uint64_t psi_v[3][2], rq_v[NCPUS];
static bool psi_has_full_cpu = true;

static void write_pressure(const char *proc)
{
        static const char *const names[3] = { "cpu", "memory", "io" };
        char buf[4096], rel[256], *p;

        for (int i = 0; i < 3; i++) {
                p = buf + sprintf(buf, "some avg10=1.25 avg60=0.50 avg300=0.10 total=%llu\n",
                                  (unsigned long long)psi_v[i][0]);
                if (i != 0 || psi_has_full_cpu)
                        sprintf(p, "full avg10=0.00 avg60=0.00 avg300=0.00 total=%llu\n", (unsigned long long)psi_v[i][1]);
                snprintf(rel, sizeof rel, "%s/pressure/%s", proc, names[i]);
                put(rel, buf);
        }
        /* version 15 as the kernel writes it: cpuN lines with 9 fields, domain lines after each */
        p = buf + sprintf(buf, "version 15\ntimestamp 4295123456\n");
        for (int c = 0; c < NCPUS; c++) {
                if (!online[c])
                        continue;
                p += sprintf(p, "cpu%d 0 0 11 22 33 44 987654321 %llu 555\n", c, (unsigned long long)rq_v[c]);
                p += sprintf(p, "domain0 %s 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 "
                             "29 30 31 32 33 34 35 36\n", c < 2 ? "03" : "0c");
        }
        snprintf(rel, sizeof rel, "%s/schedstat", proc);
        put(rel, buf);
}

static void pressure(void)
{
        struct sampler_config cfg = config();
        static char proc[300];
        struct sampler *s = NULL;
        struct tick t = { 0 };
        uint64_t inc_psi[3][2], inc_rq[NCPUS];
        static const int psi_m[3][2] = { { M_PSI_CPU_SOME, -1 }, { M_PSI_MEMORY_SOME, M_PSI_MEMORY_FULL },
                                         { M_PSI_IO_SOME, M_PSI_IO_FULL } };
        char *err = NULL;
        bool good = true;
        int r;

        mkdirs("proc-pressure/pressure");
        snprintf(proc, sizeof proc, "%s/proc-pressure", root);
        cfg.procroot = proc;
        for (int i = 0; i < 3; i++)
                for (int f = 0; f < 2; f++)
                        psi_v[i][f] = 9000000000ULL + (uint64_t)(i * 100 + f);
        for (int c = 0; c < NCPUS; c++)
                rq_v[c] = 123456789000ULL + (uint64_t)c;
        write_pressure("proc-pressure");
        r = sampler_new(&cfg, &s, &err);
        is_int(r, 0, "pressure: sampler_new on a tree with /proc/pressure and /proc/schedstat");
        if (r < 0) {
                printf("# %s\n", err ? err : strerror(-r));
                free(err);
                return;
        }
        ok(sampler_available(s, M_PSI_CPU_SOME) && sampler_available(s, M_PSI_IO_FULL) &&
           sampler_available(s, M_RUNQUEUE_WAIT), "pressure: PSI and run-queue metrics available");
        ok(!sampler_available(s, M_CPU_USER), "pressure: /proc/stat metrics not (no stat in this tree): %s",
           sampler_why(s, M_CPU_USER) ? sampler_why(s, M_CPU_USER) : "(no reason)");
        is_int(sampler_sample(s, &t), 0, "pressure: first sample primes");
        for (int step2 = 0; step2 < 2; step2++) {
                for (int i = 0; i < 3; i++)
                        for (int f = 0; f < 2; f++) {
                                inc_psi[i][f] = 1000003ULL * (uint64_t)(i + 1) + 17ULL * (uint64_t)f + (uint64_t)step2;
                                psi_v[i][f] += inc_psi[i][f];
                        }
                for (int c = 0; c < NCPUS; c++) {
                        inc_rq[c] = 50000000ULL * (uint64_t)(c + 1) + (uint64_t)step2;
                        rq_v[c] += inc_rq[c];
                }
                write_pressure("proc-pressure");
                is_int(sampler_sample(s, &t), 1, step2 ? "pressure: tick 2" : "pressure: tick 1");
                for (int i = 0; i < 3; i++)
                        for (int f = 0; f < 2; f++) {
                                const struct sample_value *v = psi_m[i][f] < 0 ? NULL : find(&t, psi_m[i][f], 0);
                                if (psi_m[i][f] >= 0 && (!v || v->null || (uint64_t)v->value != inc_psi[i][f])) {
                                        good = false;
                                        printf("# %s: %lld, want %llu\n", metric_table[psi_m[i][f]].name,
                                               v ? (long long)v->value : -1LL, (unsigned long long)inc_psi[i][f]);
                                }
                        }
                for (int c = 0; c < NCPUS; c++) {
                        const struct sample_value *v = find(&t, M_RUNQUEUE_WAIT, c);
                        if (!v || v->null || (uint64_t)v->value != inc_rq[c]) {
                                good = false;
                                printf("# runqueue_wait_ns cpu%d: %lld, want %llu\n", c, v ? (long long)v->value : -1LL,
                                       (unsigned long long)inc_rq[c]);
                        }
                }
                {
                        size_t mine = 0, other = 0;
                        for (size_t i = 0; i < t.nv; i++) {
                                enum metric_source src = metric_table[t.v[i].metric].source;
                                if (src == SRC_PSI || src == SRC_SCHEDSTAT)
                                        mine++;
                                else if (src != SRC_NUMASTAT)   /* the sysfs tree's nodes still count */
                                        other++;
                        }
                        ok(mine == 5 + NCPUS && other == 0,
                           "pressure: 5 PSI values and one run-queue value per CPU, nothing else");
                }
        }
        ok(good, "pressure: every PSI and run-queue value is the fixture's delta");
        is_int(sampler_totals(s)[M_RUNQUEUE_WAIT * sampler_nloc(s) + 3], (int64_t)(2 * 200000000ULL + 1),
               "pressure: cpu3's run-queue total is the sum of its deltas");

        /* hotplug: no run-queue delta for a CPU's first interval back.
         * cpu2 leaves cpu/online and /proc/schedstat; cpu1 leaves
         * cpu/online while its schedstat line stays (it went and came
         * back between two reads of the file): the sampler saw both go,
         * and neither has a delta across its absence. */
        online[2] = false;
        write_pressure("proc-pressure");
        online[1] = false;
        write_tree();
        online[1] = true;
        is_int(sampler_sample(s, &t), 1, "pressure: tick with cpu1 and cpu2 offline");
        ok(has_event(&t, "cpu-offline", 1) && has_event(&t, "cpu-offline", 2) && t.nev == 2,
           "pressure: cpu-offline events for cpu1 and cpu2");
        ok(!find(&t, M_RUNQUEUE_WAIT, 1) && !find(&t, M_RUNQUEUE_WAIT, 2) && find(&t, M_RUNQUEUE_WAIT, 0),
           "pressure: no run-queue value for cpu1 and cpu2 while offline; cpu0 has one");
        for (int c = 0; c < NCPUS; c++)
                rq_v[c] += 700000000ULL + (uint64_t)c;  /* cpu1, cpu2: moved while away, a delta across is bogus */
        online[2] = true;
        write_tree();
        write_pressure("proc-pressure");
        is_int(sampler_sample(s, &t), 1, "pressure: tick with cpu1 and cpu2 back");
        ok(has_event(&t, "cpu-online", 1) && has_event(&t, "cpu-online", 2) && t.nev == 2,
           "pressure: cpu-online events for cpu1 and cpu2");
        ok(!find(&t, M_RUNQUEUE_WAIT, 1) && !find(&t, M_RUNQUEUE_WAIT, 2),
           "pressure: no run-queue value for cpu1 and cpu2 in their first interval back (cpu1: %lld)",
           find(&t, M_RUNQUEUE_WAIT, 1) ? (long long)find(&t, M_RUNQUEUE_WAIT, 1)->value : -1LL);
        {
                const struct sample_value *v = find(&t, M_RUNQUEUE_WAIT, 3);
                ok(v && !v->null && (uint64_t)v->value == 700000003ULL, "pressure: cpu3 counted on (%lld)",
                   v ? (long long)v->value : -1LL);
        }
        for (int c = 0; c < NCPUS; c++)
                rq_v[c] += 1000ULL * (uint64_t)(c + 1);
        write_pressure("proc-pressure");
        is_int(sampler_sample(s, &t), 1, "pressure: next tick");
        good = true;
        for (int c = 0; c < NCPUS; c++) {
                const struct sample_value *v = find(&t, M_RUNQUEUE_WAIT, c);
                if (!v || v->null || (uint64_t)v->value != 1000ULL * (uint64_t)(c + 1)) {
                        good = false;
                        printf("# runqueue_wait_ns cpu%d: %lld, want %llu\n", c, v ? (long long)v->value : -1LL,
                               (unsigned long long)(1000ULL * (uint64_t)(c + 1)));
                }
        }
        ok(good, "pressure: cpu1 and cpu2 count again from their return: every CPU's delta right");
        tick_clear(&t);
        sampler_free(s);

        /* no /proc/pressure, no /proc/schedstat: unavailable, with the reason */
        cfg = config();
        r = sampler_new(&cfg, &s, &err);
        is_int(r, 0, "pressure: sampler_new on a tree without them");
        if (r < 0) {
                free(err);
                return;
        }
        ok(!sampler_available(s, M_PSI_CPU_SOME) && sampler_why(s, M_PSI_CPU_SOME) &&
           strstr(sampler_why(s, M_PSI_CPU_SOME), "psi=0"), "pressure: psi_cpu_some_us unavailable: %s",
           sampler_why(s, M_PSI_CPU_SOME) ? sampler_why(s, M_PSI_CPU_SOME) : "(no reason)");
        ok(!sampler_available(s, M_RUNQUEUE_WAIT) && sampler_why(s, M_RUNQUEUE_WAIT) &&
           strstr(sampler_why(s, M_RUNQUEUE_WAIT), "CONFIG_SCHEDSTATS"), "pressure: runqueue_wait_ns unavailable: %s",
           sampler_why(s, M_RUNQUEUE_WAIT) ? sampler_why(s, M_RUNQUEUE_WAIT) : "(no reason)");
        sampler_free(s);
}

int main(void)
{
        struct sampler_config cfg;
        struct sampler *s = NULL, *s2 = NULL;
        struct tick t = { 0 };
        char *err = NULL, why[256];
        uint64_t want_stat[NCPUS][NFIELDS], want_numa[NNODES][_M_MAX];
        int64_t user0 = 0;
        bool good;
        int r;

        snprintf(root, sizeof root, "/tmp/scalemon-sampler.XXXXXX");
        if (!mkdtemp(root)) {
                printf("Bail out! mkdtemp: %s\n", strerror(errno));
                return 1;
        }
        mkdirs("proc");
        mkdirs("sys/devices/system/cpu");
        for (int c = 0; c < NCPUS; c++)
                for (int f = 0; f < NFIELDS; f++)
                        stat_v[c][f] = 1000000 + (uint64_t)(c * 1000 + f);
        for (int m = 0; m < _M_MAX; m++) {
                vm_v[m] = 5000 + (uint64_t)m;
                for (int n = 0; n < NNODES; n++)
                        numa_v[n][m] = 70000000 + (uint64_t)(n * 1000 + m);
        }
        write_tree();

        /* -- start: everything available from the fixture -- */
        cfg = config();
        r = sampler_new(&cfg, &s, &err);
        is_int(r, 0, "sampler_new on the fixture tree, no perf");
        if (r < 0) {
                printf("# %s\n", err ? err : strerror(-r));
                return tap_done();
        }
        is_int(sampler_cpumap(s)->ncpus, NCPUS, "4 CPUs from cpu/possible");
        is_int(sampler_cpumap(s)->nnodes, 3, "3 node numbers from node/possible");
        ok(sampler_cpumap(s)->has_node[0] && sampler_cpumap(s)->has_node[1] && !sampler_cpumap(s)->has_node[2],
           "nodes 0 and 1 there, node2 not yet");
        ok(sampler_available(s, M_CPU_USER) && sampler_available(s, M_THP_FAULT_ALLOC) &&
           sampler_available(s, M_NUMA_HIT), "procstat, vmstat and numastat metrics available");
        ok(!sampler_available(s, M_CONTEXT_SWITCHES), "perf metrics disabled: %s",
           sampler_why(s, M_CONTEXT_SWITCHES) ? sampler_why(s, M_CONTEXT_SWITCHES) : "(no reason)");
        r = sampler_sample(s, &t);
        is_int(r, 0, "first sample only primes");

        /* -- a plain interval -- */
        advance();
        r = sampler_sample(s, &t);
        is_int(r, 1, "second sample is a tick");
        good = true;
        for (int c = 0; c < NCPUS && good; c++)
                good = cpu_rows_right(&t, c, inc_stat, why, sizeof why);
        ok(good, "every cpuN value is the fixture's delta%s%s", good ? "" : ": ", good ? "" : why);
        user0 += (int64_t)inc_stat[0][0];
        good = vm_rows_right(&t, inc_vm, why, sizeof why);
        ok(good, "every vmstat value is the fixture's delta%s%s", good ? "" : ": ", good ? "" : why);
        good = node_rows_right(&t, 0, inc_numa, why, sizeof why) && node_rows_right(&t, 1, inc_numa, why, sizeof why);
        ok(good, "every numastat value of nodes 0 and 1 is the fixture's delta%s%s", good ? "" : ": ", good ? "" : why);
        is_int(t.nv, NCPUS * count_src(SRC_PROCSTAT) + count_src(SRC_VMSTAT) + 2 * count_src(SRC_NUMASTAT),
               "and nothing else");
        is_int(t.nev, 0, "no hotplug event");

        /* -- cpu2 goes offline -- */
        online[2] = false;
        advance();
        r = sampler_sample(s, &t);
        is_int(r, 1, "tick with cpu2 offline");
        ok(has_event(&t, "cpu-offline", 2) && t.nev == 1, "one cpu-offline event for cpu2");
        is_int(count_loc(&t, 2, SRC_PROCSTAT), 0, "no row for cpu2");
        good = cpu_rows_right(&t, 0, inc_stat, why, sizeof why) && cpu_rows_right(&t, 1, inc_stat, why, sizeof why) &&
               cpu_rows_right(&t, 3, inc_stat, why, sizeof why);
        ok(good, "CPUs 0, 1, 3 are right%s%s", good ? "" : ": ", good ? "" : why);
        user0 += (int64_t)inc_stat[0][0];
        stat_v[2][0] += 500000;         /* its counters move while away: a delta across would be bogus */
        advance();
        r = sampler_sample(s, &t);
        is_int(r, 1, "another tick with cpu2 offline");
        ok(t.nev == 0 && count_loc(&t, 2, SRC_PROCSTAT) == 0, "still no row and no event for cpu2");
        user0 += (int64_t)inc_stat[0][0];

        /* -- cpu2 comes back -- */
        online[2] = true;
        advance();
        r = sampler_sample(s, &t);
        is_int(r, 1, "tick with cpu2 back");
        ok(has_event(&t, "cpu-online", 2) && t.nev == 1, "one cpu-online event for cpu2");
        is_int(count_loc(&t, 2, SRC_PROCSTAT), 0, "no row for cpu2's first interval back (no bogus delta)");
        user0 += (int64_t)inc_stat[0][0];
        advance();
        r = sampler_sample(s, &t);
        is_int(r, 1, "next tick");
        good = true;
        for (int c = 0; c < NCPUS && good; c++)
                good = cpu_rows_right(&t, c, inc_stat, why, sizeof why);
        ok(good, "cpu2 counts again, from its return: every CPU right%s%s", good ? "" : ": ", good ? "" : why);
        user0 += (int64_t)inc_stat[0][0];

        /* -- a malformed cpu1 line in /proc/stat and a malformed node1
         * numastat, for one interval: only those values are lost -- */
        memset(want_stat, 0, sizeof want_stat);
        memset(want_numa, 0, sizeof want_numa);
        stat_bad = numa_bad = true;
        advance();
        for (int f = 0; f < NFIELDS; f++)
                want_stat[1][f] += inc_stat[1][f];
        for (int m = 0; m < _M_MAX; m++)
                want_numa[1][m] += inc_numa[1][m];
        r = sampler_sample(s, &t);
        is_int(r, 1, "a malformed cpu1 line and node1 numastat: still a tick");
        good = cpu_rows_right(&t, 0, inc_stat, why, sizeof why) && cpu_rows_right(&t, 2, inc_stat, why, sizeof why) &&
               cpu_rows_right(&t, 3, inc_stat, why, sizeof why);
        ok(good, "CPUs 0, 2, 3: the fixture's delta%s%s", good ? "" : ": ", good ? "" : why);
        user0 += (int64_t)inc_stat[0][0];
        is_int(count_null(&t, 1, SRC_PROCSTAT), count_src(SRC_PROCSTAT),
               "cpu1: every /proc/stat value NULL (not measured), none made up");
        is_int(count_loc(&t, 1, SRC_PROCSTAT), count_src(SRC_PROCSTAT), "and nothing else for cpu1");
        good = vm_rows_right(&t, inc_vm, why, sizeof why);
        ok(good, "vmstat: the fixture's delta%s%s", good ? "" : ": ", good ? "" : why);
        good = node_rows_right(&t, 0, inc_numa, why, sizeof why);
        ok(good, "node0: the fixture's delta%s%s", good ? "" : ": ", good ? "" : why);
        is_int(count_null(&t, 1, SRC_NUMASTAT), count_src(SRC_NUMASTAT), "node1: every numastat value NULL");
        stat_bad = numa_bad = false;
        advance();
        for (int f = 0; f < NFIELDS; f++)
                want_stat[1][f] += inc_stat[1][f];
        for (int m = 0; m < _M_MAX; m++)
                want_numa[1][m] += inc_numa[1][m];
        r = sampler_sample(s, &t);
        is_int(r, 1, "the next tick");
        good = cpu_rows_right(&t, 1, want_stat, why, sizeof why);
        ok(good, "cpu1: the delta over both intervals, nothing lost from its totals%s%s", good ? "" : ": ",
           good ? "" : why);
        good = cpu_rows_right(&t, 0, inc_stat, why, sizeof why) && cpu_rows_right(&t, 3, inc_stat, why, sizeof why);
        ok(good, "CPUs 0 and 3: one interval's delta%s%s", good ? "" : ": ", good ? "" : why);
        user0 += (int64_t)inc_stat[0][0];
        good = node_rows_right(&t, 1, want_numa, why, sizeof why) && node_rows_right(&t, 0, inc_numa, why, sizeof why);
        ok(good, "node1: the delta over both intervals; node0 one%s%s", good ? "" : ": ", good ? "" : why);
        is_int(total(s, M_CPU_USER, 0), user0, "cpu0 user total = the sum of the fixture's deltas");

        /* -- node2 appears (memory only): counted from the tick after -- */
        node_exists[2] = true;
        advance();
        r = sampler_sample(s, &t);
        is_int(r, 1, "tick after node2 appeared");
        is_int(count_loc(&t, 2, SRC_NUMASTAT), 0, "node2's first tick only primes its baseline: no row");
        ok(sampler_cpumap(s)->has_node[2], "node2 in the running sampler's map");
        good = node_rows_right(&t, 1, inc_numa, why, sizeof why);
        ok(good, "node1 still right%s%s", good ? "" : ": ", good ? "" : why);
        advance();
        r = sampler_sample(s, &t);
        is_int(r, 1, "the next tick");
        good = node_rows_right(&t, 2, inc_numa, why, sizeof why) && node_rows_right(&t, 0, inc_numa, why, sizeof why);
        ok(good, "node2's numastat rows are the fixture's deltas, without a restart%s%s", good ? "" : ": ",
           good ? "" : why);

        r = sampler_new(&cfg, &s2, &err);
        is_int(r, 0, "a new sampler (a restarted daemon) on the tree with node2");
        if (r >= 0) {
                is_int(sampler_cpumap(s2)->nnodes, 3, "3 nodes");
                is_int(sampler_sample(s2, &t), 0, "primes");
                advance();
                r = sampler_sample(s2, &t);
                is_int(r, 1, "tick");
                good = node_rows_right(&t, 2, inc_numa, why, sizeof why) &&
                       node_rows_right(&t, 0, inc_numa, why, sizeof why);
                ok(good, "node2's numastat rows are the fixture's deltas%s%s", good ? "" : ": ", good ? "" : why);
                good = true;
                for (int c = 0; c < NCPUS && good; c++)
                        good = cpu_rows_right(&t, c, inc_stat, why, sizeof why);
                ok(good, "and the CPUs'%s%s", good ? "" : ": ", good ? "" : why);
        }

        simulated();
        pressure();
        manager_over_tree();

        tick_clear(&t);
        sampler_free(s);
        sampler_free(s2);
        free(err);
        {
                char cmd[300];
                snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
                if (system(cmd) != 0)
                        printf("# could not remove %s\n", root);
        }
        return tap_done();
}
