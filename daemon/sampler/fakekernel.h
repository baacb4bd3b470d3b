/* fakekernel.h - a fake kernel for tests that need no kernel counter
 * (see fakekernel.c), built only with ./configure --enable-test-seams. */
#ifndef SCALEMON_FAKEKERNEL_H
#define SCALEMON_FAKEKERNEL_H

#include <stdbool.h>

#include "sampler-ops.h"

#define FAKE_KERNEL_ENV "SCALEMON_TEST_FAKE_KERNEL"

#if ENABLE_TEST_SEAMS
/* With FAKE_KERNEL_ENV set (to anything but ""), the sampler's operations
 * that would open and read perf counters; NULL without it. */
const struct sampler_ops *fake_kernel_ops(void);
#else
static inline const struct sampler_ops *fake_kernel_ops(void)
{
        return NULL;
}
#endif

#endif
