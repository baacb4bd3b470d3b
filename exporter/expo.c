/* expo.c - the text exposition formats, as Prometheus and OpenMetrics
 * define them.
 *
 * The two differ in little, and only here:
 *  - OpenMetrics names a counter family without _total (# TYPE x counter,
 *    samples x_total); 0.0.4 names it with (# TYPE x_total counter);
 *  - OpenMetrics has # UNIT and the info type (x_info samples); 0.0.4 has
 *    neither (the info family becomes a gauge named x_info);
 *  - OpenMetrics escapes '"' in # HELP and ends with "# EOF";
 *  - OpenMetrics gives a counter's sample its created time (x_created
 *    beside x_total); 0.0.4 has no place for it.
 * Label values are escaped alike (backslash, double quote, newline), and
 * must be UTF-8: a byte that is not becomes U+FFFD.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "expo.h"
#include "macro.h"
#include "proto.h"

struct expo {
        enum expo_format format;
        char *buf;                      /* the text so far, buf[0..len) */
        size_t len, cap;
        bool oom;                       /* an append failed: expo_finish() says so */
        char family[256];               /* the current family's sample name */
        char created[256];              /* its NAME_created, "" unless a counter family */
        double created_v;               /* the last created time written, and its text */
        char created_s[40];
        bool in_family;
        size_t nsamples;
};

/* ---- the output buffer: appends without stdio, a scrape of a 256-CPU
 * host writes some 5,000 lines ---- */

static bool reserve(struct expo *e, size_t n)
{
        char *p;
        size_t cap;

        if (e->len + n + 1 <= e->cap)
                return true;
        if (e->oom)
                return false;
        cap = MAX(e->cap * 2, e->len + n + 1);
        cap = MAX(cap, (size_t)65536);
        p = realloc(e->buf, cap);
        if (!p) {
                e->oom = true;
                return false;
        }
        e->buf = p;
        e->cap = cap;
        return true;
}

static void put_mem(struct expo *e, const char *s, size_t n)
{
        if (!reserve(e, n))
                return;
        memcpy(e->buf + e->len, s, n);
        e->len += n;
}

static void put_str(struct expo *e, const char *s)
{
        put_mem(e, s, strlen(s));
}

static void put_char(struct expo *e, char c)
{
        if (reserve(e, 1))
                e->buf[e->len++] = c;
}

static void put_int(struct expo *e, int64_t v)
{
        char b[24], *p = b + sizeof b;
        uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;

        do
                *--p = (char)('0' + u % 10);
        while ((u /= 10) > 0);
        if (v < 0)
                *--p = '-';
        put_mem(e, p, (size_t)(b + sizeof b - p));
}

int expo_new(enum expo_format format, struct expo **ret)
{
        struct expo *e = calloc(1, sizeof *e);

        if (!e)
                return -ENOMEM;
        e->format = format;
        *ret = e;
        return 0;
}

struct expo *expo_free(struct expo *e)
{
        if (!e)
                return NULL;
        free(e->buf);
        free(e);
        return NULL;
}

bool expo_valid_metric_name(const char *s)
{
        if (!s || !(isalpha((unsigned char)s[0]) || s[0] == '_' || s[0] == ':'))
                return false;
        for (; *s; s++)
                if (!(isalnum((unsigned char)*s) || *s == '_' || *s == ':'))
                        return false;
        return true;
}

bool expo_valid_label_name(const char *s)
{
        if (!s || !(isalpha((unsigned char)s[0]) || s[0] == '_') || strncmp(s, "__", 2) == 0)
                return false;
        for (; *s; s++)
                if (!(isalnum((unsigned char)*s) || *s == '_'))
                        return false;
        return true;
}

void expo_label_name_from(const char *key, char *out, size_t n)
{
        size_t o = 0;

        if (n == 0)
                return;
        if (strncmp(key, "__", 2) == 0)
                strbuf_appendf(out, n, &o, "tag");
        else if (isdigit((unsigned char)key[0]) || key[0] == 0)
                strbuf_appendf(out, n, &o, "_");
        for (const char *p = key; *p && o + 1 < n; p++)
                out[o++] = isalnum((unsigned char)*p) || *p == '_' ? *p : '_';
        out[o] = 0;
}

