/* test-lockwait.c - lock wait decoding without the kernel: tracepoint
 * flags to lock types, /proc/kallsyms text to symbols, stacks to callers
 * (fixture tests/fixtures/kallsyms-lock.txt, taken from a 6.18 kernel, and
 * stacks as bpf_get_stackid() returned them there), and a run's locks and
 * losses from replayed contents of the per-caller map. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sqlite3.h>
#include <string.h>
#include <unistd.h>

#include "cpumap.h"
#include "lockwait-decode.h"
#include "macro.h"
#include "metric.h"
#include "runs.h"
#include "store-locks.h"
#include "store.h"
#include "tap.h"

static char *slurp(const char *path, size_t *len)
{
        FILE *f = fopen(path, "re");
        char *buf;
        long n;

        if (!f)
                return NULL;
        fseek(f, 0, SEEK_END);
        n = ftell(f);
        fseek(f, 0, SEEK_SET);
        buf = malloc((size_t)n + 1);
        if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
                free(buf);
                buf = NULL;
        }
        fclose(f);
        *len = (size_t)n;
        return buf;
}

static void test_types(void)
{
        static const struct {
                uint32_t flags;
                enum lw_type type;
                const char *label;
        } cases[] = {
                { LW_F_SPIN, LW_SPINLOCK, "spinlock" },
                { LW_F_SPIN | LW_F_READ, LW_RWLOCK, "rwlock:R" },
                { LW_F_SPIN | LW_F_WRITE, LW_RWLOCK, "rwlock:W" },
                { LW_F_READ, LW_RWSEM_READ, "rwsem:R" },
                { LW_F_WRITE, LW_RWSEM_WRITE, "rwsem:W" },
                { LW_F_PERCPU | LW_F_READ, LW_PERCPU_RWSEM, "pcpu-sem:R" },
                { LW_F_PERCPU | LW_F_WRITE, LW_PERCPU_RWSEM, "pcpu-sem:W" },
                { LW_F_RT, LW_RTMUTEX, "rt-mutex" },
                { LW_F_RT | LW_F_READ, LW_RTMUTEX, "rwlock-rt:R" },
                { LW_F_MUTEX, LW_MUTEX, "mutex" },
                { LW_F_MUTEX | LW_F_SPIN, LW_MUTEX, "mutex" },
                { 0, LW_OTHER, "semaphore" },
                { 1U << 9, LW_OTHER, "flags=0x200" },
        };
        char buf[32];

        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                char name[64];
                snprintf(name, sizeof name, "flags 0x%x: type %d", cases[i].flags, cases[i].type);
                is_int(lw_flags_type(cases[i].flags), cases[i].type, name);
                is_str(lw_flags_label(cases[i].flags, buf, sizeof buf), cases[i].label, "  and label");
        }
        /* the sampler maps type t to metric M_LOCK_CONTENTIONS_SPINLOCK + t */
        for (int t = 0; t < LW_OTHER; t++) {
                char want[64];
                snprintf(want, sizeof want, "lock_contentions_%s", lw_type_metric_name(t));
                is_str(metric_table[M_LOCK_CONTENTIONS_SPINLOCK + t].name, want, want);
                is_int(metric_table[M_LOCK_CONTENTIONS_SPINLOCK + t].source, SRC_BPF, "  from BPF");
        }
        ok(metric_table[M_LOCK_WAIT_MAX_NS].max && !metric_table[M_LOCK_WAIT_NS].max,
           "lock_wait_max_ns combines by max, lock_wait_ns by sum");
}

static void caller(const struct ksyms *ks, const uint64_t *ips, size_t n, const char *want, const char *what)
{
        char buf[128];
        lw_caller_name(ks, ips, n, buf, sizeof buf);
        is_str(buf, want, what);
}

