/* scalemonctl.c - the client: global options, the verb table, and the
 * helpers every verb uses to read arguments and the database. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "ctl.h"
#include "explain.h"         /* explain (issue 14) */
#include "proto.h"
#include "timeutil.h"

#define DEFAULT_DB     "/var/lib/scalemon/scalemon.db"
#define DEFAULT_SOCKET "/run/scalemon/control.sock"

static const struct verb {
        const char *name;
        verb_fn fn;
        const char *usage;
} verbs[] = {
        { "status",  verb_status,  "status                      daemon state, interval, CPUs, nodes, metrics, database" },
        { "metrics", verb_metrics, "metrics                     the catalogue: name, scope, unit, source, availability" },
        { "reload",  verb_reload,  "reload                      make scalemond read its configuration again; says if it refused it" },
        { "query",   verb_query,   "query METRIC [--cpu N | --node N | --per system|node|cpu]\n"
                                   "              [--since WHEN] [--until WHEN] [--step DUR]" },
        { "run",     verb_run,     "run start NAME [--tag K=V]...\n"
                                   "  run stop [NAME] [--score K=V]... [--exit-status N]\n"
                                   "  run exec NAME [--tag K=V]... [--score-regex K=REGEX]... -- CMD [ARG]...\n"
                                   "  run mark [NAME] TEXT\n"
                                   "  run delete NAME             a finished run, its totals, tags, scores and marks" },
        { "runs",    verb_runs,    "runs [--since WHEN] [--until WHEN] [--tag K=V]..." },
        { "report",  verb_report,  "report [--since WHEN] [--until WHEN] [--tag K=V]... [--metric M,...]\n"
                                   "              [--per system|node|cpu] [--group-by TAG,...] [--baseline K=V,...]\n"
                                   "              [--explain] [--score K]" },
        { "explain", verb_explain, "explain RUN [--against RUN,...] [--score K]\n"
                                   "              why RUN differs from its siblings: context, counters, phases, CPUs" },
        { "curve",   verb_curve,   "curve --by TAG [--series TAG] [--score K] [--since WHEN] [--tag K=V]...\n"
                                   "              scalability curve across runs, with a USL fit" },
        { "plot",    verb_plot,    "plot timeseries|heatmap|curve|groups|scatter ... [-o FILE.svg|FILE.png]\n"
                                   "              charts by gnuplot; in the terminal without -o" },
        { "export",  verb_export,  "export [--since WHEN] [--until WHEN] [--tag K=V]...   (JSON on stdout)" },
        { "import",  verb_import,  "import FILE" },
};

static void help(void)
{
        printf("Usage: scalemonctl [--db PATH] [--socket PATH] [--format table|json|csv] VERB ...\n"
               "Mark benchmark runs while they happen, and report on what scalemond recorded.\n\n"
               "Verbs:\n");
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                printf("  %s\n", verbs[i].usage);
        printf("\nOptions:\n"
               "  --db PATH        database (default $SCALEMON_DB or %s)\n"
               "  --socket PATH    daemon control socket (default $SCALEMON_SOCKET or %s)\n"
               "  --format FORMAT  table (default), json or csv\n"
               "  --help, --version\n\n"
               "WHEN: %s.\nDUR: %s.\n"
               "Exit status: 0 success, 1 the request failed, 2 bad usage.  See scalemonctl(1).\n",
               DEFAULT_DB, DEFAULT_SOCKET, WHEN_FORMS, DURATION_FORMS);
}

const char *ctl_verb;

int ctl_getopt(int argc, char **argv, const char *optstring, const struct option *options)
{
        char hint[64];
        const char *a;
        int c;

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

int main(int argc, char **argv)
{
        static const struct option options[] = {
                { "db", required_argument, NULL, 'd' },
                { "socket", required_argument, NULL, 's' },
                { "format", required_argument, NULL, 'f' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                {},
        };
        struct ctl ctl = { .format = FORMAT_TABLE, .sock_fd = -1 };
        int c, r;

        ctl.db_path = getenv("SCALEMON_DB") ? getenv("SCALEMON_DB") : DEFAULT_DB;
        ctl.socket_path = getenv("SCALEMON_SOCKET") ? getenv("SCALEMON_SOCKET") : DEFAULT_SOCKET;

        /* "+": options end at the verb; the verb parses the rest. */
        while ((c = ctl_getopt(argc, argv, "+", options)) >= 0) {
                switch (c) {
                case 'd':
                        ctl.db_path = optarg;
                        break;
                case 's':
                        ctl.socket_path = optarg;
                        break;
                case 'f':
                        if (streq(optarg, "table"))
                                ctl.format = FORMAT_TABLE;
                        else if (streq(optarg, "json"))
                                ctl.format = FORMAT_JSON;
                        else if (streq(optarg, "csv"))
                                ctl.format = FORMAT_CSV;
                        else
                                return ctl_fail(EXIT_USAGE, "--format '%s': use table, json or csv", optarg);
                        break;
                case 'h':
                        help();
                        return EXIT_OK;
                case 'V':
                        printf("scalemonctl %s\n", PACKAGE_VERSION);
                        return EXIT_OK;
                default:
                        return EXIT_USAGE;      /* ctl_getopt said why */
                }
        }
        if (optind >= argc)
                return ctl_fail(EXIT_USAGE, "no verb given; try 'scalemonctl --help'");

        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                if (streq(verbs[i].name, argv[optind])) {
                        int v = optind;
                        ctl_verb = verbs[i].name;
                        optind = 0;     /* verbs run getopt again on their own argv */
                        r = verbs[i].fn(&ctl, argc - v, argv + v);
                        store_close(ctl.store);
                        if (ctl.sock_fd >= 0)
                                close(ctl.sock_fd);
                        return r;
                }
        return ctl_fail(EXIT_USAGE, "unknown verb '%s'; try 'scalemonctl --help'", argv[optind]);
}
