/* test-kbtf.c - kernel structure offsets from BTF (daemon/kernel/kbtf.c).
 *
 * Without arguments: a BTF file built here, type by type, whose offsets
 * are known by construction: members found directly, inside anonymous
 * structs and unions (through a const), bitfield offsets (kind_flag), a
 * forward declaration that is not the struct, kinds with trailers stepped
 * over, a string longer than the read window, a name cut by the window;
 * read both ways (mapped and through the window).
 *
 * With "vmlinux" (tests/unit/kbtf-vmlinux.sh): the running kernel's BTF,
 * every field the BPF programs read, mapped and read alike, and the direct
 * members equal to what bpftool (libbpf's own parser) prints for them.
 * Exit 77 without /sys/kernel/btf/vmlinux or bpftool. */
#include "config.h"

#include <fcntl.h>
#include <linux/btf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kbtf.h"
#include "macro.h"
#include "tap.h"

#define WINDOW (256u << 10)     /* kbtf.c's */

struct blob {
        uint8_t *types, *strs;
        size_t ntypes, nstrs;
};

static void put(uint8_t **buf, size_t *len, const void *p, size_t n)
{
        *buf = realloc(*buf, *len + n);
        if (!*buf)
                abort();
        memcpy(*buf + *len, p, n);
        *len += n;
}

static uint32_t str(struct blob *b, const char *s)
{
        uint32_t off = (uint32_t)b->nstrs;

        put(&b->strs, &b->nstrs, s, strlen(s) + 1);
        return off;
}

static void type(struct blob *b, uint32_t name, uint32_t kind, bool kflag, uint32_t vlen, uint32_t size)
{
        struct btf_type t = { .name_off = name, .info = (kind << 24) | vlen | (kflag ? 1u << 31 : 0), .size = size };

        put(&b->types, &b->ntypes, &t, sizeof t);
}

static void member(struct blob *b, uint32_t name, uint32_t type_id, uint32_t offset)
{
        struct btf_member m = { .name_off = name, .type = type_id, .offset = offset };

        put(&b->types, &b->ntypes, &m, sizeof m);
}

static void u32s(struct blob *b, int n)
{
        uint32_t z[16] = { 32 };

        put(&b->types, &b->ntypes, z, (size_t)n * 4);
}

/* The strings: names, a string longer than the window (whose tail reads
 * "outer", not a name), the real "outer", and "later" across a window's
 * edge. */
static void strings(struct blob *b, uint32_t *s)
{
        const char *names[] = { "", "int", "inner", "a", "wanted", "y", "deep", "inunion", "x", "in",
                                "bits", "lo", "hi", "e", "A", "B" };
        char *pad;
        size_t edge;

        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                s[i] = str(b, names[i]);
        pad = malloc(WINDOW + 8);
        memset(pad, 'q', WINDOW);
        strcpy(pad + WINDOW, "outer");
        edge = b->nstrs + 2 * WINDOW;           /* where the third window ends */
        (void)str(b, pad);
        s[16] = str(b, "outer");
        memset(pad, 'p', edge - 2 - b->nstrs - 1);
        pad[edge - 2 - b->nstrs - 1] = 0;
        (void)str(b, pad);
        s[17] = str(b, "later");
        s[18] = str(b, "z");
        free(pad);
}

static char *build(void)
{
        char path[] = "/tmp/test-kbtf.XXXXXX";
        struct blob b = { 0 };
        uint32_t s[19];
        int fd = mkstemp(path);

        strings(&b, s);
        type(&b, s[1], BTF_KIND_INT, false, 0, 4);                      /* 1 int */
        u32s(&b, 1);
        type(&b, s[2], BTF_KIND_FWD, false, 0, 0);                      /* 2 struct inner; */
        type(&b, s[2], BTF_KIND_STRUCT, false, 2, 8);                   /* 3 struct inner */
        member(&b, s[3], 1, 0);
        member(&b, s[4], 1, 32);
        type(&b, 0, BTF_KIND_STRUCT, false, 2, 8);                      /* 4 struct { y, deep } */
        member(&b, s[5], 1, 0);
        member(&b, s[6], 1, 32);
        type(&b, 0, BTF_KIND_CONST, false, 0, 6);                       /* 5 const union {...} */
        type(&b, 0, BTF_KIND_UNION, false, 1, 4);                       /* 6 union { inunion } */
        member(&b, s[7], 1, 0);
        type(&b, s[13], BTF_KIND_ENUM, false, 2, 4);                    /* 7 enum e { A, B } */
        u32s(&b, 4);
        type(&b, 0, BTF_KIND_FUNC_PROTO, false, 1, 1);                  /* 8 int (*)(int) */
        u32s(&b, 2);
        type(&b, s[16], BTF_KIND_STRUCT, false, 4, 32);                 /* 9 struct outer */
        member(&b, s[8], 1, 0);
        member(&b, 0, 4, 64);
        member(&b, s[9], 3, 128);
        member(&b, 0, 5, 192);
        type(&b, s[10], BTF_KIND_STRUCT, true, 2, 16);                  /* 10 struct bits */
        member(&b, s[11], 1, (3u << 24) | 0);
        member(&b, s[12], 1, (5u << 24) | 72);
        type(&b, s[17], BTF_KIND_STRUCT, false, 1, 16);                 /* 11 struct later */
        member(&b, s[18], 1, 96);

        struct btf_header h = { .magic = BTF_MAGIC, .version = BTF_VERSION, .hdr_len = sizeof h,
                                .type_off = 0, .type_len = (uint32_t)b.ntypes,
                                .str_off = (uint32_t)b.ntypes, .str_len = (uint32_t)b.nstrs };
        if (fd < 0 || write(fd, &h, sizeof h) != sizeof h ||
            write(fd, b.types, b.ntypes) != (ssize_t)b.ntypes || write(fd, b.strs, b.nstrs) != (ssize_t)b.nstrs)
                abort();
        close(fd);
        free(b.types);
        free(b.strs);
        return strdup(path);
}

