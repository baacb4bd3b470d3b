/* procfs.c - parse /proc/stat, /proc/vmstat and numastat.
 *
 * The parsers take a buffer so that tests can feed them fixture files,
 * malformed ones included; the readers keep each file open and pread() it
 * from 0 every tick, which regenerates its content without an open().
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "macro.h"
#include "procfs.h"

/* Parse an unsigned decimal at *p, skipping leading blanks. */
static int parse_u64(const char **p, const char *end, uint64_t *ret)
{
        const char *q = *p;
        uint64_t v = 0;

        while (q < end && (*q == ' ' || *q == '\t'))
                q++;
        if (q == end || !isdigit((unsigned char)*q))
                return -EINVAL;
        for (; q < end && isdigit((unsigned char)*q); q++) {
                unsigned d = (unsigned)(*q - '0');
                if (v > (UINT64_MAX - d) / 10)
                        return -ERANGE;
                v = v * 10 + d;
        }
        *ret = v;
        *p = q;
        return 0;
}

/* One cpuN line, p..eol, p at "cpu" and a digit: its CPU number in
 * *ret_cpu as soon as it is read (-1 before), its columns in vals. */
static int procstat_line(const char *p, const char *eol, int ncpus, uint64_t (*vals)[PROCSTAT_FIELDS], int *ret_cpu)
{
        const char *q = p + 3;
        uint64_t cpu;
        int r, f;

        *ret_cpu = -1;
        r = parse_u64(&q, eol, &cpu);
        if (r < 0)
                return r;
        if (cpu >= (uint64_t)ncpus)
                return -ERANGE;
        if (q == eol || (*q != ' ' && *q != '\t'))
                return -EINVAL;
        *ret_cpu = (int)cpu;
        for (f = 0; f < PROCSTAT_FIELDS; f++) {
                const char *s = q;
                while (s < eol && (*s == ' ' || *s == '\t'))
                        s++;
                if (s == eol)
                        break;
                r = parse_u64(&q, eol, &vals[cpu][f]);
                if (r < 0)
                        return r;
        }
        if (f < 4)      /* user nice system idle: always there */
                return -EINVAL;
        for (; f < PROCSTAT_FIELDS; f++)
                vals[cpu][f] = 0;
        while (q < eol && (*q == ' ' || *q == '\t'))
                q++;
        return q == eol ? 0 : -EINVAL;
}

int procstat_parse(const char *buf, size_t len, int ncpus, uint64_t (*vals)[PROCSTAT_FIELDS], bool *present,
                   bool *bad)
{
        const char *p = buf, *end = buf + len;
        int lines = 0;

        for (int c = 0; c < ncpus; c++) {
                present[c] = false;
                if (bad)
                        bad[c] = false;
        }
        while (p < end) {
                const char *eol = memchr(p, '\n', (size_t)(end - p));

                if (!eol)
                        eol = end;
                if (eol - p > 3 && memcmp(p, "cpu", 3) == 0 && isdigit((unsigned char)p[3])) {
                        int cpu, r = procstat_line(p, eol, ncpus, vals, &cpu);

                        if (r < 0 && !bad)
                                return r;
                        if (r < 0 && cpu >= 0)
                                bad[cpu] = true;
                        if (r >= 0) {
                                present[cpu] = true;
                                lines++;
                        }
                }
                p = eol + 1;
        }
        return lines;
}

int kv_parse(const char *buf, size_t len, const char *const *keys, size_t nkeys, uint64_t *vals, bool *found)
{
        const char *p = buf, *end = buf + len;

        for (size_t i = 0; i < nkeys; i++)
                found[i] = false;
        while (p < end) {
                const char *eol = memchr(p, '\n', (size_t)(end - p)), *sp, *q;
                uint64_t v;
                int r;

                if (!eol)
                        eol = end;
                if (eol == p) {         /* empty line */
                        p = eol + 1;
                        continue;
                }
                sp = memchr(p, ' ', (size_t)(eol - p));
                if (!sp || sp == p)
                        return -EINVAL;
                q = sp;
                r = parse_u64(&q, eol, &v);
                if (r < 0)
                        return r;
                if (q != eol)
                        return -EINVAL;
                for (size_t i = 0; i < nkeys; i++)
                        if ((size_t)(sp - p) == strlen(keys[i]) && memcmp(p, keys[i], (size_t)(sp - p)) == 0) {
                                vals[i] = v;
                                found[i] = true;
                                break;
                        }
                p = eol + 1;
        }
        return 0;
}

