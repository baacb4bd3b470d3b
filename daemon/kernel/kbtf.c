/* kbtf.c - byte offsets of kernel structure members from the kernel's BTF,
 * in three passes over the file and a few hundred kilobytes of memory.
 *
 * libbpf relocates a program's field accesses (CO-RE) by parsing the whole
 * of /sys/kernel/btf/vmlinux: 5 MiB read twice into memory and indexed,
 * for each program loaded.  The BPF programs here read a handful of
 * fields, so the daemon finds those offsets itself and hands them to the
 * programs as read-only constants:
 *   1. the string section, in order: where each wanted name is (vmlinux
 *      BTF is deduplicated: a name is there once); skipped when the file
 *      is mapped, where a type's name is compared in place;
 *   2. the type section, in order: where each type id's record starts
 *      (4 bytes a type), and the ids of the wanted structs and unions;
 *   3. each wanted member, in its type's members, and through anonymous
 *      struct and union members (mm_struct keeps mmap_lock inside one).
 * The file is mapped where the kernel allows it (Linux 6.16 and later:
 * the kernel's own pages, read-only, nothing copied); else it is read
 * through a window of 256 KiB.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/btf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kbtf.h"
#include "macro.h"

#define WINDOW (256u << 10)
#define MAX_NAMES 64             /* each shorter than 64 bytes */
#define MAX_DEPTH 8             /* anonymous members within anonymous members */
#define NOT_FOUND UINT32_MAX

struct src {
        int fd;
        const uint8_t *map;     /* the whole file mapped, or NULL: read through buf */
        uint64_t size;
        uint8_t *buf;           /* [cap]: the file's bytes [at, at + len) */
        size_t cap, len;
        uint64_t at;
};

struct names {
        const char *name[MAX_NAMES];
        size_t len[MAX_NAMES];
        uint64_t lens;                  /* bit l: a name of length l (< 64) */
        uint64_t first[4];              /* bit c: a name starting with byte c */
        uint32_t off[MAX_NAMES];        /* in the string section; NOT_FOUND */
        uint32_t id[MAX_NAMES];         /* a type name's struct or union id, 0: none */
        int n;
};

/* The file's bytes [off, off + len), valid until the next call; NULL past
 * its end or on a read error. */
static const void *src_read(struct src *s, uint64_t off, size_t len);

static inline __attribute__((always_inline)) const void *src_at(struct src *s, uint64_t off, size_t len)
{
        if (off > s->size || len > s->size - off)
                return NULL;
        if (s->map)
                return s->map + off;
        return src_read(s, off, len);
}

/* src_at() without a mapping: through the window. */
static const void *src_read(struct src *s, uint64_t off, size_t len)
{
        if (off >= s->at && off + len <= s->at + s->len)
                return s->buf + (off - s->at);
        if (len > s->cap) {
                uint8_t *b = realloc(s->buf, len);
                if (!b)
                        return NULL;
                s->buf = b;
                s->cap = len;
        }
        s->at = off;
        s->len = 0;
        while (s->len < s->cap && s->at + s->len < s->size) {
                ssize_t k = pread(s->fd, s->buf + s->len, s->cap - s->len, (off_t)(s->at + s->len));
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        break;
                s->len += (size_t)k;
        }
        return len <= s->len ? s->buf : NULL;
}

static int names_add(struct names *nm, const char *name)
{
        for (int i = 0; i < nm->n; i++)
                if (streq(nm->name[i], name))
                        return i;
        if (!name[0] || strlen(name) >= 64)
                return -EINVAL;
        if (nm->n == MAX_NAMES)
                return -E2BIG;
        nm->name[nm->n] = name;
        nm->len[nm->n] = strlen(name);
        if (nm->len[nm->n] < 64)
                nm->lens |= UINT64_C(1) << nm->len[nm->n];
        nm->first[(uint8_t)name[0] >> 6] |= UINT64_C(1) << ((uint8_t)name[0] & 63);
        nm->off[nm->n] = NOT_FOUND;
        nm->id[nm->n] = 0;
        return nm->n++;
}

/* Pass 1: the string section [base, base + len), string by string. */
static int find_names(struct src *s, uint64_t base, uint32_t len, struct names *nm)
{
        uint32_t pos = 0;
        bool skip = false;      /* the window starts inside a string longer than one */

        while (pos < len) {
                size_t want = MIN(len - pos, WINDOW);
                const char *w = src_at(s, base + pos, want), *p = w, *end;
                if (!w)
                        return -EIO;
                for (; (end = memchr(p, '\0', want - (size_t)(p - w))); p = end + 1, skip = false) {
                        size_t l = (size_t)(end - p);
                        /* most strings: no name of that length and first byte */
                        if (skip || l >= 64 || !(nm->lens >> l & 1) ||
                            !(nm->first[(uint8_t)p[0] >> 6] >> ((uint8_t)p[0] & 63) & 1))
                                continue;
                        for (int i = 0; i < nm->n; i++)
                                if (nm->off[i] == NOT_FOUND && nm->len[i] == l && memcmp(nm->name[i], p, l) == 0)
                                        nm->off[i] = pos + (uint32_t)(p - w);
                }
                if (p > w) {
                        pos += (uint32_t)(p - w);       /* a string cut by the window starts the next */
                } else {
                        pos += (uint32_t)want;          /* no name is that long: step over it */
                        skip = true;
                }
        }
        return 0;
}

