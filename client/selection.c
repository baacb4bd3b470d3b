/* selection.c - the runs a verb covers (--since, --until, --tag), loaded
 * for analysis; the arguments that choose them and group them; and how a
 * run is shown in JSON and tables. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis.h"
#include "output.h"
#include "proto.h"
#include "selection.h"
#include "suggest.h"
#include "timeutil.h"

int parse_key_value(const char *opt, const char *arg, bool value_is_number, char **ret_key, char **ret_value)
{
        const char *eq = strchr(arg, '='), *why;
        _cleanup_free_ char *key = NULL, *value = NULL;

        if (!eq || eq == arg)
                return ctl_fail(EXIT_USAGE, "%s '%s': expected KEY=VALUE", opt, arg);
        key = strndup(arg, (size_t)(eq - arg));
        value = strdup(eq + 1);
        if (!key || !value)
                return ctl_fail(EXIT_FAILED, "out of memory");
        if (!proto_valid_key(key, &why))
                return ctl_fail(EXIT_USAGE, "%s '%s': %s", opt, arg, why);
        if (value_is_number) {
                char *end;
                double d;
                errno = 0;
                d = strtod(value, &end);
                if (errno || end == value || *end || !isfinite(d))
                        return ctl_fail(EXIT_USAGE, "%s '%s': the value must be a number", opt, arg);
        } else if (!proto_valid_value(value, &why))
                return ctl_fail(EXIT_USAGE, "%s '%s': %s", opt, arg, why);
        *ret_key = TAKE_PTR(key);
        *ret_value = TAKE_PTR(value);
        return 0;
}

int parse_metric_option(const char *arg, bool *sel, bool *given)
{
        _cleanup_free_ char *buf = strdup(arg);
        char *save = NULL, *tok;
        size_t n = 0;

        if (!buf)
                return ctl_fail(EXIT_FAILED, "out of memory");
        /* the first --metric replaces "all"; later ones add to it */
        if (!*given)
                for (int m = 0; m < _M_MAX; m++)
                        sel[m] = false;
        *given = true;
        for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save), n++) {
                int m = metric_id_by_name(tok);
                if (m < 0) {
                        char hint[160];
                        return ctl_fail(EXIT_USAGE, "--metric: unknown metric '%s' (scalemonctl metrics lists them)%s",
                                        tok, suggest_metric_hint(tok, hint, sizeof hint));
                }
                sel[m] = true;
        }
        /* "" or ",": an empty selection is a mistake, not "no metrics" */
        if (n == 0)
                return ctl_fail(EXIT_USAGE, "--metric '%s': no metric named; give METRIC[,METRIC...] (scalemonctl metrics lists them)", arg);
        return 0;
}

int run_select_set(struct run_select *sel, int which, const char *arg)
{
        switch (which) {
        case 's':
                sel->since_arg = arg;
                return 0;
        case 'u':
                sel->until_arg = arg;
                return 0;
        case 'H':
                if (!*arg)
                        return ctl_fail(EXIT_USAGE, "--host: give a host's name (scalemonctl runs --format json shows them)");
                sel->host = arg;
                return 0;
        case 't':
                if (sel->ntags == ELEMENTSOF(sel->tags))
                        return ctl_fail(EXIT_USAGE, "--tag: at most %zu", ELEMENTSOF(sel->tags));
                if (parse_key_value("--tag", arg, false, &sel->tags[sel->ntags].key, &sel->tags[sel->ntags].value))
                        return EXIT_USAGE;
                sel->ntags++;
                return 0;
        }
        return EXIT_USAGE;
}

void run_select_free(struct run_select *sel)
{
        for (size_t i = 0; i < sel->ntags; i++) {
                free(sel->tags[i].key);
                free(sel->tags[i].value);
        }
        sel->ntags = 0;
}

