/* metric.c - the metric catalogue.
 *
 * One row per metric.  The daemon opens what the sources say; the client
 * takes names, scopes and units from here and availability from the
 * database (the daemon records why a metric could not be opened).
 */
#include "config.h"

#include <errno.h>
#include <linux/perf_event.h>

#include "macro.h"
#include "metric.h"

/* /proc/schedstat, cpuN lines (versions 15-17): field 8 is the run queue
 * wait in ns (daemon/kernel/procfs.h has the same number for the parser). */
#define SCHEDSTAT_FIELD_RUN_DELAY 8

/* kvm_exit's exit_reason for a PAUSE exit: VMX basic exit reason 40
 * (EXIT_REASON_PAUSE_INSTRUCTION, isa 1), SVM exit code 0x77 (SVM_EXIT_PAUSE,
 * isa 2).  The isa field tells the numberings apart. */
#define KVM_PAUSE_FILTER "(isa == 1 && exit_reason == 40) || (isa == 2 && exit_reason == 119)"

const struct metric_def metric_table[_M_MAX] = {
        [M_CONTEXT_SWITCHES] = { "context_switches", SCOPE_CPU, "switches", SRC_PERF_SW,
                "perf sw context-switches", "task switches on this CPU, to and from idle included",
                .perf_config = PERF_COUNT_SW_CONTEXT_SWITCHES },
        [M_CPU_MIGRATIONS] = { "cpu_migrations", SCOPE_CPU, "migrations", SRC_PERF_SW,
                "perf sw cpu-migrations", "tasks moved to this CPU from another",
                .perf_config = PERF_COUNT_SW_CPU_MIGRATIONS },
        /* The three fault events cost every fault on the machine (the
         * kernel walks the enabled events of the type on each one): counted
         * only with per_cpu_faults = yes (daemon/conf.c); pgfault and
         * pgmajfault below count the machine's faults for free. */
        [M_PAGE_FAULTS] = { "page_faults", SCOPE_CPU, "faults", SRC_PERF_SW,
                "perf sw page-faults", "page faults taken on this CPU (per_cpu_faults = yes; else see pgfault)",
                .perf_config = PERF_COUNT_SW_PAGE_FAULTS },
        [M_PAGE_FAULTS_MINOR] = { "page_faults_minor", SCOPE_CPU, "faults", SRC_PERF_SW,
                "perf sw minor-faults", "page faults served without I/O (per_cpu_faults = yes)",
                .perf_config = PERF_COUNT_SW_PAGE_FAULTS_MIN },
        [M_PAGE_FAULTS_MAJOR] = { "page_faults_major", SCOPE_CPU, "faults", SRC_PERF_SW,
                "perf sw major-faults", "page faults that waited for I/O (per_cpu_faults = yes; else see pgmajfault)",
                .perf_config = PERF_COUNT_SW_PAGE_FAULTS_MAJ },
        [M_LOCK_CONTENTIONS] = { "lock_contentions", SCOPE_CPU, "contentions", SRC_TRACEPOINT,
                "tracepoint lock:contention_begin", "kernel lock acquisitions that had to wait",
                .tracepoint = "lock:contention_begin" },
        [M_KVM_EXITS] = { "kvm_exits", SCOPE_CPU, "exits", SRC_TRACEPOINT,
                "tracepoint kvm:kvm_exit", "guest exits to the host (all reasons)",
                .tracepoint = "kvm:kvm_exit" },
        [M_KVM_PAUSE_EXITS] = { "kvm_pause_exits", SCOPE_CPU, "exits", SRC_TRACEPOINT,
                "tracepoint kvm:kvm_exit (exit reason PAUSE)", "pause-loop exits (VMX reason 40, SVM 0x77)",
                .tracepoint = "kvm:kvm_exit", .filter = KVM_PAUSE_FILTER },
        [M_KVM_PLE_WINDOW_UPDATES] = { "kvm_ple_window_updates", SCOPE_CPU, "updates", SRC_TRACEPOINT,
                "tracepoint kvm:kvm_ple_window_update", "pause-loop-exiting window grown or shrunk",
                .tracepoint = "kvm:kvm_ple_window_update" },
        [M_CYCLES] = { "cycles", SCOPE_CPU, "cycles", SRC_PERF_HW,
                "perf hw cpu-cycles", "CPU cycles (hardware PMU)",
                .perf_config = PERF_COUNT_HW_CPU_CYCLES },
        [M_INSTRUCTIONS] = { "instructions", SCOPE_CPU, "instructions", SRC_PERF_HW,
                "perf hw instructions", "instructions retired (hardware PMU)",
                .perf_config = PERF_COUNT_HW_INSTRUCTIONS },
        [M_CPU_USER] = { "cpu_user", SCOPE_CPU, "s", SRC_PROCSTAT, "/proc/stat user",
                "time in user mode (guest time included, as the kernel counts it)", .field = 0 },
        [M_CPU_NICE] = { "cpu_nice", SCOPE_CPU, "s", SRC_PROCSTAT, "/proc/stat nice",
                "time in user mode at positive nice", .field = 1 },
        [M_CPU_SYSTEM] = { "cpu_system", SCOPE_CPU, "s", SRC_PROCSTAT, "/proc/stat system",
                "time in the kernel", .field = 2 },
        [M_CPU_IDLE] = { "cpu_idle", SCOPE_CPU, "s", SRC_PROCSTAT, "/proc/stat idle",
                "idle time", .field = 3 },
        [M_CPU_IOWAIT] = { "cpu_iowait", SCOPE_CPU, "s", SRC_PROCSTAT, "/proc/stat iowait",
                "idle time with I/O outstanding", .field = 4 },
        [M_CPU_IRQ] = { "cpu_irq", SCOPE_CPU, "s", SRC_PROCSTAT, "/proc/stat irq",
                "time in hard interrupts", .field = 5 },
        [M_CPU_SOFTIRQ] = { "cpu_softirq", SCOPE_CPU, "s", SRC_PROCSTAT, "/proc/stat softirq",
                "time in soft interrupts", .field = 6 },
        [M_CPU_STEAL] = { "cpu_steal", SCOPE_CPU, "s", SRC_PROCSTAT, "/proc/stat steal",
                "time the hypervisor ran something else", .field = 7 },
        [M_CPU_GUEST] = { "cpu_guest", SCOPE_CPU, "s", SRC_PROCSTAT, "/proc/stat guest",
                "time running a guest's vCPU", .field = 8 },
        [M_NUMA_HIT] = { "numa_hit", SCOPE_NODE, "pages", SRC_NUMASTAT, "numastat numa_hit",
                "pages allocated on the node they were meant for", .key = "numa_hit" },
        [M_NUMA_MISS] = { "numa_miss", SCOPE_NODE, "pages", SRC_NUMASTAT, "numastat numa_miss",
                "pages allocated here though meant for another node", .key = "numa_miss" },
        [M_NUMA_FOREIGN] = { "numa_foreign", SCOPE_NODE, "pages", SRC_NUMASTAT, "numastat numa_foreign",
                "pages meant for this node allocated elsewhere", .key = "numa_foreign" },
        [M_NUMA_LOCAL] = { "numa_local", SCOPE_NODE, "pages", SRC_NUMASTAT, "numastat local_node",
                "pages allocated here by a process running here", .key = "local_node" },
        [M_NUMA_OTHER] = { "numa_other", SCOPE_NODE, "pages", SRC_NUMASTAT, "numastat other_node",
                "pages allocated here by a process running elsewhere", .key = "other_node" },
        [M_INTERLEAVE_HIT] = { "interleave_hit", SCOPE_NODE, "pages", SRC_NUMASTAT, "numastat interleave_hit",
                "interleave-policy pages allocated here as meant", .key = "interleave_hit" },
        [M_THP_FAULT_ALLOC] = { "thp_fault_alloc", SCOPE_SYSTEM, "huge pages", SRC_VMSTAT,
                "/proc/vmstat thp_fault_alloc", "huge pages allocated at page fault", .key = "thp_fault_alloc" },
        [M_THP_FAULT_FALLBACK] = { "thp_fault_fallback", SCOPE_SYSTEM, "faults", SRC_VMSTAT,
                "/proc/vmstat thp_fault_fallback", "faults that wanted a huge page and got small ones",
                .key = "thp_fault_fallback" },
        [M_THP_SPLIT_PAGE] = { "thp_split_page", SCOPE_SYSTEM, "huge pages", SRC_VMSTAT,
                "/proc/vmstat thp_split_page", "huge pages split into small pages", .key = "thp_split_page" },
        [M_THP_SPLIT_PMD] = { "thp_split_pmd", SCOPE_SYSTEM, "mappings", SRC_VMSTAT,
                "/proc/vmstat thp_split_pmd", "huge page mappings (PMDs) split into small ones",
                .key = "thp_split_pmd" },
        [M_THP_DEFERRED_SPLIT_PAGE] = { "thp_deferred_split_page", SCOPE_SYSTEM, "huge pages", SRC_VMSTAT,
                "/proc/vmstat thp_deferred_split_page", "huge pages queued for a later split",
                .key = "thp_deferred_split_page" },
        [M_THP_COLLAPSE_ALLOC] = { "thp_collapse_alloc", SCOPE_SYSTEM, "huge pages", SRC_VMSTAT,
                "/proc/vmstat thp_collapse_alloc", "huge pages khugepaged built from small ones",
                .key = "thp_collapse_alloc" },
        [M_NUMA_HINT_FAULTS] = { "numa_hint_faults", SCOPE_SYSTEM, "faults", SRC_VMSTAT,
                "/proc/vmstat numa_hint_faults", "NUMA balancing hinting faults", .key = "numa_hint_faults" },
        [M_NUMA_HINT_FAULTS_LOCAL] = { "numa_hint_faults_local", SCOPE_SYSTEM, "faults", SRC_VMSTAT,
                "/proc/vmstat numa_hint_faults_local", "hinting faults on pages already local",
                .key = "numa_hint_faults_local" },
        [M_NUMA_PAGES_MIGRATED] = { "numa_pages_migrated", SCOPE_SYSTEM, "pages", SRC_VMSTAT,
                "/proc/vmstat numa_pages_migrated", "pages NUMA balancing moved", .key = "numa_pages_migrated" },
        [M_PGMIGRATE_SUCCESS] = { "pgmigrate_success", SCOPE_SYSTEM, "pages", SRC_VMSTAT,
                "/proc/vmstat pgmigrate_success", "pages migrated, for any reason", .key = "pgmigrate_success" },
        /* scheduler pressure (daemon/sampler/sampler-pressure.c) */
        [M_PSI_CPU_SOME] = { "psi_cpu_some_us", SCOPE_SYSTEM, "us", SRC_PSI, "/proc/pressure/cpu some total",
                "time some runnable task waited for a CPU", .key = "cpu", .field = 0 },
        [M_PSI_MEMORY_SOME] = { "psi_memory_some_us", SCOPE_SYSTEM, "us", SRC_PSI, "/proc/pressure/memory some total",
                "time some task stalled on memory (reclaim, swap-in, thrashing)", .key = "memory", .field = 0 },
        [M_PSI_MEMORY_FULL] = { "psi_memory_full_us", SCOPE_SYSTEM, "us", SRC_PSI, "/proc/pressure/memory full total",
                "time all non-idle tasks stalled on memory at once", .key = "memory", .field = 1 },
        [M_PSI_IO_SOME] = { "psi_io_some_us", SCOPE_SYSTEM, "us", SRC_PSI, "/proc/pressure/io some total",
                "time some task waited for I/O", .key = "io", .field = 0 },
        [M_PSI_IO_FULL] = { "psi_io_full_us", SCOPE_SYSTEM, "us", SRC_PSI, "/proc/pressure/io full total",
                "time all non-idle tasks waited for I/O at once", .key = "io", .field = 1 },
        [M_RUNQUEUE_WAIT] = { "runqueue_wait_ns", SCOPE_CPU, "ns", SRC_SCHEDSTAT, "/proc/schedstat cpuN run_delay (or BPF sched_switch)",
                "time runnable tasks waited on this CPU's run queue", .field = SCHEDSTAT_FIELD_RUN_DELAY },
#define LOCK_SRC "BPF lock:contention_begin/end"
        [M_LOCK_WAIT_NS] = { "lock_wait_ns", SCOPE_CPU, "ns", SRC_BPF, LOCK_SRC,
                "time tasks waited for contended kernel locks, waits that ended on this CPU" },
        [M_LOCK_WAIT_MAX_NS] = { "lock_wait_max_ns", SCOPE_CPU, "ns", SRC_BPF, LOCK_SRC,
                "longest kernel lock wait that ended in the interval (a maximum: combined by max)", .max = true },
        [M_LOCK_CONTENTIONS_SPINLOCK] = { "lock_contentions_spinlock", SCOPE_CPU, "contentions", SRC_BPF, LOCK_SRC,
                "timed waits for spinlocks" },
        [M_LOCK_CONTENTIONS_RWLOCK] = { "lock_contentions_rwlock", SCOPE_CPU, "contentions", SRC_BPF, LOCK_SRC,
                "timed waits for rwlocks (read or write)" },
        [M_LOCK_CONTENTIONS_MUTEX] = { "lock_contentions_mutex", SCOPE_CPU, "contentions", SRC_BPF, LOCK_SRC,
                "timed waits for mutexes (spinning on the owner, then sleeping)" },
        [M_LOCK_CONTENTIONS_RWSEM_READ] = { "lock_contentions_rwsem_read", SCOPE_CPU, "contentions", SRC_BPF,
                LOCK_SRC, "timed waits for rw_semaphores, to read (mmap_lock in page faults)" },
        [M_LOCK_CONTENTIONS_RWSEM_WRITE] = { "lock_contentions_rwsem_write", SCOPE_CPU, "contentions", SRC_BPF,
                LOCK_SRC, "timed waits for rw_semaphores, to write (mmap_lock in mmap/munmap)" },
        [M_LOCK_CONTENTIONS_PERCPU_RWSEM] = { "lock_contentions_percpu_rwsem", SCOPE_CPU, "contentions", SRC_BPF,
                LOCK_SRC, "timed waits for percpu rw_semaphores" },
        [M_LOCK_CONTENTIONS_RTMUTEX] = { "lock_contentions_rtmutex", SCOPE_CPU, "contentions", SRC_BPF, LOCK_SRC,
                "timed waits for rt_mutexes" },
        [M_LOCK_WAIT_LOST] = { "lock_wait_lost", SCOPE_CPU, "waits", SRC_BPF, LOCK_SRC,
                "lock waits the bounded BPF maps could not keep (not timed, or not given a caller)" },
#undef LOCK_SRC
        /* A task's switch out, told apart as /proc/PID/status's
         * voluntary_ctxt_switches and nonvoluntary_ctxt_switches are
         * (kernel/sched/core.c __schedule: nvcsw when the task was not
         * preempted and had left TASK_RUNNING, nivcsw otherwise).  The
         * tracepoint's prev_state is the state's report bit (1..0x80, S D T
         * t X Z P I), 0 for a task switched out still runnable (sched_yield),
         * with TASK_REPORT_MAX (0x100 since Linux 4.14) added for a
         * preemption.  The idle task (pid 0 on every CPU) is left out:
         * context_switches counts its switches too, so the two need not
         * add up to it. */
        [M_VOLUNTARY_SWITCHES] = { "voluntary_switches", SCOPE_CPU, "switches", SRC_TRACEPOINT,
                "tracepoint sched:sched_switch (prev_state sleeping)",
                "tasks switched out because they blocked or slept (voluntary_ctxt_switches)",
                .tracepoint = "sched:sched_switch", .filter = "prev_pid != 0 && prev_state > 0 && prev_state < 256" },
        [M_INVOLUNTARY_SWITCHES] = { "involuntary_switches", SCOPE_CPU, "switches", SRC_TRACEPOINT,
                "tracepoint sched:sched_switch (prev_state runnable)",
                "tasks switched out while runnable: preempted or yielding (nonvoluntary_ctxt_switches)",
                .tracepoint = "sched:sched_switch", .filter = "prev_pid != 0 && (prev_state == 0 || prev_state >= 256)" },
        [M_PGFAULT] = { "pgfault", SCOPE_SYSTEM, "faults", SRC_VMSTAT, "/proc/vmstat pgfault",
                "page faults, minor and major, on the whole machine (the kernel's own count)", .key = "pgfault" },
        [M_PGMAJFAULT] = { "pgmajfault", SCOPE_SYSTEM, "faults", SRC_VMSTAT, "/proc/vmstat pgmajfault",
                "page faults that waited for I/O, on the whole machine", .key = "pgmajfault" },
        /* Stored in ns (scale 1e-9, daemon/sampler/sampler.c): a tick's
         * sampling costs well under a USER_HZ tick. */
        [M_SCALEMOND_CPU] = { "scalemond_cpu", SCOPE_SYSTEM, "s", SRC_SELF,
                "clock_gettime CLOCK_PROCESS_CPUTIME_ID",
                "scalemond's own CPU time, user and system, all its threads (taken out of everything else's)" },
};

const struct metric_def *metric_by_name(const char *name)
{
        int id = metric_id_by_name(name);
        return id < 0 ? NULL : &metric_table[id];
}

int metric_id_by_name(const char *name)
{
        for (int i = 0; i < _M_MAX; i++)
                if (streq(metric_table[i].name, name))
                        return i;
        return -ENOENT;
}

const char *metric_scope_name(enum metric_scope scope)
{
        switch (scope) {
        case SCOPE_CPU:
                return "cpu";
        case SCOPE_NODE:
                return "node";
        case SCOPE_SYSTEM:
                return "system";
        }
        return "?";
}
