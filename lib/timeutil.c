/* timeutil.c - parse DUR and WHEN arguments, format times.
 *
 * Every time inside scalemon is int64 nanoseconds: since the epoch for
 * points in time (CLOCK_REALTIME), or a length.  Text forms are only made
 * and read here.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "macro.h"
#include "timeutil.h"

static const struct {
        const char *suffix;
        int64_t ns;
} units[] = {
        { "ns",  1 },
        { "us",  NSEC_PER_USEC },
        { "ms",  NSEC_PER_MSEC },
        { "s",   NSEC_PER_SEC },
        { "sec", NSEC_PER_SEC },
        { "m",   60 * NSEC_PER_SEC },
        { "min", 60 * NSEC_PER_SEC },
        { "h",   3600 * NSEC_PER_SEC },
        { "d",   86400 * NSEC_PER_SEC },
};

int duration_parse(const char *s, int64_t *ret_ns)
{
        const char *p = s;
        char *end;
        double v;
        int64_t mult = NSEC_PER_SEC;

        if (!s || !*s || isspace((unsigned char)*s) || *s == '-' || *s == '+')
                return -EINVAL;
        /* strtod would take "inf", "nan" and hex: only digits and one dot */
        for (; *p && (isdigit((unsigned char)*p) || *p == '.'); p++)
                ;
        if (p == s)
                return -EINVAL;
        errno = 0;
        v = strtod(s, &end);
        if (errno != 0 || end != p)
                return -EINVAL;
        if (*p) {
                size_t i;
                for (i = 0; i < ELEMENTSOF(units); i++)
                        if (streq(p, units[i].suffix))
                                break;
                if (i == ELEMENTSOF(units))
                        return -EINVAL;
                mult = units[i].ns;
        }
        if (!isfinite(v) || v * (double)mult > 9.2e18)
                return -ERANGE;
        *ret_ns = (int64_t)llround(v * (double)mult);
        return 0;
}

void duration_format(int64_t ns, char *buf, size_t len)
{
        if (ns % (86400 * NSEC_PER_SEC) == 0 && ns >= 86400 * NSEC_PER_SEC)
                snprintf(buf, len, "%lldd", (long long)(ns / (86400 * NSEC_PER_SEC)));
        else if (ns % (3600 * NSEC_PER_SEC) == 0 && ns >= 3600 * NSEC_PER_SEC)
                snprintf(buf, len, "%lldh", (long long)(ns / (3600 * NSEC_PER_SEC)));
        else if (ns % (60 * NSEC_PER_SEC) == 0 && ns >= 60 * NSEC_PER_SEC)
                snprintf(buf, len, "%lldm", (long long)(ns / (60 * NSEC_PER_SEC)));
        else if (ns % NSEC_PER_SEC == 0)
                snprintf(buf, len, "%llds", (long long)(ns / NSEC_PER_SEC));
        else if (ns % NSEC_PER_MSEC == 0)
                snprintf(buf, len, "%lldms", (long long)(ns / NSEC_PER_MSEC));
        else if (ns % NSEC_PER_USEC == 0)
                snprintf(buf, len, "%lldus", (long long)(ns / NSEC_PER_USEC));
        else
                snprintf(buf, len, "%lldns", (long long)ns);
}

/* Read exactly n digits; returns -1 if they are not there. */
static int digits(const char **p, int n)
{
        int v = 0;
        for (int i = 0; i < n; i++) {
                if (!isdigit((unsigned char)(*p)[i]))
                        return -1;
                v = v * 10 + ((*p)[i] - '0');
        }
        *p += n;
        return v;
}

/* YYYY-MM-DD[( |T)HH:MM[:SS[.frac]]][Z|(+|-)HH:MM]; without a zone the time
 * is local.  An RFC 3339 time always has the zone; the local forms never. */
