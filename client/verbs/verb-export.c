/* verb-export.c - `scalemonctl export` and `scalemonctl import FILE`.
 *
 * Import writes: with no daemon on the database it opens it for writing
 * itself (taking the writer's lock, so a daemon starting meanwhile waits
 * for nothing and is refused cleanly); with a daemon running it hands the
 * open file to the daemon over the control socket.  Either way the whole
 * file is checked first and imported in one transaction.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "exchange.h"
#include "output.h"
#include "proto-reply.h"
#include "selection.h"
#include "sock.h"
#include "verbs.h"

int verb_export(struct ctl *ctl, int argc, char **argv)
{
        static const struct option options[] = {
                { "since", required_argument, NULL, 's' },
                { "until", required_argument, NULL, 'u' },
                { "tag", required_argument, NULL, 't' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        struct run_select sel = { 0 };
        struct run_info *runs = NULL;
        struct run_filter f;
        size_t n = 0, skipped = 0;
        json_t *doc = NULL;
        int c, r = 0;

        while (r == 0 && (c = ctl_getopt(argc, argv, "", options)) >= 0) {
                if (c == 'h') {
                        printf("Usage: scalemonctl export [--since WHEN] [--until WHEN] [--tag K=V]... > FILE\n");
                        run_select_free(&sel);
                        return EXIT_OK;
                }
                r = c == '?' ? EXIT_USAGE : run_select_set(&sel, c, optarg);
        }
        if (r == 0 && optind < argc)
                r = ctl_fail(EXIT_USAGE, "export takes no arguments (it writes to standard output), got '%s'",
                             argv[optind]);
        if (r == 0 && ctl->format == FORMAT_CSV)
                r = ctl_fail(EXIT_USAGE, "export writes JSON only; --format csv does not apply");
        /* resolve the range once, then export exactly those runs */
        if (r == 0)
                r = run_select_list(ctl, &sel, &runs, &n);
        if (r == 0) {
                f = (struct run_filter){ .since = runs[0].start, .until = runs[n - 1].start, .tags = sel.tags,
                                         .ntags = sel.ntags };
                if (exchange_export(ctl->store, &f, &doc, &skipped) < 0)
                        r = ctl_fail(EXIT_FAILED, "cannot export: %s", store_errmsg(ctl->store));
        }
        if (r == 0) {
                if (skipped)
                        fprintf(stderr, "scalemonctl: left out %zu run%s still running\n", skipped,
                                skipped == 1 ? "" : "s");
                if (json_dumpf(doc, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17)) < 0 ||
                    fputc('\n', stdout) == EOF || fflush(stdout) != 0)
                        r = ctl_fail(EXIT_FAILED, "cannot write the export: %s", strerror(errno));
        }
        json_decref(doc);
        run_infos_free(runs, n);
        run_select_free(&sel);
        return r;
}

int verb_import(struct ctl *ctl, int argc, char **argv)
{
        static const struct option options[] = { { "help", no_argument, NULL, 'h' }, {} };
        _cleanup_free_ char *err = NULL;
        _cleanup_close_ int fd = -1;
        struct store *w = NULL;
        struct exchange_counts n = { 0 };
        json_t *reply = NULL;
        int c, r;

        while ((c = ctl_getopt(argc, argv, "", options)) >= 0) {
                if (c == 'h') {
                        printf("Usage: scalemonctl import FILE   (FILE from scalemonctl export; - for standard input)\n");
                        return EXIT_OK;
                }
                return EXIT_USAGE;
        }
        if (optind + 1 != argc)
                return ctl_fail(EXIT_USAGE, "import takes one FILE (from scalemonctl export)");
        if (argv[optind][0] == 0)
                return ctl_fail(EXIT_USAGE, "import FILE: an empty name; give a file from scalemonctl export, or - for standard input");
        fd = streq(argv[optind], "-") ? dup(STDIN_FILENO) : open(argv[optind], O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return ctl_fail(EXIT_FAILED, "cannot open %s: %s", argv[optind], strerror(errno));

        r = store_open(ctl->db_path, STORE_WRITE, &w, &err);
        if (r == -EBUSY) {
                /* a daemon has the database: it does the import */
                free(err);
                err = NULL;
                struct proto_request req = { .cmd = CMD_IMPORT };
                r = ctl_request(ctl, &req, fd, &reply);
                if (r)
                        return r;
                struct proto_import_reply got;
                r = proto_import_reply_from_json(reply, &got);
                json_decref(reply);
                if (r < 0)
                        return ctl_fail(EXIT_FAILED, "scalemond's reply to import has no counts");
                n = (struct exchange_counts){ .imported = (size_t)got.imported, .skipped = (size_t)got.skipped,
                                              .renamed = (size_t)got.renamed };
        } else if (r < 0)
                return ctl_fail(EXIT_FAILED, "%s", err ? err : strerror(-r));
        else {
                r = exchange_import_fd(w, fd, &n, &err);
                store_close(w);
                if (r < 0)
                        return ctl_fail(EXIT_FAILED, "%s: %s", argv[optind], err ? err : strerror(-r));
        }
        if (ctl->format == FORMAT_JSON) {
                json_t *doc = json_pack("{s:I,s:I,s:I}", "imported", (json_int_t)n.imported, "skipped",
                                        (json_int_t)n.skipped, "renamed", (json_int_t)n.renamed);
                r = output_json(doc);
                json_decref(doc);
                return r;
        }
        printf("imported %zu run%s into %s", n.imported, n.imported == 1 ? "" : "s", ctl->db_path);
        if (n.skipped)
                printf("; %zu already there (same name, host and start), skipped", n.skipped);
        if (n.renamed)
                printf("; %zu named like another host's run, imported as NAME:HOSTNAME", n.renamed);
        printf("\n");
        return EXIT_OK;
}
