/* units.h - counters in the units a person reads (units.c): a time
 * counter (stored in ns, us or s) as s, ms or us, its rate as ms/s; an
 * event counter as a count and a count per second; a maximum as a
 * maximum, never as a rate. */
#ifndef SCALEMON_CLIENT_UNITS_H
#define SCALEMON_CLIENT_UNITS_H

#include <stdbool.h>
#include <stddef.h>

/* Is metric m a time (unit ns, us or s)?  Then *ret_s (if not NULL) is
 * the seconds one stored unit is. */
bool units_is_time(int m, double *ret_s);
/* "1.23 s", "45.6 ms", "789 us", "12 ns" */
void units_seconds(double s, char *buf, size_t len);
/* A total of m: a time in s/ms/us, a count as a number. */
void units_total(int m, double v, char *buf, size_t len);
/* A rate of m: a time as "49.2 ms/s", a count as "1234.5/s"; bare
 * (without "/s" after a count) for a column headed per second. */
void units_rate(int m, double per_s, bool bare, char *buf, size_t len);
/* An amount of m per unit of work (rate / throughput): a time in
 * s/ms/us/ns, a count as a number (format_number). */
void units_per_work(int m, double v, char *buf, size_t len);
/* For an axis of rates of m whose largest value is max: the factor to
 * multiply each value by and the unit after it ("ms/s"; "/s" for a
 * count, where the factor is 1). */
const char *units_rate_axis(int m, double max, double *ret_factor);

#endif
