/* score.c - scores from benchmark output without a regex (score.h).
 * Each parser reads the tool's own format as its version in Debian 12
 * prints it (stress-ng 0.15, perf 6.1, fio 3.33; the captures in
 * tests/fixtures/scores/ are those tools' real output) and names the
 * scores as the tool names them. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"
#include "score.h"

const char *score_format_name(enum score_format f)
{
        static const char *const names[] = {
                [SCORE_STRESS_NG] = "stress-ng",
                [SCORE_PERF_BENCH] = "perf-bench",
                [SCORE_FIO] = "fio",
                [SCORE_JSON] = "json",
        };
        return names[f];
}

int score_source_parse(const char *arg, struct score_source *ret, char **ret_err)
{
        const char *colon;

        for (enum score_format f = SCORE_STRESS_NG; f < SCORE_JSON; f++)
                if (streq(arg, score_format_name(f))) {
                        *ret = (struct score_source){ .format = f };
                        return 0;
                }
        if (!startswith(arg, "json:"))
                return ret_errf(ret_err, -EINVAL, "use stress-ng, perf-bench, fio or json:FILE:PATH");
        arg += 5;
        colon = strrchr(arg, ':');
        if (!colon || colon == arg || !colon[1])
                return ret_errf(ret_err, -EINVAL, "json: needs a FILE and a PATH, json:FILE:PATH (FILE - for the "
                                              "command's standard output), e.g. json:result.json:summary.ops");
        *ret = (struct score_source){ .format = SCORE_JSON, .file = strndup(arg, (size_t)(colon - arg)),
                                      .path = strdup(colon + 1) };
        if (!ret->file || !ret->path) {
                score_source_clear(ret);
                return ret_errf(ret_err, -ENOMEM, "out of memory");
        }
        return 0;
}

void score_source_clear(struct score_source *src)
{
        free(src->file);
        free(src->path);
        src->file = src->path = NULL;
}

/* ---- the list ---- */

/* Add key (made a valid score key: characters other than letters, digits
 * and _ . - become _) = v; a key already there takes the new value. */
static void add(struct score_list *out, const char *key, double v)
{
        char k[PROTO_MAX_KEY + 1];
        size_t n = 0;

        if (!isalpha((unsigned char)key[0]) && key[0] != '_')
                k[n++] = '_';
        for (const char *p = key; *p && n < PROTO_MAX_KEY; p++)
                k[n++] = isalnum((unsigned char)*p) || strchr("_.-", *p) ? *p : '_';
        k[n] = 0;
        for (size_t i = 0; i < out->n; i++)
                if (streq(out->v[i].key, k)) {
                        out->v[i].value = v;
                        return;
                }
        if (out->n == PROTO_MAX_SCORES) {
                out->dropped++;
                return;
        }
        memcpy(out->v[out->n].key, k, n + 1);
        out->v[out->n++].value = v;
}

static bool number(const char *s, size_t len, double *ret)
{
        char buf[64], *end;
        double v;

        if (len == 0 || len >= sizeof buf)
                return false;
        memcpy(buf, s, len);
        buf[len] = 0;
        errno = 0;
        v = strtod(buf, &end);
        if (errno || *end || !isfinite(v))
                return false;
        *ret = v;
        return true;
}

/* The next line of *p (without its newline) into line[size]; false at the end. */
static bool next_line(const char **p, char *line, size_t size)
{
        const char *s = *p, *e;
        size_t n;

        if (!*s)
                return false;
        e = strchr(s, '\n');
        n = e ? (size_t)(e - s) : strlen(s);
        *p = e ? e + 1 : s + n;
        if (n >= size)
                n = size - 1;
        memcpy(line, s, n);
        line[n] = 0;
        return true;
}

/* Split line into at most max words (in place); their number. */
static size_t words(char *line, char **w, size_t max)
{
        size_t n = 0;
        for (char *s = strtok(line, " \t\r"); s && n < max; s = strtok(NULL, " \t\r"))
                w[n++] = s;
        return n;
}

/* ---- stress-ng ---- */

/* stress-ng's log prefix, "stress-ng: metrc: [1234] " (older versions
 * say "info:"): the rest of the line. */
static char *strip_stress_ng_prefix(char *line)
{
        char *p = line;
        if (!startswith(p, "stress-ng:"))
                return p;
        p = strchr(p + 10, ']');
        return p ? p + 1 : line + strlen(line);
}

