/* output.c - JSON, CSV and number formatting for scalemonctl.
 *
 * Every verb builds a JSON document (jansson); --format json prints it,
 * --format csv flattens its row array (nested keys joined with '.'), and
 * tables are drawn per verb with libsmartcols.
 */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "output.h"
#include "proto.h"
#include "timeutil.h"

/* An error is one line a person can read: control characters (a newline
 * in a run name, in the daemon's reply) and bytes that are not UTF-8 are
 * shown escaped (\n, \xff), and a message longer than CTL_FAIL_MAX (a
 * 100 kB argument echoed back) keeps its head, which names the option, and
 * its tail, which says what to do. */
#define CTL_FAIL_MAX  400
#define CTL_FAIL_KEEP 180

static void put_escaped(const char *s, size_t n)
{
        for (size_t i = 0; i < n;) {
                unsigned char c = (unsigned char)s[i];
                size_t k = proto_utf8_char(s + i);

                /* bytes that are not UTF-8 (a mistyped name, \xff) are
                 * escaped too: the terminal would show them as garbage */
                if (c == '\n')
                        fputs("\\n", stderr);
                else if (c == '\t')
                        fputs("\\t", stderr);
                else if (k == 0 || k > n - i)
                        fprintf(stderr, "\\x%02x", c);
                else {
                        fwrite(s + i, 1, k, stderr);
                        i += k;
                        continue;
                }
                i++;
        }
}

int ctl_fail(int code, const char *fmt, ...)
{
        _cleanup_free_ char *msg = NULL;
        va_list ap;
        size_t n;
        int k;

        va_start(ap, fmt);
        k = vasprintf(&msg, fmt, ap);
        va_end(ap);
        fputs("scalemonctl: ", stderr);
        if (k < 0) {
                fputs("out of memory\n", stderr);
                return code;
        }
        n = (size_t)k;
        if (n <= CTL_FAIL_MAX)
                put_escaped(msg, n);
        else {
                size_t head = CTL_FAIL_KEEP, tail = n - CTL_FAIL_KEEP;
                /* cut between UTF-8 characters, not inside one */
                while (head > 0 && ((unsigned char)msg[head] & 0xc0) == 0x80)
                        head--;
                while (tail < n && ((unsigned char)msg[tail] & 0xc0) == 0x80)
                        tail++;
                put_escaped(msg, head);
                fprintf(stderr, "[...%zu bytes...]", tail - head);
                put_escaped(msg + tail, n - tail);
        }
        fputc('\n', stderr);
        return code;
}

int output_json(json_t *doc)
{
        if (json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12)) < 0)
                return ctl_fail(EXIT_FAILED, "cannot write output");
        fputc('\n', stdout);
        return EXIT_OK;
}

json_t *json_time(int64_t ns)
{
        char buf[40];
        time_format_rfc3339(ns, buf, sizeof buf);
        return json_string(buf);
}

json_t *json_number(double v)
{
        if (!isfinite(v))
                return json_null();
        if (v == floor(v) && fabs(v) < 9e15)
                return json_integer((json_int_t)v);
        return json_real(v);
}

void format_number(double v, char *buf, size_t len)
{
        if (!isfinite(v))
                snprintf(buf, len, "-");
        else if (v == floor(v) && fabs(v) < 1e15)
                snprintf(buf, len, "%.0f", v);
        else if (fabs(v) >= 100)
                snprintf(buf, len, "%.1f", v);
        else if (fabs(v) >= 1)
                snprintf(buf, len, "%.2f", v);
        else
                snprintf(buf, len, "%.3g", v);
}

void format_pct(double pct, char *buf, size_t len)
{
        int d = 1;

        if (!isfinite(pct)) {
                snprintf(buf, len, "-");
                return;
        }
        /* more decimals while the rounded value says -100 (not all gone)
         * or 0 (no change) and the value is neither */
        for (; d < 4; d++) {
                double scale = pow(10, d), r = round(pct * scale) / scale;
                if ((r != -100 || pct == -100) && (r != 0 || pct == 0))
                        break;
        }
        snprintf(buf, len, "%+.*f%%", d, pct);
}

void format_bytes(int64_t v, char *buf, size_t len)
{
        static const char *const u[] = { "B", "KiB", "MiB", "GiB", "TiB" };
        double d = (double)v;
        size_t i = 0;

        while (d >= 1024 && i + 1 < sizeof u / sizeof u[0]) {
                d /= 1024;
                i++;
        }
        if (i == 0)
                snprintf(buf, len, "%lld B", (long long)v);
        else
                snprintf(buf, len, "%.1f %s", d, u[i]);
}

/* ---- CSV ---- */

struct columns {
        char **name;
        size_t n, cap;
};