static void test_callers(const char *srcdir)
{
        char path[512], *buf;
        struct ksyms *ks = NULL;
        uint64_t off = 0;
        size_t len;
        const char *name;

        snprintf(path, sizeof path, "%s/tests/fixtures/kallsyms-lock.txt", srcdir);
        buf = slurp(path, &len);
        ok(buf != NULL, "read %s", path);
        if (!buf)
                return;
        is_int(ksyms_parse(buf, len, &ks), 0, "parse the fixture kallsyms");
        free(buf);
        is_int(ksyms_count(ks), 35, "35 symbols");

        name = ksyms_find(ks, 0xffffffff813b4790 + 0x43c, &off);
        is_str(name, "try_to_wake_up", "address -> symbol");
        is_int(off, 0x43c, "  and offset");
        name = ksyms_find(ks, 0xffffffffc0a01010, &off);
        is_str(name, "mod_func", "a module's symbol (the [module] column is not part of the name)");
        ok(ksyms_is_lock_function(ks, 0xffffffff8226ec30 + 0x10e), "spin slow path: lock text");
        ok(ksyms_is_lock_function(ks, 0xffffffff8226a430 + 0x3cc), "rwsem slow path: sched text");
        ok(ksyms_is_lock_function(ks, 0xffffffff813e9840 + 0x20), "__traceiter_contention_begin");
        ok(ksyms_is_lock_function(ks, 0xffffffff813e99c0 + 0x20), "perf_trace_contention_begin (glue)");
        ok(!ksyms_is_lock_function(ks, 0xffffffff813b4790 + 0x43c), "try_to_wake_up is not");

        {
                /* a spinlock taken in try_to_wake_up, from a page fault */
                const uint64_t st[] = { 0xffffffff8226ec30 + 0x10e, 0xffffffff8226e690 + 0x3b,
                                        0xffffffff813aea80 + 0x35,  0xffffffff813b4790 + 0x43c,
                                        0xffffffff81365200 + 0x23,  0xffffffff8225fb50 + 0x4ed, 0, 0 };
                /* mmap_lock for writing in vm_mmap_pgoff: perf's three
                 * skipped frames include vm_mmap_pgoff itself */
                const uint64_t mm[] = { 0xffffffff8226a430 + 0x3cc, 0xffffffff8226abd0 + 0x5c,
                                        0xffffffff815d3980 + 0xe9,  0xffffffff8225a090 + 0x71,
                                        0xffffffff810000ba + 0x76,  0, 0, 0 };
                /* after the three, more locking code to skip */
                const uint64_t nest[] = { 1, 2, 3, 0xffffffff82269460 + 0x10, 0xffffffff813e9840 + 0x8,
                                          0xffffffff815d3980 + 0x20, 0, 0 };
                const uint64_t mod[] = { 1, 2, 3, 0xffffffffc0a01000 + 0x10, 0, 0, 0, 0 };
                const uint64_t all[] = { 1, 2, 3, 0xffffffff82269460, 0xffffffff8226e690, 0, 0, 0 };
                const uint64_t none[LW_STACK_DEPTH] = { 0 };

                caller(ks, st, LW_STACK_DEPTH, "try_to_wake_up+0x43c", "spinlock stack -> try_to_wake_up+0x43c");
                caller(ks, mm, LW_STACK_DEPTH, "do_syscall_64+0x71", "rwsem:W stack -> do_syscall_64+0x71");
                caller(ks, nest, LW_STACK_DEPTH, "vm_mmap_pgoff+0x20", "mutex and tracepoint frames skipped");
                caller(ks, mod, LW_STACK_DEPTH, "mod_func+0x10", "a module's function");
                caller(ks, all, LW_STACK_DEPTH, "[locking code]", "every frame in the locking code");
                caller(ks, none, LW_STACK_DEPTH, "[unknown]", "no stack kept");
                caller(NULL, mm, LW_STACK_DEPTH, "0xffffffff8225a101", "no symbols: the raw address");
        }
        ksyms_free(ks);

        {
                const char hidden[] = "0000000000000000 T _stext\n0000000000000000 T do_syscall_64\n";
                struct ksyms *h = NULL;
                is_int(ksyms_parse(hidden, sizeof hidden - 1, &h), -ENODATA,
                       "kallsyms with hidden addresses (no CAP_SYSLOG): -ENODATA");
                is_int(ksyms_parse("garbage\n", 8, &h), -EINVAL, "no symbol line at all: -EINVAL");
        }
}

