/* macro.h - cleanup attributes and small helpers shared by every module.
 *
 * The cleanup helpers follow the systemd idiom: a variable declared with
 * _cleanup_free_ or _cleanup_close_ is released when it leaves scope, and
 * TAKE_PTR()/TAKE_FD() hand ownership on.  File descriptors start at -1.
 */
#ifndef SCALEMON_MACRO_H
#define SCALEMON_MACRO_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _noreturn_ __attribute__((noreturn))

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

#define NSEC_PER_SEC  1000000000LL
#define NSEC_PER_MSEC 1000000LL
#define USEC_PER_SEC  1000000LL
#define NSEC_PER_USEC 1000LL

static inline void freep(void *p) { free(*(void **)p); }
#define _cleanup_free_ _cleanup_(freep)

static inline void closep(int *fd)
{
        if (*fd >= 0) {
                int saved = errno;
                close(*fd);
                errno = saved;
        }
}
#define _cleanup_close_ _cleanup_(closep)

static inline void fclosep(FILE **f)
{
        if (*f)
                fclose(*f);
}
#define _cleanup_fclose_ _cleanup_(fclosep)

#include <dirent.h>
static inline void closedirp_(DIR **d)
{
        if (*d)
                closedir(*d);
}
#define _cleanup_closedir_ _cleanup_(closedirp_)

/* Return the value of a pointer or fd and reset the variable, so that a
 * cleanup attribute on it no longer releases what was handed on. */
#define TAKE_PTR(p) ({ __typeof__(p) _p = (p); (p) = NULL; _p; })
#define TAKE_FD(fd) ({ int _fd = (fd); (fd) = -1; _fd; })

/* For functions that say why they failed in a char **ret_err (HACKING.md,
 * "How errors travel"): *ret_err, if ret_err is given, becomes the message
 * (malloc'd; NULL if out of memory), and r is returned. */
static inline int ret_errf(char **ret_err, int r, const char *fmt, ...) _printf_(3, 4);
static inline int ret_errf(char **ret_err, int r, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        if (ret_err && vasprintf(ret_err, fmt, ap) < 0)
                *ret_err = NULL;
        va_end(ap);
        return r;
}

/* Append to buf (size bytes) at *off, truncating rather than overflowing:
 * *off never passes size - 1, so appends can be chained without checks. */
static inline void strbuf_appendf(char *buf, size_t size, size_t *off, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static inline void strbuf_appendf(char *buf, size_t size, size_t *off, const char *fmt, ...)
{
        va_list ap;
        int n;

        if (size == 0 || *off >= size - 1)
                return;
        va_start(ap, fmt);
        n = vsnprintf(buf + *off, size - *off, fmt, ap);
        va_end(ap);
        if (n > 0)
                *off = MIN(*off + (size_t)n, size - 1);
}

static inline int negative_errno(void)
{
        return errno > 0 ? -errno : -EIO;
}

static inline int streq(const char *a, const char *b) { return strcmp(a, b) == 0; }

static inline const char *startswith(const char *s, const char *prefix)
{
        size_t n = strlen(prefix);
        return strncmp(s, prefix, n) == 0 ? s + n : NULL;
}

#endif
