/* lockwait.c - load bpf/lockwait.bpf.c (embedded as a libbpf skeleton),
 * read its per-CPU slots each tick, and give runs their contended locks.
 *
 * The program is attached once to each of the two tracepoints: a BPF
 * program on a tracepoint runs on whichever CPU hits it, so CPU hotplug
 * needs nothing here.  CAP_BPF (with CAP_PERFMON) is needed to load it,
 * nothing afterwards: the maps are read through the fds and the mapping
 * this process already holds.
 *
 * /proc/kallsyms is opened once, at load, and kept: its addresses are
 * shown only to a reader that had CAP_SYSLOG when it opened the file (or
 * with kernel.perf_event_paranoid <= 1).  It is read when a run's locks
 * are first named, not at load: reading and sorting it is most of the
 * daemon's start-up CPU, and a daemon may never stop a run with locks.
 * The symbols are read again
 * through the same file at a run stop that meets an address they do not
 * cover, so that a caller in a module loaded since is still named.  Each
 * stack's caller is named once and kept: a stack id never changes its
 * stack (the stack map is never emptied).  Without them (scalemon.service has no
 * CAP_SYSLOG) callers are named by the kernel itself, through the BPF
 * program lw_symbolize, and locking code is told by name
 * (lockwait-decode.h).
 *
 * Locks are named from their address: what the program recognised
 * (mmap_lock, siglock, this CPU's rq_lock), another CPU's runqueue lock
 * (the addresses the program noted in rq_lock_addr[]), a static lock's
 * data symbol, or nothing (the table shows the address).
 *
 * A run with a cgroup registers the cgroup's id in own_cg under a slot of
 * its own (two runs of one cgroup share it); the program keys its tasks'
 * waits with that slot, so the run's rows say which waits were its own.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpfload.h"
#include "kbtf.h"
#include "lockwait.h"
#include "macro.h"

#ifdef HAVE_BPF

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lockwait.skel.h"

#define LW_PROGRAM "the BPF program"

struct lockwait_run {
        struct lw_acc acc;
        struct lockwait *lw;            /* NULL once lw is freed */
        uint32_t own;                   /* its own_cg slot, 0: none */
        struct lockwait_run *next;
};

struct lockwait {
        struct lockwait_bpf *skel;
        struct lw_cpu *slot;            /* mmap()ed cpu_stat, [nslots] */
        size_t map_len;
        int nslots, ncpus;
        int kallsyms_fd;                /* kept: see the top of the file */
        struct ksyms *ks;               /* NULL: addresses hidden */
        struct lockwait_run *runs;      /* open runs */
        char (*caller)[128];            /* [stack map size]: each stack's caller, once named ... */
        bool *named;                    /* ... (a stack id always means the same stack) */
        uint32_t nstacks;
        bool reread;                    /* /proc/kallsyms read again at this run stop */
        bool ks_read;                   /* /proc/kallsyms read once (lazily) */
        uint64_t own_cg[LW_OWN_MAX];    /* [slot]: the cgroup id registered there, 0: free (slot 0 unused) */
        int own_refs[LW_OWN_MAX];       /* [slot]: runs using it */
};

static int read_kallsyms(struct lockwait *lw)
{
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, cap = 0;
        struct ksyms *ks = NULL;
        int r;

        if (lseek(lw->kallsyms_fd, 0, SEEK_SET) < 0)
                return negative_errno();
        for (;;) {
                ssize_t k;
                if (cap - len < 65536) {
                        char *t = realloc(buf, cap = cap ? cap * 2 : 1 << 22);
                        if (!t)
                                return -ENOMEM;
                        buf = t;
                }
                k = read(lw->kallsyms_fd, buf + len, cap - len);
                if (k < 0)
                        return negative_errno();
                if (k == 0)
                        break;
                len += (size_t)k;
        }
        r = ksyms_parse(buf, len, &ks);
        if (r < 0)
                return r;
        ksyms_free(lw->ks);
        lw->ks = ks;
        return 0;
}