/* A kernel naming addresses as %pB does, for the fixture's symbols. */
static int fixture_sym(void *userdata, uint64_t addr, char *name, size_t size, uint64_t *off)
{
        const struct ksyms *ks = userdata;
        char buf[200];
        uint64_t o;
        const char *n = ksyms_find(ks, addr, &o);

        if (!n)
                return -ENOENT;
        snprintf(buf, sizeof buf, "%s+0x%llx/0x40 [vmlinux]", n, (unsigned long long)o);
        return lw_parse_symbol(buf, name, size, off);
}

static void test_by_name(const char *srcdir)
{
        char path[512], *buf, name[64], out[128];
        struct ksyms *ks = NULL;
        uint64_t off = 0;
        size_t len;

        is_int(lw_parse_symbol("__x64_sys_mprotect+0x1b/0x30", name, sizeof name, &off), 0, "%pB output parsed");
        is_str(name, "__x64_sys_mprotect", "  name");
        is_int(off, 0x1b, "  offset");
        is_int(lw_parse_symbol("mod_func+0x10/0x80 [mymod]", name, sizeof name, &off), 0, "with a module");
        is_str(name, "mod_func", "  name without the module");
        is_int(lw_parse_symbol("0xffffffff81000000", name, sizeof name, &off), -EINVAL, "an unnamed address: -EINVAL");
        ok(lw_is_lock_name("_raw_spin_lock_irqsave") && lw_is_lock_name("rwsem_down_write_slowpath") &&
           lw_is_lock_name("down_write_killable") && lw_is_lock_name("mutex_lock") &&
           lw_is_lock_name("__traceiter_contention_begin") && lw_is_lock_name("schedule"),
           "lock and scheduler functions are locking code by name");
        ok(!lw_is_lock_name("try_to_wake_up") && !lw_is_lock_name("do_syscall_64") &&
           !lw_is_lock_name("vm_mmap_pgoff"), "callers are not");

        snprintf(path, sizeof path, "%s/tests/fixtures/kallsyms-lock.txt", srcdir);
        buf = slurp(path, &len);
        if (!buf || ksyms_parse(buf, len, &ks) < 0) {
                free(buf);
                ok(0, "fixture for the name-based callers");
                return;
        }
        free(buf);
        {
                const uint64_t st[] = { 0xffffffff8226ec30 + 0x10e, 0xffffffff8226e690 + 0x3b,
                                        0xffffffff813aea80 + 0x35,  0xffffffff813b4790 + 0x43c, 0, 0, 0, 0 };
                const uint64_t nest[] = { 1, 2, 3, 0xffffffff82269460 + 0x10, 0xffffffff813e9840 + 0x8,
                                          0xffffffff815d3980 + 0x20, 0, 0 };
                lw_caller_name_by(fixture_sym, ks, st, LW_STACK_DEPTH, out, sizeof out);
                is_str(out, "try_to_wake_up+0x43c", "named by the kernel: the same caller as with kallsyms");
                lw_caller_name_by(fixture_sym, ks, nest, LW_STACK_DEPTH, out, sizeof out);
                is_str(out, "vm_mmap_pgoff+0x20", "  mutex_lock and the tracepoint skipped by name");
        }
        ksyms_free(ks);
}

/* stack ids of the replayed map: 1 and 2 are two stacks with the same
 * caller, 3 another one */
static int fixture_stack(void *userdata, int32_t id, uint64_t ips[LW_STACK_DEPTH])
{
        static const uint64_t s1[] = { 1, 2, 3, 0xffffffff81612820 + 0x1b };
        static const uint64_t s3[] = { 1, 2, 3, 0xffffffff815d3980 + 0xe9 };
        memset(ips, 0, LW_STACK_DEPTH * sizeof *ips);
        if (id == 1 || id == 2)
                memcpy(ips, s1, sizeof s1);
        else if (id == 3)
                memcpy(ips, s3, sizeof s3);
        else
                return -ENOENT;
        return 0;
}

static const struct ksyms *fixture_ks;

