/* proto.c - parse and validate control requests, build them for clients.
 *
 * A request is one JSON object on one line:
 *
 *   {"cmd": "run-start", "name": "run42", "tags": {"ways": "80"}}
 *   {"cmd": "run-stop", "name": "run42", "scores": {"jobs_per_min": 43210},
 *    "exit_status": 0, "wall_s": 61.2, "user_s": 3.1, "sys_s": 58.0}
 *   {"cmd": "run-mark", "text": "warm-up done"}
 *   {"cmd": "status"}   {"cmd": "reload"}   {"cmd": "import"} (+ an fd)
 *   {"cmd": "run-delete", "name": "run42"}
 *   {"cmd": "subscribe", "metrics": ["context_switches"], "per": "cpu"}
 *   {"cmd": "run-start", "name": "loop", "if_exists": "number"}  ("refuse",
 *    the default; "number": loop-2, loop-3...; "replace": a finished run)
 *   {"cmd": "totals"}   (read-only: every counter's total since the daemon started)
 *
 * Every field is checked for type and shape; unknown fields are refused,
 * so a typo is an error rather than silently ignored.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "macro.h"
#include "proto.h"

/* Every command: its name on the wire, whether it changes state (and so
 * needs a permitted peer), and whether it turns its connection into a
 * stream of pushed lines (ctl.c's streams: subscribe).  Its fields are in
 * cmd_fields[] below; its handler in the daemon's requests.c (a stream's
 * in subscribe.c). */
static const struct {
        const char *name;
        bool changes_state;
        bool stream;
} cmds[_CMD_MAX] = {
        [CMD_STATUS] = { "status", false, false },
        [CMD_RUN_START] = { "run-start", true, false },
        [CMD_RUN_STOP] = { "run-stop", true, false },
        [CMD_RUN_MARK] = { "run-mark", true, false },
        [CMD_RELOAD] = { "reload", true, false },
        [CMD_IMPORT] = { "import", true, false },
        [CMD_RUN_DELETE] = { "run-delete", true, false },
        [CMD_SUBSCRIBE] = { "subscribe", false, true },
        [CMD_TOTALS] = { "totals", false, false },     /* for scalemon-exporter */
};

const char *proto_cmd_name(enum proto_cmd cmd)
{
        return cmd < _CMD_MAX ? cmds[cmd].name : "?";
}

bool proto_cmd_changes_state(enum proto_cmd cmd)
{
        return cmd >= _CMD_MAX || cmds[cmd].changes_state;
}

bool proto_cmd_is_stream(enum proto_cmd cmd)
{
        return cmd < _CMD_MAX && cmds[cmd].stream;
}

/* Run names: what a shell user types without quoting, not starting with
 * '-' (it would read as an option) or '@' (an epoch time). */
bool proto_valid_name(const char *s, const char **why)
{
        size_t n = strlen(s);

        if (n == 0 || n > PROTO_MAX_NAME) {
                *why = "a run name has 1 to 128 characters";
                return false;
        }
        if (s[0] == '-' || s[0] == '@') {
                *why = "a run name does not start with '-' or '@'";
                return false;
        }
        for (const char *p = s; *p; p++)
                if (!isalnum((unsigned char)*p) && !strchr("._-+:=,", *p)) {
                        *why = "a run name has only letters, digits and . _ - + : = ,";
                        return false;
                }
        return true;
}

bool proto_valid_key(const char *s, const char **why)
{
        size_t n = strlen(s);

        if (n == 0 || n > PROTO_MAX_KEY || !(isalpha((unsigned char)s[0]) || s[0] == '_')) {
                *why = "a key starts with a letter or '_' and has at most 64 characters";
                return false;
        }
        for (const char *p = s; *p; p++)
                if (!isalnum((unsigned char)*p) && !strchr("_.-", *p)) {
                        *why = "a key has only letters, digits and _ . -";
                        return false;
                }
        return true;
}

/* The length of the character at s if a text may hold it, else 0: valid
 * UTF-8 (shortest form, no surrogates, at most U+10FFFF) and not a control
 * character (C0 but tab, DEL, C1), which would break a line or a terminal. */
