/* caps.c - the capabilities scalemond needs only while it starts. */
#include "config.h"

#include <errno.h>
#include <linux/capability.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "caps.h"
#include "macro.h"

/* CAP_DAC_READ_SEARCH is needed for one thing: reading tracepoint ids
 * through tracefs' mode 0700 (scalemon.service grants it for that).  The
 * sampler reads them once, in sampler_new(), and keeps them, so the
 * capability goes from the effective, permitted and inheritable sets right
 * after; the kernel then clears it from the ambient set too.  The same for
 * the lock wait program's CAP_BPF, which loads the BPF program in
 * sampler_new() too (its maps are read through descriptors held since;
 * kernels before 6.5 with kernel.unprivileged_bpf_disabled want CAP_BPF
 * for that too: then runs record no locks, and say so), and CAP_SYSLOG,
 * which a root daemon holds when it opens /proc/kallsyms (lockwait.c keeps
 * the file).  CAP_PERFMON stays: hotplug and reloads open counters.
 * Returns 1 if one was dropped, 0 if none was held. */
int caps_drop_start_up(void)
{
        static const int caps[] = { CAP_DAC_READ_SEARCH, CAP_BPF, CAP_SYSLOG };
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = {};
        bool held = false;

        if (syscall(SYS_capget, &h, d) < 0)
                return negative_errno();
        for (size_t k = 0; k < ELEMENTSOF(caps); k++) {
                const int i = CAP_TO_INDEX(caps[k]);
                const uint32_t bit = CAP_TO_MASK(caps[k]);
                if (!((d[i].effective | d[i].permitted | d[i].inheritable) & bit))
                        continue;
                held = true;
                d[i].effective &= ~bit;
                d[i].permitted &= ~bit;
                d[i].inheritable &= ~bit;
        }
        if (!held)
                return 0;
        if (syscall(SYS_capset, &h, d) < 0)
                return negative_errno();
        return 1;
}
