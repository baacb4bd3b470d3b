/* conf.c - read scalemon.conf.
 *
 * The format is "key = value" lines; '#' starts a comment.  Each key has a
 * handler in the table below; problems are reported as file:line, and
 * values are range-checked once the whole file has been read.
 */
#include "config.h"

#include <ctype.h>
#include <inttypes.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "conf.h"
#include "macro.h"
#include "timeutil.h"

void conf_defaults(struct conf *c)
{
        memset(c, 0, sizeof *c);
        c->interval_ns = CONF_DEFAULT_INTERVAL;
        c->database = strdup(CONF_DEFAULT_DATABASE);
        c->socket = strdup(CONF_DEFAULT_SOCKET);
        c->control_group = strdup("scalemon");
        c->retain_raw_ns = CONF_DEFAULT_RAW;
        c->rollup_interval_ns = CONF_DEFAULT_ROLLUP;
        c->retain_rollup_ns = CONF_DEFAULT_RETAIN;
        c->backlog_limit = CONF_DEFAULT_BACKLOG;
        c->wal_limit = CONF_DEFAULT_WAL;
        c->commit_interval_ns = CONF_DEFAULT_COMMIT;
        for (int m = 0; m < _M_MAX; m++)
                c->enabled[m] = !conf_fault_event(m);
}

bool conf_fault_event(int metric)
{
        return metric == M_PAGE_FAULTS || metric == M_PAGE_FAULTS_MINOR || metric == M_PAGE_FAULTS_MAJOR;
}

void conf_free(struct conf *c)
{
        free(c->database);
        free(c->socket);
        free(c->control_group);
        memset(c, 0, sizeof *c);
}

int conf_copy(struct conf *dst, const struct conf *src)
{
        struct conf c = *src;
        c.database = src->database ? strdup(src->database) : NULL;
        c.socket = src->socket ? strdup(src->socket) : NULL;
        c.control_group = src->control_group ? strdup(src->control_group) : NULL;
        if ((src->database && !c.database) || (src->socket && !c.socket) ||
            (src->control_group && !c.control_group)) {
                conf_free(&c);
                return -ENOMEM;
        }
        *dst = c;
        return 0;
}

/* What a parse builds: the new settings, and the two metric lists that
 * are combined into c.enabled once the whole file is read. */
struct parse_state {
        struct conf c;
        bool metrics[_M_MAX];
        bool exclude[_M_MAX];
        bool retain_rollup_set;         /* by retain_rollup or by its older name */
        unsigned metrics_line, exclude_line;    /* where they were set, 0 if not */
};

/* A handler parses value into st, or returns -errno and says in *ret_err
 * what is wrong. */
typedef int (*conf_handler)(struct parse_state *st, const char *value, char **ret_err);

static void why(char **ret_err, const char *fmt, ...) _printf_(2, 3);
static void why(char **ret_err, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        if (vasprintf(ret_err, fmt, ap) < 0)
                *ret_err = NULL;
        va_end(ap);
}

static int set_interval(struct parse_state *st, const char *value, char **ret_err)
{
        struct conf *c = &st->c;
        int64_t ns;
        char lo[16], hi[16];

        if (duration_parse(value, &ns) < 0) {
                why(ret_err, "interval '%s' is not a duration (%s)", value, DURATION_FORMS);
                return -EINVAL;
        }
        if (ns < CONF_MIN_INTERVAL || ns > CONF_MAX_INTERVAL) {
                duration_format(CONF_MIN_INTERVAL, lo, sizeof lo);
                duration_format(CONF_MAX_INTERVAL, hi, sizeof hi);
                why(ret_err, "interval %s is out of range (%s..%s)", value, lo, hi);
                return -ERANGE;
        }
        c->interval_ns = ns;
        return 0;
}

static int set_path(char **field, const char *what, const char *value, char **ret_err)
{
        char *p;
        if (value[0] != '/') {
                why(ret_err, "%s '%s' must be an absolute path", what, value);
                return -EINVAL;
        }
        p = strdup(value);
        if (!p)
                return -ENOMEM;
        free(*field);
        *field = p;
        return 0;
}

static int set_database(struct parse_state *st, const char *value, char **ret_err)
{
        struct conf *c = &st->c;
        return set_path(&c->database, "database", value, ret_err);
}

