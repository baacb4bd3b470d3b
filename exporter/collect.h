/* collect.h - turn what source.c read into an exposition (expo.h): the
 * series names, units, labels and help texts of scalemon's metrics. */
#ifndef SCALEMON_EXPORTER_COLLECT_H
#define SCALEMON_EXPORTER_COLLECT_H

#include <stdbool.h>
#include <stddef.h>

#include "expo.h"
#include "source.h"

enum collect_per {
        COLLECT_PER_CPU,        /* cpu metrics per CPU: {cpu="N",node="M"} */
        COLLECT_PER_NODE,       /* cpu metrics summed per node: {node="M"} (very large machines) */
};

struct collect_input {
        const struct proto_totals *totals;        /* NULL: the daemon did not answer (scalemon_up 0) */
        const struct src_run *runs;
        size_t nruns;
        bool runs_read;                         /* false: the database could not be read */
        enum collect_per per;
};

/* The exposition in format f.  *ret is malloc'd; *ret_samples (may be
 * NULL) gets the number of samples (series) in it. */
int collect_exposition(const struct collect_input *in, enum expo_format f, char **ret, size_t *ret_len,
                       size_t *ret_samples);

/* The family name of a catalogue metric, in base units: unit "s" gives
 * scalemon_NAME_seconds; a name ending in _ns or _us loses it and gains
 * _seconds (*factor 1e-9 or 1e-6); anything else scalemon_NAME (*factor
 * 1).  *ret_unit is "seconds" or NULL.  -ENOENT for a metric that is not a
 * counter (a maximum, such as lock_wait_max_ns). */
int collect_family_name(const char *metric, const char *unit, char *out, size_t n, double *factor,
                        const char **ret_unit);

#endif
