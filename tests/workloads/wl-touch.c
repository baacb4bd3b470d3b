/* wl-touch M - map M fresh anonymous pages (no huge pages) and write one
 * byte to each: M minor page faults.  Prints "pages=M". */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
        long m = argc > 1 ? atol(argv[1]) : 10000, page = sysconf(_SC_PAGESIZE);
        volatile char *p;

        if (m <= 0) {
                fprintf(stderr, "usage: wl-touch M (M > 0)\n");
                return 2;
        }
        p = mmap(NULL, (size_t)m * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
                return 1;
        madvise((void *)p, (size_t)m * (size_t)page, MADV_NOHUGEPAGE);
        for (long i = 0; i < m; i++)
                p[i * page] = 1;
        printf("pages=%ld\n", m);
        return 0;
}