static int set_socket(struct parse_state *st, const char *value, char **ret_err)
{
        struct conf *c = &st->c;
        if (strlen(value) >= 108) {
                why(ret_err, "socket path is longer than a UNIX socket allows (107 bytes)");
                return -ENAMETOOLONG;
        }
        return set_path(&c->socket, "socket", value, ret_err);
}

/* DUR or "forever" (0), at least an hour. */
static int set_keep(const char *key, int64_t *field, const char *value, char **ret_err)
{
        int64_t ns;

        if (streq(value, "forever")) {
                *field = 0;
                return 0;
        }
        if (duration_parse(value, &ns) < 0) {
                why(ret_err, "%s '%s' is not a duration or 'forever' (%s)", key, value, DURATION_FORMS);
                return -EINVAL;
        }
        if (ns < CONF_MIN_RETENTION) {
                why(ret_err, "%s %s is too short: at least 1h, or 'forever'", key, value);
                return -ERANGE;
        }
        *field = ns;
        return 0;
}

static int set_retain_raw(struct parse_state *st, const char *value, char **ret_err)
{
        return set_keep("retain_raw", &st->c.retain_raw_ns, value, ret_err);
}

/* "retention" is retain_rollup's older name, from before rollups. */
static int set_rollup_keep(struct parse_state *st, const char *key, const char *value, char **ret_err)
{
        if (st->retain_rollup_set) {
                why(ret_err, "'retention' is the older name of 'retain_rollup': set only retain_rollup");
                return -EINVAL;
        }
        st->retain_rollup_set = true;
        return set_keep(key, &st->c.retain_rollup_ns, value, ret_err);
}

static int set_retain_rollup(struct parse_state *st, const char *value, char **ret_err)
{
        return set_rollup_keep(st, "retain_rollup", value, ret_err);
}

static int set_retention(struct parse_state *st, const char *value, char **ret_err)
{
        return set_rollup_keep(st, "retention", value, ret_err);
}

static int set_rollup_interval(struct parse_state *st, const char *value, char **ret_err)
{
        int64_t ns;
        char lo[16], hi[16];

        if (duration_parse(value, &ns) < 0) {
                why(ret_err, "rollup_interval '%s' is not a duration (%s)", value, DURATION_FORMS);
                return -EINVAL;
        }
        if (ns < CONF_MIN_ROLLUP || ns > CONF_MAX_ROLLUP) {
                duration_format(CONF_MIN_ROLLUP, lo, sizeof lo);
                duration_format(CONF_MAX_ROLLUP, hi, sizeof hi);
                why(ret_err, "rollup_interval %s is out of range (%s..%s)", value, lo, hi);
                return -ERANGE;
        }
        st->c.rollup_interval_ns = ns;
        return 0;
}

/* SIZE: a number of bytes with an optional K, M or G (powers of 1024),
 * optionally followed by "iB" or "B". */
static int size_parse(const char *s, int64_t *ret)
{
        static const struct {
                const char *suffix;
                int shift;
        } units[] = { { "", 0 }, { "B", 0 }, { "K", 10 }, { "KiB", 10 }, { "KB", 10 }, { "M", 20 }, { "MiB", 20 },
                      { "MB", 20 }, { "G", 30 }, { "GiB", 30 }, { "GB", 30 } };
        unsigned long long v;
        char *end;

        if (!isdigit((unsigned char)*s))
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno)
                return -ERANGE;
        for (size_t i = 0; i < ELEMENTSOF(units); i++)
                if (streq(end, units[i].suffix)) {
                        if (v > (unsigned long long)(INT64_MAX >> units[i].shift))
                                return -ERANGE;
                        *ret = (int64_t)(v << units[i].shift);
                        return 0;
                }
        return -EINVAL;
}

void size_format(int64_t bytes, char *buf, size_t len)
{
        static const char *const unit[] = { "", "K", "M", "G" };
        int i = 0;

        while (i < 3 && bytes >= 1024 && bytes % 1024 == 0) {
                bytes /= 1024;
                i++;
        }
        snprintf(buf, len, "%" PRId64 "%s", bytes, unit[i]);
}

