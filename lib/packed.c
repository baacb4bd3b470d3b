/* packed.c - encode and decode the per-CPU value blobs of cpu_sample
 * (format in packed.h and schema/0004-packed.sql).
 *
 * Values are deltas of 64-bit counters over an interval, mostly small and
 * mostly zero on an idle CPU: LEB128 keeps a small count in a byte or two,
 * and a run of idle CPUs costs two bytes whatever its length.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "packed.h"

#define LEB_MAX 10      /* bytes of a 64-bit LEB128 number */

size_t packed_encode_bound(int ncpus)
{
        /* a value takes at most LEB_MAX bytes; a zero run of two or more
         * CPUs (1 + LEB128 of a count below 2^21) never more than they */
        return ncpus > 0 ? (size_t)ncpus * LEB_MAX : 0;
}

static size_t put_leb(uint8_t *p, uint64_t u)
{
        size_t n = 0;

        do {
                uint8_t b = u & 0x7f;
                u >>= 7;
                p[n++] = b | (u ? 0x80 : 0);
        } while (u);
        return n;
}

int packed_encode(const int64_t *vals, const bool *nulls, int ncpus, uint8_t *buf, size_t len, size_t *ret_len)
{
        size_t off = 0;
        int last = -1;          /* the last CPU whose value is not 0 */

        if (ncpus < 0 || ncpus > PACKED_MAX_CPUS)
                return -EINVAL;
        for (int c = 0; c < ncpus; c++) {
                if (nulls && nulls[c])
                        last = c;
                else if (vals[c] < 0)
                        return -ERANGE;
                else if (vals[c] != 0)
                        last = c;
        }
        for (int c = 0; c <= last;) {
                uint8_t tok[2 * LEB_MAX];
                size_t n;

                if (nulls && nulls[c]) {
                        tok[0] = 1;
                        n = 1;
                        c++;
                } else if (vals[c] == 0 && c + 1 <= last && vals[c + 1] == 0 && !(nulls && nulls[c + 1])) {
                        int run = 2;
                        while (c + run <= last && vals[c + run] == 0 && !(nulls && nulls[c + run]))
                                run++;
                        tok[0] = 0;
                        n = 1 + put_leb(tok + 1, (uint64_t)run - 2);
                        c += run;
                } else {
                        n = put_leb(tok, (uint64_t)vals[c] + 2);
                        c++;
                }
                if (len - off < n)
                        return -ENOBUFS;
                memcpy(buf + off, tok, n);
                off += n;
        }
        *ret_len = off;
        return 0;
}

void packed_iter_init(struct packed_iter *it, const void *blob, size_t len)
{
        it->p = blob;
        it->end = it->p ? it->p + len : it->p;
        it->cpu = 0;
}

static int get_leb(struct packed_iter *it, uint64_t *ret)
{
        uint64_t u = 0;

        for (int i = 0; i < LEB_MAX; i++) {
                uint8_t b;

                if (it->p == it->end)
                        return -EBADMSG;        /* truncated */
                b = *it->p++;
                if (i == LEB_MAX - 1 && b > 1)
                        return -EBADMSG;        /* past 64 bits */
                u |= (uint64_t)(b & 0x7f) << (7 * i);
                if (!(b & 0x80)) {
                        *ret = u;
                        return 0;
                }
        }
        return -EBADMSG;
}

int packed_next(struct packed_iter *it, int *ret_cpu, int64_t *ret_value, bool *ret_null)
{
        while (it->p != it->end) {
                uint64_t u;
                int r = get_leb(it, &u);

                if (r < 0)
                        return r;
                if (it->cpu >= PACKED_MAX_CPUS)
                        return -EBADMSG;
                if (u == 0) {
                        uint64_t k;
                        r = get_leb(it, &k);
                        if (r < 0)
                                return r;
                        if (k > (uint64_t)(PACKED_MAX_CPUS - it->cpu - 2))
                                return -EBADMSG;
                        it->cpu += (int)k + 2;
                        continue;
                }
                if (u - 2 > (uint64_t)INT64_MAX && u != 1)
                        return -EBADMSG;
                if (u == 2) {           /* a single zero */
                        it->cpu++;
                        continue;
                }
                *ret_cpu = it->cpu++;
                *ret_null = u == 1;
                *ret_value = u == 1 ? 0 : (int64_t)(u - 2);
                return 1;
        }
        return 0;
}

int packed_decode(const void *blob, size_t len, int64_t *vals, bool *nulls, int ncpus)
{
        struct packed_iter it;
        int64_t v;
        bool null;
        int c, r;

        for (int i = 0; i < ncpus; i++) {
                vals[i] = 0;
                if (nulls)
                        nulls[i] = false;
        }
        packed_iter_init(&it, blob, len);
        while ((r = packed_next(&it, &c, &v, &null)) > 0) {
                if (c >= ncpus)
                        return -ERANGE;
                vals[c] = v;
                if (nulls)
                        nulls[c] = null;
        }
        return r;
}

int packed_sum(const void *blob, size_t len, int64_t *ret_sum, int *ret_nulls)
{
        struct packed_iter it;
        int64_t v, sum = 0;
        bool null;
        int c, nnull = 0, r;

        packed_iter_init(&it, blob, len);
        while ((r = packed_next(&it, &c, &v, &null)) > 0) {
                if (null)
                        nnull++;
                else            /* wraps, like the 64-bit counters it sums */
                        sum = (int64_t)((uint64_t)sum + (uint64_t)v);
        }
        if (r < 0)
                return r;
        *ret_sum = sum;
        if (ret_nulls)
                *ret_nulls = nnull;
        return 0;
}
