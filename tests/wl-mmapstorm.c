/* wl-mmapstorm THREADS SECONDS - threads of one process hammer mmap,
 * mprotect and munmap, which all take the process's mmap_lock for
 * writing: the kernel's rwsem contends (lock:contention_begin fires).
 * Prints "ops=N". */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static atomic_long ops;
static atomic_int stop;

static void *worker(void *arg)
{
        long page = sysconf(_SC_PAGESIZE), n = 0;
        (void)arg;
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

int main(int argc, char **argv)
{
        int threads = argc > 1 ? atoi(argv[1]) : 4;
        double secs = argc > 2 ? atof(argv[2]) : 1.0;
        pthread_t *t;
        struct timespec ts;

        if (threads <= 0 || threads > 1024 || secs <= 0) {
                fprintf(stderr, "usage: wl-mmapstorm THREADS SECONDS\n");
                return 2;
        }
        t = calloc((size_t)threads, sizeof *t);
        for (int i = 0; i < threads; i++)
                if (pthread_create(&t[i], NULL, worker, NULL) != 0)
                        return 1;
        ts.tv_sec = (time_t)secs;
        ts.tv_nsec = (long)((secs - (double)ts.tv_sec) * 1e9);
        nanosleep(&ts, NULL);
        atomic_store(&stop, 1);
        for (int i = 0; i < threads; i++)
                pthread_join(t[i], NULL);
        printf("ops=%ld\n", atomic_load(&ops));
        free(t);
        return 0;
}