static int set_limit(const char *key, int64_t *field, const char *value, char **ret_err)
{
        int64_t v;
        int r = size_parse(value, &v);

        if (r < 0) {
                why(ret_err, "%s '%s' is not a size (bytes, or a number with K, M or G, e.g. 64M)", key,
                         value);
                return r;
        }
        if (v < CONF_MIN_LIMIT) {
                why(ret_err, "%s %s is too small: at least 64K", key, value);
                return -ERANGE;
        }
        *field = v;
        return 0;
}

static int set_backlog_limit(struct parse_state *st, const char *value, char **ret_err)
{
        return set_limit("backlog_limit", &st->c.backlog_limit, value, ret_err);
}

static int set_wal_limit(struct parse_state *st, const char *value, char **ret_err)
{
        return set_limit("wal_limit", &st->c.wal_limit, value, ret_err);
}

/* 0 commits every tick; a crash loses at most this much of samples */
static int set_commit_interval(struct parse_state *st, const char *value, char **ret_err)
{
        int64_t ns;
        char hi[16];

        if (duration_parse(value, &ns) < 0) {
                why(ret_err, "commit_interval '%s' is not a duration (%s)", value, DURATION_FORMS);
                return -EINVAL;
        }
        if (ns < 0 || ns > CONF_MAX_COMMIT) {
                duration_format(CONF_MAX_COMMIT, hi, sizeof hi);
                why(ret_err, "commit_interval %s is out of range (0..%s; 0 commits every tick)", value, hi);
                return -ERANGE;
        }
        st->c.commit_interval_ns = ns;
        return 0;
}

static int set_per_cpu_faults(struct parse_state *st, const char *value, char **ret_err)
{
        if (streq(value, "yes") || streq(value, "no")) {
                st->c.per_cpu_faults = streq(value, "yes");
                return 0;
        }
        why(ret_err, "per_cpu_faults '%s' is neither yes nor no", value);
        return -EINVAL;
}

static int set_max_db_size(struct parse_state *st, const char *value, char **ret_err)
{
        int64_t v;

        if (streq(value, "none")) {
                st->c.max_db_size = 0;
                return 0;
        }
        if (size_parse(value, &v) < 0) {
                why(ret_err, "max_db_size '%s' is not a size or 'none' (bytes, or a number with K, M or G, e.g. 10G)",
                         value);
                return -EINVAL;
        }
        if (v < CONF_MIN_DB_SIZE) {
                why(ret_err, "max_db_size %s is too small: at least 1M, or 'none'", value);
                return -ERANGE;
        }
        st->c.max_db_size = v;
        return 0;
}

static int set_control_group(struct parse_state *st, const char *value, char **ret_err)
{
        struct conf *c = &st->c;
        char *p;
        for (const char *q = value; *q; q++)
                if (!isalnum((unsigned char)*q) && *q != '_' && *q != '-' && *q != '.') {
                        why(ret_err, "control_group '%s' is not a group name", value);
                        return -EINVAL;
                }
        p = strdup(value);
        if (!p)
                return -ENOMEM;
        free(c->control_group);
        c->control_group = p;
        return 0;
}