size_t proto_utf8_char(const char *s)
{
        const unsigned char *p = (const unsigned char *)s;
        uint32_t cp;
        size_t n;

        if (p[0] < 0x80)
                return (p[0] >= 0x20 && p[0] != 0x7f) || p[0] == '\t' ? 1 : 0;
        if (p[0] >= 0xc2 && p[0] <= 0xdf) {
                n = 2;
                cp = p[0] & 0x1f;
        } else if (p[0] >= 0xe0 && p[0] <= 0xef) {
                n = 3;
                cp = p[0] & 0x0f;
        } else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
                n = 4;
                cp = p[0] & 0x07;
        } else
                return 0;
        for (size_t i = 1; i < n; i++) {
                if ((p[i] & 0xc0) != 0x80)
                        return 0;       /* also stops at the NUL */
                cp = cp << 6 | (p[i] & 0x3f);
        }
        if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
            (cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x80 && cp <= 0x9f))
                return 0;
        return n;
}

/* Tag values, mark texts, commands: 1 to max bytes of UTF-8 text; tab is
 * the only control character. */
bool proto_valid_text(const char *s, size_t max, const char **why)
{
        size_t n = strlen(s);

        if (n == 0 || n > max) {
                *why = max == PROTO_MAX_VALUE ? "a value is 1 to 256 bytes of UTF-8 text"
                     : max == PROTO_MAX_TEXT ? "a text is 1 to 1024 bytes of UTF-8 text"
                     : max == PROTO_MAX_COMMAND ? "a command is 1 to 4096 bytes of UTF-8 text"
                     : "a text is empty or too long";
                return false;
        }
        for (const char *p = s; *p;) {
                size_t k = proto_utf8_char(p);
                if (k == 0) {
                        *why = (unsigned char)*p < 0x20 || *p == 0x7f ||
                               ((unsigned char)p[0] == 0xc2 && (unsigned char)p[1] >= 0x80 && (unsigned char)p[1] <= 0x9f)
                                ? "control characters are not allowed (tab is)"
                                : "not valid UTF-8";
                        return false;
                }
                p += k;
        }
        return true;
}

bool proto_valid_value(const char *s, const char **why)
{
        return proto_valid_text(s, PROTO_MAX_VALUE, why);
}

void proto_request_free(struct proto_request *req)
{
        free(req->cgroup);
        free(req->name);
        for (size_t i = 0; i < req->ntags; i++) {
                free(req->tags[i].key);
                free(req->tags[i].value);
        }
        free(req->tags);
        for (size_t i = 0; i < req->nscores; i++)
                free(req->scores[i].key);
        free(req->scores);
        free(req->text);
        free(req->command);
        for (size_t i = 0; i < req->nmetrics; i++)
                free(req->metrics[i]);
        free(req->metrics);
        free(req->per);
        memset(req, 0, sizeof *req);
}

/* An error goes into a JSON reply and the daemon's log, and it may echo
 * what the client sent (a name, a key, jansson's "near '...'"): keep it one
 * line of valid UTF-8 (anything a text may not hold becomes '?', so a
 * newline cannot forge a log line and json_pack() cannot refuse it), at
 * most PROTO_MAX_ERROR bytes (a 60 kB key is not echoed whole). */
#define PROTO_MAX_ERROR 300

static void sanitize_error(char *s, size_t len)
{
        size_t i = 0, o = 0;

        while (i < len) {
                size_t k = proto_utf8_char(s + i);

                if (o + MAX(k, (size_t)1) > PROTO_MAX_ERROR - 3 && len > PROTO_MAX_ERROR) {
                        memcpy(s + o, "...", 3);        /* o + 3 <= PROTO_MAX_ERROR < len */
                        o += 3;
                        break;
                }
                if (k == 0) {
                        s[o++] = '?';
                        i++;
                } else {
                        memmove(s + o, s + i, k);
                        o += k;
                        i += k;
                }
        }
        s[o] = 0;
}

static int fail(char **ret_err, const char *fmt, ...) _printf_(2, 3);
static int fail(char **ret_err, const char *fmt, ...)
{
        va_list ap;
        int k;

        va_start(ap, fmt);
        k = vasprintf(ret_err, fmt, ap);
        va_end(ap);
        if (k < 0)
                *ret_err = NULL;
        else
                sanitize_error(*ret_err, (size_t)k);
        return -EINVAL;
}

