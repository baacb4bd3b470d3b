/* differs.h - the context that differs between runs, printed (differs.c). */
#ifndef SCALEMON_CLIENT_DIFFERS_H
#define SCALEMON_CLIENT_DIFFERS_H

#include <jansson.h>

#include "analysis.h"

/* {"key": {"run": value or null}} */
json_t *differs_json(const struct context_differs *cd, const struct analysis_run *runs);
/* "Context that differs between these runs:" and a line per key, the runs
 * by value ("always (r1, r2); madvise (r3)"); nothing when none differs. */
void differs_print(const struct context_differs *cd, const struct analysis_run *runs);

#endif
