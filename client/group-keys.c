/* group-keys.c - what --group-by and --baseline can name: the keys a run
 * has, where their values come from, and the check that the keys and
 * baseline values given exist in the selected runs. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "analysis.h"
#include "cli.h"
#include "selection.h"
#include "suggest.h"

/* "host": the name of the host the run came from (one key). */
static const struct store_kv *host_kvs(const struct analysis_run *r, size_t *ret_n)
{
        static struct store_kv kv;      /* its value points into r */

        kv = (struct store_kv){ (char *)"host", (char *)r->hostname };
        *ret_n = r->hostname[0] ? 1 : 0;
        return &kv;
}

/* The settings recorded when the run started: kernel, thp_enabled, ... */
static const struct store_kv *context_kvs(const struct analysis_run *r, size_t *ret_n)
{
        *ret_n = r->d.ncontext;
        return r->d.context;
}

/* Where a grouping key's value comes from, first source first: a key
 * that is both a context key and a tag takes the context's value. */
static const struct group_key_source {
        const struct store_kv *(*kvs)(const struct analysis_run *r, size_t *ret_n);     /* NULL: the tags */
} sources[] = {
        { host_kvs },
        { context_kvs },
        { NULL },
};

static const struct store_kv *source_kvs(const struct group_key_source *s, const struct analysis_run *r, size_t *ret_n)
{
        if (s->kvs)
                return s->kvs(r, ret_n);
        *ret_n = r->d.ntags;            /* the tags row */
        return r->d.tags;
}

const char *analysis_group_value(const struct analysis_run *r, const char *key)
{
        for (size_t s = 0; s < ELEMENTSOF(sources); s++) {
                size_t n;
                const struct store_kv *kv = source_kvs(&sources[s], r, &n);
                for (size_t i = 0; i < n; i++)
                        if (streq(kv[i].key, key))
                                return kv[i].value;
        }
        return NULL;
}

/* Add s to the set v[0..*n) (at most max), keeping first-seen order. */
static void add_unique(const char **v, size_t *n, size_t max, const char *s)
{
        for (size_t i = 0; i < *n; i++)
                if (streq(v[i], s))
                        return;
        if (*n < max)
                v[(*n)++] = s;
}

static void join(char *buf, size_t len, const char *const *v, size_t n)
{
        size_t l = 0;

        buf[0] = 0;
        for (size_t i = 0; i < n && l < len - 32; i++)
                strbuf_appendf(buf, len, &l, "%s%s", i ? ", " : "", v[i]);
        if (n == 0)
                snprintf(buf, len, "none");
}

enum { MAXV = 256 };

int run_select_check_key(const struct analysis_run *runs, size_t n, const char *key, const char *opt)
{
        const char *keys[MAXV], *tags[MAXV];
        char list[1024], hint[160];
        size_t nkeys = 0, ntags = 0;

        for (size_t i = 0; i < n; i++)
                if (analysis_group_value(&runs[i], key))
                        return 0;
        /* the message lists the tags (what users group by most); the
         * guess looks at every key, host and context ones too */
        for (size_t s = 0; s < ELEMENTSOF(sources); s++)
                for (size_t i = 0; i < n; i++) {
                        size_t nkv;
                        const struct store_kv *kv = source_kvs(&sources[s], &runs[i], &nkv);
                        for (size_t k = 0; k < nkv; k++) {
                                add_unique(keys, &nkeys, MAXV, kv[k].key);
                                if (!sources[s].kvs)
                                        add_unique(tags, &ntags, MAXV, kv[k].key);
                        }
                }
        join(list, sizeof list, tags, ntags);
        return ctl_fail(EXIT_USAGE, "%s '%s': no selected run has it (tags: %s)%s", opt, key, list,
                        suggest_hint(key, keys, nkeys, hint, sizeof hint));
}

int run_select_check_groups(const struct analysis_run *runs, size_t n, const struct group_opts *go, const char *opt)
{
        const char *vals[MAXV];
        char list[1024], hint[160];
        size_t nvals;
        int r;

        for (size_t b = 0; b < go->nby; b++)
                if ((r = run_select_check_key(runs, n, go->by[b], opt)))
                        return r;
        for (size_t j = 0; j < go->nbaseline; j++) {
                const struct store_kv *bl = &go->baseline[j];
                bool found = false;
                nvals = 0;
                for (size_t i = 0; i < n; i++) {
                        const char *v = analysis_group_value(&runs[i], bl->key);
                        if (!v)
                                continue;
                        found |= streq(v, bl->value);
                        add_unique(vals, &nvals, MAXV, v);
                }
                if (found)
                        continue;
                join(list, sizeof list, vals, nvals);
                return ctl_fail(EXIT_USAGE, "--baseline %s=%s: no selected run has %s=%s (%s: %s)%s", bl->key,
                                bl->value, bl->key, bl->value, bl->key, list,
                                suggest_hint(bl->value, vals, nvals, hint, sizeof hint));
        }
        return 0;
}