/* Which fields each command takes. */
#define F_NAME     (1u << 0)
#define F_TAGS     (1u << 1)
#define F_SCORES   (1u << 2)
#define F_TEXT     (1u << 3)
#define F_COMMAND  (1u << 4)
#define F_EXIT     (1u << 5)
#define F_TIMES    (1u << 6)
#define F_METRICS  (1u << 7)
#define F_PER      (1u << 8)
#define F_IF_EXISTS (1u << 9)
#define F_CGROUP   (1u << 10)
#define F_SWITCHES (1u << 11)

static const unsigned cmd_fields[_CMD_MAX] = {
        [CMD_STATUS] = 0,
        [CMD_RUN_START] = F_NAME | F_TAGS | F_COMMAND | F_IF_EXISTS | F_CGROUP,
        [CMD_RUN_STOP] = F_NAME | F_SCORES | F_EXIT | F_TIMES | F_SWITCHES,
        [CMD_RUN_MARK] = F_NAME | F_TEXT,
        [CMD_RELOAD] = 0,
        [CMD_IMPORT] = 0,
        [CMD_RUN_DELETE] = F_NAME,
        [CMD_SUBSCRIBE] = F_METRICS | F_PER,
        [CMD_TOTALS] = 0,
};

static int get_string(json_t *o, const char *key, size_t max, char **ret, char **ret_err)
{
        json_t *v = json_object_get(o, key);
        const char *why;

        if (!json_is_string(v))
                return fail(ret_err, "'%s' must be a string", key);
        if (!proto_valid_text(json_string_value(v), max, &why))
                return fail(ret_err, "'%s': %s", key, why);
        *ret = strdup(json_string_value(v));
        return *ret ? 0 : -ENOMEM;
}

static int get_time(json_t *o, const char *key, double *ret, char **ret_err)
{
        json_t *v = json_object_get(o, key);
        double d;

        if (!json_is_number(v))
                return fail(ret_err, "'%s' must be a number", key);
        d = json_number_value(v);
        if (!isfinite(d) || d < 0 || d > 1e9)
                return fail(ret_err, "'%s' must be a number of seconds from 0 to 1e9", key);
        *ret = d;
        return 0;
}

/* "name", and the run verbs' need of it */
static int parse_name(json_t *o, enum proto_cmd cmd, unsigned allowed, struct proto_request *req, char **ret_err)
{
        const char *why;
        json_t *v;

        if (allowed & F_NAME) {
                v = json_object_get(o, "name");
                if (v) {
                        if (!json_is_string(v))
                                return fail(ret_err, "'name' must be a string");
                        if (!proto_valid_name(json_string_value(v), &why))
                                return fail(ret_err, "'name' %s: %s", json_string_value(v), why);
                        req->name = strdup(json_string_value(v));
                        if (!req->name)
                                return -ENOMEM;
                } else if (cmd == CMD_RUN_START || cmd == CMD_RUN_DELETE)
                        return fail(ret_err, "'%s' needs a 'name'", proto_cmd_name(cmd));
        }
        return 0;
}

/* "tags": an object of strings */
static int parse_tags(json_t *o, enum proto_cmd cmd, unsigned allowed, struct proto_request *req, char **ret_err)
{
        const char *key, *why;
        json_t *v;

        if ((allowed & F_TAGS) && (v = json_object_get(o, "tags"))) {
                json_t *tv;
                if (!json_is_object(v))
                        return fail(ret_err, "'tags' must be an object of strings");
                if (json_object_size(v) > PROTO_MAX_TAGS)
                        return fail(ret_err, "at most %d tags", PROTO_MAX_TAGS);
                req->tags = calloc(json_object_size(v) + 1, sizeof *req->tags);
                if (!req->tags)
                        return -ENOMEM;
                json_object_foreach(v, key, tv) {
                        struct proto_kv *kv = &req->tags[req->ntags];
                        if (!proto_valid_key(key, &why))
                                return fail(ret_err, "tag '%s': %s", key, why);
                        if (!json_is_string(tv))
                                return fail(ret_err, "tag '%s' must be a string", key);
                        if (!proto_valid_value(json_string_value(tv), &why))
                                return fail(ret_err, "tag '%s': %s", key, why);
                        kv->key = strdup(key);
                        kv->value = strdup(json_string_value(tv));
                        req->ntags++;
                        if (!kv->key || !kv->value)
                                return -ENOMEM;
                }
        }
        return 0;
}