/* help: 0.0.4 escapes backslash and newline; OpenMetrics also '"'. */
static void put_help(struct expo *e, const char *s)
{
        for (; *s; s++) {
                if (*s == '\\')
                        put_str(e, "\\\\");
                else if (*s == '\n')
                        put_str(e, "\\n");
                else if (*s == '"' && e->format == EXPO_OPENMETRICS)
                        put_str(e, "\\\"");
                else
                        put_char(e, *s);
        }
}

static void put_label_value(struct expo *e, const char *s)
{
        while (*s) {
                size_t k = proto_utf8_char(s);

                if (*s == '\\')
                        put_str(e, "\\\\");
                else if (*s == '"')
                        put_str(e, "\\\"");
                else if (*s == '\n')
                        put_str(e, "\\n");
                else if (k == 0 && (unsigned char)*s < 0x80)
                        put_char(e, *s);        /* another control character: valid UTF-8 */
                else if (k == 0)
                        put_str(e, "\xef\xbf\xbd");
                else {
                        put_mem(e, s, k);
                        s += k;
                        continue;
                }
                s++;
        }
}

/* Integers as integers (a counter of context switches reads as one), the
 * rest in as few digits as read back the same. */
static void put_value(struct expo *e, double v)
{
        char b[40];

        if (isnan(v)) {
                put_str(e, "NaN");
                return;
        }
        if (isinf(v)) {
                put_str(e, v > 0 ? "+Inf" : "-Inf");
                return;
        }
        if (v == floor(v) && fabs(v) < 9007199254740992.0) {
                put_int(e, (int64_t)v);
                return;
        }
        snprintf(b, sizeof b, "%.15g", v);
        if (strtod(b, NULL) != v)
                snprintf(b, sizeof b, "%.17g", v);
        put_str(e, b);
}

int expo_family(struct expo *e, const char *name, enum expo_type type, const char *unit, const char *help)
{
        bool om = e->format == EXPO_OPENMETRICS;
        const char *suffix = type == EXPO_COUNTER ? "_total" : type == EXPO_INFO ? "_info" : "";
        const char *tname = type == EXPO_COUNTER ? "counter" : type == EXPO_INFO && om ? "info" : "gauge";
        char meta[256];
        size_t n = strlen(name);

        if (!expo_valid_metric_name(name) || n + 6 >= sizeof e->family)
                return -EINVAL;
        /* the family's name may not already end with its suffix, and
         * OpenMetrics wants the unit as the name's last part */
        if (*suffix && n > strlen(suffix) && streq(name + n - strlen(suffix), suffix))
                return -EINVAL;
        if (unit && (n <= strlen(unit) + 1 || !streq(name + n - strlen(unit), unit) ||
                     name[n - strlen(unit) - 1] != '_'))
                return -EINVAL;
        snprintf(e->family, sizeof e->family, "%s%s", name, suffix);
        if (type == EXPO_COUNTER)
                snprintf(e->created, sizeof e->created, "%s_created", name);
        else
                e->created[0] = 0;
        snprintf(meta, sizeof meta, "%s", om ? name : e->family);
        put_str(e, "# TYPE ");
        put_str(e, meta);
        put_char(e, ' ');
        put_str(e, tname);
        put_char(e, '\n');
        if (unit && om) {
                put_str(e, "# UNIT ");
                put_str(e, meta);
                put_char(e, ' ');
                put_str(e, unit);
                put_char(e, '\n');
        }
        if (help) {
                put_str(e, "# HELP ");
                put_str(e, meta);
                put_char(e, ' ');
                put_help(e, help);
                put_char(e, '\n');
        }
        e->in_family = true;
        return 0;
}

/* The sample's name (the family's, or name if not NULL) and labels, and
 * the space before its value. */
static int put_series(struct expo *e, const char *name, const struct expo_label *labels, size_t nlabels)
{
        if (!e->in_family)
                return -EINVAL;
        for (size_t i = 0; i < nlabels; i++)
                if (!expo_valid_label_name(labels[i].name))
                        return -EINVAL;
        put_str(e, name ?: e->family);
        if (nlabels > 0) {
                put_char(e, '{');
                for (size_t i = 0; i < nlabels; i++) {
                        if (i)
                                put_char(e, ',');
                        put_str(e, labels[i].name);
                        put_str(e, "=\"");
                        put_label_value(e, labels[i].value);
                        put_char(e, '"');
                }
                put_char(e, '}');
        }
        put_char(e, ' ');
        return 0;
}

