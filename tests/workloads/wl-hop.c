/* wl-hop N - move this thread between two online CPUs N times with
 * sched_setaffinity: at least N migrations.  Exits 77 with fewer than two
 * online CPUs.  Prints "hops=N". */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
        long n = argc > 1 ? atol(argv[1]) : 1000;
        int cpus[2], k = 0;
        cpu_set_t set;

        if (n <= 0) {
                fprintf(stderr, "usage: wl-hop N (N > 0)\n");
                return 2;
        }
        if (sched_getaffinity(0, sizeof set, &set) < 0)
                return 1;
        for (int c = 0; c < CPU_SETSIZE && k < 2; c++)
                if (CPU_ISSET(c, &set))
                        cpus[k++] = c;
        if (k < 2) {
                fprintf(stderr, "wl-hop: needs two CPUs to hop between\n");
                return 77;
        }
        for (long i = 0; i < n; i++) {
                CPU_ZERO(&set);
                CPU_SET(cpus[i % 2], &set);
                if (sched_setaffinity(0, sizeof set, &set) < 0)
                        return 1;
                if (sched_getcpu() != cpus[i % 2]) {
                        fprintf(stderr, "wl-hop: still on cpu %d after moving to %d\n", sched_getcpu(), cpus[i % 2]);
                        return 1;
                }
        }
        printf("hops=%ld\n", n);
        return 0;
}
