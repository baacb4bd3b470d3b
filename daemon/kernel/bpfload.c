/* bpfload.c - libbpf's messages and the reason a BPF program was not
 * loaded, for lockwait.c and runqwait.c. */
#include "config.h"

#include <errno.h>
#include <linux/capability.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpfload.h"

#ifdef HAVE_BPF

#include <bpf/libbpf.h>

static char libbpf_msg[256];            /* libbpf's last warning, for the reason */
static bool verifier_refused;           /* libbpf printed the verifier's log */
static bool no_kernel_btf;              /* libbpf found no kernel BTF to relocate against */

static int on_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
        char buf[256];
        size_t n;

        if (getenv("LIBBPF_LOG")) {
                va_list aq;
                va_copy(aq, ap);
                vfprintf(stderr, fmt, aq);
                va_end(aq);
        }
        if (level == LIBBPF_DEBUG)
                return 0;
        vsnprintf(buf, sizeof buf, fmt, ap);
        if (strstr(buf, "PROG LOAD LOG"))
                verifier_refused = true;
        if (strstr(buf, "failed to find valid kernel BTF"))
                no_kernel_btf = true;
        n = strlen(buf);
        while (n && buf[n - 1] == '\n')
                buf[--n] = 0;
        snprintf(libbpf_msg, sizeof libbpf_msg, "%s", buf);
        return 0;
}

void bpfload_begin(void)
{
        libbpf_set_print(on_libbpf_print);
        libbpf_msg[0] = 0;
        verifier_refused = false;
        no_kernel_btf = false;
}

const char *bpfload_last_message(void)
{
        return libbpf_msg;
}

int bpfload_possible_cpus(char **ret_why)
{
        int n = libbpf_num_possible_cpus();

        if (n > 0)
                return n;
        if (asprintf(ret_why, "cannot read the possible CPUs: %s", strerror(n ? -n : EINVAL)) < 0)
                *ret_why = NULL;
        return n ? n : -EINVAL;
}

static bool has_cap(int cap)
{
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = {};

        if (syscall(SYS_capget, &h, d) < 0)
                return false;
        return d[CAP_TO_INDEX(cap)].effective & CAP_TO_MASK(cap);
}

char *bpfload_why(int err, const char *what)
{
        char *w = NULL;
        int r;

        if (verifier_refused)
                r = asprintf(&w, "cannot load %s: this kernel's verifier refused it (%s); "
                                 "run scalemond --foreground with LIBBPF_LOG=1 for the verifier's log",
                             what, strerror(-err));
        else if (no_kernel_btf)
                r = asprintf(&w, "cannot load %s: the kernel's BTF cannot be read (/sys/kernel/btf/vmlinux: "
                                 "a kernel built without CONFIG_DEBUG_INFO_BTF), and the program needs it to "
                                 "find the kernel's fields", what);
        else if (err == -EPERM || err == -EACCES) {
                /* in the bounding set but not held: given up after start-up (caps.c) */
                if (!has_cap(CAP_BPF) && !has_cap(CAP_SYS_ADMIN) && prctl(PR_CAPBSET_READ, CAP_BPF) == 1)
                        r = asprintf(&w, "cannot load %s: permission denied (scalemond gave up CAP_BPF after "
                                         "start-up; restart it to load the program)", what);
                else if (!has_cap(CAP_BPF) && !has_cap(CAP_SYS_ADMIN))
                        r = asprintf(&w, "cannot load %s: permission denied (needs CAP_BPF and "
                                         "CAP_PERFMON, or root)", what);
                else
                        r = asprintf(&w, "cannot load %s: the bpf() system call was refused (%s; "
                                         "a seccomp filter, or kernel.unprivileged_bpf_disabled with a "
                                         "missing capability)", what, strerror(-err));
        } else if (err == -ENOSYS)
                r = asprintf(&w, "cannot load %s: this kernel has no bpf() system call "
                                 "(or a seccomp filter hides it)", what);
        else
                r = asprintf(&w, "cannot load %s: %s%s%s", what, strerror(-err), libbpf_msg[0] ? ": " : "",
                             libbpf_msg);
        return r < 0 ? NULL : w;
}

#else /* !HAVE_BPF */

void bpfload_begin(void)
{
}

const char *bpfload_last_message(void)
{
        return "";
}

char *bpfload_why(int err, const char *what)
{
        char *w = NULL;

        if (asprintf(&w, "cannot load %s: scalemond was built without BPF support (%s)", what,
                     SCALEMON_BPF_MISSING) < 0)
                return NULL;
        return w;
}

#endif