static void fixture_caller(void *userdata, int32_t id, char *buf, size_t size)
{
        uint64_t ips[LW_STACK_DEPTH] = { 0 };

        if (id < 0 || fixture_stack(userdata, id, ips) < 0)
                ips[0] = 0;
        lw_caller_name(fixture_ks, ips, LW_STACK_DEPTH, buf, size);
}

#define E(id, fl, cnt, tot, mx, mn, ep) { { (id), (fl), 0xffff888100000040ULL, 0, 0 }, { (cnt), (tot), (mx), (mn), (ep), 0, 0 } }
/* with a lock address, own slot and kind */
#define EL(id, fl, lk, own, kind, cnt, tot, mx, mn, ep) { { (id), (fl), (lk), (own), 0 }, { (cnt), (tot), (mx), (mn), (ep), (kind), 0 } }

static void fixture_lock(void *userdata, uint64_t addr, uint32_t kind, char *buf, size_t size)
{
        const char *k = lw_kind_name(kind), *sym;
        uint64_t off = 0;

        sym = k ? k : ksyms_find_data(fixture_ks, addr, &off);
        if (sym && off)
                snprintf(buf, size, "%s+0x%" PRIx64, sym, off);
        else
                snprintf(buf, size, "%s", sym ? sym : "");
}

static void test_runs(void)
{
        const char kall[] = "ffffffff815d3980 T vm_mmap_pgoff\nffffffff81612820 T __x64_sys_mprotect\n";
        /* map contents at the run's start (epoch 4 in force) */
        struct lw_entry e0[] = {
                E(1, LW_F_WRITE, 100, 50000, 9000, 10, 4),
                E(3, LW_F_SPIN, 7, 700, 300, 20, 2),
        };
        /* at a boundary inside the run (another run stopped), epoch 5 */
        struct lw_entry e1[] = {
                E(1, LW_F_WRITE, 130, 80000, 4000, 100, 5),   /* 30 waits, max 4000 */
                E(2, LW_F_WRITE, 10, 20000, 6000, 500, 5),    /* new stack, same caller */
                E(3, LW_F_SPIN, 7, 700, 300, 20, 2),          /* untouched: epoch 2, ignored */
        };
        /* at the run's stop, epoch 6 */
        struct lw_entry e2[] = {
                E(1, LW_F_WRITE, 160, 95000, 2500, 50, 6),
                E(2, LW_F_WRITE, 10, 20000, 6000, 500, 5),    /* no wait since: max/min not from here */
                E(3, LW_F_SPIN, 12, 1200, 150, 40, 6),
                E(-1, LW_F_READ, 2, 90, 60, 30, 6),           /* stack not kept */
        };
        struct lw_snap s0 = { .n = 2, .epoch = 4, .lost_task = 1, .lost_caller = 2, .lost_caller_ns = 50 };
        struct lw_snap s1 = { .n = 3, .epoch = 5 };
        struct lw_snap s2 = { .n = 4, .epoch = 6, .lost_task = 4, .lost_caller = 5, .lost_caller_ns = 350 };
        struct lw_acc acc = { 0 };
        struct lw_row *rows = NULL;
        struct lw_result res = { 0 };
        struct lw_lost lost;
        struct ksyms *ks = NULL;
        uint64_t sum_rows = 0;
        size_t n = 0;

        ksyms_parse(kall, sizeof kall - 1, &ks);
        s0.e = malloc(sizeof e0);
        memcpy(s0.e, e0, sizeof e0);
        lw_snap_sort(&s0);
        acc.start = s0;                 /* the run starts: its start reading */
        s1.e = e1;
        s2.e = e2;
        lw_snap_sort(&s1);
        lw_snap_sort(&s2);
        is_int(lw_acc_fold(&acc, &s1), 0, "fold a boundary inside the run");
        is_int(lw_acc_fold(&acc, &s2), 0, "fold the stop");
        fixture_ks = ks;
        is_int(lw_run_rows(&acc, &s2, fixture_caller, fixture_lock, NULL, 0, &res), 0, "the run's rows");
        rows = res.rows;
        n = res.n;
        lost = res.lost;
        is_int(n, 3, "3 rows: stacks 1 and 2 merged under one caller");
        if (n == 3) {
                is_str(rows[0].caller, "__x64_sys_mprotect+0x1b", "largest total first");
                is_str(rows[0].type, "rwsem:W", "  rwsem:W");
                is_int(rows[0].contended, 60 + 10, "  contended: (160 - 100) + (10 - 0)");
                is_int(rows[0].total_ns, 45000 + 20000, "  total: (95000 - 50000) + 20000");
                is_int(rows[0].max_ns, 6000, "  max over the run's epochs (not the 9000 from before it)");
                is_int(rows[0].min_ns, 50, "  min over the run's epochs");
                is_str(rows[1].caller, "vm_mmap_pgoff+0xe9", "second: the spinlock caller");
                is_int(rows[1].contended, 5, "  5 waits in the run");
                is_int(rows[1].total_ns, 500, "  500 ns");
                is_int(rows[1].max_ns, 150, "  max 150 (epoch 6 only)");
                is_str(rows[2].caller, "[unknown]", "a wait whose stack was not kept: [unknown]");
                is_str(rows[2].type, "rwsem:R", "  rwsem:R");
                for (size_t i = 0; i < n; i++)
                        sum_rows += rows[i].total_ns;
        }
        is_int(lost.untimed, 3, "untimed waits in the run: 4 - 1 (per-task map full)");
        is_int(lost.unattributed, 3, "waits missing from the table: 5 - 2 (per-caller map full)");
        is_int(lost.unattributed_ns, 300, "  and their wait: 350 - 50 ns");
        /* what the per-CPU lock_wait_ns of the run would say: every timed
         * wait, attributed or not */
        is_int(sum_rows + lost.unattributed_ns, 45000 + 20000 + 500 + 90 + 300,
               "per-caller total + unattributed = the per-CPU total");
        is_int(res.nlocks, 1, "every fixture wait on one lock: one by-lock row");
        if (res.nlocks == 1)
                ok(res.locks[0].callers == 3 && res.locks[0].contended == 70 + 5 + 2, "  3 callers, 77 waits");
        ok(!res.has_own && res.own_total_ns == 0, "a run without a cgroup has no own share");
        lw_result_clear(&res);
        free(acc.mm);
        free(s0.e);
        ksyms_free(ks);
}

