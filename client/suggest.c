/* suggest.c - "did you mean": edit distance against a list of names. */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "macro.h"
#include "metric.h"
#include "suggest.h"

size_t suggest_distance(const char *a, const char *b)
{
        size_t la = strlen(a), lb = strlen(b);
        size_t d[3][65];        /* rows i-2, i-1, i (optimal string alignment) */

        if (la > 64 || lb > 64)
                return 255;
        for (size_t j = 0; j <= lb; j++)
                d[0][j] = j;
        for (size_t i = 1; i <= la; i++) {
                size_t *cur = d[i % 3], *prev = d[(i - 1) % 3], *pp = d[(i - 2) % 3];
                cur[0] = i;
                for (size_t j = 1; j <= lb; j++) {
                        size_t cost = a[i - 1] != b[j - 1];
                        size_t v = MIN(prev[j] + 1, cur[j - 1] + 1);
                        v = MIN(v, prev[j - 1] + cost);
                        if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                                v = MIN(v, pp[j - 2] + 1);
                        cur[j] = v;
                }
        }
        return MIN(d[la % 3][lb], (size_t)255);
}

const char *suggest_nearest(const char *word, const char *const *cand, size_t n)
{
        size_t len = strlen(word), max = len <= 4 ? 1 : len <= 8 ? 2 : 3, best = 256;
        const char *found = NULL;
        bool tie = false, number = len > 0;

        /* "16" is not a typo of "1": numbers and very short words get no guess */
        for (const char *p = word; *p; p++)
                number &= (*p >= '0' && *p <= '9') || *p == '.';
        if (len < 3 || number)
                return NULL;

        for (size_t i = 0; i < n; i++) {
                size_t d = suggest_distance(word, cand[i]);
                if (d == 0)
                        return NULL;
                if (d < best) {
                        best = d;
                        found = cand[i];
                        tie = false;
                } else if (d == best && !streq(found, cand[i]))
                        tie = true;
        }
        return found && best <= max && !tie ? found : NULL;
}

const char *suggest_hint(const char *word, const char *const *cand, size_t n, char *buf, size_t len)
{
        const char *s = suggest_nearest(word, cand, n);

        if (s)
                snprintf(buf, len, "; did you mean '%s'?", s);
        else if (len)
                buf[0] = 0;
        return buf;
}

const char *suggest_metric_hint(const char *word, char *buf, size_t len)
{
        const char *names[_M_MAX];

        for (int m = 0; m < _M_MAX; m++)
                names[m] = metric_table[m].name;
        return suggest_hint(word, names, _M_MAX, buf, len);
}