/* The kernel fields the program reads, from the kernel's BTF; a kernel
 * without it (or without a field) leaves those locks named by address. */
static void set_offsets(struct lockwait_bpf *skel)
{
        struct kbtf_field f[] = {
                { "task_struct", "mm", -1 },          { "task_struct", "sighand", -1 },
                { "task_struct", "se", -1 },          { "sched_entity", "cfs_rq", -1 },
                { "cfs_rq", "rq", -1 },               { "rq", "__lock", -1 },
                { "mm_struct", "mmap_lock", -1 },     { "rw_semaphore", "wait_lock", -1 },
                { "sighand_struct", "siglock", -1 },
        };
        struct lw_offsets *o = (struct lw_offsets *)&skel->rodata->lw_off;

        (void)kbtf_offsets(KBTF_VMLINUX, f, ELEMENTSOF(f), false);
        *o = (struct lw_offsets){
                .task_mm = f[0].offset, .task_sighand = f[1].offset, .task_se = f[2].offset,
                .se_cfs_rq = f[3].offset, .cfs_rq_rq = f[4].offset, .rq_lock = f[5].offset,
                .mm_mmap_lock = f[6].offset, .rwsem_wait_lock = f[7].offset, .sighand_siglock = f[8].offset,
        };
}

int lockwait_open(int slots, struct lockwait **ret, char **ret_why)
{
        struct lockwait *lw;
        long page = sysconf(_SC_PAGESIZE);
        int ncpus, r;

        bpfload_begin();
        ncpus = bpfload_possible_cpus(ret_why);
        if (ncpus < 0)
                return ncpus;
        lw = calloc(1, sizeof *lw);
        if (!lw)
                return -ENOMEM;
        lw->kallsyms_fd = -1;
        lw->ncpus = ncpus;
        lw->nslots = MAX(slots, ncpus);

        lw->skel = lockwait_bpf__open();
        if (!lw->skel) {
                r = negative_errno();
                *ret_why = bpfload_why(r, LW_PROGRAM);
                goto fail;
        }
        lw->skel->rodata->max_cpus = (__u32)lw->nslots;
        set_offsets(lw->skel);
        bpf_map__set_max_entries(lw->skel->maps.cpu_stat, (__u32)lw->nslots);
#if ENABLE_TEST_SEAMS
        /* a per-caller map small enough for a test storm to fill */
        if (getenv("SCALEMON_TEST_LOCK_MAP_ENTRIES"))
                bpf_map__set_max_entries(lw->skel->maps.callers,
                                         (__u32)strtoul(getenv("SCALEMON_TEST_LOCK_MAP_ENTRIES"), NULL, 10));
#endif
        r = lockwait_bpf__load(lw->skel);
        if (r < 0) {
                *ret_why = bpfload_why(r, LW_PROGRAM);
                goto fail;
        }
        lw->nstacks = bpf_map__max_entries(lw->skel->maps.stacks);
        lw->caller = calloc(lw->nstacks, sizeof *lw->caller);
        lw->named = calloc(lw->nstacks, sizeof *lw->named);
        if (!lw->caller || !lw->named) {
                r = -ENOMEM;
                *ret_why = strdup("out of memory");
                goto fail;
        }
        lw->map_len = ((size_t)lw->nslots * sizeof(struct lw_cpu) + (size_t)page - 1) / (size_t)page * (size_t)page;
        lw->slot = mmap(NULL, lw->map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
                        bpf_map__fd(lw->skel->maps.cpu_stat), 0);
        if (lw->slot == MAP_FAILED) {
                r = negative_errno();
                lw->slot = NULL;
                if (asprintf(ret_why, "cannot map the BPF per-CPU totals: %s", strerror(-r)) < 0)
                        *ret_why = NULL;
                goto fail;
        }
        r = lockwait_bpf__attach(lw->skel);
        if (r < 0) {
                if (r == -ENOENT && asprintf(ret_why, "tracepoints lock:contention_begin/end not found (the kernel "
                                                      "lacks them: they appeared in Linux 5.19; or tracefs is not "
                                                      "mounted)") < 0)
                        *ret_why = NULL;
                else if (r != -ENOENT && asprintf(ret_why, "cannot attach the BPF program to lock:contention_begin/"
                                                           "end: %s%s%s", strerror(-r), bpfload_last_message()[0] ? ": " : "",
                                                  bpfload_last_message()) < 0)
                        *ret_why = NULL;
                goto fail;
        }
        /* opened now, while the daemon's credentials show the addresses;
         * read when a run's locks are first named */
        lw->kallsyms_fd = open("/proc/kallsyms", O_RDONLY | O_CLOEXEC);
        *ret = lw;
        return 0;
fail:
        lockwait_free(lw);
        return r;
}