static int columns_add(struct columns *c, const char *name)
{
        for (size_t i = 0; i < c->n; i++)
                if (streq(c->name[i], name))
                        return 0;
        if (c->n == c->cap) {
                char **p = realloc(c->name, (c->cap = c->cap ? c->cap * 2 : 16) * sizeof *p);
                if (!p)
                        return -ENOMEM;
                c->name = p;
        }
        c->name[c->n] = strdup(name);
        return c->name[c->n++] ? 0 : -ENOMEM;
}

static int collect(struct columns *c, json_t *obj, const char *prefix)
{
        const char *key;
        json_t *v;

        json_object_foreach(obj, key, v) {
                char name[512];
                snprintf(name, sizeof name, "%s%s%s", prefix, *prefix ? "." : "", key);
                if (json_is_object(v)) {
                        /* nested keys become columns; an empty object none */
                        if (collect(c, v, name) < 0)
                                return -ENOMEM;
                } else if (columns_add(c, name) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static json_t *lookup(json_t *obj, const char *path)
{
        char buf[512], *save = NULL, *tok;
        json_t *v = obj;

        snprintf(buf, sizeof buf, "%s", path);
        for (tok = strtok_r(buf, ".", &save); tok && v; tok = strtok_r(NULL, ".", &save))
                v = json_is_object(v) ? json_object_get(v, tok) : NULL;
        return v;
}

static void csv_field(const char *s)
{
        if (strpbrk(s, ",\"\n\r")) {
                fputc('"', stdout);
                for (; *s; s++) {
                        if (*s == '"')
                                fputc('"', stdout);
                        fputc(*s, stdout);
                }
                fputc('"', stdout);
        } else
                fputs(s, stdout);
}

static void csv_value(json_t *v)
{
        char buf[64];

        if (!v || json_is_null(v) || (json_is_object(v) && json_object_size(v) == 0))
                return;
        if (json_is_string(v))
                csv_field(json_string_value(v));
        else if (json_is_integer(v))
                printf("%" JSON_INTEGER_FORMAT, json_integer_value(v));
        else if (json_is_real(v)) {
                snprintf(buf, sizeof buf, "%.12g", json_real_value(v));
                fputs(buf, stdout);
        } else if (json_is_boolean(v))
                fputs(json_is_true(v) ? "true" : "false", stdout);
        else {
                char *s = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
                csv_field(s ? s : "");
                free(s);
        }
}

int output_csv(json_t *rows)
{
        struct columns c = { 0 };
        size_t i;
        json_t *row;
        int r = EXIT_OK;

        json_array_foreach(rows, i, row)
                if (json_is_object(row) && collect(&c, row, "") < 0) {
                        r = ctl_fail(EXIT_FAILED, "out of memory");
                        goto out;
                }
        for (size_t k = 0; k < c.n; k++) {
                if (k)
                        fputc(',', stdout);
                csv_field(c.name[k]);
        }
        fputc('\n', stdout);
        json_array_foreach(rows, i, row) {
                for (size_t k = 0; k < c.n; k++) {
                        if (k)
                                fputc(',', stdout);
                        csv_value(lookup(row, c.name[k]));
                }
                fputc('\n', stdout);
        }
out:
        for (size_t k = 0; k < c.n; k++)
                free(c.name[k]);
        free(c.name);
        return r;
}

/* ---- tables ---- */

struct libscols_table *table_new(const char *const *columns, const char *right_aligned)
{
        struct libscols_table *tb = scols_new_table();

        if (!tb)
                return NULL;
        for (size_t i = 0; columns[i]; i++) {
                bool right = right_aligned && i < strlen(right_aligned) && right_aligned[i] == 'r';
                if (!scols_table_new_column(tb, columns[i], 0, right ? SCOLS_FL_RIGHT : 0)) {
                        scols_unref_table(tb);
                        return NULL;
                }
        }
        return tb;
}

int table_row(struct libscols_table *tb, ...)
{
        struct libscols_line *ln = scols_table_new_line(tb, NULL);
        size_t n = scols_table_get_ncols(tb);
        va_list ap;

        if (!ln)
                return -ENOMEM;
        va_start(ap, tb);
        for (size_t i = 0; i < n; i++) {
                const char *v = va_arg(ap, const char *);
                if (scols_line_set_data(ln, i, v ? v : "-") < 0) {
                        va_end(ap);
                        return -ENOMEM;
                }
        }
        va_end(ap);
        return 0;
}

int table_print(struct libscols_table *tb)
{
        int r = scols_print_table(tb);
        scols_unref_table(tb);
        return r < 0 ? ctl_fail(EXIT_FAILED, "cannot write output") : EXIT_OK;
}
