/* tap.h - Test Anything Protocol output for the C unit tests. */
#ifndef SCALEMON_TAP_H
#define SCALEMON_TAP_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_n, tap_failed;

static inline void tap_ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void tap_ok(int cond, const char *fmt, ...)
{
        va_list ap;
        printf("%s %d - ", cond ? "ok" : "not ok", ++tap_n);
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        printf("\n");
        if (!cond)
                tap_failed++;
        fflush(stdout);
}

#define ok(cond, ...) tap_ok(!!(cond), __VA_ARGS__)
#define is_int(got, want, name)                                                                   \
        do {                                                                                      \
                long long _g = (long long)(got), _w = (long long)(want);                          \
                tap_ok(_g == _w, "%s", name);                                                     \
                if (_g != _w)                                                                     \
                        printf("#   got %lld, want %lld (%s:%d)\n", _g, _w, __FILE__, __LINE__);  \
        } while (0)
#define is_str(got, want, name)                                                                   \
        do {                                                                                      \
                const char *_g = (got), *_w = (want);                                             \
                int _eq = _g && _w && strcmp(_g, _w) == 0;                                        \
                tap_ok(_eq, "%s", name);                                                          \
                if (!_eq)                                                                         \
                        printf("#   got '%s', want '%s' (%s:%d)\n", _g ? _g : "(null)",           \
                               _w ? _w : "(null)", __FILE__, __LINE__);                           \
        } while (0)
#define is_near(got, want, tol, name)                                                             \
        do {                                                                                      \
                double _g = (got), _w = (want);                                                   \
                tap_ok(fabs(_g - _w) <= (tol), "%s", name);                                       \
                if (!(fabs(_g - _w) <= (tol)))                                                    \
                        printf("#   got %.10g, want %.10g +- %g (%s:%d)\n", _g, _w, (double)(tol),\
                               __FILE__, __LINE__);                                               \
        } while (0)
#define contains(hay, needle, name)                                                               \
        do {                                                                                      \
                const char *_h = (hay);                                                           \
                int _c = _h && strstr(_h, (needle)) != NULL;                                      \
                tap_ok(_c, "%s", name);                                                           \
                if (!_c)                                                                          \
                        printf("#   '%s' does not contain '%s'\n", _h ? _h : "(null)", (needle)); \
        } while (0)

/* Remove a test's temporary directory and what is in it; one left behind
 * is not a failure. */
static inline void tap_rm_rf(const char *dir)
{
        char cmd[4200];

        if ((size_t)snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir) < sizeof cmd && system(cmd) != 0) {
                /* a temporary directory left behind */
        }
}

static inline int tap_done(void)
{
        printf("1..%d\n", tap_n);
        return tap_failed ? 1 : 0;
}

/* Read a whole fixture file from $srcdir/tests/fixtures. */
static inline char *fixture(const char *name, size_t *len)
{
        const char *srcdir = getenv("srcdir");
        char path[1024];
        FILE *f;
        char *buf;
        long n;

        snprintf(path, sizeof path, "%s/tests/fixtures/%s", srcdir ? srcdir : ".", name);
        f = fopen(path, "rb");
        if (!f) {
                printf("Bail out! cannot open fixture %s\n", path);
                exit(1);
        }
        fseek(f, 0, SEEK_END);
        n = ftell(f);
        fseek(f, 0, SEEK_SET);
        buf = malloc((size_t)n + 1);
        if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
                printf("Bail out! cannot read fixture %s\n", path);
                exit(1);
        }
        buf[n] = 0;
        fclose(f);
        *len = (size_t)n;
        return buf;
}

#endif