struct lockwait *lockwait_free(struct lockwait *lw)
{
        if (!lw)
                return NULL;
        for (struct lockwait_run *p = lw->runs; p; p = p->next)
                p->lw = NULL;           /* their owners free them */
        if (lw->slot)
                munmap(lw->slot, lw->map_len);
        lockwait_bpf__destroy(lw->skel);
        if (lw->kallsyms_fd >= 0)
                close(lw->kallsyms_fd);
        ksyms_free(lw->ks);
        free(lw->caller);
        free(lw->named);
        free(lw);
        return NULL;
}

int lockwait_ncpus(const struct lockwait *lw)
{
        return lw->ncpus;
}

void lockwait_read_cpu(struct lockwait *lw, int cpu, struct lw_cpu *ret, uint64_t *ret_max)
{
        struct lw_cpu *s = &lw->slot[cpu];

        /* the program writes each field with a plain store: read each once */
        for (int t = 0; t < LW_NTYPES; t++)
                ret->count[t] = __atomic_load_n(&s->count[t], __ATOMIC_RELAXED);
        ret->wait_ns = __atomic_load_n(&s->wait_ns, __ATOMIC_RELAXED);
        ret->lost_task = __atomic_load_n(&s->lost_task, __ATOMIC_RELAXED);
        ret->lost_caller = __atomic_load_n(&s->lost_caller, __ATOMIC_RELAXED);
        ret->lost_caller_ns = __atomic_load_n(&s->lost_caller_ns, __ATOMIC_RELAXED);
        ret->lost_stack = __atomic_load_n(&s->lost_stack, __ATOMIC_RELAXED);
        ret->nested = __atomic_load_n(&s->nested, __ATOMIC_RELAXED);
        if (ret_max)
                *ret_max = __atomic_exchange_n(&s->max_ns, 0, __ATOMIC_RELAXED);
}

/* ---- runs ---- */

static int snap_grow(struct lw_snap *s, size_t *cap, size_t want)
{
        struct lw_entry *t;

        if (want <= *cap)
                return 0;
        t = realloc(s->e, want * sizeof *t);
        if (!t)
                return -ENOMEM;
        s->e = t;
        *cap = want;
        return 0;
}

/* The whole per-caller map: in batches of up to 4096 entries (one system
 * call each), or key by key where the kernel has no batch lookup. */
static int read_callers(struct lockwait *lw, struct lw_snap *s, size_t *cap)
{
        int fd = bpf_map__fd(lw->skel->maps.callers);
        struct lw_caller_key *keys = NULL, k, next;
        struct lw_caller_val *vals = NULL;
        uint32_t batch = 0, count;
        void *prev = NULL;
        bool first = true;
        int r = 0;

        keys = calloc(4096, sizeof *keys);
        vals = calloc(4096, sizeof *vals);
        if (!keys || !vals) {
                r = -ENOMEM;
                goto out;
        }
        for (;;) {
                LIBBPF_OPTS(bpf_map_batch_opts, opts);
                count = 4096;
                r = bpf_map_lookup_batch(fd, first ? NULL : &batch, &batch, keys, vals, &count, &opts);
                if (r < 0 && errno != ENOENT) {
                        r = -errno;
                        break;
                }
                if (snap_grow(s, cap, s->n + count) < 0) {
                        r = -ENOMEM;
                        goto out;
                }
                for (uint32_t i = 0; i < count; i++)
                        s->e[s->n++] = (struct lw_entry){ .key = keys[i], .val = vals[i] };
                first = false;
                if (r < 0) {            /* ENOENT: that was the last batch */
                        r = 0;
                        goto out;
                }
        }
        if (r != -EINVAL && r != -ENOTSUP && r != -EOPNOTSUPP)
                goto out;
        /* no batch lookup for hash maps here: key by key */
        s->n = 0;
        r = 0;
        while (bpf_map_get_next_key(fd, prev, &next) == 0) {
                if (snap_grow(s, cap, s->n < *cap ? *cap : (*cap ? *cap * 2 : 256)) < 0) {
                        r = -ENOMEM;
                        break;
                }
                s->e[s->n].key = next;
                if (bpf_map_lookup_elem(fd, &next, &s->e[s->n].val) == 0)
                        s->n++;
                k = next;
                prev = &k;
        }
out:
        free(keys);
        free(vals);
        return r;
}