/* The table of --metrics-brief and --metrics: a header line naming the
 * stressor and bogo ops, then a row per stressor: NAME, bogo ops, real,
 * user and system time, bogo ops/s by real time, by user+system time (and
 * with --metrics two more).  The score is NAME = bogo ops/s (real time). */
int score_parse_stress_ng(const char *text, struct score_list *out, char **ret_err)
{
        char line[1024], *w[16];
        bool in_table = false;
        size_t found = 0;

        for (const char *p = text; next_line(&p, line, sizeof line);) {
                char *rest = strip_stress_ng_prefix(line);
                double v[5];
                size_t n;
                bool row = true;

                if (strstr(rest, "stressor") && strstr(rest, "bogo ops")) {
                        in_table = true;
                        continue;
                }
                if (!in_table)
                        continue;
                n = words(rest, w, ELEMENTSOF(w));
                if (n > 0 && w[0][0] == '(')
                        continue;       /* the header's second line: (secs) (secs) ... */
                for (size_t i = 0; row && i < 5; i++)
                        row = i + 1 < n && number(w[i + 1], strlen(w[i + 1]), &v[i]);
                if (!row || !isalpha((unsigned char)w[0][0])) {
                        in_table = false;       /* the table ended */
                        continue;
                }
                add(out, w[0], v[4]);
                found++;
        }
        if (!found)
                return ret_errf(ret_err, -ENOENT, "no stress-ng metrics table in the command's output (run stress-ng "
                                              "with --metrics-brief, --metrics or --yaml FILE)");
        return 0;
}

/* The metrics: list of stress-ng's --yaml file, as stress-ng writes it:
 *     - stressor: cpu
 *       bogo-ops-per-second-real-time: 2374.672190
 * A few fixed lines of stress-ng's own, read as lines: no YAML library
 * is needed for them. */
int score_parse_stress_ng_yaml(const char *text, struct score_list *out, char **ret_err)
{
        char line[1024], name[PROTO_MAX_KEY + 1] = "";
        bool in_metrics = false;
        size_t found = 0;

        for (const char *p = text; next_line(&p, line, sizeof line);) {
                char *s = line, *val;
                double v;

                if (line[0] && !isspace((unsigned char)line[0])) {
                        in_metrics = startswith(line, "metrics:");
                        continue;
                }
                if (!in_metrics)
                        continue;
                while (isspace((unsigned char)*s))
                        s++;
                if (startswith(s, "- stressor:")) {
                        val = s + 11 + strspn(s + 11, " ");
                        snprintf(name, sizeof name, "%.*s", (int)strcspn(val, " \r"), val);
                } else if (startswith(s, "bogo-ops-per-second-real-time:") && name[0]) {
                        val = s + 30 + strspn(s + 30, " ");
                        if (!number(val, strcspn(val, " \r"), &v))
                                return ret_errf(ret_err, -EINVAL, "stress-ng YAML: stressor %s: '%s' is not a number",
                                            name, val);
                        add(out, name, v);
                        found++;
                        name[0] = 0;
                }
        }
        if (!found)
                return ret_errf(ret_err, -ENOENT, "no metrics in stress-ng's YAML file (it writes them at the end of "
                                              "a run that completed)");
        return 0;
}

/* ---- perf bench ---- */

/* A value line of perf bench: "X unit" alone on its line (after spaces). */
static bool value_line(char **w, size_t n, const char *unit, double *v)
{
        return n == 2 && streq(w[1], unit) && number(w[0], strlen(w[0]), v);
}

static int count_functions(const char *text)
{
        int n = 0;
        for (const char *p = text; (p = strstr(p, "# function '")); p++)
                n++;
        return n;
}

/* perf bench's results: "Total time: X [sec]" (total_time, seconds),
 * "X usecs/op" (usecs_per_op), "X ops/sec" and "Averaged X operations/sec"
 * (ops_per_sec), and the mem benchmarks' "X GB/sec" (or MB/sec, KB/sec,
 * B/sec as perf scales it: gb_per_sec), per "# function 'F'" when it ran
 * several (F.gb_per_sec). */
