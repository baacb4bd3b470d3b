/* exchange-internal.h - what export and validation (exchange.c) share
 * with import (exchange-import.c). */
#ifndef SCALEMON_EXCHANGE_INTERNAL_H
#define SCALEMON_EXCHANGE_INTERNAL_H

#include <jansson.h>
#include <stdint.h>

/* o.FIELD_ns (whole nanoseconds) or o.FIELD (an RFC 3339 time) into *ret:
 * 0, or -EINVAL. */
int exchange_get_time(json_t *o, const char *field, int64_t *ret);

#endif
