/* verb-run-score.c - run exec's --score-from and --score-json: the option
 * values, and the scores they give into the run-stop request.  The
 * parsers are client/score.c; run exec pipes the command's output into
 * the capture here when a source is given. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

bool run_scores_has(const struct run_scores *s, const char *key)
{
        for (size_t i = 0; i < s->n; i++)
                if (streq(s->v[i].key, key))
                        return true;
        return false;
}

int run_scores_add(struct run_scores *s, const char *key, double value)
{
        char *k;

        if (s->n == PROTO_MAX_SCORES)
                return -E2BIG;
        k = strdup(key);
        if (!k)
                return -ENOMEM;
        s->v[s->n++] = (struct proto_score){ k, value };
        return 0;
}

void run_scores_clear(struct run_scores *s)
{
        for (size_t i = 0; i < s->n; i++)
                free(s->v[i].key);
        s->n = 0;
}

void run_score_from_collect(struct run_score_from *f, char *const *cmd, struct run_scores *scores, char *sc,
                            size_t scsize, size_t *sclen)
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
                        if (run_scores_has(scores, got.v[k].key)) {
                                fprintf(stderr, "scalemonctl: score %s: given by --score-regex, not taken from %s\n",
                                        got.v[k].key, what);
                                continue;
                        }
                        if (run_scores_add(scores, got.v[k].key, got.v[k].value) < 0) {
                                fprintf(stderr, "scalemonctl: --score-from %s: score %s: more scores than a run keeps "
                                                "(%d), left out\n", what, got.v[k].key, PROTO_MAX_SCORES);
                                continue;
                        }
                        if (*sclen < scsize - 80)
                                strbuf_appendf(sc, scsize, sclen, " %s=%.10g", got.v[k].key, got.v[k].value);
                }
        }
}