int run_select_list(struct ctl *ctl, const struct run_select *sel, struct run_info **ret, size_t *ret_n)
{
        struct run_filter f = { .since = INT64_MIN, .until = INT64_MAX, .tags = sel->tags, .ntags = sel->ntags,
                                .host = sel->host };
        struct store *s = ctl_store(ctl);
        int r;

        if (!s)
                return EXIT_FAILED;
        if (sel->since_arg && (r = ctl_when(ctl, "--since", sel->since_arg, false, &f.since)))
                return r;
        if (sel->until_arg && (r = ctl_when(ctl, "--until", sel->until_arg, true, &f.until)))
                return r;
        if (f.until < f.since)
                return ctl_fail(EXIT_USAGE, "--until is before --since");
        if (store_runs_list(s, &f, ret, ret_n) < 0)
                return ctl_fail(EXIT_FAILED, "cannot read runs from %s: %s", ctl->db_path, store_errmsg(s));
        if (*ret_n == 0) {
                char a[32] = "the beginning", b[32] = "now", tags[256] = "";
                size_t len = 0;
                if (sel->since_arg)
                        time_format_local(f.since, a, sizeof a);
                if (sel->until_arg)
                        time_format_local(f.until, b, sizeof b);
                for (size_t i = 0; i < sel->ntags && len < sizeof tags - 80; i++)
                        strbuf_appendf(tags, sizeof tags, &len, "%s%s=%s", i ? "," : " tagged ",
                                                sel->tags[i].key, sel->tags[i].value);
                if (sel->host)
                        strbuf_appendf(tags, sizeof tags, &len, " from host %.64s", sel->host);
                free(*ret);
                *ret = NULL;
                return ctl_fail(EXIT_FAILED, "no runs%s between %s and %s in %s (scalemonctl runs lists them)", tags, a,
                                b, ctl->db_path);
        }
        return 0;
}

int run_select_load(struct ctl *ctl, const struct run_select *sel, enum analysis_totals keep,
                    struct analysis_run **ret, size_t *ret_n)
{
        struct run_info *infos = NULL;
        size_t n = 0, failed;
        int r = run_select_list(ctl, sel, &infos, &n);

        if (r)
                return r;
        r = analysis_load(ctl->store, infos, n, keep, ret, &failed);
        if (r < 0) {
                r = failed == n ? ctl_fail(EXIT_FAILED, "out of memory")
                                : ctl_fail(EXIT_FAILED, "cannot read run %s: %s", infos[failed].name,
                                           store_errmsg(ctl->store));
                run_infos_free(infos, n);
                return r;
        }
        *ret_n = n;
        return 0;
}

int run_select_score(const struct analysis_run *runs, size_t n, const char *by, const char *score, const char **ret)
{
        char why[512];
        int r = analysis_pick_score(runs, n, by, score, ret, why, sizeof why);

        if (r == -EINVAL)
                return ctl_fail(EXIT_USAGE, "%s", why);
        if (r < 0)
                return ctl_fail(EXIT_FAILED, "%s", why);
        return 0;
}

int parse_group_by(struct group_opts *go, const char *arg)
{
        char buf[1024], *save = NULL, *tok;
        const char *why;

        snprintf(buf, sizeof buf, "%s", arg);
        for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                if (!proto_valid_key(tok, &why))
                        return ctl_fail(EXIT_USAGE, "--group-by '%s': %s", tok, why);
                if (go->nby == ELEMENTSOF(go->by))
                        return ctl_fail(EXIT_USAGE, "--group-by: at most %zu tags", ELEMENTSOF(go->by));
                go->by[go->nby++] = strdup(tok);
        }
        return go->nby ? 0 : ctl_fail(EXIT_USAGE, "--group-by needs TAG[,TAG...]");
}

int parse_baseline(struct group_opts *go, const char *arg)
{
        char buf[1024], *save = NULL, *tok;

        snprintf(buf, sizeof buf, "%s", arg);
        for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                if (go->nbaseline == ELEMENTSOF(go->baseline))
                        return ctl_fail(EXIT_USAGE, "--baseline: at most %zu K=V", ELEMENTSOF(go->baseline));
                if (parse_key_value("--baseline", tok, false, &go->baseline[go->nbaseline].key,
                                    &go->baseline[go->nbaseline].value))
                        return EXIT_USAGE;
                go->nbaseline++;
        }
        return go->nbaseline ? 0 : ctl_fail(EXIT_USAGE, "--baseline needs K=V[,K=V...]");
}