static int read_snap(struct lockwait *lw, struct lw_snap *ret)
{
        struct lw_snap s = { 0 };
        size_t cap = 0;
        int r;

        s.epoch = __atomic_load_n(&lw->skel->bss->epoch, __ATOMIC_RELAXED);
        r = read_callers(lw, &s, &cap);
        if (r < 0) {
                free(s.e);
                return r;
        }
        for (int c = 0; c < lw->ncpus; c++) {
                s.lost_task += __atomic_load_n(&lw->slot[c].lost_task, __ATOMIC_RELAXED);
                s.nested += __atomic_load_n(&lw->slot[c].nested, __ATOMIC_RELAXED);
                s.lost_caller += __atomic_load_n(&lw->slot[c].lost_caller, __ATOMIC_RELAXED);
                s.lost_caller_ns += __atomic_load_n(&lw->slot[c].lost_caller_ns, __ATOMIC_RELAXED);
        }
        lw_snap_sort(&s);
        *ret = s;
        return 0;
}

/* A run boundary: read the per-caller map, fold it into every open run,
 * begin a new epoch.  *ret (if not NULL) gets the reading. */
static int boundary(struct lockwait *lw, struct lw_snap *ret)
{
        struct lw_snap s;
        int r = read_snap(lw, &s);

        if (r < 0)
                return r;
        for (struct lockwait_run *p = lw->runs; p; p = p->next) {
                r = lw_acc_fold(&p->acc, &s);
                if (r < 0) {
                        lw_snap_clear(&s);
                        return r;
                }
        }
        __atomic_store_n(&lw->skel->bss->epoch, s.epoch + 1, __ATOMIC_RELAXED);
        if (ret)
                *ret = s;
        else
                lw_snap_clear(&s);
        return 0;
}

int lockwait_run_start(struct lockwait *lw, struct lockwait_run **ret)
{
        struct lockwait_run *run = calloc(1, sizeof *run);
        int r;

        if (!run)
                return -ENOMEM;
        r = boundary(lw, &run->acc.start);
        if (r < 0) {
                free(run);
                return r;
        }
        run->lw = lw;
        run->next = lw->runs;
        lw->runs = run;
        *ret = run;
        return 0;
}

/* The run's slot is given back: the cgroup leaves own_cg with its last run. */
static void own_release(struct lockwait_run *run)
{
        struct lockwait *lw = run->lw;
        uint32_t k = run->own;

        run->own = 0;
        if (!lw || k == 0 || k >= LW_OWN_MAX || --lw->own_refs[k] > 0)
                return;
        (void)bpf_map_delete_elem(bpf_map__fd(lw->skel->maps.own_cg), &lw->own_cg[k]);
        lw->own_cg[k] = 0;
        __atomic_sub_fetch(&lw->skel->bss->own_n, 1, __ATOMIC_RELAXED);
}

void lockwait_run_free(struct lockwait_run *run)
{
        struct lockwait_run **pp;

        if (!run)
                return;
        own_release(run);
        for (pp = run->lw ? &run->lw->runs : NULL; pp && *pp; pp = &(*pp)->next)
                if (*pp == run) {
                        *pp = run->next;
                        break;
                }
        lw_acc_clear(&run->acc);
        free(run);
}