static int parse_datetime(const char *s, int64_t *ret_ns)
{
        const char *p = s;
        struct tm tm = { 0 };
        int64_t frac_ns = 0;
        bool has_zone = false;
        int zone_s = 0;
        time_t t;

        tm.tm_year = digits(&p, 4);
        if (tm.tm_year < 0 || *p++ != '-')
                return -EINVAL;
        tm.tm_mon = digits(&p, 2);
        if (tm.tm_mon < 1 || tm.tm_mon > 12 || *p++ != '-')
                return -EINVAL;
        tm.tm_mday = digits(&p, 2);
        if (tm.tm_mday < 1 || tm.tm_mday > 31)
                return -EINVAL;
        if (*p == ' ' || *p == 'T' || *p == 't') {
                p++;
                tm.tm_hour = digits(&p, 2);
                if (tm.tm_hour < 0 || tm.tm_hour > 23 || *p++ != ':')
                        return -EINVAL;
                tm.tm_min = digits(&p, 2);
                if (tm.tm_min < 0 || tm.tm_min > 59)
                        return -EINVAL;
                if (*p == ':') {
                        p++;
                        tm.tm_sec = digits(&p, 2);
                        if (tm.tm_sec < 0 || tm.tm_sec > 60)
                                return -EINVAL;
                        if (*p == '.') {
                                int64_t scale = NSEC_PER_SEC / 10;
                                p++;
                                if (!isdigit((unsigned char)*p))
                                        return -EINVAL;
                                for (; isdigit((unsigned char)*p); p++, scale /= 10)
                                        frac_ns += (*p - '0') * scale;
                        }
                }
                if (*p == 'Z' || *p == 'z') {
                        has_zone = true;
                        p++;
                } else if (*p == '+' || *p == '-') {
                        int sign = *p == '-' ? -1 : 1, hh, mm;
                        p++;
                        hh = digits(&p, 2);
                        if (hh < 0 || hh > 23 || *p++ != ':')
                                return -EINVAL;
                        mm = digits(&p, 2);
                        if (mm < 0 || mm > 59)
                                return -EINVAL;
                        has_zone = true;
                        zone_s = sign * (hh * 3600 + mm * 60);
                }
        }
        if (*p)
                return -EINVAL;
        tm.tm_year -= 1900;
        tm.tm_mon -= 1;
        if (has_zone) {
                t = timegm(&tm);
                t -= zone_s;
        } else {
                tm.tm_isdst = -1;
                t = mktime(&tm);
        }
        if (t == (time_t)-1)
                return -EINVAL;
        /* nanoseconds since the epoch in 64 bits: years 1678 to 2262 */
        if (t <= INT64_MIN / NSEC_PER_SEC || t >= INT64_MAX / NSEC_PER_SEC)
                return -ERANGE;
        *ret_ns = (int64_t)t * NSEC_PER_SEC + frac_ns;
        return 0;
}

/* Local midnight days_back days before the day of now_ns (DST-proof:
 * mktime normalises the day and finds the offset of that midnight). */
static int local_midnight(int64_t now_ns, int days_back, int64_t *ret_ns)
{
        time_t t = (time_t)(now_ns / NSEC_PER_SEC);
        struct tm tm;

        if (!localtime_r(&t, &tm))
                return -EINVAL;
        tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
        tm.tm_mday -= days_back;
        tm.tm_isdst = -1;
        t = mktime(&tm);
        if (t == (time_t)-1)
                return -EINVAL;
        *ret_ns = (int64_t)t * NSEC_PER_SEC;
        return 0;
}

int when_parse(const char *s, int64_t now_ns, int64_t *ret_ns)
{
        int64_t d;

        if (!s || !*s)
                return -EINVAL;
        if (streq(s, "now")) {
                *ret_ns = now_ns;
                return 0;
        }
        if (streq(s, "today"))
                return local_midnight(now_ns, 0, ret_ns);
        if (streq(s, "yesterday"))
                return local_midnight(now_ns, 1, ret_ns);
        if (startswith(s, "now-")) {
                if (duration_parse(s + 4, &d) < 0)
                        return -EINVAL;
                *ret_ns = now_ns - d;
                return 0;
        }
        if (s[0] == '-') {
                if (duration_parse(s + 1, &d) < 0)
                        return -EINVAL;
                *ret_ns = now_ns - d;
                return 0;
        }
        if (s[0] == '@') {
                char *end;
                double v;
                if (!isdigit((unsigned char)s[1]))
                        return -EINVAL;
                errno = 0;
                v = strtod(s + 1, &end);
                if (errno || *end || !isfinite(v) || v > 9.2e9)
                        return -EINVAL;
                *ret_ns = (int64_t)llround(v * 1e9);
                return 0;
        }
        return parse_datetime(s, ret_ns);
}