/* The bytes after a struct btf_type, by kind: fixed, and per vlen; a kind
 * this reader does not know has fixed -1.  (A table, not a switch: the
 * kinds come in no order a branch predictor learns.) */
static const int8_t kind_fixed[32] = {
        [0] = -1, [BTF_KIND_INT] = 4, [BTF_KIND_ARRAY] = sizeof(struct btf_array), [BTF_KIND_VAR] = 4,
        [BTF_KIND_DECL_TAG] = 4, [BTF_KIND_ENUM64 + 1 ... 31] = -1,
};
static const uint8_t kind_per_vlen[32] = {
        [BTF_KIND_STRUCT] = sizeof(struct btf_member), [BTF_KIND_UNION] = sizeof(struct btf_member),
        [BTF_KIND_ENUM] = 8, [BTF_KIND_FUNC_PROTO] = 8, [BTF_KIND_DATASEC] = 12, [BTF_KIND_ENUM64] = 12,
};

/* The length of a type record after its struct btf_type; -1: unknown kind. */
static inline __attribute__((always_inline)) long type_extra(const struct btf_type *t)
{
        uint32_t kind = BTF_INFO_KIND(t->info);

        if (kind_fixed[kind] < 0)
                return -1;
        return kind_fixed[kind] + (long)BTF_INFO_VLEN(t->info) * kind_per_vlen[kind];
}

static bool is_composite(const struct btf_type *t)
{
        return BTF_INFO_KIND(t->info) == BTF_KIND_STRUCT || BTF_INFO_KIND(t->info) == BTF_KIND_UNION;
}

struct types {
        struct src *s;
        uint64_t base;          /* the type section */
        uint64_t strs;          /* the string section */
        uint32_t str_len;
        uint32_t *offs;         /* [id]: a record's offset from base */
        uint32_t n;             /* ids 1..n */
        struct names *nm;
};

/* Is the string at off name i?  Mapped: compared in place (the string
 * pass is skipped); read: by the offset the string pass found. */
static bool name_is(const struct types *ty, uint32_t off, int i)
{
        const struct names *nm = ty->nm;
        const char *p;

        if (!ty->s->map)
                return off == nm->off[i];
        if (off >= ty->str_len || nm->len[i] >= ty->str_len - off)
                return false;
        p = (const char *)ty->s->map + ty->strs + off;
        return p[0] == nm->name[i][0] && memcmp(p, nm->name[i], nm->len[i] + 1) == 0;
}

/* Could the string at off be a wanted name?  (Mapped: most names start
 * with a byte none of the wanted ones does.) */
static inline bool maybe_name(const struct types *ty, uint32_t off)
{
        uint8_t c;

        if (!ty->s->map || off >= ty->str_len)
                return true;
        c = (uint8_t)ty->s->map[ty->strs + off];
        return ty->nm->first[c >> 6] >> (c & 63) & 1;
}

/* Pass 2: the type section; ty->offs[id] is type id's record (relative
 * to base), for ids 1..ty->n, and each type name's struct or union. */
static int index_types(struct types *ty, uint32_t len)
{
        struct names *nm = ty->nm;
        uint32_t pos = 0, n = 0, cap = 0;

        while (pos < len) {
                const struct btf_type *t = src_at(ty->s, ty->base + pos, sizeof *t);
                long extra;
                if (!t)
                        return -EIO;
                extra = type_extra(t);
                if (len - pos < sizeof *t || extra < 0 || (uint64_t)extra > len - pos - sizeof *t)
                        return -EPROTONOSUPPORT;
                if (++n >= cap) {
                        uint32_t *o = realloc(ty->offs, (size_t)(cap = cap ? cap * 2 : 65536) * sizeof *o);
                        if (!o)
                                return -ENOMEM;
                        ty->offs = o;
                }
                ty->offs[n] = pos;
                if (is_composite(t) && t->name_off && BTF_INFO_VLEN(t->info) && maybe_name(ty, t->name_off))
                        for (int i = 0; i < nm->n; i++)
                                if (!nm->id[i] && name_is(ty, t->name_off, i))
                                        nm->id[i] = n;
                pos += (uint32_t)sizeof *t + (uint32_t)extra;
        }
        ty->n = n;
        return 0;
}

/* Type id's record with its trailer, or NULL. */
static const struct btf_type *type_at(const struct types *ty, uint32_t id)
{
        const struct btf_type *t;

        if (id == 0 || id > ty->n)
                return NULL;
        t = src_at(ty->s, ty->base + ty->offs[id], sizeof *t);
        if (!t || type_extra(t) < 0)
                return NULL;
        return src_at(ty->s, ty->base + ty->offs[id], sizeof *t + (size_t)type_extra(t));
}

