/* verb-run-score.c - run exec's --score-from and --score-json: the option
 * values, and the scores they give into the run-stop request.  The
 * parsers are client/score.c; run exec pipes the command's output into
 * the capture here when a source is given. */
#include "config.h"

#include <stdio.h>

#include "cli.h"
#include "verb-run-score.h"

int run_score_from_add(struct run_score_from *f, bool json_synonym, const char *arg)
{
        _cleanup_free_ char *err = NULL, *spec = NULL;
        const char *opt = json_synonym ? "--score-json" : "--score-from";

        if (f->n == ELEMENTSOF(f->src))
                return ctl_fail(EXIT_USAGE, "%s: at most %zu", opt, ELEMENTSOF(f->src));
        if (json_synonym && asprintf(&spec, "json:%s", arg) < 0)
                return ctl_fail(EXIT_USAGE, "out of memory");
        if (score_source_parse(spec ? spec : arg, &f->src[f->n], &err) < 0)
                return ctl_fail(EXIT_USAGE, "%s '%s': %s", opt, arg,
                                json_synonym ? "use FILE:PATH, e.g. result.json:summary.ops (FILE - for the command's "
                                               "standard output)"
                                             : err ? err : "out of memory");
        f->n++;
        return 0;
}

void run_score_from_free(struct run_score_from *f)
{
        for (size_t i = 0; i < f->n; i++)
                score_source_clear(&f->src[i]);
        score_capture_free(&f->cap);
}

void run_score_from_collect(struct run_score_from *f, char *const *cmd, json_t *scores, char *sc, size_t scsize,
                            size_t *sclen)
{
        for (size_t i = 0; i < f->n; i++) {
                struct score_list got = { .n = 0 };
                _cleanup_free_ char *err = NULL;
                const char *what = score_format_name(f->src[i].format);

                if (score_collect(&f->src[i], cmd, &f->cap, &got, &err) < 0)
                        fprintf(stderr, "scalemonctl: --score-from %s: %s\n", what, err ? err : "out of memory");
                if (got.dropped)
                        fprintf(stderr, "scalemonctl: --score-from %s: %zu more scores than a run keeps (%d) left out\n",
                                what, got.dropped, PROTO_MAX_SCORES);
                for (size_t k = 0; k < got.n; k++) {
                        if (json_object_get(scores, got.v[k].key)) {
                                fprintf(stderr, "scalemonctl: score %s: given by --score-regex, not taken from %s\n",
                                        got.v[k].key, what);
                                continue;
                        }
                        json_object_set_new(scores, got.v[k].key, json_real(got.v[k].value));
                        if (*sclen < scsize - 80)
                                strbuf_appendf(sc, scsize, sclen, " %s=%.10g", got.v[k].key, got.v[k].value);
                }
        }
}
