/* expo.h - write the Prometheus text exposition formats: OpenMetrics 1.0.0
 * and Prometheus 0.0.4.
 *
 * A writer takes families one after another (a family's samples follow
 * its metadata, families are never interleaved) and returns the text.
 * Names are the caller's, checked here; label values are user text
 * (run names, tags) and are escaped here.
 */
#ifndef SCALEMON_EXPO_H
#define SCALEMON_EXPO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum expo_format {
        EXPO_PROMETHEUS,        /* text/plain; version=0.0.4 */
        EXPO_OPENMETRICS,       /* application/openmetrics-text; version=1.0.0 */
};

enum expo_type {
        EXPO_COUNTER,           /* samples NAME_total; 0.0.4 names the family NAME_total */
        EXPO_GAUGE,             /* samples NAME */
        EXPO_INFO,              /* samples NAME_info, value 1; a gauge NAME_info in 0.0.4 */
};

struct expo_label {
        const char *name;       /* [a-zA-Z_][a-zA-Z0-9_]*, not starting with "__" */
        const char *value;      /* any text: escaped on output */
};

struct expo;

int expo_new(enum expo_format format, struct expo **ret);
struct expo *expo_free(struct expo *e);

/* Start a family.  name: [a-zA-Z_:][a-zA-Z0-9_:]*, without the _total or
 * _info suffix; unit: NULL, or the unit the name ends with ("seconds" for
 * ..._seconds), written as # UNIT in OpenMetrics.  -EINVAL on a bad name. */
int expo_family(struct expo *e, const char *name, enum expo_type type, const char *unit, const char *help);
/* One sample of the current family.  -EINVAL on a bad label name. */
int expo_sample(struct expo *e, const struct expo_label *labels, size_t nlabels, double value);
/* The same, for the value mantissa / 10^decimals (decimals 0..9), written
 * exactly: 237 with 2 decimals is 2.37, without a detour through binary
 * floating point. */
int expo_sample_decimal(struct expo *e, const struct expo_label *labels, size_t nlabels, int64_t mantissa,
                        int decimals);
/* In OpenMetrics, the counter sample just written gets its created time:
 * NAME_created with the same labels, seconds since the epoch (when the
 * total last started from 0).  0.0.4 has no such sample: nothing is
 * written.  -EINVAL outside a counter family. */
int expo_created(struct expo *e, const struct expo_label *labels, size_t nlabels, double seconds);

/* The text (with "# EOF" in OpenMetrics); the writer is then spent.
 * *ret is malloc'd, NUL-terminated, *ret_len bytes. */
int expo_finish(struct expo *e, char **ret, size_t *ret_len);
size_t expo_samples(const struct expo *e);      /* samples written so far */

/* Which format a scraper's Accept header asks for: OpenMetrics when it
 * lists application/openmetrics-text with a q above 0 (and above
 * text/plain's), else 0.0.4.  accept may be NULL. */
enum expo_format expo_negotiate(const char *accept);
const char *expo_content_type(enum expo_format format);

bool expo_valid_metric_name(const char *s);
bool expo_valid_label_name(const char *s);
/* A label name made from any key (a tag's): characters outside
 * [a-zA-Z0-9_] become '_', a leading digit gets a '_' before it, and a
 * leading "__" (reserved) becomes "tag__".  out has room for n bytes. */
void expo_label_name_from(const char *key, char *out, size_t n);

#endif
