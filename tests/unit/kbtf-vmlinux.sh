#!/bin/bash
# kbtf-vmlinux.sh - the running kernel's BTF read by daemon/kernel/kbtf.c:
# every field offset the BPF programs take, mapped and read alike, and the
# direct members equal to bpftool's (libbpf's parser).  No root needed;
# skips without /sys/kernel/btf/vmlinux or bpftool.
exec "${top_builddir:-.}/tests/unit/test-kbtf" vmlinux
