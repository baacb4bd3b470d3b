/* wl-mmapstorm [--session-nice N] [--pin] [--warmup SECS] [--times] THREADS SECONDS - threads of
 * one process hammer mmap, mprotect and munmap, which all take the
 * process's mmap_lock for writing: the kernel's rwsem contends
 * (lock:contention_begin fires).  Prints "ops=N"; with --times, then
 * "start_ns=S end_ns=E": CLOCK_REALTIME when the first thread was
 * started and when they were told to stop (the storm's true bounds, to
 * compare with a run's tick times).
 *
 * --session-nice N: a session of its own (setsid) and its autogroup's
 * nice set to N.  Where the kernel groups tasks by session for fair
 * scheduling (/proc/sys/kernel/sched_autogroup_enabled), a task's nice
 * only weighs against its own session: on a machine shared with other
 * sessions' builds, `nice -n -19` still leaves the storm its session's
 * share, a fraction of a CPU, and its threads then rarely hold and want
 * the lock at the same time (measured here under a load of 50-70: 0.4 CPUs,
 * 100-500 contentions in 2 s; with its own autogroup at -19: 1.4 CPUs,
 * some 30,000).  The rwsem counts a contention only when a writer gives
 * up spinning on a running owner and sleeps, so the storm needs its
 * threads on CPUs together.  Without autogroups, the process's nice
 * (setpriority) is set instead.
 *
 * --pin: thread k on the k-th CPU of the process's affinity mask.  Left
 * to the scheduler, two threads may share one CPU until a load balance
 * moves one: measured here, a storm then made 10-30 contentions per
 * 100 ms for its first 0.4-1.1 s, and 700-1,200 once its threads ran on
 * two CPUs at once, so its effective start was late by that much.
 *
 * --warmup SECS: the threads first spin on their CPUs for SECS, and the
 * storm (and start_ns) begins after: they are placed and running when it
 * starts. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static atomic_long ops;
static atomic_int stop, go = 1;

static int pin_cpu[1024];       /* --pin: thread k's CPU, or -1 */

static void *worker(void *arg)
{
        long page = sysconf(_SC_PAGESIZE), n = 0;
        int cpu = pin_cpu[(long)arg];

        if (cpu >= 0) {
                cpu_set_t set;
                CPU_ZERO(&set);
                CPU_SET(cpu, &set);
                pthread_setaffinity_np(pthread_self(), sizeof set, &set);
        }
        while (!atomic_load_explicit(&go, memory_order_acquire))
                ;       /* --warmup: on the CPU, not yet storming */
        while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
                char *p = mmap(NULL, (size_t)page * 4, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                if (p == MAP_FAILED)
                        break;
                p[0] = 1;
                mprotect(p, (size_t)page, PROT_READ);
                munmap(p, (size_t)page * 4);
                n++;
        }
        atomic_fetch_add(&ops, n);
        return NULL;
}

static long long realtime_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Own session, its autogroup at nice; 0 or -errno. */
static int session_nice(int nice)
{
        FILE *f;
        int r = 0;

        if (setsid() < 0 && errno != EPERM)     /* EPERM: already a group leader; keep its session */
                return -errno;
        f = fopen("/proc/self/autogroup", "we");
        if (f) {
                if (fprintf(f, "%d\n", nice) < 0)
                        r = -EIO;
                if (fclose(f) != 0 && r == 0)
                        r = -errno;
                if (r == 0)
                        return 0;
        }
        return setpriority(PRIO_PROCESS, 0, nice) < 0 ? -errno : 0;
}

static int usage(void)
{
        fprintf(stderr, "usage: wl-mmapstorm [--session-nice N] [--pin] [--warmup SECS] [--times] THREADS SECONDS\n");
        return 2;
}

int main(int argc, char **argv)
{
        int threads = 4, i = 1, r;
        double secs = 1.0, warmup = 0;
        bool times = false, pin = false;
        pthread_t *t;
        struct timespec ts;
        long long t0, t1;

        for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
                if (strcmp(argv[i], "--times") == 0)
                        times = true;
                else if (strcmp(argv[i], "--session-nice") == 0 && i + 1 < argc) {
                        char *end;
                        long n = strtol(argv[++i], &end, 10);
                        if (*end || n < -20 || n > 19)
                                return usage();
                        r = session_nice((int)n);
                        if (r < 0) {
                                fprintf(stderr, "wl-mmapstorm: cannot set the session's nice to %ld: %s\n", n,
                                        strerror(-r));
                                return 1;
                        }
                } else if (strcmp(argv[i], "--pin") == 0)
                        pin = true;
                else if (strcmp(argv[i], "--warmup") == 0 && i + 1 < argc) {
                        warmup = atof(argv[++i]);
                        if (!(warmup >= 0 && warmup <= 60))
                                return usage();
                } else
                        return usage();
        }
        if (i < argc)
                threads = atoi(argv[i++]);
        if (i < argc)
                secs = atof(argv[i++]);
        if (i < argc || threads <= 0 || threads > 1024 || secs <= 0)
                return usage();
        t = calloc((size_t)threads, sizeof *t);
        if (!t)
                return 1;
        for (int k = 0; k < threads; k++)
                pin_cpu[k] = -1;
        if (pin) {
                /* thread k on the k-th CPU it may use (round robin) */
                cpu_set_t set;
                int ncpu = 0, cpus[CPU_SETSIZE];
                if (sched_getaffinity(0, sizeof set, &set) == 0)
                        for (int c = 0; c < CPU_SETSIZE; c++)
                                if (CPU_ISSET(c, &set))
                                        cpus[ncpu++] = c;
                for (int k = 0; ncpu && k < threads; k++)
                        pin_cpu[k] = cpus[k % ncpu];
        }
        if (warmup > 0)
                atomic_store(&go, 0);
        t0 = realtime_ns();
        for (int k = 0; k < threads; k++)
                if (pthread_create(&t[k], NULL, worker, (void *)(long)k) != 0)
                        return 1;
        if (warmup > 0) {
                ts.tv_sec = (time_t)warmup;
                ts.tv_nsec = (long)((warmup - (double)ts.tv_sec) * 1e9);
                nanosleep(&ts, NULL);
                t0 = realtime_ns();
                atomic_store_explicit(&go, 1, memory_order_release);
        }
        ts.tv_sec = (time_t)secs;
        ts.tv_nsec = (long)((secs - (double)ts.tv_sec) * 1e9);
        nanosleep(&ts, NULL);
        atomic_store(&stop, 1);
        t1 = realtime_ns();
        for (int k = 0; k < threads; k++)
                pthread_join(t[k], NULL);
        printf("ops=%ld\n", atomic_load(&ops));
        if (times)
                printf("start_ns=%lld end_ns=%lld\n", t0, t1);
        free(t);
        return 0;
}