static void synthetic(bool no_mmap)
{
        _cleanup_free_ char *path = build();
        struct kbtf_field f[] = {
                { "inner", "wanted", 0 },  { "outer", "x", 0 },     { "outer", "deep", 0 },
                { "outer", "in", 0 },      { "outer", "inunion", 0 }, { "outer", "wanted", 0 },
                { "bits", "hi", 0 },       { "later", "z", 0 },     { "outer", "nope", 0 },
                { "nostruct", "x", 0 },    { "e", "A", 0 },
        };
        int32_t want[] = { 4, 0, 12, 16, 24, -1, 9, 12, -1, -1, -1 };
        const char *how = no_mmap ? "read" : "mapped";

        is_int(kbtf_offsets(path, f, ELEMENTSOF(f), no_mmap), 0, "a BTF file built here is read");
        for (size_t i = 0; i < ELEMENTSOF(f); i++) {
                char name[128];
                snprintf(name, sizeof name, "%s: %s.%s at %d", how, f[i].type, f[i].member, want[i]);
                is_int(f[i].offset, want[i], name);
        }
        unlink(path);
        is_int(kbtf_offsets(path, f, 1, no_mmap), -ENOENT, "no such file: -ENOENT");
        is_int(f[0].offset, -1, "and the offset is -1");
}

/* bpftool's bits_offset of each f[i] that is a direct member, into
 * bits[i]; -1: not found. */
static void bpftool_offsets(const struct kbtf_field *f, size_t n, long *bits)
{
        char line[512], head[128];
        const char *in = NULL;  /* the struct whose members follow */
        FILE *p = popen("PATH=$PATH:/usr/sbin:/sbin bpftool btf dump file " KBTF_VMLINUX " format raw", "r");

        for (size_t i = 0; i < n; i++)
                bits[i] = -1;
        while (p && fgets(line, sizeof line, p)) {
                if (line[0] == '[') {
                        in = NULL;
                        for (size_t i = 0; i < n && !in; i++) {
                                snprintf(head, sizeof head, " STRUCT '%s' size=", f[i].type);
                                if (strstr(line, head))
                                        in = f[i].type;
                        }
                        continue;
                }
                for (size_t i = 0; in && i < n; i++) {
                        snprintf(head, sizeof head, "\t'%s' type_id=", f[i].member);
                        if (streq(f[i].type, in) && bits[i] < 0 && strncmp(line, head, strlen(head)) == 0)
                                bits[i] = strtol(strstr(line, "bits_offset=") + 12, NULL, 10);
                }
        }
        if (p)
                pclose(p);
}

static int vmlinux(void)
{
        struct kbtf_field f[] = {
                { "task_struct", "mm", 0 },        { "task_struct", "sighand", 0 }, { "task_struct", "se", 0 },
                { "sched_entity", "cfs_rq", 0 },   { "cfs_rq", "rq", 0 },           { "rq", "__lock", 0 },
                { "mm_struct", "mmap_lock", 0 },   { "rw_semaphore", "wait_lock", 0 },
                { "sighand_struct", "siglock", 0 }, { "task_struct", "pid", 0 },
                { "task_struct", "start_time", 0 }, { "task_struct", "sched_info", 0 },
                { "sched_info", "run_delay", 0 },
        };
        struct kbtf_field g[ELEMENTSOF(f)];
        long bits[ELEMENTSOF(f)];

        if (access(KBTF_VMLINUX, R_OK) < 0 || system("PATH=$PATH:/usr/sbin:/sbin bpftool version >/dev/null 2>&1")) {
                printf("1..0 # SKIP needs %s (CONFIG_DEBUG_INFO_BTF) and bpftool\n", KBTF_VMLINUX);
                return 77;
        }
        memcpy(g, f, sizeof f);
        is_int(kbtf_offsets(KBTF_VMLINUX, f, ELEMENTSOF(f), false), 0, "the kernel's BTF, mapped or read");
        is_int(kbtf_offsets(KBTF_VMLINUX, g, ELEMENTSOF(g), true), 0, "the kernel's BTF, read through the window");
        bpftool_offsets(f, ELEMENTSOF(f), bits);
        for (size_t i = 0; i < ELEMENTSOF(f); i++) {
                long b = streq(f[i].type, "mm_struct") ? -2 : bits[i];
                ok(f[i].offset >= 0 && f[i].offset == g[i].offset && (b == -2 || b == 8L * f[i].offset),
                   "%s.%s at %d, read alike (%d)%s%ld bits", f[i].type, f[i].member, f[i].offset, g[i].offset,
                   b == -2 ? ", inside an anonymous struct: not compared with bpftool, " : ", bpftool: ", b);
        }
        return tap_done();
}

int main(int argc, char **argv)
{
        if (argc > 1 && streq(argv[1], "vmlinux"))
                return vmlinux();
        synthetic(false);
        synthetic(true);
        return tap_done();
}
