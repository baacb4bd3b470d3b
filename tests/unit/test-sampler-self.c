/* test-sampler-self.c - scalemond_cpu (daemon/sampler/sampler-self.c):
 * the sampler's own process CPU time per tick, checked against the
 * process clock read around each tick (its bounds) and against
 * /proc/self/stat's utime + stime (the kernel's other account of it), with
 * CPU burned by this thread and by a second one in between.  No root. */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "macro.h"
#include "metric.h"
#include "sampler.h"
#include "tap.h"

static int64_t cpu_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void *burn(void *arg)
{
        struct timespec ts;
        int64_t until;
        volatile uint64_t x = 0;

        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        until = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + *(const int64_t *)arg;
        do {
                for (int i = 0; i < 10000; i++)
                        x += (uint64_t)i;
                clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        } while ((int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec < until);
        return NULL;
}

/* utime + stime of this process in ns, from /proc/self/stat; -1 if not read */
static int64_t stat_ns(void)
{
        char buf[1024], *p;
        unsigned long long ut, st;
        FILE *f = fopen("/proc/self/stat", "re");
        size_t n;

        if (!f)
                return -1;
        n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = 0;
        p = strrchr(buf, ')');  /* the command may hold spaces */
        if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
                return -1;
        return (int64_t)((ut + st) * (1000000000ULL / (unsigned long long)sysconf(_SC_CLK_TCK)));
}

static const struct sample_value *self_value(const struct tick *t)
{
        for (size_t i = 0; i < t->nv; i++)
                if (t->v[i].metric == M_SCALEMOND_CPU)
                        return &t->v[i];
        return NULL;
}

int main(void)
{
        struct sampler_config cfg = { .sysroot = "/sys", .procroot = "/proc" };
        struct sampler *s = NULL;
        struct tick t = { 0 };
        const struct sample_value *v;
        char *err = NULL;
        bool en[_M_MAX] = { false };
        int64_t a0, a1, b0, b1, p0, p1, burn_ns = 150000000, hz_ns = 1000000000 / sysconf(_SC_CLK_TCK);
        pthread_t th;

        cfg.enabled[M_SCALEMOND_CPU] = true;
        if (sampler_new(&cfg, &s, &err) < 0) {
                printf("Bail out! sampler_new: %s\n", err ? err : "?");
                return 1;
        }
        ok(sampler_available(s, M_SCALEMOND_CPU), "scalemond_cpu available");
        ok(sampler_scale(s, M_SCALEMOND_CPU) == 1e-9, "stored in ns, scale 1e-9: seconds, as cpu_user");
        ok(streq(metric_table[M_SCALEMOND_CPU].unit, "s") && metric_table[M_SCALEMOND_CPU].scope == SCOPE_SYSTEM,
           "a system metric in s");

        a0 = cpu_ns();
        is_int(sampler_sample(s, &t), 0, "the first tick primes");
        a1 = cpu_ns();
        p0 = stat_ns();
        burn(&burn_ns);
        if (pthread_create(&th, NULL, burn, &burn_ns) == 0)
                pthread_join(th, NULL);
        b0 = cpu_ns();
        is_int(sampler_sample(s, &t), 1, "the second is a tick");
        b1 = cpu_ns();
        p1 = stat_ns();
        v = self_value(&t);
        ok(v && !v->null, "one scalemond_cpu value");
        ok(v && v->loc == 0 && v->value >= b0 - a1 && v->value <= b1 - a0,
           "its value (%lld ns) is the process clock's delta, between %lld and %lld",
           v ? (long long)v->value : -1LL, (long long)(b0 - a1), (long long)(b1 - a0));
        ok(v && v->value >= 2 * burn_ns, "both threads' CPU time counted (%lld ns, burned %lld)",
           v ? (long long)v->value : -1LL, (long long)(2 * burn_ns));
        ok(v && p0 >= 0 && p1 >= 0 && llabs(v->value - (p1 - p0)) <= 3 * hz_ns,
           "it agrees with /proc/self/stat utime+stime (%lld ns) within three clock ticks "
           "(each of utime and stime is whole ticks)",
           (long long)(p1 - p0));
        ok(sampler_totals(s)[M_SCALEMOND_CPU * sampler_nloc(s)] == (v ? v->value : -1), "the total is the delta");

        /* off: no value; on again: the delta of one tick, not of the time
         * it was off */
        is_int(sampler_reconfigure(s, en, &err), 0, "scalemond_cpu off");
        burn(&burn_ns);
        sampler_sample(s, &t);
        ok(!self_value(&t), "off: no value");
        en[M_SCALEMOND_CPU] = true;
        is_int(sampler_reconfigure(s, en, &err), 0, "on again");
        a1 = cpu_ns();
        sampler_sample(s, &t);
        b1 = cpu_ns();
        v = self_value(&t);
        ok(v && v->value <= b1 - a1 + burn_ns / 10 && v->value < burn_ns,
           "on again: one tick's delta (%lld ns), not the burn while it was off", v ? (long long)v->value : -1LL);
        tick_clear(&t);
        sampler_free(s);
        return tap_done();
}