int parse_group_limit(struct group_opts *go, const char *opt, const char *arg)
{
        bool cv = streq(opt, "--variance-cv");
        char *end;
        double v;

        errno = 0;
        v = strtod(arg, &end);
        if (errno || end == arg || *end || !(v > 0) || (!cv && v >= 1) || v > 1000)
                return ctl_fail(EXIT_USAGE, "%s '%s': %s", opt, arg,
                                cv ? "a percentage above 0, e.g. 5" : "a number between 0 and 1");
        if (cv)
                go->cv_limit = v / 100;
        else if (streq(opt, "--variance-minmax"))
                go->minmax_limit = v;
        else
                go->alpha = v;
        return 0;
}

int parse_lower_is_better(struct group_opts *go, const char *arg)
{
        _cleanup_free_ char *buf = strdup(arg);
        char *save = NULL, *tok;
        const char *why;
        size_t ntok = 0;

        if (!buf)
                return ctl_fail(EXIT_FAILED, "out of memory");
        for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save), ntok++) {
                if (!proto_valid_key(tok, &why))
                        return ctl_fail(EXIT_USAGE, "--lower-is-better '%s': %s", tok, why);
                if (go->nlower_better == ELEMENTSOF(go->lower_better))
                        return ctl_fail(EXIT_USAGE, "--lower-is-better: at most %zu scores", ELEMENTSOF(go->lower_better));
                go->lower_better[go->nlower_better++] = strdup(tok);
        }
        if (ntok == 0)
                return ctl_fail(EXIT_USAGE, "--lower-is-better needs K[,K...], the scores where less is better");
        return 0;
}

json_t *run_json(const struct run_info *ri, const struct run_detail *d)
{
        json_t *o, *tags = json_object(), *scores = json_object();

        for (size_t i = 0; i < d->ntags; i++)
                json_object_set_new(tags, d->tags[i].key, json_string(d->tags[i].value));
        for (size_t i = 0; i < d->nscores; i++)
                json_object_set_new(scores, d->scores[i].key, json_number(d->scores[i].value));
        o = json_pack("{s:s,s:s,s:o,s:o,s:o,s:o,s:o,s:o}", "name", ri->name, "status", ri->status, "start",
                      json_time(ri->start), "end", ri->end ? json_time(ri->end) : json_null(), "duration_s",
                      ri->end ? json_real(analysis_duration_s(ri)) : json_null(), "exit_status",
                      ri->has_exit_status ? json_integer(ri->exit_status) : json_null(), "tags", tags, "scores", scores);
        if (o && ri->has_times) {
                json_object_set_new(o, "wall_s", json_real(ri->wall_s));
                json_object_set_new(o, "user_s", json_real(ri->user_s));
                json_object_set_new(o, "sys_s", json_real(ri->sys_s));
        }
        if (o && ri->command)
                json_object_set_new(o, "command", json_string(ri->command));
        if (o && ri->has_switches) {    /* the run's tasks' own (run exec's wait4) */
                json_object_set_new(o, "voluntary_switches", json_integer(ri->voluntary_switches));
                json_object_set_new(o, "involuntary_switches", json_integer(ri->involuntary_switches));
        }
        return o;
}

void format_kvs(char *buf, size_t len, const struct store_kv *kv, size_t n)
{
        size_t o = 0;
        buf[0] = 0;
        for (size_t i = 0; i < n && o < len; i++)
                strbuf_appendf(buf, len, &o, "%s%s=%s", i ? " " : "", kv[i].key, kv[i].value);
}

void format_scores(char *buf, size_t len, const struct store_score *sc, size_t n)
{
        size_t o = 0;
        buf[0] = 0;
        for (size_t i = 0; i < n && o < len; i++) {
                char v[32];
                format_number(sc[i].value, v, sizeof v);
                strbuf_appendf(buf, len, &o, "%s%s=%s", i ? " " : "", sc[i].key, v);
        }
}

void format_duration_s(double s, char *buf, size_t len)
{
        if (s < 60)
                snprintf(buf, len, "%.2fs", s);
        else if (s < 3600)
                snprintf(buf, len, "%dm%04.1fs", (int)(s / 60), fmod(s, 60));
        else
                snprintf(buf, len, "%dh%02dm%02ds", (int)(s / 3600), (int)fmod(s / 60, 60), (int)fmod(s, 60));
}