/* "all", or a comma/space separated list of metric names into set[]. */
static int parse_metric_list(const char *value, bool *set, bool allow_all, char **ret_err)
{
        char buf[2048], *save = NULL, *tok;

        for (int m = 0; m < _M_MAX; m++)
                set[m] = false;
        if (allow_all && streq(value, "all")) {
                for (int m = 0; m < _M_MAX; m++)
                        set[m] = true;
                return 0;
        }
        if (strlen(value) >= sizeof buf) {
                why(ret_err, "metric list is too long");
                return -E2BIG;
        }
        strcpy(buf, value);
        for (tok = strtok_r(buf, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
                int m = metric_id_by_name(tok);
                if (m < 0) {
                        why(ret_err, "unknown metric '%s' (scalemonctl metrics lists them)", tok);
                        return -EINVAL;
                }
                set[m] = true;
        }
        return 0;
}

static int set_metrics(struct parse_state *st, const char *value, char **ret_err)
{
        return parse_metric_list(value, st->metrics, true, ret_err);
}

static int set_exclude(struct parse_state *st, const char *value, char **ret_err)
{
        return parse_metric_list(value, st->exclude, false, ret_err);
}

static const struct {
        const char *key;
        conf_handler handler;
} conf_table[] = {
        { "interval",        set_interval },
        { "database",        set_database },
        { "socket",          set_socket },
        { "control_group",   set_control_group },
        { "retain_raw",      set_retain_raw },
        { "rollup_interval", set_rollup_interval },
        { "retain_rollup",   set_retain_rollup },
        { "retention",       set_retention },
        { "max_db_size",     set_max_db_size },
        { "backlog_limit",   set_backlog_limit },
        { "wal_limit",       set_wal_limit },
        { "commit_interval", set_commit_interval },
        { "metrics",         set_metrics },
        { "exclude",         set_exclude },
        { "per_cpu_faults",  set_per_cpu_faults },
};

static char *trim(char *s)
{
        char *e;
        while (isspace((unsigned char)*s))
                s++;
        e = s + strlen(s);
        while (e > s && isspace((unsigned char)e[-1]))
                *--e = 0;
        return s;
}

static int fail(char **ret_err, const char *fname, unsigned line, const char *fmt, ...) _printf_(4, 5);
static int fail(char **ret_err, const char *fname, unsigned line, const char *fmt, ...)
{
        char msg[768];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        if (ret_err && asprintf(ret_err, "%s:%u: %s", fname, line, msg) < 0)
                *ret_err = NULL;
        return -EINVAL;
}

/* One line, buf (comments and blanks allowed), into st.  0, or -errno
 * with *ret_err naming fname and the line. */
static int conf_line(struct parse_state *st, bool *seen, char *buf, const char *fname, unsigned line, char **ret_err)
{
        _cleanup_free_ char *err = NULL;
        char *s, *eq, *key, *value, *hash, known[512];
        size_t i, len = 0;
        int r;

        hash = strchr(buf, '#');
        if (hash)
                *hash = 0;
        s = trim(buf);
        if (!*s)
                return 0;
        eq = strchr(s, '=');
        if (!eq)
                return fail(ret_err, fname, line, "expected 'key = value', got '%s'", s);
        *eq = 0;
        key = trim(s);
        value = trim(eq + 1);
        for (i = 0; i < ELEMENTSOF(conf_table); i++)
                if (streq(conf_table[i].key, key))
                        break;
        if (i == ELEMENTSOF(conf_table)) {
                known[0] = 0;
                for (size_t k = 0; k < ELEMENTSOF(conf_table); k++)
                        strbuf_appendf(known, sizeof known, &len, "%s%s", k ? ", " : "", conf_table[k].key);
                return fail(ret_err, fname, line, "unknown key '%s' (known: %s)", key, known);
        }
        if (seen[i])
                return fail(ret_err, fname, line, "'%s' is set twice", key);
        seen[i] = true;
        if (!*value)
                return fail(ret_err, fname, line, "'%s' has no value", key);
        r = conf_table[i].handler(st, value, &err);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return fail(ret_err, fname, line, "%s", err ? err : strerror(-r));
        if (conf_table[i].handler == set_metrics)
                st->metrics_line = line;
        else if (conf_table[i].handler == set_exclude)
                st->exclude_line = line;
        return 0;
}

int conf_parse(const char *text, size_t len, const char *fname, struct conf *out, char **ret_err)
{
        struct parse_state st = { 0 };
        bool seen[ELEMENTSOF(conf_table)] = { false }, any = false;
        const char *p = text, *end = text + len;
        unsigned line = 0;
        int r;

        r = conf_copy(&st.c, out);
        if (r < 0)
                return r;
        memcpy(st.metrics, st.c.enabled, sizeof st.metrics);
        for (int m = 0; m < _M_MAX; m++)
                st.metrics[m] |= conf_fault_event(m);  /* in the set; per_cpu_faults decides */

        while (p < end) {
                const char *eol = memchr(p, '\n', (size_t)(end - p));
                char buf[4096];
                size_t n;

                if (!eol)
                        eol = end;
                n = (size_t)(eol - p);
                line++;
                if (n >= sizeof buf)
                        r = fail(ret_err, fname, line, "line is too long (limit %zu bytes)", sizeof buf - 1);
                else if (memchr(p, 0, n))
                        r = fail(ret_err, fname, line, "line contains a NUL byte");
                else {
                        memcpy(buf, p, n);
                        buf[n] = 0;
                        r = conf_line(&st, seen, buf, fname, line, ret_err);
                }
                if (r < 0) {
                        conf_free(&st.c);
                        return r;
                }
                p = eol + 1;
        }

        for (int m = 0; m < _M_MAX; m++) {
                st.c.enabled[m] = st.metrics[m] && !st.exclude[m] && (st.c.per_cpu_faults || !conf_fault_event(m));
                any |= st.c.enabled[m];
        }
        if (!any) {
                /* a daemon that samples nothing is a mistake, not a setting:
                 * named at the line that emptied the set */
                unsigned at = MAX(st.metrics_line, st.exclude_line);
                bool faults_only = false;       /* empty only because per_cpu_faults = no */
                for (int m = 0; m < _M_MAX; m++)
                        faults_only |= st.metrics[m] && !st.exclude[m] && conf_fault_event(m);
                conf_free(&st.c);
                return fail(ret_err, fname, at ? at : line,
                            faults_only ? "metrics names only page-fault events, which are counted per CPU only "
                                          "with per_cpu_faults = yes (pgfault and pgmajfault count the machine's)" :
                            st.exclude_line ? "metrics and exclude leave no metric enabled: exclude removes "
                                              "every metric that metrics names"
                                            : "no metric enabled: give metrics = all or a list of names");
        }
        conf_free(out);
        *out = st.c;
        return 0;
}

int conf_load(const char *path, bool missing_ok, struct conf *c, char **ret_err)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        _cleanup_free_ char *text = NULL;
        size_t len = 0, cap = 0;
        struct stat st;

        if (fd < 0) {
                int r = negative_errno();
                if (r == -ENOENT && missing_ok)
                        return 0;
                if (asprintf(ret_err, "%s: cannot read: %s", path, strerror(-r)) < 0)
                        *ret_err = NULL;
                return r;
        }
        if (fstat(fd, &st) == 0 && !S_ISREG(st.st_mode)) {
                if (asprintf(ret_err, "%s: not a regular file", path) < 0)
                        *ret_err = NULL;
                return -EINVAL;
        }
        for (;;) {
                ssize_t k;
                if (len == cap) {
                        char *t;
                        if (cap >= 1 << 20) {
                                if (asprintf(ret_err, "%s: larger than 1 MiB, not a scalemon.conf", path) < 0)
                                        *ret_err = NULL;
                                return -EFBIG;
                        }
                        t = realloc(text, cap = cap ? cap * 2 : 4096);
                        if (!t)
                                return -ENOMEM;
                        text = t;
                }
                k = read(fd, text + len, cap - len);
                if (k < 0) {
                        int r = negative_errno();
                        if (asprintf(ret_err, "%s: cannot read: %s", path, strerror(-r)) < 0)
                                *ret_err = NULL;
                        return r;
                }
                if (k == 0)
                        break;
                len += (size_t)k;
        }
        return conf_parse(text, len, path, c, ret_err);
}