/* "scores": an object of finite numbers */
static int parse_scores(json_t *o, enum proto_cmd cmd, unsigned allowed, struct proto_request *req, char **ret_err)
{
        const char *key, *why;
        json_t *v;

        if ((allowed & F_SCORES) && (v = json_object_get(o, "scores"))) {
                json_t *sv;
                if (!json_is_object(v))
                        return fail(ret_err, "'scores' must be an object of numbers");
                if (json_object_size(v) > PROTO_MAX_SCORES)
                        return fail(ret_err, "at most %d scores", PROTO_MAX_SCORES);
                req->scores = calloc(json_object_size(v) + 1, sizeof *req->scores);
                if (!req->scores)
                        return -ENOMEM;
                json_object_foreach(v, key, sv) {
                        struct proto_score *s = &req->scores[req->nscores];
                        if (!proto_valid_key(key, &why))
                                return fail(ret_err, "score '%s': %s", key, why);
                        if (!json_is_number(sv) || !isfinite(json_number_value(sv)))
                                return fail(ret_err, "score '%s' must be a finite number", key);
                        s->key = strdup(key);
                        s->value = json_number_value(sv);
                        req->nscores++;
                        if (!s->key)
                                return -ENOMEM;
                }
        }
        return 0;
}

/* "text", "command", "if_exists", "cgroup" and "per" */
static int parse_texts(json_t *o, enum proto_cmd cmd, unsigned allowed, struct proto_request *req, char **ret_err)
{
        json_t *v;
        int r;

        if (allowed & F_TEXT) {
                if (!json_object_get(o, "text"))
                        return fail(ret_err, "'run-mark' needs a 'text'");
                r = get_string(o, "text", PROTO_MAX_TEXT, &req->text, ret_err);
                if (r < 0)
                        return r;
        }
        if ((allowed & F_COMMAND) && json_object_get(o, "command")) {
                r = get_string(o, "command", PROTO_MAX_COMMAND, &req->command, ret_err);
                if (r < 0)
                        return r;
        }
        if ((allowed & F_IF_EXISTS) && (v = json_object_get(o, "if_exists"))) {
                const char *s = json_string_value(v);
                if (s && streq(s, "refuse"))
                        req->if_exists = PROTO_IF_EXISTS_REFUSE;
                else if (s && streq(s, "number"))
                        req->if_exists = PROTO_IF_EXISTS_NUMBER;
                else if (s && streq(s, "replace"))
                        req->if_exists = PROTO_IF_EXISTS_REPLACE;
                else
                        return fail(ret_err, "'if_exists' must be \"refuse\", \"number\" or \"replace\"");
        }
        if ((allowed & F_CGROUP) && json_object_get(o, "cgroup")) {
                /* "new" (run exec: scalemond makes one), or a directory of the cgroup2 mount */
                r = get_string(o, "cgroup", PATH_MAX, &req->cgroup, ret_err);
                if (r < 0)
                        return r;
        }
        if ((allowed & F_PER) && (v = json_object_get(o, "per"))) {
                const char *p = json_string_value(v);
                if (!p || !(streq(p, "cpu") || streq(p, "node") || streq(p, "system")))
                        return fail(ret_err, "'per' must be \"cpu\", \"node\" or \"system\"");
                req->per = strdup(p);
                if (!req->per)
                        return -ENOMEM;
        }
        return 0;
}

