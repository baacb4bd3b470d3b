/* test-evgroup.c - decoding perf group reads.
 *
 * This machine has no hardware PMU, so it never multiplexes: the scaling
 * and "not counted" paths are driven here by replayed read buffers (a
 * seam for a fault that cannot be caused for real), laid out exactly as
 * the kernel writes PERF_FORMAT_GROUP|TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING|ID.
 * The last part opens a real software group and reads it from the kernel.
 */
#include "config.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include "evgroup.h"
#include "tap.h"

static void fake_group(struct evgroup *g)
{
        if (evgroup_alloc(g, 0, 2) < 0)
                abort();
        g->n = 2;
        g->id[0] = 11;
        g->id[1] = 22;
}

static void test_replayed(void)
{
        struct evgroup g;
        struct evdelta d;

        fake_group(&g);
        {
                uint64_t b[] = { 2, 1000, 1000, 100, 11, 200, 22 };
                ok(evgroup_decode(&g, b, 7, &d) == 0 && !d.valid, "first read only primes");
        }
        {
                uint64_t b[] = { 2, 2000, 2000, 110, 11, 220, 22 };
                ok(evgroup_decode(&g, b, 7, &d) == 0 && d.valid && !d.not_counted, "second read is a delta");
                ok(d.value[0] == 10 && d.value[1] == 20 && d.duty == 1.0, "unscaled when running == enabled");
        }
        {
                uint64_t b[] = { 2, 3000, 2250, 115, 11, 227, 22 };
                ok(evgroup_decode(&g, b, 7, &d) == 0 && d.valid, "multiplexed read");
                ok(d.value[0] == 20 && d.value[1] == 28, "scaled by enabled/running = 4");
                is_near(d.duty, 0.25, 1e-12, "duty cycle 0.25");
        }
        {
                uint64_t b[] = { 2, 4000, 2250, 115, 11, 227, 22 };
                ok(evgroup_decode(&g, b, 7, &d) == 0 && d.valid && d.not_counted && d.duty == 0,
                   "running did not move: not counted, no division by zero");
                ok(d.value[0] == 0 && d.value[1] == 0, "and no made-up values");
        }
        {
                uint64_t b[] = { 2, 5000, 3250, 237, 22, 125, 11 };
                ok(evgroup_decode(&g, b, 7, &d) == 0 && d.value[0] == 10 && d.value[1] == 10,
                   "members matched by id, not by position");
        }
        {
                uint64_t b[] = { 2, 6000, 4250, 120, 11, 237, 22 };
                ok(evgroup_decode(&g, b, 7, &d) == 0 && d.value[0] == 0, "a counter that went backwards gives 0");
        }
        {
                uint64_t b[] = { 2, 6000, 4250, 120, 11, 237, 22 };
                ok(evgroup_decode(&g, b, 7, &d) == 0 && d.enabled_ns == 0,
                   "enabled time that stands still is reported (detached events)");
        }
        {
                uint64_t b[] = { 3, 7000, 5250, 1, 11, 2, 22, 3, 33 };
                is_int(evgroup_decode(&g, b, 9, &d), -EIO, "member count mismatch refused");
        }
        {
                uint64_t b[] = { 2, 7000, 5250, 1, 11, 2, 99 };
                is_int(evgroup_decode(&g, b, 7, &d), -EIO, "unknown id refused");
        }
        {
                uint64_t b[] = { 2, 7000 };
                is_int(evgroup_decode(&g, b, 2, &d), -EIO, "short buffer refused");
        }
        evgroup_close(&g);
}

static void test_live(void)
{
        struct evspec specs[] = {
                { .metric = 0, .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CONTEXT_SWITCHES },
                { .metric = 1, .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_TASK_CLOCK + 1000 }, /* bogus */
                { .metric = 2, .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_PAGE_FAULTS },
                /* cpu-clock has a PMU of its own: a member from another PMU
                 * than the leader's must count too */
                { .metric = 3, .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK },
        };
        int err[4];
        struct evgroup g;
        struct evdelta d;
        int r = evgroup_open(&g, 0, specs, 4, err);

        if (r <= 0 && (err[0] == -EACCES || err[0] == -EPERM)) {
                printf("ok %d # SKIP no permission for system-wide perf events\n", ++tap_n);
                return;
        }
        is_int(r, 3, "real group on cpu0: three of four members open");
        ok(err[0] == 0 && err[1] < 0 && err[2] == 0 && err[3] == 0, "the bogus event is reported, the others open");
        {
                /* on cpu0, sleep (switch to idle and back) and fault in
                 * fresh pages: both must show in the group */
                cpu_set_t set;
                volatile char *mem;
                CPU_ZERO(&set);
                CPU_SET(0, &set);
                ok(sched_setaffinity(0, sizeof set, &set) == 0, "pinned to cpu0");
                ok(evgroup_read(&g, &d) == 0 && !d.valid, "first real read primes");
                mem = mmap(NULL, 64 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                for (int i = 0; i < 64; i++)
                        mem[i * 4096] = 1;
                usleep(20000);
                ok(evgroup_read(&g, &d) == 0 && d.valid && !d.not_counted && d.duty == 1.0,
                   "second real read is a delta");
                ok(d.value[0] >= 2, "our sleep shows as context switches on cpu0 (%llu)",
                   (unsigned long long)d.value[0]);
                ok(d.value[1] >= 64, "our 64 fresh pages show as page faults on cpu0 (%llu)",
                   (unsigned long long)d.value[1]);
                ok(d.value[2] >= 15000000ULL, "cpu-clock, from another PMU, advanced >= 15ms in 20ms (%llu ns)",
                   (unsigned long long)d.value[2]);
                munmap((void *)mem, 64 * 4096);
        }
        evgroup_close(&g);
        ok(g.n == 0, "closed");
}

int main(void)
{
        test_replayed();
        test_live();
        return tap_done();
}
