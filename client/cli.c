/* cli.c - the helpers every verb uses to read its arguments and the
 * database: getopt with one-line errors, WHEN, durations, numbers. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "proto.h"
#include "timeutil.h"

const char *ctl_verb;
void (*ctl_getopt_hook)(const char *optstring, const struct option *options);

int ctl_getopt(int argc, char **argv, const char *optstring, const struct option *options)
{
        char hint[64];
        const char *a;
        int c;

        if (ctl_getopt_hook)
                ctl_getopt_hook(optstring, options);
        opterr = 0;
        c = getopt_long(argc, argv, optstring, options, NULL);
        if (c != '?' && c != ':')
                return c;
        snprintf(hint, sizeof hint, "try 'scalemonctl%s%s --help'", ctl_verb ? " " : "", ctl_verb ? ctl_verb : "");
        a = optind > 0 && optind <= argc ? argv[optind - 1] : "";
        if (startswith(a, "--")) {
                const char *name = a + 2, *eq = strchr(name, '=');
                size_t len = eq ? (size_t)(eq - name) : strlen(name);
                const struct option *found = NULL;
                int nfound = 0;

                /* getopt_long takes unique abbreviations: so do we */
                for (const struct option *o = options; o->name; o++)
                        if (strncmp(o->name, name, len) == 0) {
                                if (strlen(o->name) == len) {
                                        found = o;
                                        nfound = 1;
                                        break;
                                }
                                found = o;
                                nfound++;
                        }
                if (nfound == 1 && found->has_arg == required_argument && !eq)
                        ctl_fail(EXIT_USAGE, "option '--%s' needs a value; %s", found->name, hint);
                else if (nfound == 1 && found->has_arg == no_argument && eq)
                        ctl_fail(EXIT_USAGE, "option '--%s' takes no value; %s", found->name, hint);
                else if (nfound > 1)
                        ctl_fail(EXIT_USAGE, "option '--%.*s' is ambiguous; %s", (int)len, name, hint);
                else
                        ctl_fail(EXIT_USAGE, "unknown option '--%.*s'; %s", (int)len, name, hint);
        } else {
                const char *p = optopt ? strchr(optstring, optopt) : NULL;
                if (p && p[1] == ':')
                        ctl_fail(EXIT_USAGE, "option '-%c' needs a value; %s", optopt, hint);
                else if (optopt > 0x20 && optopt < 0x7f)
                        ctl_fail(EXIT_USAGE, "unknown option '-%c'; %s", optopt, hint);
                else
                        ctl_fail(EXIT_USAGE, "unknown option '%s'; %s", a, hint);
        }
        return '?';
}

struct store *ctl_store(struct ctl *ctl)
{
        _cleanup_free_ char *err = NULL;
        int r;

        if (ctl->store)
                return ctl->store;
        r = store_open(ctl->db_path, STORE_READ, &ctl->store, &err);
        if (r < 0) {
                ctl_fail(EXIT_FAILED, "%s", err ? err : strerror(-r));
                return NULL;
        }
        /* the ticks since the daemon's last commit, from its head file */
        store_head_attach(ctl->store);
        if (store_head_note(ctl->store))
                fprintf(stderr, "scalemonctl: %s\n", store_head_note(ctl->store));
        return ctl->store;
}

int ctl_when(struct ctl *ctl, const char *opt, const char *arg, bool is_until, int64_t *ret)
{
        struct run_info ri;
        const char *why;
        struct store *s;

        /* Not the shape of a run name (empty, a space, 100 kB): a time or
         * bad usage, and no database is needed to tell. */
        if (!proto_valid_name(arg, &why)) {
                if (when_parse(arg, now_realtime_ns(), ret) == 0)
                        return 0;
                if (when_looks_like_time(arg))
                        return ctl_fail(EXIT_USAGE, "%s '%s': not a time; use %s", opt, arg, WHEN_FORMS);
                return ctl_fail(EXIT_USAGE, "%s '%s': not a run name or a time; use %s", opt, arg, WHEN_FORMS);
        }
        /* a run name first: names may look like times ("2026-11-30") */
        s = ctl_store(ctl);
        if (!s)
                return EXIT_FAILED;
        if (store_run_find(s, arg, &ri) == 0) {
                *ret = is_until ? (ri.end ? ri.end : now_realtime_ns()) : ri.start;
                run_info_free(&ri);
                return 0;
        }
        if (when_parse(arg, now_realtime_ns(), ret) == 0)
                return 0;
        if (when_looks_like_time(arg))
                return ctl_fail(EXIT_USAGE, "%s '%s': not a time; use %s", opt, arg, WHEN_FORMS);
        return ctl_fail(EXIT_FAILED, "no run named '%s' (see scalemonctl runs)", arg);
}

int ctl_duration(const char *opt, const char *arg, int64_t *ret)
{
        size_t n = strlen(arg);

        /* a unit is required: is "10" seconds or milliseconds? */
        if (n > 0 && isalpha((unsigned char)arg[n - 1]) && duration_parse(arg, ret) == 0 && *ret > 0)
                return 0;
        return ctl_fail(EXIT_USAGE, "%s '%s': not a duration; use %s", opt, arg, DURATION_FORMS);
}

int ctl_int(const char *opt, const char *arg, long min, long max, long *ret)
{
        char *end;
        long v;

        errno = 0;
        v = strtol(arg, &end, 10);
        if (errno || end == arg || *end || v < min || v > max)
                return ctl_fail(EXIT_USAGE, "%s '%s': expected a whole number from %ld to %ld", opt, arg, min, max);
        *ret = v;
        return 0;
}