/* how a command ended: "voluntary_switches" and "involuntary_switches", "exit_status", "wall_s", "user_s" and "sys_s" */
static int parse_run_end(json_t *o, enum proto_cmd cmd, unsigned allowed, struct proto_request *req, char **ret_err)
{
        json_t *v;
        int r;

        if (allowed & F_SWITCHES) {
                json_t *vs = json_object_get(o, "voluntary_switches"), *is = json_object_get(o, "involuntary_switches");
                if (!!vs != !!is)
                        return fail(ret_err, "'voluntary_switches' and 'involuntary_switches' come together");
                if (vs) {
                        if (!json_is_integer(vs) || !json_is_integer(is) || json_integer_value(vs) < 0 ||
                            json_integer_value(is) < 0)
                                return fail(ret_err, "'voluntary_switches' and 'involuntary_switches' must be "
                                            "whole numbers >= 0");
                        req->has_switches = true;
                        req->voluntary_switches = json_integer_value(vs);
                        req->involuntary_switches = json_integer_value(is);
                }
        }
        if ((allowed & F_EXIT) && (v = json_object_get(o, "exit_status"))) {
                if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 255)
                        return fail(ret_err, "'exit_status' must be a whole number from 0 to 255");
                req->has_exit_status = true;
                req->exit_status = (int)json_integer_value(v);
        }
        if (allowed & F_TIMES) {
                int n = !!json_object_get(o, "wall_s") + !!json_object_get(o, "user_s") + !!json_object_get(o, "sys_s");
                if (n != 0 && n != 3)
                        return fail(ret_err, "'wall_s', 'user_s' and 'sys_s' come together");
                if (n == 3) {
                        if ((r = get_time(o, "wall_s", &req->wall_s, ret_err)) < 0 ||
                            (r = get_time(o, "user_s", &req->user_s, ret_err)) < 0 ||
                            (r = get_time(o, "sys_s", &req->sys_s, ret_err)) < 0)
                                return r;
                        req->has_times = true;
                }
        }
        return 0;
}

/* "metrics": an array of metric names */
static int parse_metrics(json_t *o, enum proto_cmd cmd, unsigned allowed, struct proto_request *req, char **ret_err)
{
        const char *why;
        json_t *v;

        if (allowed & F_METRICS) {
                json_t *mv;
                size_t i;
                v = json_object_get(o, "metrics");
                if (!json_is_array(v) || json_array_size(v) == 0 || json_array_size(v) > PROTO_MAX_METRICS)
                        return fail(ret_err, "'%s' needs 'metrics', an array of 1 to %d metric names",
                                    proto_cmd_name(cmd), PROTO_MAX_METRICS);
                req->metrics = calloc(json_array_size(v), sizeof *req->metrics);
                if (!req->metrics)
                        return -ENOMEM;
                json_array_foreach(v, i, mv) {
                        if (!json_is_string(mv) || !proto_valid_key(json_string_value(mv), &why))
                                return fail(ret_err, "'metrics' holds metric names (as scalemonctl metrics lists them)");
                        req->metrics[req->nmetrics] = strdup(json_string_value(mv));
                        if (!req->metrics[req->nmetrics++])
                                return -ENOMEM;
                }
        }
        return 0;
}

static int parse_fields(json_t *o, enum proto_cmd cmd, struct proto_request *req, char **ret_err)
{
        unsigned allowed = cmd_fields[cmd];
        const char *key;
        json_t *v;

        json_object_foreach(o, key, v) {
                unsigned f = streq(key, "cmd") ? ~0u
                           : streq(key, "name") ? F_NAME
                           : streq(key, "tags") ? F_TAGS
                           : streq(key, "scores") ? F_SCORES
                           : streq(key, "text") ? F_TEXT
                           : streq(key, "command") ? F_COMMAND
                           : streq(key, "if_exists") ? F_IF_EXISTS
                           : streq(key, "cgroup") ? F_CGROUP
                           : (streq(key, "voluntary_switches") || streq(key, "involuntary_switches")) ? F_SWITCHES
                           : streq(key, "exit_status") ? F_EXIT
                           : (streq(key, "wall_s") || streq(key, "user_s") || streq(key, "sys_s")) ? F_TIMES
                           : streq(key, "metrics") ? F_METRICS
                           : streq(key, "per") ? F_PER
                           : 0;
                if (f != ~0u && !(f & allowed))
                        return fail(ret_err, "'%s' does not take '%s'", proto_cmd_name(cmd), key);
        }

        return parse_name(o, cmd, allowed, req, ret_err) ?: parse_tags(o, cmd, allowed, req, ret_err)
                ?: parse_scores(o, cmd, allowed, req, ret_err) ?: parse_texts(o, cmd, allowed, req, ret_err)
                ?: parse_run_end(o, cmd, allowed, req, ret_err) ?: parse_metrics(o, cmd, allowed, req, ret_err);
}

