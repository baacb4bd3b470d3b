/* runqwait.c - load bpf/runqwait.bpf.c (embedded as a libbpf skeleton) and
 * read its per-CPU totals through mmap(), as lockwait.c does: one load at
 * start, no system call per tick. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bpfload.h"
#include "kbtf.h"
#include "macro.h"
#include "runqwait.h"
#include "timeutil.h"

#define RQ_PROGRAM "the run-queue wait BPF program"

#ifdef HAVE_BPF

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "runqwait-abi.h"
#include "runqwait.skel.h"

struct runqwait {
        struct runqwait_bpf *skel;
        struct rq_cpu *slot;            /* mmap()ed rq_stat, [nslots] */
        size_t map_len;
        int nslots, ncpus;
};

/* The task_struct fields the program reads, from the kernel's BTF. */
static int set_offsets(struct runqwait_bpf *skel, char **ret_why)
{
        struct kbtf_field f[] = {
                { "task_struct", "pid", -1 }, { "task_struct", "start_time", -1 },
                { "task_struct", "sched_info", -1 }, { "sched_info", "run_delay", -1 },
        };
        struct rq_offsets *o = (struct rq_offsets *)&skel->rodata->rq_off;
        int r = kbtf_offsets(KBTF_VMLINUX, f, ELEMENTSOF(f), false);

        if (r < 0 || f[0].offset < 0 || f[1].offset < 0 || f[2].offset < 0 || f[3].offset < 0) {
                if (asprintf(ret_why, "%s needs the kernel's BTF with task_struct.sched_info.run_delay "
                             "(CONFIG_DEBUG_INFO_BTF, CONFIG_SCHED_INFO): %s%s", RQ_PROGRAM,
                             r < 0 ? "cannot read it from " KBTF_VMLINUX ": " : "a field is missing from " KBTF_VMLINUX,
                             r < 0 ? strerror(-r) : "") < 0)
                        *ret_why = NULL;
                return r < 0 ? r : -EOPNOTSUPP;
        }
        *o = (struct rq_offsets){ .pid = f[0].offset, .start_time = f[1].offset,
                                  .run_delay = f[2].offset + f[3].offset };
        return 0;
}

int runqwait_open(int slots, struct runqwait **ret, char **ret_why)
{
        long page = sysconf(_SC_PAGESIZE);
        struct runqwait *rq;
        int ncpus, r;

        bpfload_begin();
        ncpus = bpfload_possible_cpus(ret_why);
        if (ncpus < 0)
                return ncpus;
        rq = calloc(1, sizeof *rq);
        if (!rq)
                return -ENOMEM;
        rq->ncpus = ncpus;
        rq->nslots = MAX(slots, ncpus);
        rq->skel = runqwait_bpf__open();
        if (!rq->skel) {
                r = negative_errno();
                *ret_why = bpfload_why(r, RQ_PROGRAM);
                goto fail;
        }
        rq->skel->rodata->max_cpus = (__u32)rq->nslots;
        bpf_map__set_max_entries(rq->skel->maps.rq_stat, (__u32)rq->nslots);
        r = set_offsets(rq->skel, ret_why);
        if (r < 0)
                goto fail;
        r = runqwait_bpf__load(rq->skel);
        if (r < 0) {
                *ret_why = bpfload_why(r, RQ_PROGRAM);
                goto fail;
        }
        rq->map_len = ((size_t)rq->nslots * sizeof(struct rq_cpu) + (size_t)page - 1) / (size_t)page * (size_t)page;
        rq->slot = mmap(NULL, rq->map_len, PROT_READ, MAP_SHARED, bpf_map__fd(rq->skel->maps.rq_stat), 0);
        if (rq->slot == MAP_FAILED) {
                r = negative_errno();
                rq->slot = NULL;
                if (asprintf(ret_why, "cannot map the run-queue wait totals: %s", strerror(-r)) < 0)
                        *ret_why = NULL;
                goto fail;
        }
        rq->skel->bss->attach_ns = (__u64)now_monotonic_ns();   /* task_struct.start_time's clock */
        r = runqwait_bpf__attach(rq->skel);
        if (r < 0) {
                if (asprintf(ret_why, "cannot attach %s to sched:sched_switch: %s%s%s", RQ_PROGRAM,
                             strerror(-r), bpfload_last_message()[0] ? ": " : "", bpfload_last_message()) < 0)
                        *ret_why = NULL;
                goto fail;
        }
        *ret = rq;
        return 0;
fail:
        runqwait_free(rq);
        return r;
}

struct runqwait *runqwait_free(struct runqwait *rq)
{
        if (!rq)
                return NULL;
        if (rq->slot)
                munmap(rq->slot, rq->map_len);
        runqwait_bpf__destroy(rq->skel);
        free(rq);
        return NULL;
}

int runqwait_ncpus(const struct runqwait *rq)
{
        return rq->ncpus;
}

uint64_t runqwait_read_cpu(const struct runqwait *rq, int cpu)
{
        /* written by CPU cpu with a plain store: read it once */
        return cpu < rq->nslots ? __atomic_load_n(&rq->slot[cpu].wait_ns, __ATOMIC_RELAXED) : 0;
}

#else /* !HAVE_BPF */

struct runqwait {
        int unused;
};

int runqwait_open(int slots, struct runqwait **ret, char **ret_why)
{
        *ret_why = bpfload_why(-EOPNOTSUPP, RQ_PROGRAM);
        return -EOPNOTSUPP;
}

struct runqwait *runqwait_free(struct runqwait *rq)
{
        return NULL;
}

int runqwait_ncpus(const struct runqwait *rq)
{
        return 0;
}

uint64_t runqwait_read_cpu(const struct runqwait *rq, int cpu)
{
        return 0;
}

#endif
