/* store-words.c - the names a shell completes (scalemonctl __complete):
 * run names, tag keys, one tag's values, score keys and context keys,
 * each distinct, sorted, starting with a prefix. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store-internal.h"

static const char *const words_sql[] = {
        [STORE_WORDS_RUNS] = "SELECT name FROM run WHERE substr(name, 1, length(?1)) = ?1 ORDER BY name LIMIT ?3",
        [STORE_WORDS_TAG_KEYS] = "SELECT DISTINCT key FROM run_tag WHERE substr(key, 1, length(?1)) = ?1 "
                                 "ORDER BY key LIMIT ?3",
        [STORE_WORDS_TAG_VALUES] = "SELECT DISTINCT value FROM run_tag WHERE key = ?2 "
                                   "AND substr(value, 1, length(?1)) = ?1 ORDER BY value LIMIT ?3",
        [STORE_WORDS_SCORE_KEYS] = "SELECT DISTINCT key FROM run_score WHERE substr(key, 1, length(?1)) = ?1 "
                                   "ORDER BY key LIMIT ?3",
        [STORE_WORDS_CONTEXT_KEYS] = "SELECT DISTINCT key FROM context_kv WHERE substr(key, 1, length(?1)) = ?1 "
                                     "ORDER BY key LIMIT ?3",
};

void store_words_free(char **w, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(w[i]);
        free(w);
}

int store_words(struct store *s, enum store_words what, const char *key, const char *prefix, size_t max,
                char ***ret, size_t *ret_n)
{
        char **w = NULL;
        size_t n = 0, cap = 0;
        sqlite3_stmt *st;
        int r;

        if (sqlite3_prepare_v2(s->db, words_sql[what], -1, &st, NULL) != SQLITE_OK)
                return store_sqlite_error(s, "completion words");
        sqlite3_bind_text(st, 1, prefix, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, key ? key : "", -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 3, (sqlite3_int64)max);
        while ((r = sqlite3_step(st)) == SQLITE_ROW) {
                if (n == cap) {
                        char **p = realloc(w, (cap = cap ? cap * 2 : 32) * sizeof *w);
                        if (!p)
                                break;
                        w = p;
                }
                w[n] = strdup((const char *)sqlite3_column_text(st, 0));
                if (!w[n++])
                        break;
        }
        sqlite3_finalize(st);
        if (r != SQLITE_DONE) {
                store_words_free(w, n);
                return r == SQLITE_ROW ? -ENOMEM : store_sqlite_error(s, "completion words");
        }
        *ret = w;
        *ret_n = n;
        return 0;
}
