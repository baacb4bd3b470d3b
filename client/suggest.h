/* suggest.h - "did you mean": the nearest of a list of names to what the
 * user typed, by edit distance (suggest.c). */
#ifndef SCALEMON_CLIENT_SUGGEST_H
#define SCALEMON_CLIENT_SUGGEST_H

#include <stddef.h>

/* Levenshtein distance (insert, delete, substitute; a swap of two
 * neighbours counts 1), capped at 255. */
size_t suggest_distance(const char *a, const char *b);

/* The candidate nearest to word if it is a near miss: at most 1 edit for
 * words up to 4 characters, 2 up to 8, 3 beyond; and the only one that
 * near.  NULL if none, if word is one of them, or if word is a number or
 * shorter than 3 characters (16 is no typo of 1). */
const char *suggest_nearest(const char *word, const char *const *cand, size_t n);

/* "; did you mean 'X'?" into buf for the nearest candidate, or "". */
const char *suggest_hint(const char *word, const char *const *cand, size_t n, char *buf, size_t len);

/* The same for metric names (lib/metric.c's table). */
const char *suggest_metric_hint(const char *word, char *buf, size_t len);

#endif
