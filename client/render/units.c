/* units.c - counters in the units a person reads.
 *
 * The catalogue stores times in ns (run-queue and lock wait), us (PSI)
 * and s (CPU time); shown as they are stored, a lock wait of 49 ms per
 * second reads "49217449.5/s".  A time is shown in the largest of s, ms,
 * us and ns that keeps it at 1 or more, and its rate per second the same
 * way (ms/s: milliseconds of waiting per second of the run; 1000 ms/s is
 * one CPU's worth).  Counts are left as numbers.  A maximum
 * (lock_wait_max_ns) is a time, never a rate: callers do not ask for one.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "macro.h"
#include "metric.h"
#include "output.h"
#include "units.h"

static const struct {
        double s;               /* seconds in one */
        const char *name;
} time_units[] = { { 1, "s" }, { 1e-3, "ms" }, { 1e-6, "us" }, { 1e-9, "ns" } };

bool units_is_time(int m, double *ret_s)
{
        const char *u = metric_table[m].unit;
        double s = streq(u, "s") ? 1 : streq(u, "ms") ? 1e-3 : streq(u, "us") ? 1e-6 : streq(u, "ns") ? 1e-9 : 0;

        if (s == 0)
                return false;
        if (ret_s)
                *ret_s = s;
        return true;
}

/* The time unit that shows s as 1 or more (ns for anything smaller). */
static size_t time_unit(double s)
{
        size_t i;

        for (i = 0; i + 1 < ELEMENTSOF(time_units); i++)
                if (fabs(s) >= time_units[i].s * 0.9995)
                        break;
        return i;
}

/* 3 significant digits, whole numbers from 100 up: 1.23, 45.6, 789 */
static void three_digits(double v, char *buf, size_t len)
{
        if (fabs(v) >= 99.95)
                snprintf(buf, len, "%.0f", v);
        else if (fabs(v) >= 9.995)
                snprintf(buf, len, "%.1f", v);
        else
                snprintf(buf, len, "%.2f", v);
}

static void time_with(double s, const char *after, char *buf, size_t len)
{
        size_t u = time_unit(s);
        char v[32];

        if (!isfinite(s)) {
                snprintf(buf, len, "-");
                return;
        }
        if (s == 0) {
                snprintf(buf, len, "0 %s%s", time_units[0].name, after);
                return;
        }
        three_digits(s / time_units[u].s, v, sizeof v);
        snprintf(buf, len, "%s %s%s", v, time_units[u].name, after);
}

void units_seconds(double s, char *buf, size_t len)
{
        time_with(s, "", buf, len);
}

void units_total(int m, double v, char *buf, size_t len)
{
        double s;

        if (units_is_time(m, &s))
                time_with(v * s, "", buf, len);
        else
                format_number(v, buf, len);
}

void units_rate(int m, double per_s, bool bare, char *buf, size_t len)
{
        double s;
        char v[32];

        if (units_is_time(m, &s)) {
                time_with(per_s * s, "/s", buf, len);
                return;
        }
        format_number(per_s, v, sizeof v);
        snprintf(buf, len, "%s%s", v, bare || !isfinite(per_s) ? "" : "/s");
}

void units_per_work(int m, double v, char *buf, size_t len)
{
        double s;

        if (units_is_time(m, &s))
                time_with(v * s, "", buf, len);
        else
                format_number(v, buf, len);
}

const char *units_rate_axis(int m, double max, double *ret_factor)
{
        static const char *const rate_names[] = { "s/s", "ms/s", "us/s", "ns/s" };
        double s;
        size_t u;

        *ret_factor = 1;
        if (!units_is_time(m, &s))
                return "/s";
        u = time_unit(max * s);
        *ret_factor = s / time_units[u].s;
        return rate_names[u];
}