/* Lock identity: keys that differ by lock address and own slot, merged
 * by caller (distinct locks counted) and by lock (distinct callers). */
static void test_lock_rows(void)
{
        const char kall[] = "ffffffff815d3980 T vm_mmap_pgoff\nffffffff81612820 T __x64_sys_mprotect\n"
                            "ffffffff83a01000 D jiffies_lock\nffffffff83a01040 b pgd_lock\n"
                            "ffffffff83a02000 D _edata\n";
        const uint64_t MM = 0xffff888104a1c0e8ULL, MM2 = 0xffff888104a1d0e8ULL, J = 0xffffffff83a01000ULL;
        /* the run starts with nothing in the map */
        struct lw_entry e2[] = {
                EL(1, LW_F_WRITE, MM, 0, LW_KIND_MMAP, 50, 5000, 400, 10, 1),
                EL(1, LW_F_WRITE, MM, 7, LW_KIND_MMAP, 30, 3000, 300, 20, 1),   /* own tasks, slot 7 */
                EL(2, LW_F_WRITE, MM2, 0, LW_KIND_MMAP, 10, 900, 200, 30, 1),   /* same caller, another mm */
                EL(3, LW_F_SPIN, J, 7, LW_KIND_OTHER, 4, 400, 150, 40, 1),       /* a static spinlock */
                EL(3, LW_F_SPIN, J + 0x48, 9, LW_KIND_OTHER, 2, 100, 60, 40, 1), /* pgd_lock+0x8, another run's slot */
                EL(1, LW_F_READ, MM, 0, LW_KIND_MMAP, 6, 6000, 3000, 500, 1),    /* readers of the first mm */
        };
        struct lw_snap s2 = { .n = ELEMENTSOF(e2), .epoch = 1, .e = e2 };
        struct lw_acc acc = { 0 };
        struct lw_result res = { 0 };
        struct ksyms *ks = NULL;
        uint64_t off = 0, sum_c = 0, sum_l = 0;

        is_int(ksyms_parse(kall, sizeof kall - 1, &ks), 0, "fixture kallsyms with data symbols");
        is_str(ksyms_find_data(ks, J, &off), "jiffies_lock", "a static lock: its data symbol");
        is_str(ksyms_find_data(ks, J + 0x48, &off), "pgd_lock", "inside a data symbol: that symbol");
        is_int(off, 8, "  at offset 8");
        ok(ksyms_find_data(ks, MM, &off) == NULL, "a heap address is no symbol's");
        ok(ksyms_find_data(ks, 0xffffffff815d3990ULL, &off) == NULL, "a text address is no static lock");
        ok(ksyms_find_data(ks, 0xffffffff83a03000ULL, &off) == NULL, "past the last symbol: none");
        lw_snap_sort(&s2);
        is_int(lw_acc_fold(&acc, &s2), 0, "fold the stop");
        fixture_ks = ks;
        is_int(lw_run_rows(&acc, &s2, fixture_caller, fixture_lock, NULL, 7, &res), 0, "rows of the run with slot 7");
        is_int(res.n, 3, "by caller: mprotect rwsem:W, mprotect rwsem:R, vm_mmap_pgoff spinlock");
        if (res.n == 3) {
                is_str(res.rows[0].caller, "__x64_sys_mprotect+0x1b", "  largest first");
                is_int(res.rows[0].contended, 90, "  90 waits: three keys merged");
                is_int(res.rows[0].locks, 2, "  on 2 distinct locks (two mm)");
                is_int(res.rows[0].own_contended, 30, "  30 of them the run's own");
                is_int(res.rows[0].own_total_ns, 3000, "  3000 ns own");
                is_int(res.rows[2].locks, 2, "the spinlock caller: 2 distinct locks");
                is_int(res.rows[2].own_contended, 4, "  own: slot 7 only, not another run's slot 9");
        }
        is_int(res.nlocks, 4, "by lock: two mm, jiffies_lock, pgd_lock+0x8");
        if (res.nlocks == 4) {
                is_str(res.locks[0].name, "mmap_lock", "the largest: an mmap_lock");
                ok(res.locks[0].addr == MM, "  the first mm's");
                is_int(res.locks[0].contended, 86, "  86 waits (writers and readers)");
                is_int(res.locks[0].callers, 2, "  from 2 callers (rwsem:W and rwsem:R rows)");
                is_str(res.locks[0].type, "rwsem:W", "  its type: that of most of its wait (8000 W vs 6000 R)");
                is_int(res.locks[0].max_ns, 3000, "  max is a maximum over its keys");
                is_str(res.locks[2].name, "jiffies_lock", "a static lock named by its symbol");
                is_str(res.locks[3].name, "pgd_lock+0x8", "  and symbol+offset inside one");
        }
        for (size_t i = 0; i < res.n; i++)
                sum_c += res.rows[i].total_ns;
        for (size_t i = 0; i < res.nlocks; i++)
                sum_l += res.locks[i].total_ns;
        ok(sum_c == sum_l && sum_c == 15400, "both tables hold the same wait (%llu, %llu ns)", (unsigned long long)sum_c,
           (unsigned long long)sum_l);
        ok(res.has_own && res.own_contended == 34 && res.own_total_ns == 3400, "the run's own: 34 waits, 3400 ns");
        lw_result_clear(&res);
        free(acc.mm);
        ksyms_free(ks);
}

