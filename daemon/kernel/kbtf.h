/* kbtf.h - byte offsets of kernel structure members, read from the running
 * kernel's BTF (/sys/kernel/btf/vmlinux) without loading it whole: the BPF
 * programs take them as constants, so that libbpf has no CO-RE relocation
 * to do and never parses the 5 MiB of kernel BTF (its peak memory, and
 * most of the daemon's start-up CPU). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KBTF_VMLINUX "/sys/kernel/btf/vmlinux"

struct kbtf_field {
        const char *type;       /* a struct or union's name: "task_struct" (1 to 63 bytes) */
        const char *member;     /* a member's name, found inside anonymous members too (the same) */
        int32_t offset;         /* out: its byte offset in type; -1: no such type or member */
};

/* Fill f[i].offset for each of the n fields from the BTF file at path
 * (KBTF_VMLINUX): mapped where the kernel allows it (Linux 6.16 and
 * later), else read in windows of 256 KiB.  Returns 0, or a negative errno
 * (-ENOENT: no such file, the kernel has no BTF; -EPROTONOSUPPORT: not BTF
 * this reader knows; -EINVAL: a name empty or too long) with every offset
 * -1.  no_mmap: read it even where it
 * could be mapped (for the tests of that path). */
int kbtf_offsets(const char *path, struct kbtf_field *f, size_t n, bool no_mmap);
