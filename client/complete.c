/* complete.c - `scalemonctl __complete CWORD WORD...`: the words a shell
 * may complete at WORD number CWORD (from 0) of a command line whose
 * words after "scalemonctl" are WORD...  Verbs and sub-verbs come from
 * the verb table's usage lines, options from the very getopt table the
 * verb parses with (ctl_getopt_hook catches it), and values from the
 * database: run names, tag keys and values, score keys, and metric names
 * as `scalemonctl metrics` lists them.  One candidate a line, each
 * starting with the word being completed; "@files" asks the shell for
 * file names and "@commands" for command names.  The bash and zsh
 * scripts in completion/ only ask this. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "metric.h"
#include "proto.h"
#include "verbs.h"

#define MAX_WORDS 500   /* candidates of one kind from the database */

/* What an option's value, or a positional argument, is. */
enum value_kind {
        V_NONE,         /* free text: nothing to offer */
        V_FILE,
        V_COMMAND,
        V_RUN,
        V_RUNS,         /* RUN[,RUN...] */
        V_WHEN,         /* a run name or a time word */
        V_METRIC,
        V_METRICS,      /* M[,M...] */
        V_TAG_KV,       /* K=V */
        V_TAG_KVS,      /* K=V[,K=V...] */
        V_GROUP_KEY,    /* a tag key, host, a context key */
        V_GROUP_KEYS,
        V_SCORE,
        V_SCORES,
        V_CHOICE,       /* one of choices */
        V_SUBVERB,      /* run's sub-verbs, plot's kinds */
};

/* Option values by option name, for every verb that has the option. */
static const struct option_value {
        const char *name;
        enum value_kind kind;
        const char *choices;    /* V_CHOICE: words separated by spaces */
} option_values[] = {
        { "db", V_FILE, NULL },
        { "socket", V_FILE, NULL },
        { "output", V_FILE, NULL },
        { "cgroup", V_FILE, NULL },
        { "format", V_CHOICE, "table json csv" },
        { "per", V_CHOICE, "system node cpu" },
        { "work", V_CHOICE, "fixed per-n" },
        { "y", V_CHOICE, "speedup score" },
        { "score-from", V_CHOICE, "stress-ng perf-bench fio json:" },
        { "score-json", V_FILE, NULL },
        { "since", V_WHEN, NULL },
        { "until", V_WHEN, NULL },
        { "run", V_RUN, NULL },
        { "against", V_RUNS, NULL },
        { "metric", V_METRICS, NULL },
        { "tag", V_TAG_KV, NULL },
        { "baseline", V_TAG_KVS, NULL },
        { "group-by", V_GROUP_KEYS, NULL },
        { "by", V_GROUP_KEY, NULL },
        { "series", V_GROUP_KEY, NULL },
        { "score", V_SCORE, NULL },
        { "lower-is-better", V_SCORES, NULL },
};

/* Positional arguments by verb ("run exec": the sub-verb too), in order;
 * run exec's command after "--" is V_COMMAND, then files. */
static const struct positional {
        const char *verb;
        enum value_kind kinds[2];
} positionals[] = {
        { "query", { V_METRIC } },
        { "explain", { V_RUN } },
        { "import", { V_FILE } },
        { "run stop", { V_RUN } },
        { "run mark", { V_RUN } },
        { "run delete", { V_RUN } },
        { "plot", { V_SUBVERB, V_METRIC } },  /* plot explain: a RUN there */
};

struct completion {
        struct ctl *ctl;
        const struct verb *verbs;
        size_t nverbs;
        const struct verb *verb;        /* the verb typed, or NULL */
        char sub[32];                   /* its sub-verb (run exec: "exec"), or "" */
        char key[PROTO_MAX_KEY + 1];    /* V_TAG_KV after "K=": K */
        const char *plot_kind;
        char **words;                   /* the command line after "scalemonctl" */
        int first;                      /* the verb's first word after it (and its sub-verb) */
        int cword;                      /* the word being completed */
        const char *optstring;          /* the verb's options, caught from ctl_getopt */
        const struct option *options;
        struct store *store;            /* opened on demand; NULL if it cannot be */
        bool store_tried;
};

static struct completion *catching;
static void complete_verb_words(struct completion *c);

/* ctl_getopt's hook: the verb's table is caught, the completion done, and
 * the program ends here, inside the verb's call, so that what the verb
 * holds so far stays reachable, as at any exit. */
