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
