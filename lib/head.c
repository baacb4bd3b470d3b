/* head.c - the head file's format (head.h): records built in a buffer,
 * and read back row by row with a torn last record dropped. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "head.h"
#include "macro.h"

static const char head_magic[8] = { 'S', 'M', 'H', 'E', 'A', 'D', '\r', '\n' };

/* CRC-32 (IEEE 802.3, reflected), table-driven */
static uint32_t crc_table[256];

static void crc_init(void)
{
        for (uint32_t i = 0; i < 256; i++) {
                uint32_t c = i;
                for (int k = 0; k < 8; k++)
                        c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
                crc_table[i] = c;
        }
}

static uint32_t crc32_of(const uint8_t *p, size_t n)
{
        uint32_t c = 0xffffffffu;

        if (!crc_table[1])
                crc_init();
        for (size_t i = 0; i < n; i++)
                c = crc_table[(c ^ p[i]) & 0xff] ^ (c >> 8);
        return c ^ 0xffffffffu;
}

/* ---- building ---- */

void head_buf_reset(struct head_buf *b)
{
        b->len = 0;
        b->open = false;
        b->err = 0;
}

void head_buf_free(struct head_buf *b)
{
        free(b->p);
        *b = (struct head_buf){ 0 };
}

static uint8_t *grow(struct head_buf *b, size_t n)
{
        if (b->err)
                return NULL;
        if (b->len + n > b->cap) {
                size_t cap = MAX(b->cap * 2, b->len + n + 256);
                uint8_t *p = realloc(b->p, cap);
                if (!p) {
                        b->err = -ENOMEM;
                        return NULL;
                }
                b->p = p;
                b->cap = cap;
        }
        b->len += n;
        return b->p + b->len - n;
}

static void put_u(struct head_buf *b, uint64_t v, int bytes)
{
        uint8_t *p = grow(b, (size_t)bytes);

        for (int i = 0; p && i < bytes; i++)
                p[i] = (uint8_t)(v >> (8 * i));
}

/* unsigned LEB128; signed values zigzag-encoded first */
static void put_uv(struct head_buf *b, uint64_t v)
{
        do {
                uint8_t *p = grow(b, 1);
                if (!p)
                        return;
                *p = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
                v >>= 7;
        } while (v);
}

