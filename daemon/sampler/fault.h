/* fault.h - faults injected for tests (a fake; see fault.c), built only
 * with ./configure --enable-test-seams. */
#ifndef SCALEMON_FAULT_H
#define SCALEMON_FAULT_H

#include "sampler-ops.h"

#define FAULT_ENV "SCALEMON_TEST_FAULTS"

#if ENABLE_TEST_SEAMS
/* With FAULT_ENV set, replace *ops and *ctx by a wrapper that injects the
 * faults its file names and otherwise calls them; the wrapper's free
 * frees the wrapped context too.  Without it, or in a build without test
 * seams, nothing changes.  Returns 0 or -ENOMEM. */
int fault_wrap(const struct sampler_ops **ops, void **ctx);
#else
static inline int fault_wrap(const struct sampler_ops **ops, void **ctx)
{
        (void)ops;
        (void)ctx;
        return 0;
}
#endif

#endif
