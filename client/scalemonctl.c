/* scalemonctl.c - the client: global options and the verb table. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "suggest.h"
#include "timeutil.h"
#include "verbs.h"

#define DEFAULT_DB     "/var/lib/scalemon/scalemon.db"
#define DEFAULT_SOCKET "/run/scalemon/control.sock"

static const struct verb verbs[] = {
        { "status",  verb_status,  "status                      daemon state, interval, CPUs, nodes, metrics, database" },
        { "metrics", verb_metrics, "metrics                     the catalogue: name, scope, unit, source, availability" },
        { "reload",  verb_reload,  "reload                      make scalemond read its configuration again; says if it refused it" },
        { "query",   verb_query,   "query METRIC [--cpu N | --node N | --per system|node|cpu]\n"
                                   "              [--since WHEN] [--until WHEN] [--step DUR]" },
        { "run",     verb_run,     "run start NAME [--tag K=V]... [--lower-is-better K,...] [--name-suffix | --replace]\n"
                                   "              [--cgroup PATH | --unit NAME]\n"
                                   "  run stop [NAME] [--score K=V]... [--exit-status N]\n"
                                   "  run exec NAME [--tag K=V]... [--score-regex K=[sum:|mean:|last:]REGEX]...\n"
                                   "              [--score-from stress-ng|perf-bench|fio|json:FILE:PATH]... [--score-json FILE:PATH]...\n"
                                   "              [--lower-is-better K,...] [--name-suffix | --replace] [--no-cgroup] -- CMD [ARG]...\n"
                                   "  run mark [NAME] TEXT\n"
                                   "  run delete NAME             a finished run, its totals, tags, scores and marks" },
        { "runs",    verb_runs,    "runs [--since WHEN] [--until WHEN] [--tag K=V]... [--host NAME]" },
        { "report",  verb_report,  "report [--since WHEN] [--until WHEN] [--tag K=V]... [--host NAME] [--metric M,...]\n"
                                   "              [--per system|node|cpu] [--group-by TAG,...] [--baseline K=V,...]\n"
                                   "              [--explain] [--score K] [--lower-is-better K,...]\n"
                                   "              [--variance-cv PCT] [--variance-minmax R] [--alpha P]" },
        { "explain", verb_explain, "explain RUN [--against RUN,...] [--score K]\n"
                                   "              why RUN differs from its siblings: context, counters, phases, CPUs" },
        { "curve",   verb_curve,   "curve --by TAG [--series TAG] [--score K] [--metric M,...] [--all-metrics]\n"
                                   "              [--lower-is-better K,...] [--work fixed|per-n] [--since WHEN] [--until WHEN]\n"
                                   "              [--tag K=V]... [--host NAME]\n"
                                   "              scalability curve across runs, with a USL fit" },
        { "plot",    verb_plot,    "plot timeseries|heatmap|curve|groups|scatter|explain [METRIC|RUN] [--run NAME]\n"
                                   "              [--since WHEN] [--until WHEN] [--tag K=V]... [--per system|node|cpu]\n"
                                   "              [--by TAG] [--series TAG] [--score K] [--group-by TAG,...] [--y speedup|score]\n"
                                   "              [--lower-is-better K,...] [--work fixed|per-n] [--against RUN,...]\n"
                                   "              [-o|--output FILE.svg|FILE.png]\n"
                                   "              charts by gnuplot; in the terminal without -o" },
        { "top",     verb_top,     "top [--per cpu|node] [--metric M,...] [--once] [--iterations N]\n"
                                   "              counters per CPU, refreshed every tick; keys: q m 1-4 s n space" },
        { "export",  verb_export,  "export [--since WHEN] [--until WHEN] [--tag K=V]...   (JSON on stdout)" },
        { "import",  verb_import,  "import FILE" },
};

static const struct option options[] = {
        { "db", required_argument, NULL, 'd' },
        { "socket", required_argument, NULL, 's' },
        { "format", required_argument, NULL, 'f' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        {},
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

int main(int argc, char **argv)
{
        struct ctl ctl = { .format = FORMAT_TABLE, .sock_fd = -1 };
        int c, r;

        ctl.db_path = getenv("SCALEMON_DB") ? getenv("SCALEMON_DB") : DEFAULT_DB;
        ctl.socket_path = getenv("SCALEMON_SOCKET") ? getenv("SCALEMON_SOCKET") : DEFAULT_SOCKET;

        /* hidden: what a shell completes (completion/bash/scalemonctl, completion/zsh/_scalemonctl) */
        if (argc > 1 && streq(argv[1], "__complete"))
                return complete_main(&ctl, verbs, ELEMENTSOF(verbs), options, argc - 2, argv + 2);
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
        {
                const char *names[ELEMENTSOF(verbs)];
                char hint[96];
                for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                        names[i] = verbs[i].name;
                if (*suggest_hint(argv[optind], names, ELEMENTSOF(verbs), hint, sizeof hint))
                        return ctl_fail(EXIT_USAGE, "unknown verb '%s'%s (scalemonctl --help lists them)", argv[optind],
                                        hint);
        }
        return ctl_fail(EXIT_USAGE, "unknown verb '%s'; try 'scalemonctl --help'", argv[optind]);
}