static void catch_options(const char *optstring, const struct option *options)
{
        ctl_getopt_hook = NULL;
        catching->optstring = optstring;
        catching->options = options;
        complete_verb_words(catching);
        store_close(catching->store);
        exit(fflush(stdout) == 0 ? EXIT_OK : EXIT_FAILED);
}

/* Complete with the verb's option table: call the verb with no arguments
 * but the verb (and sub-verb); it calls ctl_getopt first, which hands the
 * table over (catch_options).  A verb that never did would be completed
 * without options. */
static void complete_verb(struct completion *c)
{
        char *argv[3] = { (char *)c->verb->name, c->sub[0] ? c->sub : NULL, NULL };

        catching = c;
        ctl_getopt_hook = catch_options;
        optind = 0;
        c->verb->fn(c->ctl, c->sub[0] ? 2 : 1, argv);
        ctl_getopt_hook = NULL;
        complete_verb_words(c);
}

static void emit(const char *prefix, const char *word, const char *suffix, const char *cur)
{
        char line[512];
        snprintf(line, sizeof line, "%s%s%s", prefix, word, suffix);
        if (startswith(line, cur))
                printf("%s\n", line);
}

/* Sub-verbs from the verb's usage lines: "run start NAME ..." gives start,
 * "plot timeseries|heatmap|... ..." each of the words.  Their number. */
static size_t subverbs(const struct verb *v, char sub[][32], size_t max)
{
        size_t n = strlen(v->name), k = 0, len;

        for (const char *l = v->usage; l && *l;) {
                const char *e = strchr(l, '\n'), *w;
                l += strspn(l, " ");
                if (strncmp(l, v->name, n) == 0 && l[n] == ' ')
                        for (w = l + n + 1; k < max && (len = strspn(w, "abcdefghijklmnopqrstuvwxyz-")) > 0;
                             w += len + 1) {
                                snprintf(sub[k++], 32, "%.*s", (int)len, w);
                                if (w[len] != '|')
                                        break;
                        }
                l = e ? e + 1 : NULL;
        }
        return k;
}

static bool is_subverb(const struct verb *v, const char *word)
{
        char sub[16][32];
        size_t n = subverbs(v, sub, ELEMENTSOF(sub));
        for (size_t i = 0; i < n; i++)
                if (streq(sub[i], word))
                        return true;
        return false;
}

/* ---- values ---- */

static struct store *completion_store(struct completion *c)
{
        char *err = NULL;

        if (!c->store_tried) {
                c->store_tried = true;
                if (store_open(c->ctl->db_path, STORE_READ, &c->store, &err) < 0)
                        c->store = NULL;        /* no database words, and nothing said: it is a completion */
                free(err);
        }
        return c->store;
}

static void emit_db(struct completion *c, enum store_words what, const char *key, const char *lead, const char *word,
                    const char *suffix)
{
        struct store *s = completion_store(c);
        char **w = NULL, cur[512];
        size_t n = 0;

        if (!s || store_words(s, what, key, word, MAX_WORDS, &w, &n) < 0)
                return;
        snprintf(cur, sizeof cur, "%s%s", lead, word);
        for (size_t i = 0; i < n; i++)
                emit(lead, w[i], suffix, cur);
        store_words_free(w, n);
}

/* Metric names as `scalemonctl metrics` lists them: the database's
 * catalogue, or this program's when there is no database to read. */
static void emit_metrics(struct completion *c, const char *lead, const char *word)
{
        _cleanup_free_ struct store_metric_row *rows = NULL;
        struct store *s = completion_store(c);
        char cur[512];
        size_t n = 0;

        snprintf(cur, sizeof cur, "%s%s", lead, word);
        if (s && store_metrics_list(s, &rows, &n) == 0 && n > 0)
                for (size_t i = 0; i < n; i++)
                        emit(lead, rows[i].name, "", cur);
        else
                for (size_t i = 0; i < _M_MAX; i++)
                        emit(lead, metric_table[i].name, "", cur);
}

static void emit_words(const char *words, const char *lead, const char *word)
{
        char cur[512];
        snprintf(cur, sizeof cur, "%s%s", lead, word);
        for (const char *w = words; *w;) {
                size_t len = strcspn(w, " ");
                char one[64];
                snprintf(one, sizeof one, "%.*s", (int)len, w);
                emit(lead, one, "", cur);
                w += len + strspn(w + len, " ");
        }
}

