/* analysis-pools.c - what a group pools: the tags, other than the ones
 * that made the group, on which its runs differ.
 *
 * report --group-by, curve and plot put runs together by a few keys; runs
 * recorded for different studies (study=noisy, observer=perf) land in one
 * group when those keys agree, and their mean and variance mix what the
 * user meant to keep apart.  A tag key is pooled when the group's runs do
 * not all carry the same value of it (a run without the tag counts as one
 * more value); each value carried is listed with its number of runs.  The
 * lower_is_better tag records a score's direction, not a condition of
 * the run: never pooled.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "macro.h"

static bool is_key(const char *k, const char *const *keys, size_t nkeys)
{
        if (streq(k, ANALYSIS_LOWER_TAG))
                return true;
        for (size_t i = 0; i < nkeys; i++)
                if (keys[i] && streq(keys[i], k))
                        return true;
        return false;
}

static bool seen(const char *const *keys, size_t n, const char *key)
{
        for (size_t t = 0; t < n; t++)
                if (streq(keys[t], key))
                        return true;
        return false;
}

/* The values of key over the runs, first-seen order, counted; 0 or
 * -ENOMEM.  *ret_absent: runs without it. */
static int tag_values(const struct analysis_run *runs, const size_t *idx, size_t n, const char *key,
                      struct pool_tag *ret, size_t *ret_absent)
{
        struct pool_value *v = calloc(n + 1, sizeof *v);
        size_t nv = 0, absent = 0;

        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const char *val = analysis_tag_value(&runs[idx[i]].d, key);
                size_t k;
                if (!val) {
                        absent++;
                        continue;
                }
                for (k = 0; k < nv && !streq(v[k].value, val); k++)
                        ;
                if (k == nv)
                        v[nv++].value = val;
                v[k].runs++;
        }
        *ret = (struct pool_tag){ .key = key, .v = v, .nv = nv };
        *ret_absent = absent;
        return 0;
}

int analysis_pools(const struct analysis_run *runs, const size_t *idx, size_t n, const char *const *keys, size_t nkeys,
                   struct pools *ret)
{
        _cleanup_free_ const char **judged = NULL;     /* every key looked at once */
        struct pools p = { 0 };
        size_t cap = 0, nj = 0;

        for (size_t i = 0; i < n; i++)
                cap += runs[idx[i]].d.ntags;
        if (cap && (!(p.tags = calloc(cap, sizeof *p.tags)) || !(judged = calloc(cap, sizeof *judged)))) {
                free(p.tags);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++) {
                const struct run_detail *d = &runs[idx[i]].d;
                for (size_t k = 0; k < d->ntags; k++) {
                        const char *key = d->tags[k].key;
                        struct pool_tag t;
                        size_t absent;
                        if (is_key(key, keys, nkeys) || seen(judged, nj, key))
                                continue;
                        judged[nj++] = key;
                        if (tag_values(runs, idx, n, key, &t, &absent) < 0) {
                                pools_free(&p);
                                return -ENOMEM;
                        }
                        if (t.nv + (absent > 0) > 1)
                                p.tags[p.ntags++] = t;
                        else
                                free(t.v);
                }
        }
        *ret = p;
        return 0;
}

void pools_free(struct pools *p)
{
        for (size_t t = 0; t < p->ntags; t++)
                free(p->tags[t].v);
        free(p->tags);
        memset(p, 0, sizeof *p);
}
