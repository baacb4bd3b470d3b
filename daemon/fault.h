/* fault.h - faults injected for tests (a fake; see fault.c). */
#ifndef SCALEMON_FAULT_H
#define SCALEMON_FAULT_H

#include <stdbool.h>

#define FAULT_ENV "SCALEMON_TEST_FAULTS"

/* Re-read the fault file if it changed; cheap no-op without FAULT_ENV. */
void fault_refresh(void);
/* Should this read() of CPU cpu's group grp ("sw" or "hw") fail? */
bool fault_read_error(int cpu, const char *grp);
/* Should opening metric's event fail as if its tracepoint were gone? */
bool fault_vanished(int metric);

#endif
