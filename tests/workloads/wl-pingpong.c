/* wl-pingpong N - N round trips of one byte between two processes over a
 * pair of pipes.  Each side blocks once per round trip, so the kernel does
 * at least 2N context switches.  Prints "round_trips=N". */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
        long n = argc > 1 ? atol(argv[1]) : 10000;
        int a[2], b[2];
        char c = 'x';
        pid_t pid;

        if (n <= 0 || pipe(a) < 0 || pipe(b) < 0) {
                fprintf(stderr, "usage: wl-pingpong N (N > 0)\n");
                return 2;
        }
        pid = fork();
        if (pid < 0)
                return 1;
        if (pid == 0) {
                for (long i = 0; i < n; i++)
                        if (read(a[0], &c, 1) != 1 || write(b[1], &c, 1) != 1)
                                _exit(1);
                _exit(0);
        }
        for (long i = 0; i < n; i++)
                if (write(a[1], &c, 1) != 1 || read(b[0], &c, 1) != 1)
                        return 1;
        if (waitpid(pid, NULL, 0) < 0)
                return 1;
        printf("round_trips=%ld\n", n);
        return 0;
}
