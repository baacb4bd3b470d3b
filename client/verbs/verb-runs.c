/* verb-runs.c - `scalemonctl runs`: the runs in range, one line each. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "analysis.h"
#include "output.h"
#include "selection.h"
#include "timeutil.h"
#include "verbs.h"

int verb_runs(struct ctl *ctl, int argc, char **argv)
{
        static const struct option options[] = {
                { "since", required_argument, NULL, 's' },
                { "until", required_argument, NULL, 'u' },
                { "tag", required_argument, NULL, 't' },
                { "host", required_argument, NULL, 'H' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        static const char *const cols[] = { "NAME", "START", "DURATION", "STATUS", "EXIT", "TAGS", "SCORES", NULL };
        struct run_select sel = { 0 };
        struct run_info *runs = NULL;
        struct run_detail *ds;
        size_t n = 0;
        json_t *arr;
        int c, r;

        while ((c = ctl_getopt(argc, argv, "", options)) >= 0) {
                if (c == 'h') {
                        printf("Usage: scalemonctl runs [--since WHEN] [--until WHEN] [--tag K=V]... [--host NAME]\n");
                        run_select_free(&sel);
                        return EXIT_OK;
                }
                if (c == '?' || (r = run_select_set(&sel, c, optarg))) {
                        run_select_free(&sel);
                        return EXIT_USAGE;
                }
        }
        if (optind < argc) {
                run_select_free(&sel);
                return ctl_fail(EXIT_USAGE, "runs takes no arguments, got '%s' (--since NAME selects from a run on)",
                                argv[optind]);
        }
        r = run_select_list(ctl, &sel, &runs, &n);
        run_select_free(&sel);
        if (r)
                return r;

        /* tags and scores are all a listing shows: not the totals, some
         * 5,000 a run on a 256-CPU machine */
        ds = calloc(n + 1, sizeof *ds);
        if (!ds) {
                run_infos_free(runs, n);
                return ctl_fail(EXIT_FAILED, "out of memory");
        }
        arr = json_array();
        for (size_t i = 0; i < n; i++) {
                if (store_run_detail_parts(ctl->store, runs[i].id, RUN_TAGS | RUN_SCORES, &ds[i]) < 0) {
                        r = ctl_fail(EXIT_FAILED, "cannot read run %s: %s", runs[i].name, store_errmsg(ctl->store));
                        goto out;
                }
                json_array_append_new(arr, run_json(&runs[i], &ds[i]));
        }
        if (ctl->format == FORMAT_JSON) {
                json_t *doc = json_pack("{s:O}", "runs", arr);
                r = output_json(doc);
                json_decref(doc);
        } else if (ctl->format == FORMAT_CSV)
                r = output_csv(arr);
        else {
                struct libscols_table *tb = table_new(cols, "llrlr");
                for (size_t i = 0; i < n; i++) {
                        char start[32], dur[32] = "-", ex[16] = "-", tags[1024], scores[1024];
                        time_format_local(runs[i].start, start, sizeof start);
                        if (runs[i].end)
                                format_duration_s(analysis_duration_s(&runs[i]), dur, sizeof dur);
                        else
                                snprintf(dur, sizeof dur, "(%.0fs)", analysis_duration_s(&runs[i]));
                        if (runs[i].has_exit_status)
                                snprintf(ex, sizeof ex, "%d", runs[i].exit_status);
                        format_kvs(tags, sizeof tags, ds[i].tags, ds[i].ntags);
                        format_scores(scores, sizeof scores, ds[i].scores, ds[i].nscores);
                        table_row(tb, runs[i].name, start, dur, runs[i].status, ex, tags, scores);
                }
                r = table_print(tb);
        }
out:
        json_decref(arr);
        for (size_t i = 0; i < n; i++)
                run_detail_free(&ds[i]);
        free(ds);
        run_infos_free(runs, n);
        return r;
}
