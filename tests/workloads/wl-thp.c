/* wl-thp K - fault in K transparent huge pages in an MADV_HUGEPAGE region,
 * check that they are huge, then unmap one 4 KiB page inside each: K PMD
 * splits.  Exits 77 if THP is off.  Prints "huge_pages=K". */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define HPAGE (2UL << 20)

static long anon_huge_kb(void *start, size_t len)
{
        FILE *f = fopen("/proc/self/smaps", "re");
        char line[512];
        long kb = -1;
        int in = 0;

        if (!f)
                return -1;
        while (fgets(line, sizeof line, f)) {
                unsigned long a, b;
                if (sscanf(line, "%lx-%lx ", &a, &b) == 2 && strchr(line, '-') < strchr(line, ' ')) {
                        in = a <= (uintptr_t)start && (uintptr_t)start + len <= b;
                        continue;
                }
                if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
                        break;
        }
        fclose(f);
        return kb;
}

int main(int argc, char **argv)
{
        long k = argc > 1 ? atol(argv[1]) : 16, page = sysconf(_SC_PAGESIZE), got;
        char mode[128] = "";
        FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "re");
        char *raw, *p;

        if (!f || !fgets(mode, sizeof mode, f) || strstr(mode, "[never]")) {
                fprintf(stderr, "wl-thp: transparent huge pages are disabled (%s)\n", mode);
                return 77;
        }
        fclose(f);
        if (k <= 0) {
                fprintf(stderr, "usage: wl-thp K (K > 0)\n");
                return 2;
        }
        raw = mmap(NULL, (size_t)(k + 1) * HPAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (raw == MAP_FAILED)
                return 1;
        p = (char *)(((uintptr_t)raw + HPAGE - 1) & ~(HPAGE - 1));
        if (madvise(p, (size_t)k * HPAGE, MADV_HUGEPAGE) < 0) {
                perror("wl-thp: madvise(MADV_HUGEPAGE)");
                return 77;
        }
        for (long i = 0; i < k; i++)
                p[i * HPAGE] = 1;
        got = anon_huge_kb(p, (size_t)k * HPAGE);
        if (got != k * (long)(HPAGE >> 10)) {
                fprintf(stderr, "wl-thp: got %ld kB of huge pages, wanted %ld (memory fragmented?)\n", got,
                        k * (long)(HPAGE >> 10));
                return 1;
        }
        /* Unmapping one small page inside a huge mapping splits its PMD. */
        for (long i = 0; i < k; i++)
                if (munmap(p + i * HPAGE + HPAGE / 2, (size_t)page) < 0)
                        return 1;
        printf("huge_pages=%ld\n", k);
        return 0;
}
