/* test-timeutil.c - DUR and WHEN parsing, time formatting. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "tap.h"
#include "timeutil.h"

static void dur(const char *s, int64_t want)
{
        int64_t v = -1;
        int r = duration_parse(s, &v);
        ok(r == 0 && v == want, "duration '%s' = %lld ns (got r=%d v=%lld)", s, (long long)want, r, (long long)v);
}

static void dur_bad(const char *s)
{
        int64_t v = 12345;
        int r = duration_parse(s, &v);
        ok(r < 0 && v == 12345, "duration '%s' refused, output untouched", s);
}

int main(void)
{
        const int64_t S = 1000000000LL, now = 1764495478LL * S; /* 2025-11-30T09:37:58Z */
        int64_t t;
        char buf[64];

        setenv("TZ", "UTC", 1);
        tzset();

        dur("10ms", 10000000LL);
        dur("1s", S);
        dur("1.5s", S + S / 2);
        dur("5m", 300 * S);
        dur("2h", 7200 * S);
        dur("250us", 250000LL);
        dur("1d", 86400 * S);
        dur("3", 3 * S);
        dur("0.01", 10000000LL);
        dur_bad("");
        dur_bad("s");
        dur_bad("-1s");
        dur_bad("1x");
        dur_bad("1 s");
        dur_bad(" 1s");
        dur_bad("inf");
        dur_bad("nan");
        dur_bad("0x10s");
        dur_bad("1e3s");
        dur_bad("99999999999999999999h");
        dur_bad("1.2.3s");

        duration_format(S, buf, sizeof buf);
        is_str(buf, "1s", "format 1s");
        duration_format(10000000LL, buf, sizeof buf);
        is_str(buf, "10ms", "format 10ms");
        duration_format(300 * S, buf, sizeof buf);
        is_str(buf, "5m", "format 5m");
        duration_format(2 * 86400 * S, buf, sizeof buf);
        is_str(buf, "2d", "format 2d");
        duration_format(1500000000LL, buf, sizeof buf);
        is_str(buf, "1500ms", "format 1.5s as 1500ms");

        ok(when_parse("2026-11-30T09:37:58Z", now, &t) == 0 && t == 1796031478LL * S, "RFC 3339 with Z");
        ok(when_parse("2026-11-30T10:37:58+01:00", now, &t) == 0 && t == 1796031478LL * S, "RFC 3339 with offset");
        ok(when_parse("2026-11-30T09:37:58.250Z", now, &t) == 0 && t == 1796031478LL * S + S / 4,
           "RFC 3339 with fraction");
        ok(when_parse("2026-11-30 09:37", now, &t) == 0 && t == 1796031420LL * S, "local date and minute (TZ=UTC)");
        ok(when_parse("2026-11-30", now, &t) == 0 && t == 1795996800LL * S, "local date");
        ok(when_parse("2026-11-30 09:37:58", now, &t) == 0 && t == 1796031478LL * S, "local date and second");
        /* past 2262 nanoseconds since the epoch do not fit 64 bits (a
         * fuzzer found the overflow through an import file) */
        ok(when_parse("2263-01-01T00:00:00Z", now, &t) == -ERANGE, "year 2263 is out of range");
        ok(when_parse("1000-01-01T00:00:00Z", now, &t) == -ERANGE, "year 1000 is out of range");
        ok(when_parse("2262-01-01T00:00:00Z", now, &t) == 0, "year 2262 is in range");
        ok(when_parse("-2h", now, &t) == 0 && t == now - 7200 * S, "relative -2h");
        ok(when_parse("-90s", now, &t) == 0 && t == now - 90 * S, "relative -90s");
        ok(when_parse("-30m", now, &t) == 0 && t == now - 1800 * S, "relative -30m");
        ok(when_parse("@1796031478", now, &t) == 0 && t == 1796031478LL * S, "@EPOCH");
        ok(when_parse("@1796031478.5", now, &t) == 0 && t == 1796031478LL * S + S / 2, "@EPOCH.frac");
        ok(when_parse("now", now, &t) == 0 && t == now, "now");

        t = 42;
        ok(when_parse("2026-13-01", now, &t) == -EINVAL && t == 42, "month 13 refused");
        ok(when_parse("2026-11-30T25:00Z", now, &t) == -EINVAL, "hour 25 refused");
        ok(when_parse("2026-11-30T09:37:58+0100", now, &t) == -EINVAL, "offset without colon refused");
        ok(when_parse("-2x", now, &t) == -EINVAL, "relative with bad unit refused");
        ok(when_parse("@", now, &t) == -EINVAL, "bare @ refused");
        ok(when_parse("@-5", now, &t) == -EINVAL, "negative epoch refused");
        /* the words people type */
        ok(when_parse("today", now, &t) == 0 && t == 1764460800LL * S, "today: local midnight (TZ=UTC)");
        ok(when_parse("yesterday", now, &t) == 0 && t == 1764374400LL * S, "yesterday: the midnight before");
        ok(when_parse("-1d", now, &t) == 0 && t == now - 86400 * S, "relative -1d");
        ok(when_parse("now-1h", now, &t) == 0 && t == now - 3600 * S, "now-1h");
        ok(when_parse("now-90s", now, &t) == 0 && t == now - 90 * S, "now-90s");
        ok(when_parse("now-", now, &t) == -EINVAL && when_parse("now-1x", now, &t) == -EINVAL &&
           when_parse("now+1h", now, &t) == -EINVAL && when_parse("tomorrow", now, &t) == -EINVAL &&
           when_parse("Today", now, &t) == -EINVAL, "now-, now-1x, now+1h, tomorrow, Today refused");
        setenv("TZ", "Europe/Berlin", 1);
        tzset();
        /* 2026-03-29 is the spring-forward day in Berlin: 23 hours long */
        ok(when_parse("yesterday", 1774864800LL * S, &t) == 0 && t == 1774738800LL * S,
           "yesterday across a DST change: 2026-03-29 00:00 CET (got %lld)", (long long)(t / S));
        ok(when_parse("today", 1774864800LL * S, &t) == 0 && t == 1774821600LL * S,
           "today after the DST change: 2026-03-30 00:00 CEST");
        setenv("TZ", "UTC", 1);
        tzset();
        ok(when_parse("words", now, &t) == -EINVAL, "other words refused");
        ok(when_parse("2026-11-30 09", now, &t) == -EINVAL, "hour without minutes refused");
        ok(when_parse("", now, &t) == -EINVAL, "empty refused");

        ok(when_looks_like_time("2026-11-30") && when_looks_like_time("-2h") && when_looks_like_time("@1"),
           "time-like arguments recognised");
        ok(!when_looks_like_time("run42") && !when_looks_like_time("baseline"), "run names are not time-like");
        ok(when_looks_like_time("yesterday") && when_looks_like_time("today") && when_looks_like_time("now-1h"),
           "today, yesterday and now-DUR are time-like");

        time_format_rfc3339(1796031478LL * S + 123456789, buf, sizeof buf);
        is_str(buf, "2026-11-30T09:37:58.123Z", "RFC 3339 output");
        time_format_local(1796031478LL * S, buf, sizeof buf);
        is_str(buf, "2026-11-30 09:37:58", "local output (TZ=UTC)");
        time_format_local_ms(1796031478LL * S + 500 * 1000000LL, buf, sizeof buf);
        is_str(buf, "2026-11-30 09:37:58.500", "local output with milliseconds");
        time_format_local_ms(1796031478LL * S + 999999999LL, buf, sizeof buf);
        is_str(buf, "2026-11-30 09:37:58.999", "milliseconds truncated, never rounded into the next second");
        time_format_rfc3339(-250 * 1000000LL, buf, sizeof buf);
        is_str(buf, "1969-12-31T23:59:59.750Z", "before the epoch: the second floored, milliseconds 0..999");
        time_format_local_ms(-250 * 1000000LL, buf, sizeof buf);
        is_str(buf, "1969-12-31 23:59:59.750", "the same in local time (TZ=UTC)");
        return tap_done();
}