/* /proc/kallsyms, read the first time anything is named. */
static void ensure_kallsyms(struct lockwait *lw)
{
        if (lw->ks_read || lw->kallsyms_fd < 0)
                return;
        lw->ks_read = true;
        (void)read_kallsyms(lw);
}

/* An address's name from the kernel, through lw_symbolize's "%pB". */
static int symbolize(void *userdata, uint64_t addr, char *name, size_t size, uint64_t *ret_off)
{
        struct lockwait *lw = userdata;
        LIBBPF_OPTS(bpf_test_run_opts, opts);
        int r;

        lw->skel->bss->sym_addr = addr;
        lw->skel->bss->sym_name[0] = 0;
        r = bpf_prog_test_run_opts(bpf_program__fd(lw->skel->progs.lw_symbolize), &opts);
        if (r < 0)
                return r;
        lw->skel->bss->sym_name[sizeof lw->skel->bss->sym_name - 1] = 0;
        return lw_parse_symbol(lw->skel->bss->sym_name, name, size, ret_off);
}

static int stack_of(void *userdata, int32_t stackid, uint64_t ips[LW_STACK_DEPTH])
{
        struct lockwait *lw = userdata;
        __u32 id = (__u32)stackid;

        return bpf_map_lookup_elem(bpf_map__fd(lw->skel->maps.stacks), &id, ips) < 0 ? -ENOENT : 0;
}

/* A stack's caller, named once.  With kallsyms' addresses, a frame that
 * falls outside the symbols read so far (a module loaded since start: no
 * kernel function is 1 MiB long) has /proc/kallsyms read again, once per
 * run stop: reading it costs a few hundred milliseconds. */
static void caller_of(void *userdata, int32_t stackid, char *buf, size_t size)
{
        struct lockwait *lw = userdata;
        uint64_t ips[LW_STACK_DEPTH] = { 0 }, off;

        if (stackid >= 0 && (uint32_t)stackid < lw->nstacks && lw->named[stackid]) {
                snprintf(buf, size, "%s", lw->caller[stackid]);
                return;
        }
        if (stackid < 0 || stack_of(lw, stackid, ips) < 0)
                ips[0] = 0;
        ensure_kallsyms(lw);
        if (lw->ks && lw->kallsyms_fd >= 0 && !lw->reread)
                for (int k = 0; k < LW_STACK_DEPTH && ips[k]; k++)
                        if (!ksyms_find(lw->ks, ips[k], &off) || off >= (1 << 20)) {
                                lw->reread = true;
                                (void)read_kallsyms(lw);
                                break;
                        }
        if (lw->ks)
                lw_caller_name(lw->ks, ips, LW_STACK_DEPTH, buf, size);
        else
                lw_caller_name_by(symbolize, lw, ips, LW_STACK_DEPTH, buf, size);
        if (stackid >= 0 && (uint32_t)stackid < lw->nstacks && ips[0] && !startswith(buf, "0x")) {
                snprintf(lw->caller[stackid], sizeof lw->caller[stackid], "%s", buf);
                lw->named[stackid] = true;
        }
}

/* A lock's name: see the top of the file. */
static void lock_name(void *userdata, uint64_t addr, uint32_t kind, char *buf, size_t size)
{
        struct lockwait *lw = userdata;
        const char *k = lw_kind_name(kind), *sym;
        char name[128];
        uint64_t off = 0;

        buf[0] = 0;
        for (int c = 0; !k && c < lw->ncpus && c < LW_RQ_CPUS; c++)
                if (addr && __atomic_load_n(&lw->skel->bss->rq_lock_addr[c], __ATOMIC_RELAXED) == addr)
                        k = lw_kind_name(LW_KIND_RQ);
        if (k) {
                snprintf(buf, size, "%s", k);
                return;
        }
        ensure_kallsyms(lw);
        sym = lw->ks ? ksyms_find_data(lw->ks, addr, &off) : NULL;
        /* without the addresses, the kernel names it; a heap address
         * comes back as a number, which is no name */
        if (!lw->ks && symbolize(lw, addr, name, sizeof name, &off) == 0)
                sym = name;
        if (sym && off)
                snprintf(buf, size, "%s+0x%" PRIx64, sym, off);
        else if (sym)
                snprintf(buf, size, "%s", sym);
}