static void emit_value(struct completion *c, enum value_kind kind, const char *choices, const char *lead, const char *val)
{
        char head[512], sub[16][32];
        const char *comma = strrchr(val, ','), *tail = comma ? comma + 1 : val, *eq;
        bool list = kind == V_RUNS || kind == V_METRICS || kind == V_TAG_KVS || kind == V_GROUP_KEYS ||
                    kind == V_SCORES;
        size_t n;

        /* a list: complete its last item after what comes before it */
        snprintf(head, sizeof head, "%s%.*s", lead, list && comma ? (int)(tail - val) : 0, val);
        if (!list)
                tail = val;
        switch (kind) {
        case V_FILE:
                printf("@files\n");
                break;
        case V_COMMAND:
                printf("@commands\n");
                break;
        case V_WHEN:
                emit_words("today yesterday now", head, tail);
                __attribute__((fallthrough));
        case V_RUN:
        case V_RUNS:
                emit_db(c, STORE_WORDS_RUNS, NULL, head, tail, "");
                break;
        case V_METRIC:
        case V_METRICS:
                emit_metrics(c, head, tail);
                break;
        case V_TAG_KV:
        case V_TAG_KVS:
                eq = strchr(tail, '=');
                if (!eq) {
                        emit_db(c, STORE_WORDS_TAG_KEYS, NULL, head, tail, "=");
                        break;
                }
                snprintf(c->key, sizeof c->key, "%.*s", (int)(eq - tail), tail);
                snprintf(head + strlen(head), sizeof head - strlen(head), "%s=", c->key);
                emit_db(c, STORE_WORDS_TAG_VALUES, c->key, head, eq + 1, "");
                break;
        case V_GROUP_KEY:
        case V_GROUP_KEYS:
                emit_words("host", head, tail);
                emit_db(c, STORE_WORDS_TAG_KEYS, NULL, head, tail, "");
                emit_db(c, STORE_WORDS_CONTEXT_KEYS, NULL, head, tail, "");
                break;
        case V_SCORE:
        case V_SCORES:
                emit_db(c, STORE_WORDS_SCORE_KEYS, NULL, head, tail, "");
                break;
        case V_CHOICE:
                emit_words(choices, head, tail);
                break;
        case V_SUBVERB:
                n = subverbs(c->verb, sub, ELEMENTSOF(sub));
                for (size_t i = 0; i < n; i++)
                        emit_words(sub[i], head, tail);
                break;
        case V_NONE:
                break;
        }
}

/* ---- the command line ---- */

static const struct option *find_option(const struct option *options, const char *optstring, const char *word,
                                        struct option *shortopt)
{
        if (startswith(word, "--")) {
                size_t len = strcspn(word + 2, "=");
                for (const struct option *o = options; o && o->name; o++)
                        if (strlen(o->name) == len && strncmp(o->name, word + 2, len) == 0)
                                return o;
                return NULL;
        }
        /* a short option, -o FILE: plot's -o is its --output */
        if (word[0] == '-' && word[1] && !word[2] && optstring && strchr(optstring, word[1]) && word[1] != ':') {
                const char *p = strchr(optstring, word[1]);
                *shortopt = (struct option){ word[1] == 'o' ? "output" : "", p[1] == ':' ? required_argument : no_argument,
                                             NULL, word[1] };
                return shortopt;
        }
        return NULL;
}

static void emit_option_value(struct completion *c, const struct option *o, const char *lead, const char *val)
{
        for (size_t i = 0; i < ELEMENTSOF(option_values); i++)
                if (streq(option_values[i].name, o->name)) {
                        emit_value(c, option_values[i].kind, option_values[i].choices, lead, val);
                        return;
                }
}

static void emit_options(const struct option *options, const char *cur)
{
        for (const struct option *o = options; o && o->name; o++)
                emit("--", o->name, "", cur);
}

static enum value_kind positional_kind(const struct completion *c, size_t k)
{
        char name[64];

        snprintf(name, sizeof name, "%s%s%s", c->verb->name, c->sub[0] ? " " : "", c->sub);
        if (streq(name, "plot") && k == 1 && c->plot_kind && streq(c->plot_kind, "explain"))
                return V_RUN;
        for (size_t i = 0; i < ELEMENTSOF(positionals); i++)
                if (streq(positionals[i].verb, name))
                        return k < ELEMENTSOF(positionals[i].kinds) ? positionals[i].kinds[k] : V_NONE;
        return V_NONE;
}

