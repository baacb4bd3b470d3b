/* bpfload.h - what the daemon's BPF programs (lockwait.c, runqwait.c)
 * share when loading: libbpf's messages caught for the reason a program
 * could not be loaded, said in one line. */
#pragma once

/* Route libbpf's messages here and forget the last one; call before
 * opening a skeleton. */
void bpfload_begin(void);

/* Why loading failed with err (negative errno), as one line to free();
 * NULL if out of memory.  what names the program ("the lock wait BPF
 * program"). */
char *bpfload_why(int err, const char *what);

/* The CPUs the kernel may ever have (the size of a per-CPU map), or a
 * negative errno with *ret_why (to free). */
int bpfload_possible_cpus(char **ret_why);

/* libbpf's last warning or error ("" if none). */
const char *bpfload_last_message(void);