int proto_parse_request(const char *line, size_t len, struct proto_request *req, char **ret_err)
{
        json_error_t jerr;
        json_t *o, *cmd;
        int r = -EINVAL;

        memset(req, 0, sizeof *req);
        *ret_err = NULL;
        if (len >= PROTO_MAX_LINE)
                return fail(ret_err, "request longer than %d bytes", PROTO_MAX_LINE);
        if (memchr(line, 0, len))
                return fail(ret_err, "request contains a NUL byte");
        o = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
        if (!o)
                return fail(ret_err, "not JSON: %s", jerr.text);
        if (!json_is_object(o)) {
                json_decref(o);
                return fail(ret_err, "a request is a JSON object");
        }
        cmd = json_object_get(o, "cmd");
        if (!json_is_string(cmd)) {
                json_decref(o);
                return fail(ret_err, "a request needs 'cmd', a string");
        }
        for (int i = 0; i < _CMD_MAX; i++)
                if (streq(cmds[i].name, json_string_value(cmd))) {
                        req->cmd = (enum proto_cmd)i;
                        r = parse_fields(o, req->cmd, req, ret_err);
                        goto out;
                }
        r = fail(ret_err, "unknown cmd '%.64s' (known: status, run-start, run-stop, run-mark, reload, import, run-delete, subscribe, totals)",
                 json_string_value(cmd));
out:
        json_decref(o);
        if (r < 0)
                proto_request_free(req);
        if (r == -ENOMEM && !*ret_err)
                *ret_err = strdup("out of memory");
        return r;
}

json_t *proto_request_to_json(const struct proto_request *req)
{
        json_t *o = json_pack("{s:s}", "cmd", proto_cmd_name(req->cmd));

        if (!o)
                return NULL;
        if (req->name)
                json_object_set_new(o, "name", json_string(req->name));
        if (req->ntags) {
                json_t *t = json_object();
                for (size_t i = 0; i < req->ntags; i++)
                        json_object_set_new(t, req->tags[i].key, json_string(req->tags[i].value));
                json_object_set_new(o, "tags", t);
        }
        if (req->nscores) {
                json_t *t = json_object();
                for (size_t i = 0; i < req->nscores; i++)
                        json_object_set_new(t, req->scores[i].key, json_real(req->scores[i].value));
                json_object_set_new(o, "scores", t);
        }
        if (req->text)
                json_object_set_new(o, "text", json_string(req->text));
        if (req->command)
                json_object_set_new(o, "command", json_string(req->command));
        if (req->if_exists != PROTO_IF_EXISTS_REFUSE)
                json_object_set_new(o, "if_exists", json_string(req->if_exists == PROTO_IF_EXISTS_NUMBER ? "number"
                                                                                                   : "replace"));
        if (req->cgroup)
                json_object_set_new(o, "cgroup", json_string(req->cgroup));
        if (req->has_switches) {
                json_object_set_new(o, "voluntary_switches", json_integer(req->voluntary_switches));
                json_object_set_new(o, "involuntary_switches", json_integer(req->involuntary_switches));
        }
        if (req->has_exit_status)
                json_object_set_new(o, "exit_status", json_integer(req->exit_status));
        if (req->has_times) {
                json_object_set_new(o, "wall_s", json_real(req->wall_s));
                json_object_set_new(o, "user_s", json_real(req->user_s));
                json_object_set_new(o, "sys_s", json_real(req->sys_s));
        }
        if (req->nmetrics) {
                json_t *a = json_array();
                for (size_t i = 0; i < req->nmetrics; i++)
                        json_array_append_new(a, json_string(req->metrics[i]));
                json_object_set_new(o, "metrics", a);
        }
        if (req->per)
                json_object_set_new(o, "per", json_string(req->per));
        return o;
}