/* Type id through typedefs and qualifiers, if that is a struct or union. */
static uint32_t composite_id(const struct types *ty, uint32_t id)
{
        for (int hops = 0; hops < 16; hops++) {
                const struct btf_type *t = type_at(ty, id);
                if (!t)
                        return 0;
                switch (BTF_INFO_KIND(t->info)) {
                case BTF_KIND_STRUCT: case BTF_KIND_UNION:
                        return id;
                case BTF_KIND_TYPEDEF: case BTF_KIND_VOLATILE: case BTF_KIND_CONST:
                case BTF_KIND_RESTRICT: case BTF_KIND_TYPE_TAG:
                        id = t->type;
                        break;
                default:
                        return 0;
                }
        }
        return 0;
}

/* Pass 3: the byte offset of the member called name `name` in struct or
 * union id, looking into its anonymous members; -1: none. */
static int32_t member_offset(const struct types *ty, uint32_t id, int name, int depth)
{
        const struct btf_type *t = type_at(ty, id);
        uint32_t vlen;
        bool kflag;

        if (!t || !is_composite(t) || depth > MAX_DEPTH)
                return -1;
        vlen = BTF_INFO_VLEN(t->info);
        kflag = BTF_INFO_KFLAG(t->info);
        for (uint32_t i = 0; i < vlen; i++) {
                /* copied: a recursion may move the window under t */
                struct btf_member m;
                const struct btf_type *tt = type_at(ty, id);
                if (!tt)
                        return -1;
                memcpy(&m, (const uint8_t *)(tt + 1) + i * sizeof m, sizeof m);
                uint32_t bits = kflag ? BTF_MEMBER_BIT_OFFSET(m.offset) : m.offset;
                if (m.name_off && name_is(ty, m.name_off, name))
                        return (int32_t)(bits / 8);
                if (m.name_off == 0) {
                        int32_t in = member_offset(ty, composite_id(ty, m.type), name, depth + 1);
                        if (in >= 0)
                                return (int32_t)(bits / 8) + in;
                }
        }
        return -1;
}

static int src_open(struct src *s, const char *path, bool no_mmap)
{
        struct stat st;
        void *m;

        s->fd = open(path, O_RDONLY | O_CLOEXEC);
        if (s->fd < 0)
                return negative_errno();
        if (fstat(s->fd, &st) < 0)
                return negative_errno();
        s->size = (uint64_t)st.st_size;
        if (!no_mmap && s->size > 0) {
                m = mmap(NULL, s->size, PROT_READ, MAP_PRIVATE, s->fd, 0);
                if (m != MAP_FAILED)
                        s->map = m;
        }
        if (!s->map) {
                s->buf = malloc(WINDOW);
                if (!s->buf)
                        return -ENOMEM;
                s->cap = WINDOW;
        }
        return 0;
}

static void src_close(struct src *s)
{
        if (s->map)
                munmap((void *)s->map, s->size);
        free(s->buf);
        if (s->fd >= 0)
                close(s->fd);
}

static int resolve(struct src *s, struct kbtf_field *f, size_t n, struct names *nm)
{
        const struct btf_header *h = src_at(s, 0, sizeof *h);
        struct types ty = { .s = s, .nm = nm };
        uint32_t type_len;
        int r;

        if (!h || h->magic != BTF_MAGIC || h->version != BTF_VERSION || h->hdr_len < sizeof *h)
                return -EPROTONOSUPPORT;
        ty.base = (uint64_t)h->hdr_len + h->type_off;
        ty.strs = (uint64_t)h->hdr_len + h->str_off;
        type_len = h->type_len;
        ty.str_len = h->str_len;
        if (ty.base + type_len > s->size || ty.strs + ty.str_len > s->size)
                return -EPROTONOSUPPORT;
        r = s->map ? 0 : find_names(s, ty.strs, ty.str_len, nm);
        if (r >= 0)
                r = index_types(&ty, type_len);
        for (size_t i = 0; r >= 0 && i < n; i++) {
                int t = names_add(nm, f[i].type), m = names_add(nm, f[i].member);
                if (nm->id[t])
                        f[i].offset = member_offset(&ty, nm->id[t], m, 0);
        }
        free(ty.offs);
        return r;
}

int kbtf_offsets(const char *path, struct kbtf_field *f, size_t n, bool no_mmap)
{
        struct src s = { .fd = -1 };
        struct names nm = { .n = 0 };
        int r = 0;

        for (size_t i = 0; i < n; i++) {
                f[i].offset = -1;
                if (r >= 0)
                        r = names_add(&nm, f[i].type);
                if (r >= 0)
                        r = names_add(&nm, f[i].member);
        }
        if (r < 0)
                return r;
        r = src_open(&s, path, no_mmap);
        if (r >= 0)
                r = resolve(&s, f, n, &nm);
        if (r < 0)
                for (size_t i = 0; i < n; i++)
                        f[i].offset = -1;
        src_close(&s);
        return r < 0 ? r : 0;
}