int score_parse_perf_bench(const char *text, struct score_list *out, char **ret_err)
{
        static const struct { const char *unit; double scale; } rates[] = {
                { "GB/sec", 1 }, { "MB/sec", 1.0 / 1024 }, { "KB/sec", 1.0 / (1024 * 1024) },
                { "B/sec", 1.0 / (1024 * 1024 * 1024) },
        };
        char line[1024], *w[8], func[PROTO_MAX_KEY - 16] = "", key[PROTO_MAX_KEY + 1];
        bool several = count_functions(text) > 1;
        size_t found = 0;
        double v;

        for (const char *p = text; next_line(&p, line, sizeof line);) {
                size_t n;

                if (startswith(line, "# function '")) {
                        snprintf(func, sizeof func, "%.*s", (int)strcspn(line + 12, "'"), line + 12);
                        continue;
                }
                n = words(line, w, ELEMENTSOF(w));
                if (n == 4 && streq(w[0], "Total") && streq(w[1], "time:") && streq(w[3], "[sec]") &&
                    number(w[2], strlen(w[2]), &v))
                        add(out, "total_time", v), found++;
                else if (value_line(w, n, "usecs/op", &v))
                        add(out, "usecs_per_op", v), found++;
                else if (value_line(w, n, "ops/sec", &v))
                        add(out, "ops_per_sec", v), found++;
                else if (n >= 3 && streq(w[0], "Averaged") && streq(w[2], "operations/sec") &&
                         number(w[1], strlen(w[1]), &v))
                        add(out, "ops_per_sec", v), found++;
                else
                        for (size_t i = 0; i < ELEMENTSOF(rates); i++)
                                if (value_line(w, n, rates[i].unit, &v)) {
                                        snprintf(key, sizeof key, "%s%sgb_per_sec", several ? func : "",
                                                 several ? "." : "");
                                        add(out, key, v * rates[i].scale);
                                        found++;
                                }
        }
        if (!found)
                return ret_errf(ret_err, -ENOENT, "no perf bench result in the command's output (Total time, usecs/op, "
                                              "ops/sec, operations/sec or GB/sec lines)");
        return 0;
}

/* ---- JSON ---- */

/* A JSON document in text: from its first line that starts with '{' (fio
 * may print other lines first), to the end of that value. */
static json_t *load_json(const char *text, size_t len, const char *what, char **ret_err)
{
        const char *start = text;
        json_error_t e;
        json_t *doc;

        while (start < text + len && *start != '{') {
                const char *nl = memchr(start, '\n', (size_t)(text + len - start));
                start = nl ? nl + 1 : text + len;
        }
        if (start >= text + len) {
                ret_errf(ret_err, -ENOENT, "%s", what);
                return NULL;
        }
        doc = json_loadb(start, (size_t)(text + len - start), JSON_DISABLE_EOF_CHECK | JSON_DECODE_ANY, &e);
        if (!doc)
                ret_errf(ret_err, -EINVAL, "not JSON: %s (line %d)", e.text, e.line);
        return doc;
}

/* fio: per job and direction (read, write, trim) that did I/O, its iops,
 * bw_bytes and lat_ns.mean, under fio's own names (read.iops,
 * read.bw_bytes, read.lat_ns.mean).  Jobs of one name (numjobs=N without
 * group_reporting) are one: iops and bandwidth add up, the mean latency
 * is weighted by I/Os.  With jobs of several names, each score starts
 * with its job's name (JOB.read.iops). */
struct fio_dir { double iops, bw, lat_sum, ios; };

static void fio_job(json_t *job, struct fio_dir d[3])
{
        static const char *const dirs[] = { "read", "write", "trim" };
        for (int k = 0; k < 3; k++) {
                json_t *o = json_object_get(job, dirs[k]);
                double ios = json_number_value(json_object_get(o, "total_ios"));
                if (ios <= 0)
                        continue;
                d[k].iops += json_number_value(json_object_get(o, "iops"));
                d[k].bw += json_number_value(json_object_get(o, "bw_bytes"));
                d[k].lat_sum += json_number_value(json_object_get(json_object_get(o, "lat_ns"), "mean")) * ios;
                d[k].ios += ios;
        }
}

static size_t fio_add(struct score_list *out, const char *prefix, const struct fio_dir d[3])
{
        static const char *const dirs[] = { "read", "write", "trim" };
        char key[PROTO_MAX_KEY * 2];
        size_t found = 0;

        for (int k = 0; k < 3; k++) {
                if (d[k].ios <= 0)
                        continue;
                snprintf(key, sizeof key, "%s%s.iops", prefix, dirs[k]);
                add(out, key, d[k].iops);
                snprintf(key, sizeof key, "%s%s.bw_bytes", prefix, dirs[k]);
                add(out, key, d[k].bw);
                snprintf(key, sizeof key, "%s%s.lat_ns.mean", prefix, dirs[k]);
                add(out, key, d[k].lat_sum / d[k].ios);
                found += 3;
        }
        return found;
}

