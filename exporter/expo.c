/* expo.c - the text exposition formats, as Prometheus and OpenMetrics
 * define them.
 *
 * The two differ in little, and only here:
 *  - OpenMetrics names a counter family without _total (# TYPE x counter,
 *    samples x_total); 0.0.4 names it with (# TYPE x_total counter);
 *  - OpenMetrics has # UNIT and the info type (x_info samples); 0.0.4 has
 *    neither (the info family becomes a gauge named x_info);
 *  - OpenMetrics escapes '"' in # HELP and ends with "# EOF".
 * Label values are escaped alike (backslash, double quote, newline), and
 * must be UTF-8: a byte that is not becomes U+FFFD.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "expo.h"
#include "macro.h"
#include "proto.h"

struct expo {
        enum expo_format format;
        FILE *f;                        /* open_memstream() on buf */
        char *buf;
        size_t len;
        char family[256];               /* the current family's sample name */
        bool in_family;
        size_t nsamples;
};

int expo_new(enum expo_format format, struct expo **ret)
{
        struct expo *e = calloc(1, sizeof *e);

        if (!e)
                return -ENOMEM;
        e->format = format;
        e->f = open_memstream(&e->buf, &e->len);
        if (!e->f) {
                free(e);
                return -ENOMEM;
        }
        *ret = e;
        return 0;
}

struct expo *expo_free(struct expo *e)
{
        if (!e)
                return NULL;
        if (e->f)
                fclose(e->f);
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
                        fputs("\\\\", e->f);
                else if (*s == '\n')
                        fputs("\\n", e->f);
                else if (*s == '"' && e->format == EXPO_OPENMETRICS)
                        fputs("\\\"", e->f);
                else
                        fputc(*s, e->f);
        }
}

static void put_label_value(struct expo *e, const char *s)
{
        while (*s) {
                size_t k = proto_utf8_char(s);

                if (*s == '\\')
                        fputs("\\\\", e->f);
                else if (*s == '"')
                        fputs("\\\"", e->f);
                else if (*s == '\n')
                        fputs("\\n", e->f);
                else if (k == 0 && (unsigned char)*s < 0x80)
                        fputc(*s, e->f);        /* another control character: valid UTF-8 */
                else if (k == 0)
                        fputs("\xef\xbf\xbd", e->f);
                else {
                        fwrite(s, 1, k, e->f);
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
                fputs("NaN", e->f);
                return;
        }
        if (isinf(v)) {
                fputs(v > 0 ? "+Inf" : "-Inf", e->f);
                return;
        }
        if (v == floor(v) && fabs(v) < 9007199254740992.0) {
                fprintf(e->f, "%.0f", v);
                return;
        }
        snprintf(b, sizeof b, "%.15g", v);
        if (strtod(b, NULL) != v)
                snprintf(b, sizeof b, "%.17g", v);
        fputs(b, e->f);
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
        snprintf(meta, sizeof meta, "%s", om ? name : e->family);
        fprintf(e->f, "# TYPE %s %s\n", meta, tname);
        if (unit && om)
                fprintf(e->f, "# UNIT %s %s\n", meta, unit);
        if (help) {
                fprintf(e->f, "# HELP %s ", meta);
                put_help(e, help);
                fputc('\n', e->f);
        }
        e->in_family = true;
        return 0;
}

int expo_sample(struct expo *e, const struct expo_label *labels, size_t nlabels, double value)
{
        if (!e->in_family)
                return -EINVAL;
        for (size_t i = 0; i < nlabels; i++)
                if (!expo_valid_label_name(labels[i].name))
                        return -EINVAL;
        fputs(e->family, e->f);
        if (nlabels > 0) {
                fputc('{', e->f);
                for (size_t i = 0; i < nlabels; i++) {
                        fprintf(e->f, "%s%s=\"", i ? "," : "", labels[i].name);
                        put_label_value(e, labels[i].value);
                        fputc('"', e->f);
                }
                fputc('}', e->f);
        }
        fputc(' ', e->f);
        put_value(e, value);
        fputc('\n', e->f);
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
                fputs("# EOF\n", e->f);
        if (fclose(e->f) != 0) {
                e->f = NULL;
                return -ENOMEM;
        }
        e->f = NULL;
        *ret = TAKE_PTR(e->buf);
        *ret_len = e->len;
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