/* The cgroup v2 id of directory path: the kernfs node id that
 * bpf_get_current_cgroup_id() returns, as its file handle carries it. */
static int cgroup_id(const char *path, uint64_t *ret)
{
        struct {
                struct file_handle fh;
                uint64_t id;
        } h = { .fh.handle_bytes = sizeof(uint64_t) };
        int mount_id;
        struct stat st;

        if (name_to_handle_at(AT_FDCWD, path, &h.fh, &mount_id, 0) == 0 && h.fh.handle_bytes == sizeof(uint64_t)) {
                memcpy(ret, h.fh.f_handle, sizeof *ret);
                return 0;
        }
        if (stat(path, &st) < 0)        /* the same number on a 64-bit kernel */
                return negative_errno();
        *ret = st.st_ino;
        return 0;
}

int lockwait_run_own(struct lockwait_run *run, const char *cgroup)
{
        struct lockwait *lw = run->lw;
        uint32_t slot = 0, free_slot = 0;
        uint64_t id;
        int r;

        if (!lw || run->own)
                return -EINVAL;
        r = cgroup_id(cgroup, &id);
        if (r < 0)
                return r;
        for (uint32_t k = 1; k < LW_OWN_MAX && !slot; k++) {
                if (lw->own_cg[k] == id)
                        slot = k;
                else if (!free_slot && lw->own_refs[k] == 0)
                        free_slot = k;
        }
        if (!slot) {
                if (!free_slot)
                        return -ENOSPC;
                slot = free_slot;
                if (bpf_map_update_elem(bpf_map__fd(lw->skel->maps.own_cg), &id, &slot, BPF_ANY) < 0)
                        return negative_errno();
                lw->own_cg[slot] = id;
                __atomic_add_fetch(&lw->skel->bss->own_n, 1, __ATOMIC_RELAXED);
        }
        lw->own_refs[slot]++;
        run->own = slot;
        return 0;
}

int lockwait_run_stop(struct lockwait_run *run, struct lw_result *ret)
{
        struct lockwait *lw = run->lw;
        struct lw_snap end;
        int r = lw ? boundary(lw, &end) : -ESTALE;

        if (r >= 0) {
                lw->reread = false;
                r = lw_run_rows(&run->acc, &end, caller_of, lock_name, lw, run->own, ret);
                lw_snap_clear(&end);
        }
        lockwait_run_free(run);
        return r;
}

#else /* !HAVE_BPF */

struct lockwait {
        int unused;
};

int lockwait_open(int slots, struct lockwait **ret, char **ret_why)
{
        if (asprintf(ret_why, "scalemond was built without BPF support (%s)", SCALEMON_BPF_MISSING) < 0)
                *ret_why = NULL;
        return -EOPNOTSUPP;
}

struct lockwait *lockwait_free(struct lockwait *lw)
{
        return NULL;
}

int lockwait_ncpus(const struct lockwait *lw)
{
        return 0;
}

void lockwait_read_cpu(struct lockwait *lw, int cpu, struct lw_cpu *ret, uint64_t *ret_max)
{
        memset(ret, 0, sizeof *ret);
        if (ret_max)
                *ret_max = 0;
}

int lockwait_run_start(struct lockwait *lw, struct lockwait_run **ret)
{
        return -EOPNOTSUPP;
}

int lockwait_run_own(struct lockwait_run *run, const char *cgroup)
{
        return -EOPNOTSUPP;
}

int lockwait_run_stop(struct lockwait_run *run, struct lw_result *ret)
{
        return -EOPNOTSUPP;
}

void lockwait_run_free(struct lockwait_run *run)
{
}

#endif