int score_parse_fio(const char *text, size_t len, struct score_list *out, char **ret_err)
{
        json_t *doc = load_json(text, len, "no JSON in fio's output (run fio with --output-format=json)", ret_err);
        json_t *jobs, *job;
        size_t i, found = 0, nnames = 0;
        const char *names[64];

        if (!doc)
                return ret_err && *ret_err && startswith(*ret_err, "no JSON") ? -ENOENT : -EINVAL;
        jobs = json_object_get(doc, "jobs");
        json_array_foreach(jobs, i, job) {
                const char *name = json_string_value(json_object_get(job, "jobname"));
                size_t k;
                for (k = 0; name && k < nnames && !streq(names[k], name); k++)
                        ;
                if (name && k == nnames && nnames < ELEMENTSOF(names))
                        names[nnames++] = name;
        }
        for (size_t k = 0; k < nnames; k++) {
                struct fio_dir d[3] = { { 0 } };
                char prefix[PROTO_MAX_KEY + 2] = "";
                json_array_foreach(jobs, i, job)
                        if (json_string_value(json_object_get(job, "jobname")) &&
                            streq(json_string_value(json_object_get(job, "jobname")), names[k]))
                                fio_job(job, d);
                if (nnames > 1)
                        snprintf(prefix, sizeof prefix, "%s.", names[k]);
                found += fio_add(out, prefix, d);
        }
        json_decref(doc);
        if (!found)
                return ret_errf(ret_err, -ENOENT, "fio's JSON has no job that did I/O");
        return 0;
}

/* The value at path in doc: components split by '.', an array index as a
 * number or in brackets ("jobs.0.read.iops", "jobs[0].read.iops"); a
 * leading "$." or "." is allowed.  *ret_last: the last object key. */
static json_t *json_at(json_t *doc, const char *path, char *last, size_t lastsize, char **ret_err)
{
        _cleanup_free_ char *copy = NULL;
        json_t *v = doc;
        char *save = NULL;

        if (startswith(path, "$"))
                path++;
        copy = strdup(path);
        if (!copy) {
                ret_errf(ret_err, -ENOMEM, "out of memory");
                return NULL;
        }
        for (char *c = copy; *c; c++)
                if (*c == '[' || *c == ']')
                        *c = '.';
        for (char *s = strtok_r(copy, ".", &save); s; s = strtok_r(NULL, ".", &save)) {
                char *end;
                unsigned long idx;
                if (json_is_array(v)) {
                        errno = 0;
                        idx = strtoul(s, &end, 10);
                        v = errno || *end ? NULL : json_array_get(v, idx);
                } else {
                        v = json_object_get(v, s);
                        snprintf(last, lastsize, "%s", s);
                }
                if (!v) {
                        ret_errf(ret_err, -ENOENT, "the JSON has nothing at %s (at '%s')", path, s);
                        return NULL;
                }
        }
        return v;
}

/* The number at path (or a string holding one), named by the path's last
 * object key ("summary.ops" gives ops). */
int score_parse_json_path(const char *text, size_t len, const char *path, struct score_list *out, char **ret_err)
{
        json_t *doc = load_json(text, len, "no JSON document (an object) found", ret_err), *v;
        char last[PROTO_MAX_KEY + 1] = "";
        double x;
        int r = 0;

        if (!doc)
                return -EINVAL;
        v = json_at(doc, path, last, sizeof last, ret_err);
        if (!v)
                r = -ENOENT;
        else if (!last[0])
                r = ret_errf(ret_err, -EINVAL, "%s names no object key to call the score by", path);
        else if (json_is_number(v))
                add(out, last, json_number_value(v));
        else if (json_is_string(v) && number(json_string_value(v), json_string_length(v), &x))
                add(out, last, x);
        else
                r = ret_errf(ret_err, -EINVAL, "the value at %s is not a number", path);
        json_decref(doc);
        return r;
}

/* ---- what the command printed, and the files it wrote ---- */

