/* timeutil.h - durations, points in time, and how they are written. */
#ifndef SCALEMON_TIMEUTIL_H
#define SCALEMON_TIMEUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Accepted forms, for messages that tell the user what to type. */
#define DURATION_FORMS "a number with a unit: 10ms, 1s, 1.5s, 5m, 2h (us, ms, s, m, h, d)"
#define WHEN_FORMS \
        "a run name, an RFC 3339 time (2026-11-30T09:37:58Z), local 'YYYY-MM-DD[ HH:MM[:SS]]', " \
        "-2h, now-1h, -1d, today, yesterday, '@EPOCH' or 'now'"

/* Parse DUR ("10ms", "1s", "5m", a bare number is seconds) into nanoseconds.
 * Returns 0, or -EINVAL for anything else, -ERANGE on overflow. */
int duration_parse(const char *s, int64_t *ret_ns);

/* Format a duration the way duration_parse reads it ("250ms", "1s", "5m"). */
void duration_format(int64_t ns, char *buf, size_t len);

/* Parse a WHEN that is a time (not a run name) relative to now_ns.
 * Returns 0, or -EINVAL. */
int when_parse(const char *s, int64_t now_ns, int64_t *ret_ns);

/* Could s be meant as a time rather than a run name?  (Decides between
 * "malformed WHEN" and "no such run".) */
bool when_looks_like_time(const char *s);

/* RFC 3339 in UTC with milliseconds: 2026-11-30T09:37:58.123Z */
void time_format_rfc3339(int64_t ns, char *buf, size_t len);
/* Local time for tables: 2026-11-30 09:37:58 */
void time_format_local(int64_t ns, char *buf, size_t len);
/* The same with milliseconds, for steps below a second: 2026-11-30 09:37:58.500 */
void time_format_local_ms(int64_t ns, char *buf, size_t len);

/* CLOCK_REALTIME, plus the test seam's offset where a test has set one
 * (SCALEMON_TEST_REALTIME_OFFSET_FILE, see timeutil.c). */
int64_t now_realtime_ns(void);
int64_t now_monotonic_ns(void);

#endif