int expo_sample(struct expo *e, const struct expo_label *labels, size_t nlabels, double value)
{
        int r = put_series(e, NULL, labels, nlabels);

        if (r < 0)
                return r;
        put_value(e, value);
        put_char(e, '\n');
        e->nsamples++;
        return 0;
}

int expo_sample_decimal(struct expo *e, const struct expo_label *labels, size_t nlabels, int64_t mantissa,
                        int decimals)
{
        static const int64_t pow10[] = { 1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000,
                                         1000000000 };
        int r;

        if (decimals < 0 || decimals >= (int)ELEMENTSOF(pow10))
                return -EINVAL;
        r = put_series(e, NULL, labels, nlabels);
        if (r < 0)
                return r;
        if (mantissa < 0) {
                put_char(e, '-');
                mantissa = mantissa == INT64_MIN ? INT64_MAX : -mantissa;
        }
        put_int(e, mantissa / pow10[decimals]);
        if (decimals > 0 && mantissa % pow10[decimals] != 0) {
                char frac[12];
                int64_t f = mantissa % pow10[decimals];
                int n = decimals;

                while (f % 10 == 0) {           /* 2.50 -> 2.5 */
                        f /= 10;
                        n--;
                }
                frac[0] = '.';
                for (int i = n; i >= 1; i--, f /= 10)
                        frac[i] = (char)('0' + f % 10);
                put_mem(e, frac, (size_t)n + 1);
        }
        put_char(e, '\n');
        e->nsamples++;
        return 0;
}

int expo_created(struct expo *e, const struct expo_label *labels, size_t nlabels, double seconds)
{
        size_t len;
        int r;

        if (!e->in_family || !e->created[0])
                return -EINVAL;
        if (e->format != EXPO_OPENMETRICS)
                return 0;
        r = put_series(e, e->created, labels, nlabels);
        if (r < 0)
                return r;
        /* one created time for thousands of series: its text made once */
        if (!e->created_s[0] || seconds != e->created_v) {
                len = e->len;
                put_value(e, seconds);
                if (e->len > len) {
                        snprintf(e->created_s, sizeof e->created_s, "%.*s", (int)(e->len - len), e->buf + len);
                        e->created_v = seconds;
                }
        } else
                put_str(e, e->created_s);
        put_char(e, '\n');
        e->nsamples++;
        return 0;
}

size_t expo_samples(const struct expo *e)
{
        return e->nsamples;
}

int expo_finish(struct expo *e, char **ret, size_t *ret_len)
{
        if (e->format == EXPO_OPENMETRICS)
                put_str(e, "# EOF\n");
        if (!reserve(e, 0))
                return -ENOMEM;
        e->buf[e->len] = 0;
        *ret_len = e->len;
        *ret = TAKE_PTR(e->buf);
        e->len = e->cap = 0;
        return 0;
}

/* Accept: a list of media ranges with optional q; take the best of
 * openmetrics and text/plain (or any other, which gets 0.0.4). */
enum expo_format expo_negotiate(const char *accept)
{
        double q_om = -1, q_other = -1;

        if (!accept)
                return EXPO_PROMETHEUS;
        for (const char *p = accept; *p;) {
                const char *end = strchr(p, ',');
                size_t n = end ? (size_t)(end - p) : strlen(p);
                char item[256];
                char *semi, *q, *type = item;
                double qv = 1;

                snprintf(item, sizeof item, "%.*s", (int)MIN(n, sizeof item - 1), p);
                p += n + (end ? 1 : 0);
                while (*type == ' ' || *type == '\t')
                        type++;
                semi = strchr(type, ';');
                if (semi) {
                        *semi = 0;
                        q = strstr(semi + 1, "q=");
                        if (q)
                                qv = strtod(q + 2, NULL);
                }
                for (char *t = type + strlen(type); t > type && (t[-1] == ' ' || t[-1] == '\t');)
                        *--t = 0;
                if (strcasecmp(type, "application/openmetrics-text") == 0)
                        q_om = MAX(q_om, qv);
                else
                        q_other = MAX(q_other, qv);
        }
        return q_om > 0 && q_om >= q_other ? EXPO_OPENMETRICS : EXPO_PROMETHEUS;
}

const char *expo_content_type(enum expo_format format)
{
        return format == EXPO_OPENMETRICS ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                                          : "text/plain; version=0.0.4; charset=utf-8";
}