int score_capture_add(struct score_capture *c, int stream, const char *data, size_t n)
{
        size_t room = SCORE_CAPTURE_MAX - c->len[stream];

        if (n > room) {
                c->overflow += n - room;
                n = room;
        }
        if (c->len[stream] + n + 1 > c->size[stream]) {
                size_t size = MAX(c->size[stream] * 2, c->len[stream] + n + 1);
                char *b = realloc(c->buf[stream], MAX(size, 4096u));
                if (!b) {
                        c->overflow += n;
                        return -ENOMEM;
                }
                c->buf[stream] = b;
                c->size[stream] = MAX(size, 4096u);
        }
        memcpy(c->buf[stream] + c->len[stream], data, n);
        c->len[stream] += n;
        c->buf[stream][c->len[stream]] = 0;
        return 0;
}

void score_capture_free(struct score_capture *c)
{
        for (int k = 0; k < 2; k++)
                free(c->buf[k]);
        *c = (struct score_capture){ .overflow = 0 };
}

/* The value of option opt in argv: "opt VALUE" or "opt=VALUE". */
static const char *option_value(char *const *argv, const char *opt)
{
        size_t n = strlen(opt);
        for (size_t i = 0; argv[i]; i++) {
                if (streq(argv[i], opt) && argv[i + 1])
                        return argv[i + 1];
                if (strncmp(argv[i], opt, n) == 0 && argv[i][n] == '=')
                        return argv[i] + n + 1;
        }
        return NULL;
}

const char *score_source_file(const struct score_source *src, char *const *argv)
{
        const char *f;

        switch (src->format) {
        case SCORE_JSON:
                return streq(src->file, "-") ? NULL : src->file;
        case SCORE_STRESS_NG:
                f = option_value(argv, "--yaml");
                return f ? f : option_value(argv, "-Y");
        case SCORE_FIO:
                return option_value(argv, "--output");
        default:
                return NULL;
        }
}

static int read_file(const char *path, char **ret, size_t *ret_len, char **ret_err)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        struct score_capture c = { .overflow = 0 };
        char buf[65536];
        ssize_t n;

        if (fd < 0)
                return ret_errf(ret_err, -errno, "cannot read %s: %s", path, strerror(errno));
        while ((n = read(fd, buf, sizeof buf)) > 0)
                if (score_capture_add(&c, 0, buf, (size_t)n) < 0 || c.overflow)
                        break;
        if (n < 0 || c.overflow || !c.buf[0]) {
                int e = n < 0 ? errno : c.overflow ? EFBIG : ENODATA;
                score_capture_free(&c);
                return ret_errf(ret_err, -e, "cannot read %s: %s", path,
                            e == EFBIG ? "larger than 64 MiB" : e == ENODATA ? "empty" : strerror(e));
        }
        *ret = c.buf[0];
        *ret_len = c.len[0];
        return 0;
}

static int parse_text(const struct score_source *src, bool from_file, const char *text, size_t len,
                      struct score_list *out, char **ret_err)
{
        switch (src->format) {
        case SCORE_STRESS_NG:
                return from_file ? score_parse_stress_ng_yaml(text, out, ret_err)
                                 : score_parse_stress_ng(text, out, ret_err);
        case SCORE_PERF_BENCH:
                return score_parse_perf_bench(text, out, ret_err);
        case SCORE_FIO:
                return score_parse_fio(text, len, out, ret_err);
        case SCORE_JSON:
                return score_parse_json_path(text, len, src->path, out, ret_err);
        }
        return -EINVAL;
}

int score_collect(const struct score_source *src, char *const *argv, const struct score_capture *cap,
                  struct score_list *out, char **ret_err)
{
        const char *file = score_source_file(src, argv);
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        int r;

        if (file) {
                r = read_file(file, &text, &len, ret_err);
                return r < 0 ? r : parse_text(src, true, text, len, out, ret_err);
        }
        if (cap->overflow)
                return ret_errf(ret_err, -EFBIG, "the command printed more than 64 MiB: not kept, not read");
        /* JSON on standard output alone; lines from both, stdout first */
        if (src->format == SCORE_FIO || src->format == SCORE_JSON)
                return parse_text(src, false, cap->buf[0] ? cap->buf[0] : "", cap->len[0], out, ret_err);
        if (asprintf(&text, "%s\n%s", cap->buf[0] ? cap->buf[0] : "", cap->buf[1] ? cap->buf[1] : "") < 0) {
                text = NULL;
                return ret_errf(ret_err, -ENOMEM, "out of memory");
        }
        return parse_text(src, false, text, strlen(text), out, ret_err);
}