static void put_sv(struct head_buf *b, int64_t v)
{
        put_uv(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

static void put_f64(struct head_buf *b, double d)
{
        uint64_t v;

        memcpy(&v, &d, sizeof v);
        put_u(b, v, 8);
}

static void put_bytes(struct head_buf *b, const void *src, size_t n)
{
        uint8_t *p = grow(b, n);

        if (p && n)
                memcpy(p, src, n);
}

static void put_str(struct head_buf *b, const char *s)
{
        size_t n = s ? strlen(s) + 1 : 0;

        n = MIN(n, (size_t)UINT16_MAX);
        put_uv(b, n);
        put_bytes(b, s, n);
        if (n && b->p && !b->err)
                b->p[b->len - 1] = 0;
}

void head_put_header(struct head_buf *b, uint64_t db_id)
{
        put_bytes(b, head_magic, sizeof head_magic);
        put_u(b, HEAD_VERSION, 4);
        put_u(b, HEAD_HEADER_SIZE, 4);
        put_u(b, db_id, 8);
        put_u(b, 0, 8);
}

int head_finish(struct head_buf *b)
{
        if (b->open && !b->err) {
                size_t n = b->len - b->rec - 8;
                uint32_t crc = crc32_of(b->p + b->rec + 8, n);
                for (int i = 0; i < 4; i++) {
                        b->p[b->rec + i] = (uint8_t)(n >> (8 * i));
                        b->p[b->rec + 4 + i] = (uint8_t)(crc >> (8 * i));
                }
        }
        b->open = false;
        return b->err;
}

void head_put_tick(struct head_buf *b, int64_t id, int64_t t, int64_t dur)
{
        head_finish(b);
        b->rec = b->len;
        put_u(b, 0, 8);                 /* length and CRC, by head_finish() */
        b->open = !b->err;
        put_u(b, HEAD_TICK, 1);
        put_sv(b, id);
        put_sv(b, t);
        put_sv(b, dur);
}

void head_put_sample(struct head_buf *b, int64_t metric, int loc, int64_t value, bool null)
{
        put_u(b, HEAD_SAMPLE, 1);
        put_sv(b, metric);
        put_sv(b, loc);
        put_u(b, null, 1);
        put_sv(b, value);
}

void head_put_cpu(struct head_buf *b, int64_t metric, int64_t total, bool total_null, const uint8_t *vals, size_t n)
{
        put_u(b, HEAD_CPU, 1);
        put_sv(b, metric);
        put_u(b, total_null, 1);
        put_sv(b, total);
        put_uv(b, n);
        put_bytes(b, vals, n);
}

void head_put_own(struct head_buf *b, int64_t run, int64_t metric, double value)
{
        put_u(b, HEAD_OWN, 1);
        put_sv(b, run);
        put_sv(b, metric);
        put_f64(b, value);
}

void head_put_mux(struct head_buf *b, int cpu, const char *grp, double duty)
{
        put_u(b, HEAD_MUX, 1);
        put_sv(b, cpu);
        put_f64(b, duty);
        put_str(b, grp);
}

void head_put_event(struct head_buf *b, int64_t t, const char *kind, int cpu, const char *detail)
{
        put_u(b, HEAD_EVENT, 1);
        put_sv(b, t);
        put_sv(b, cpu);
        put_str(b, kind);
        put_str(b, detail);
}

/* ---- reading ---- */

static uint64_t get_u(const uint8_t *p, int bytes)
{
        uint64_t v = 0;

        for (int i = 0; i < bytes; i++)
                v |= (uint64_t)p[i] << (8 * i);
        return v;
}

int head_iter_init(struct head_iter *it, const uint8_t *p, size_t n, uint64_t *ret_db_id, char *err, size_t errlen)
{
        *it = (struct head_iter){ .p = p, .n = n, .off = HEAD_HEADER_SIZE };
        if (n < HEAD_HEADER_SIZE || memcmp(p, head_magic, sizeof head_magic) != 0) {
                snprintf(err, errlen, "not a scalemon head file (bad magic)");
                return -EBADMSG;
        }
        if (get_u(p + 8, 4) != HEAD_VERSION || get_u(p + 12, 4) != HEAD_HEADER_SIZE) {
                snprintf(err, errlen, "head file version %u (header size %u), this program reads version %d",
                         (unsigned)get_u(p + 8, 4), (unsigned)get_u(p + 12, 4), HEAD_VERSION);
                return -EBADMSG;
        }
        *ret_db_id = get_u(p + 16, 8);
        it->row = it->rec_end = it->off;
        return 0;
}

/* Step into the next record: true if there is a whole one with its CRC. */
static bool next_record(struct head_iter *it)
{
        size_t len;

        if (it->off == it->n)
                return false;
        if (it->n - it->off < 8) {
                it->torn = true;
                return false;
        }
        len = (size_t)get_u(it->p + it->off, 4);
        if (len > it->n - it->off - 8 || len == 0 ||
            crc32_of(it->p + it->off + 8, len) != (uint32_t)get_u(it->p + it->off + 4, 4)) {
                it->torn = true;
                return false;
        }
        it->row = it->off + 8;
        it->rec_end = it->off + 8 + len;
        it->off = it->rec_end;
        return true;
}

/* A row's fields, with the bounds of its record checked. */
static const uint8_t *take(struct head_iter *it, size_t n)
{
        const uint8_t *p;

        if (n > it->rec_end - it->row)
                return NULL;
        p = it->p + it->row;
        it->row += n;
        return p;
}

/* A varint of the record: false past its end or over 64 bits. */
static bool take_uv(struct head_iter *it, uint64_t *ret)
{
        uint64_t v = 0;

        for (int shift = 0; shift < 64; shift += 7) {
                const uint8_t *p = take(it, 1);
                if (!p)
                        return false;
                v |= (uint64_t)(*p & 0x7f) << shift;
                if (!(*p & 0x80)) {
                        *ret = v;
                        return true;
                }
        }
        return false;
}

static bool take_sv(struct head_iter *it, int64_t *ret)
{
        uint64_t u;

        if (!take_uv(it, &u))
                return false;
        *ret = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
        return true;
}

static bool take_int(struct head_iter *it, int *ret)
{
        int64_t v;

        if (!take_sv(it, &v) || v < INT32_MIN || v > INT32_MAX)
                return false;
        *ret = (int)v;
        return true;
}

static bool take_f64(struct head_iter *it, double *ret)
{
        const uint8_t *p = take(it, 8);
        uint64_t v;

        if (!p)
                return false;
        v = get_u(p, 8);
        memcpy(ret, &v, sizeof v);
        return true;
}

static bool take_flag(struct head_iter *it, bool *ret)
{
        const uint8_t *p = take(it, 1);

        if (!p || *p > 1)
                return false;
        *ret = *p;
        return true;
}

static const char *take_str(struct head_iter *it)
{
        const uint8_t *s;
        uint64_t n;

        if (!take_uv(it, &n) || n > UINT16_MAX)
                return NULL;
        if (n == 0)
                return "";
        s = take(it, n);
        return s && s[n - 1] == 0 ? (const char *)s : NULL;
}

static int read_row(struct head_iter *it, struct head_row *r, int kind)
{
        uint64_t n = 0;
        bool ok;

        switch (kind) {
        case HEAD_TICK:
                ok = take_sv(it, &r->tick) && take_sv(it, &r->t) && take_sv(it, &r->dur);
                it->tick = r->tick;
                break;
        case HEAD_SAMPLE:
                ok = take_sv(it, &r->metric) && take_int(it, &r->loc) && take_flag(it, &r->null) &&
                     take_sv(it, &r->value);
                break;
        case HEAD_CPU:
                ok = take_sv(it, &r->metric) && take_flag(it, &r->null) && take_sv(it, &r->value) &&
                     take_uv(it, &n) && n <= it->rec_end - it->row && (r->blob = take(it, (size_t)n));
                r->blob_len = (size_t)n;
                break;
        case HEAD_OWN:
                ok = take_sv(it, &r->run) && take_sv(it, &r->metric) && take_f64(it, &r->dval);
                break;
        case HEAD_MUX:
                ok = take_int(it, &r->loc) && take_f64(it, &r->dval) && (r->text = take_str(it));
                break;
        case HEAD_EVENT:
                ok = take_sv(it, &r->t) && take_int(it, &r->loc) && (r->text = take_str(it)) &&
                     (r->text2 = take_str(it));
                if (ok && !r->text2[0])
                        r->text2 = NULL;
                break;
        default:
                ok = false;
        }
        return ok ? 1 : -EBADMSG;
}

int head_iter_next(struct head_iter *it, struct head_row *row)
{
        const uint8_t *k;
        bool first = false;

        if (it->row == it->rec_end) {
                if (!next_record(it))
                        return 0;
                first = true;
        }
        *row = (struct head_row){ .tick = it->tick };
        k = take(it, 1);
        /* a record starts with its tick, and has only that one */
        if (!k || first != (*k == HEAD_TICK))
                return -EBADMSG;
        row->kind = (enum head_row_kind)*k;
        return read_row(it, row, *k);
}

int head_read_file(const char *path, uint8_t **ret, size_t *ret_n)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        uint8_t *p = NULL;
        size_t n = 0, cap = 0;
        struct stat st;

        if (fd < 0 || fstat(fd, &st) < 0)
                return -errno;
        cap = (size_t)st.st_size + 4096;
        for (;;) {
                ssize_t k;
                if (n == cap) {
                        uint8_t *q = realloc(p, cap *= 2);
                        if (!q) {
                                free(p);
                                return -ENOMEM;
                        }
                        p = q;
                } else if (!p && !(p = malloc(cap)))
                        return -ENOMEM;
                k = read(fd, p + n, cap - n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0) {
                        int r = -errno;
                        free(p);
                        return r;
                }
                if (k == 0)
                        break;
                n += (size_t)k;
        }
        *ret = p;
        *ret_n = n;
        return 0;
}