int kvset_init(struct kvset *k, const char *const *keys, size_t n)
{
        memset(k, 0, sizeof *k);
        if (n > KVSET_MAX)
                return -E2BIG;
        for (size_t i = 0; i < n; i++) {
                k->key[i] = keys[i];
                k->len[i] = strlen(keys[i]);
                if (k->len[i] == 0)
                        return -EINVAL;
                k->first[(unsigned char)keys[i][0]] = true;
        }
        k->n = n;
        return 0;
}

int kvset_parse(const struct kvset *k, const char *buf, size_t len, uint64_t *vals, bool *found, size_t *ret_end)
{
        const char *p = buf, *end = buf + len;
        size_t nfound = 0, taken = 0;

        for (size_t i = 0; i < k->n; i++)
                found[i] = false;
        while (p < end && nfound < k->n) {
                const char *eol = memchr(p, '\n', (size_t)(end - p));

                if (!eol)
                        eol = end;
                if (k->first[(unsigned char)*p]) {
                        const char *sp = memchr(p, ' ', (size_t)(eol - p));
                        size_t n = (size_t)((sp ? sp : eol) - p);

                        for (size_t i = 0; i < k->n; i++) {
                                const char *q = sp;
                                int r;

                                if (k->len[i] != n || found[i] || memcmp(p, k->key[i], n) != 0)
                                        continue;
                                if (!sp)
                                        return -EINVAL;         /* the name alone */
                                r = parse_u64(&q, eol, &vals[i]);
                                if (r < 0)
                                        return r;
                                if (q != eol)
                                        return -EINVAL;
                                found[i] = true;
                                nfound++;
                                taken = (size_t)(eol - buf) + (eol < end);
                                break;
                        }
                }
                p = eol + 1;
        }
        if (ret_end)
                *ret_end = taken;
        return (int)nfound;
}

int procfile_open(struct procfile *f, const char *path)
{
        memset(f, 0, sizeof *f);
        f->fd = open(path, O_RDONLY | O_CLOEXEC);
        if (f->fd < 0)
                return negative_errno();
        f->cap = 4096;
        f->buf = malloc(f->cap);
        if (!f->buf) {
                procfile_close(f);
                return -ENOMEM;
        }
        return 0;
}

/* Has buf[0..len) a complete line that does not start with prefix? */
static bool past_prefix(const char *buf, size_t len, void *userdata)
{
        const char *prefix = userdata;
        size_t n = strlen(prefix);
        const char *p = buf, *end = buf + len;

        while (p < end) {
                const char *eol = memchr(p, '\n', (size_t)(end - p));
                if (!eol)
                        return false;
                if ((size_t)(eol - p) < n || memcmp(p, prefix, n) != 0)
                        return true;
                p = eol + 1;
        }
        return false;
}