void conf_source_free(struct conf_source *src)
{
        free(src->path);
        free(src->database);
        free(src->socket);
        memset(src, 0, sizeof *src);
}

int conf_source_copy(struct conf_source *dst, const struct conf_source *src)
{
        struct conf_source c = *src;

        c.path = src->path ? strdup(src->path) : NULL;
        c.database = src->database ? strdup(src->database) : NULL;
        c.socket = src->socket ? strdup(src->socket) : NULL;
        if ((src->path && !c.path) || (src->database && !c.database) || (src->socket && !c.socket)) {
                conf_source_free(&c);
                return -ENOMEM;
        }
        *dst = c;
        return 0;
}

static int override_path(char **field, const char *value)
{
        char *p;

        if (!value)
                return 0;
        p = strdup(value);
        if (!p)
                return -ENOMEM;
        free(*field);
        *field = p;
        return 0;
}

int conf_read(const struct conf_source *src, struct conf *c, char **ret_err)
{
        int r;

        conf_defaults(c);
        if (!c->database || !c->socket || !c->control_group)
                return -ENOMEM;
        r = conf_load(src->path, src->missing_ok, c, ret_err);
        if (r < 0)
                return r;
        if (src->interval_ns > 0)
                c->interval_ns = src->interval_ns;
        if (src->commit_interval_set)
                c->commit_interval_ns = src->commit_interval_ns;
        r = override_path(&c->database, src->database);
        if (r >= 0)
                r = override_path(&c->socket, src->socket);
        return r;
}
