/* bench-totals.c - what the "totals" request costs scalemond's loop at N
 * simulated CPUs (default 256): daemon/totals.c building the reply and
 * jansson writing it, in-process, against a real sampler on a simulated
 * CPU map (root, or perf_event_paranoid <= 0).  Prints the mean, best and
 * worst of 200 and the reply's size.  bench-exporter.sh runs it. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "macro.h"
#include "sampler.h"
#include "totals.h"

static double now_s(void)
{
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
        struct sampler_config cfg = { .sysroot = "/sys", .procroot = "/proc",
                                      .simulate_cpus = argc > 1 ? atoi(argv[1]) : 256 };
        struct sampler *s = NULL;
        struct tick tk = { 0 };
        char *err = NULL;
        double best = 1e9, worst = 0, sum = 0;
        size_t len = 0;
        const int n = 200;

        for (int m = 0; m < _M_MAX; m++)
                cfg.enabled[m] = true;
        if (sampler_new(&cfg, &s, &err) < 0) {
                printf("bench-totals: cannot open the sampler: %s\n", err ? err : "?");
                return 0;
        }
        for (int i = 0; i < 3; i++) {
                sampler_sample(s, &tk);
                usleep(20000);
        }
        tick_clear(&tk);
        for (int i = 0; i < n; i++) {
                double t0 = now_s(), d;
                json_t *o = totals_reply(s, NULL, &(struct totals_health){ .interval_ns = NSEC_PER_SEC });
                char *line = json_dumps(o, JSON_COMPACT);

                d = now_s() - t0;
                len = line ? strlen(line) : 0;
                free(line);
                json_decref(o);
                sum += d;
                best = MIN(best, d);
                worst = MAX(worst, d);
        }
        printf("%.3f %.3f %.3f %zu\n", sum / n * 1e3, best * 1e3, worst * 1e3, len);
        sampler_free(s);
        return 0;
}