/* The verb's words from c->first up to the one being completed (cword). */
static void complete_verb_words(struct completion *c)
{
        char **words = c->words;
        int i = c->first, cword = c->cword;
        const char *cur = words[cword], *eq;
        bool dashdash = false;
        struct option shortopt;
        const struct option *o;
        size_t k = 0;

        for (; i < cword; i++) {
                const char *w = words[i];
                if (dashdash || (w[0] != '-' || !w[1])) {
                        if (!dashdash && k == 0 && streq(c->verb->name, "plot"))
                                c->plot_kind = w;
                        k++;
                        continue;
                }
                if (streq(w, "--")) {
                        dashdash = true;
                        k = 0;
                        continue;
                }
                o = find_option(c->options, c->optstring, w, &shortopt);
                if (o && o->has_arg == required_argument && !strchr(w, '=')) {
                        if (i + 1 == cword) {
                                emit_option_value(c, o, "", cur);
                                return;
                        }
                        i++;
                }
        }
        if (dashdash)
                emit_value(c, k == 0 ? V_COMMAND : V_FILE, NULL, "", cur);
        else if (startswith(cur, "--") && (eq = strchr(cur, '=')) &&
                 (o = find_option(c->options, c->optstring, cur, &shortopt))) {
                char lead[80];
                snprintf(lead, sizeof lead, "%.*s", (int)(eq + 1 - cur), cur);
                emit_option_value(c, o, lead, eq + 1);
        } else if (cur[0] == '-')
                emit_options(c->options, cur);
        else
                emit_value(c, positional_kind(c, k), NULL, "", cur);
}

int complete_main(struct ctl *ctl, const struct verb *verbs, size_t nverbs, const struct option *global, int argc,
                  char **argv)
{
        struct completion c = { .ctl = ctl, .verbs = verbs, .nverbs = nverbs };
        char **words = argv + 1, *end, *none[] = { (char *)"" };
        struct option shortopt;
        const struct option *o;
        long cword;
        int i = 0;

        if (argc < 1)
                return ctl_fail(EXIT_USAGE, "__complete CWORD WORD...");
        cword = strtol(argv[0], &end, 10);
        if (*end || cword < 0 || cword > argc - 1)
                return ctl_fail(EXIT_USAGE, "__complete: CWORD '%s' is not a word's number", argv[0]);
        if (cword == argc - 1) {        /* completing after the last word: an empty one */
                words = calloc((size_t)argc + 1, sizeof *words);
                if (!words)
                        return EXIT_FAILED;
                memcpy(words, argv + 1, (size_t)(argc - 1) * sizeof *words);
                words[cword] = none[0];
        }
        /* the global options, before the verb */
        for (; i < cword && words[i][0] == '-'; i++) {
                o = find_option(global, NULL, words[i], &shortopt);
                const char *v = o && strchr(words[i], '=') ? strchr(words[i], '=') + 1 : NULL;
                if (o && o->has_arg == required_argument && !v) {
                        if (i + 1 == cword) {
                                emit_option_value(&c, o, "", words[cword]);
                                goto out;
                        }
                        v = words[++i];
                }
                if (o && v && streq(o->name, "db"))
                        ctl->db_path = v;
        }
        if (i == cword) {
                const char *cur = words[cword], *eq = strchr(cur, '=');
                if (startswith(cur, "--") && eq && (o = find_option(global, NULL, cur, &shortopt))) {
                        char lead[80];
                        snprintf(lead, sizeof lead, "%.*s", (int)(eq + 1 - cur), cur);
                        emit_option_value(&c, o, lead, eq + 1);
                } else if (cur[0] == '-')
                        emit_options(global, cur);
                else
                        for (size_t k = 0; k < nverbs; k++)
                                emit("", verbs[k].name, "", words[cword]);
                goto out;
        }
        for (size_t k = 0; k < nverbs && !c.verb; k++)
                if (streq(verbs[k].name, words[i]))
                        c.verb = &verbs[k];
        if (!c.verb)
                goto out;
        i++;
        /* run's sub-verb comes first (plot's kind is a positional argument) */
        if (streq(c.verb->name, "run")) {
                if (i == cword) {
                        emit_value(&c, V_SUBVERB, NULL, "", words[cword]);
                        goto out;
                }
                if (!is_subverb(c.verb, words[i]))
                        goto out;
                snprintf(c.sub, sizeof c.sub, "%s", words[i++]);
        }
        c.words = words;
        c.first = i;
        c.cword = (int)cword;
        complete_verb(&c);
out:
        if (words != argv + 1)
                free(words);
        store_close(c.store);
        return EXIT_OK;
}