int procfile_read_until(struct procfile *f, procfile_done_t done, void *userdata)
{
        /* The first read is from offset 0: the kernel makes the file's
         * text anew.  The next ones go on at the offset reached: a
         * seq_file then hands out the rest of the records it had made,
         * whole lines, and makes the following ones (each line is read
         * once, though not all of them at the same instant: harmless for
         * counters, whose deltas stay exact). */
        f->len = 0;
        for (;;) {
                size_t room = f->cap - f->len;
                ssize_t k;

                if (room == 0) {
                        char *b;
                        if (f->cap >= 64u << 20)
                                return -EFBIG;
                        b = realloc(f->buf, f->cap * 2);
                        if (!b)
                                return -ENOMEM;
                        f->buf = b;
                        f->cap *= 2;
                        continue;
                }
                if (f->len == 0 && f->ask > 0 && f->ask < room)
                        room = f->ask;
                k = pread(f->fd, f->buf + f->len, room, (off_t)f->len);
                if (k < 0)
                        return negative_errno();
                if (k == 0)
                        return 0;
                f->len += (size_t)k;
                if (done) {
                        size_t whole = f->len;
                        while (whole > 0 && f->buf[whole - 1] != '\n')
                                whole--;
                        if (whole > 0 && done(f->buf, whole, userdata)) {
                                f->len = whole;
                                return 0;
                        }
                }
        }
}

int procfile_read(struct procfile *f, const char *stop_prefix)
{
        return procfile_read_until(f, stop_prefix ? past_prefix : NULL, (void *)stop_prefix);
}

void procfile_close(struct procfile *f)
{
        if (f->fd >= 0)
                close(f->fd);
        free(f->buf);
        f->fd = -1;
        f->buf = NULL;
}

/* ---- /proc/pressure/{cpu,memory,io} and /proc/schedstat (sampler-pressure.c) ---- */

int psi_parse(const char *buf, size_t len, uint64_t totals[2], bool found[2])
{
        const char *p = buf, *end = buf + len;

        found[0] = found[1] = false;
        while (p < end) {
                const char *eol = memchr(p, '\n', (size_t)(end - p)), *q;
                int which;

                if (!eol)
                        eol = end;
                if (eol == p) {
                        p = eol + 1;
                        continue;
                }
                if (eol - p > 5 && memcmp(p, "some ", 5) == 0)
                        which = 0;
                else if (eol - p > 5 && memcmp(p, "full ", 5) == 0)
                        which = 1;
                else
                        return -EINVAL;
                /* the last field is total=N; the averages before it are not kept */
                for (q = eol; q > p && q[-1] != ' '; q--)
                        ;
                if (eol - q < 7 || memcmp(q, "total=", 6) != 0)
                        return -EINVAL;
                q += 6;
                {
                        int r = parse_u64(&q, eol, &totals[which]);
                        if (r < 0)
                                return r;
                }
                if (q != eol)
                        return -EINVAL;
                found[which] = true;
                p = eol + 1;
        }
        return 0;
}

int schedstat_parse(const char *buf, size_t len, int ncpus, int field, uint64_t *vals, bool *present)
{
        const char *p = buf, *end = buf + len;
        uint64_t version = 0;
        int lines = 0;

        for (int c = 0; c < ncpus; c++)
                present[c] = false;
        while (p < end) {
                const char *eol = memchr(p, '\n', (size_t)(end - p)), *q;
                uint64_t cpu, v = 0;
                int r;

                if (!eol)
                        eol = end;
                if (eol - p > 8 && memcmp(p, "version ", 8) == 0) {
                        q = p + 8;
                        r = parse_u64(&q, eol, &version);
                        if (r < 0)
                                return r;
                        if (version < SCHEDSTAT_VERSION_MIN || version > SCHEDSTAT_VERSION_MAX)
                                return -EPROTONOSUPPORT;
                } else if (eol - p > 3 && memcmp(p, "cpu", 3) == 0 && isdigit((unsigned char)p[3])) {
                        if (version == 0)
                                return -EINVAL;         /* a cpu line before the version */
                        q = p + 3;
                        r = parse_u64(&q, eol, &cpu);
                        if (r < 0)
                                return r;
                        if (cpu >= (uint64_t)ncpus)
                                return -ERANGE;
                        for (int f = 1; f <= field; f++) {
                                r = parse_u64(&q, eol, &v);
                                if (r < 0)
                                        return r;
                        }
                        vals[cpu] = v;
                        present[cpu] = true;
                        lines++;
                }
                p = eol + 1;
        }
        return version == 0 ? -EINVAL : lines;
}