bool when_looks_like_time(const char *s)
{
        return s && (isdigit((unsigned char)s[0]) || s[0] == '-' || s[0] == '@' || s[0] == '+' ||
                     streq(s, "now") || startswith(s, "now-") || streq(s, "today") || streq(s, "yesterday"));
}

/* ns as seconds and milliseconds, the seconds floored (so that a time
 * before the epoch keeps a millisecond part in 0..999). */
static void split_ms(int64_t ns, time_t *ret_t, int *ret_ms)
{
        *ret_t = (time_t)(ns / NSEC_PER_SEC);
        *ret_ms = (int)((ns % NSEC_PER_SEC) / NSEC_PER_MSEC);
        if (ns < 0 && ns % NSEC_PER_SEC) {
                *ret_t -= 1;
                *ret_ms += 1000;
        }
}

/* "YYYY-MM-DD<sep>hh:mm:ss.mmm<suffix>" of ns, in UTC or local time. */
static void format_ms(int64_t ns, bool utc, char sep, const char *suffix, char *buf, size_t len)
{
        char day[16], hms[16];
        struct tm tm;
        time_t t;
        int ms;

        split_ms(ns, &t, &ms);
        if (utc)
                gmtime_r(&t, &tm);
        else
                localtime_r(&t, &tm);
        strftime(day, sizeof day, "%Y-%m-%d", &tm);
        strftime(hms, sizeof hms, "%H:%M:%S", &tm);
        snprintf(buf, len, "%s%c%s.%03d%s", day, sep, hms, ms, suffix);
}

void time_format_rfc3339(int64_t ns, char *buf, size_t len)
{
        format_ms(ns, true, 'T', "Z", buf, len);
}

void time_format_local(int64_t ns, char *buf, size_t len)
{
        time_t t = (time_t)(ns / NSEC_PER_SEC);
        struct tm tm;

        localtime_r(&t, &tm);
        strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
}

void time_format_local_ms(int64_t ns, char *buf, size_t len)
{
        format_ms(ns, false, ' ', "", buf, len);
}

#if ENABLE_TEST_SEAMS
/* TEST SEAM, not a feature, built only with ./configure --enable-test-seams.
 * With SCALEMON_TEST_REALTIME_OFFSET_FILE set in
 * the environment, now_realtime_ns() adds the signed number of nanoseconds
 * written (ASCII) in that file, so that tests/fault/fault-clock.sh can make the
 * wall clock jump for scalemond and scalemonctl without touching the
 * machine's clock.  The file is read again only when it changes (inode,
 * size or mtime: replace it with rename(2) to change it); a missing or
 * malformed file means no offset.  Without the variable this costs one
 * cached getenv(). */
#define TEST_REALTIME_OFFSET_ENV "SCALEMON_TEST_REALTIME_OFFSET_FILE"

static int64_t test_realtime_offset(void)
{
        static const char *path;
        static bool looked;
        static struct stat last;
        static int64_t offset;
        struct stat st;
        char buf[32];
        FILE *f;

        if (!looked) {
                path = getenv(TEST_REALTIME_OFFSET_ENV);
                looked = true;
        }
        if (!path || !*path)
                return 0;
        if (stat(path, &st) < 0) {
                memset(&last, 0, sizeof last);
                offset = 0;
                return 0;
        }
        if (st.st_ino == last.st_ino && st.st_dev == last.st_dev && st.st_size == last.st_size &&
            st.st_mtim.tv_sec == last.st_mtim.tv_sec && st.st_mtim.tv_nsec == last.st_mtim.tv_nsec)
                return offset;
        last = st;
        offset = 0;
        f = fopen(path, "re");
        if (!f)
                return 0;
        if (fgets(buf, sizeof buf, f)) {
                char *end;
                long long v;
                errno = 0;
                v = strtoll(buf, &end, 10);
                if (errno == 0 && end != buf && (*end == 0 || *end == '\n'))
                        offset = v;
        }
        fclose(f);
        return offset;
}
#else
static inline int64_t test_realtime_offset(void)
{
        return 0;
}
#endif

int64_t now_realtime_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec + test_realtime_offset();
}

int64_t now_monotonic_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}