/* lock_wait_max_ns is a maximum: a tick's total over CPUs, a run's value
 * per CPU, its node and system values and a rollup of ticks all combine by
 * max; and a run's locks go through run_lock and back. */
static void test_max_storage(void)
{
        char dir[] = "/tmp/test-lockwait.XXXXXX", db[256], *err = NULL;
        struct store *w = NULL;
        const int64_t S = 1000000000LL, t0 = 1796031478LL * S;
        int64_t tick[3], cursor = -1, v;
        const int64_t mx[3][2] = { { 5, 1 }, { 2, 9 }, { 7, 3 } };
        bool avail[_M_MAX];
        char *why[_M_MAX] = { 0 };
        double scale[_M_MAX], out[2];
        size_t merged = 0;

        if (!mkdtemp(dir)) {
                ok(0, "temporary directory");
                return;
        }
        snprintf(db, sizeof db, "%s/t.db", dir);
        is_int(store_open(db, STORE_WRITE, &w, &err), 0, "create a database");
        if (!w)
                return;
        for (int i = 0; i < _M_MAX; i++) {
                avail[i] = true;
                scale[i] = 1;
        }
        store_metrics_sync(w, avail, why, scale);
        store_begin(w);
        for (int i = 0; i < 3; i++) {
                store_add_tick(w, t0 + i * S, S, &tick[i]);
                store_add_cpu_values(w, tick[i], M_LOCK_WAIT_MAX_NS, mx[i], NULL, 2);
                store_add_cpu_values(w, tick[i], M_LOCK_WAIT_NS, mx[i], NULL, 2);
        }
        is_int(store_commit(w), 0, "three ticks of lock_wait_max_ns and lock_wait_ns");
        is_int(store_cpu_max(w, M_LOCK_WAIT_MAX_NS, tick[0] - 1, tick[2], out, 2), 0, "the run's per-CPU maxima");
        ok(out[0] == 7 && out[1] == 9, "  are 7 and 9 (got %g, %g)", out[0], out[1]);
        is_int(store_cpu_max(w, M_LOCK_WAIT_MAX_NS, tick[0], tick[1], out, 2), 0, "over the second tick only");
        ok(out[0] == 2 && out[1] == 9, "  2 and 9 (got %g, %g)", out[0], out[1]);

        {
                struct cpumap map = { .ncpus = 2, .nnodes = 1 };
                int node[2] = { 0, 0 };
                bool online[2] = { true, true }, has_node[1] = { true }, metrics[_M_MAX] = { false };
                double vals[_M_MAX * 2] = { 0 };
                struct store_total *t = NULL;
                size_t n = 0;
                double node_max = -1, sys_max = -1, node_sum = -1;

                map.node = node;
                map.online = online;
                map.has_node = has_node;
                metrics[M_LOCK_WAIT_MAX_NS] = metrics[M_LOCK_WAIT_NS] = true;
                vals[M_LOCK_WAIT_MAX_NS * 2] = 7;
                vals[M_LOCK_WAIT_MAX_NS * 2 + 1] = 9;
                vals[M_LOCK_WAIT_NS * 2] = 14;
                vals[M_LOCK_WAIT_NS * 2 + 1] = 13;
                is_int(runs_build_totals(vals, 2, &map, online, metrics, &t, &n), 0, "a run's totals");
                for (size_t i = 0; i < n; i++) {
                        if (streq(t[i].metric, "lock_wait_max_ns") && t[i].level == LEVEL_NODE)
                                node_max = t[i].value;
                        if (streq(t[i].metric, "lock_wait_max_ns") && t[i].level == LEVEL_SYSTEM)
                                sys_max = t[i].value;
                        if (streq(t[i].metric, "lock_wait_ns") && t[i].level == LEVEL_NODE)
                                node_sum = t[i].value;
                }
                ok(node_max == 9 && sys_max == 9, "  lock_wait_max_ns: node and system are the CPUs' max (9)");
                ok(node_sum == 27, "  lock_wait_ns: the node's is their sum (27)");
                free(t);
        }

        is_int(store_rollup_step(w, t0 + 10 * S, 60 * S, 100, &cursor, &merged), 1, "roll the three ticks up");
        is_int(store_cpu_max(w, M_LOCK_WAIT_MAX_NS, 0, tick[2], out, 2), 0, "the rollup's per-CPU values");
        ok(out[0] == 7 && out[1] == 9, "  are the maxima 7 and 9, not sums (got %g, %g)", out[0], out[1]);
        {
                int64_t total = -1;
                sqlite3 *h;
                sqlite3_stmt *st;
                if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
                    sqlite3_prepare_v2(h, "SELECT c.total FROM cpu_sample c JOIN metric m ON m.id = c.metric "
                                          "WHERE m.name = 'lock_wait_max_ns'", -1, &st, NULL) == SQLITE_OK) {
                        if (sqlite3_step(st) == SQLITE_ROW)
                                total = sqlite3_column_int64(st, 0);
                        sqlite3_finalize(st);
                }
                sqlite3_close(h);
                is_int(total, 9, "  and its total over CPUs is their max");
        }

        {
                struct store_lock in[2] = { { "__x64_sys_mprotect+0x1b", "rwsem:W", 440, 1340000000, 21670000, 1000, 1, false, 0, 0 },
                                            { "up_read+0x94", "spinlock", 221, 1380000, 19210, 300, 1, false, 0, 0 } };
                struct store_lock_lost lost = { .known = true, .untimed = 1, .unattributed = 2, .unattributed_ns = 3 },
                                       got_lost;
                struct store_lock_obj obj[2] = {
                        { "0xffff888104a1c0e8", "mmap_lock", "rwsem:W", 440, 1340000000, 21670000, 1, true, 400, 1300000000 },
                        { "0xffffffff83a01000", "jiffies_lock", "spinlock", 221, 1380000, 19210, 1, false, 0, 0 } },
                                      *gobj = NULL;
                struct store_lock *got = NULL;
                struct run_new rn = { .name = "r", .host = 0, .start = t0, .start_tick = tick[0] };
                struct host_info h = { .machine_id = "0123456789abcdef", .hostname = "box", .kernel = "6.18",
                                       .cpu_model = "x", .ncpus = 2, .nnodes = 1 };
                int64_t host = 0, id = 0;
                size_t n = 0;

                store_host_update(w, &h, t0, &host);
                rn.host = host;
                is_int(store_run_insert(w, &rn, &id), 0, "a run");
                is_int(store_run_locks_put(w, id, in, 2, obj, 2, &lost), 0, "its locks written");
                is_int(store_run_locks_get(w, id, &got, &n, &got_lost), 0, "and read back");
                is_int(n, 2, "  two rows");
                if (n == 2) {
                        is_str(got[0].caller, "__x64_sys_mprotect+0x1b", "  largest total first");
                        is_int(got[0].contended, 440, "  contended");
                        is_int(got[1].max_wait_ns, 19210, "  max");
                }
                ok(got_lost.known && got_lost.untimed == 1 && got_lost.unattributed == 2 &&
                   got_lost.unattributed_ns == 3, "  and what was lost");
                free(got);
                is_int(store_run_lock_objects_get(w, id, &gobj, &n), 0, "its lock objects read back");
                is_int(n, 2, "  two");
                if (n == 2) {
                        is_str(gobj[0].name, "mmap_lock", "  largest first, named");
                        is_str(gobj[0].lock, "0xffff888104a1c0e8", "  its address");
                        ok(gobj[0].has_own && gobj[0].own_total_wait_ns == 1300000000, "  its own share");
                        ok(!gobj[1].has_own, "  NULL own share stays unknown");
                }
                free(gobj);
                {
                        struct run_end re = { .status = "done", .end = t0 + 3 * S, .end_tick = tick[2], .length_ns = -1 };
                        store_run_finish(w, id, &re);
                }
                is_int(store_run_delete(w, "r"), 0, "the run deleted");
                is_int(store_run_locks_get(w, id, &got, &n, &got_lost), 0, "its locks");
                ok(n == 0 && !got_lost.known, "  went with it");
                free(got);
        }
        (void)v;
        store_close(w);
        unlink(db);
        {
                char p2[300];
                snprintf(p2, sizeof p2, "%s-wal", db);
                unlink(p2);
                snprintf(p2, sizeof p2, "%s-shm", db);
                unlink(p2);
        }
        rmdir(dir);
}

int main(void)
{
        const char *srcdir = getenv("srcdir");

        test_types();
        test_callers(srcdir ? srcdir : ".");
        test_by_name(srcdir ? srcdir : ".");
        test_runs();
        test_lock_rows();
        test_max_storage();
        printf("1..%d\n", tap_n);
        return tap_failed ? 1 : 0;
}
