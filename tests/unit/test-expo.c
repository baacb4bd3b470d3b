/* test-expo.c - the exporter's exposition (exporter/expo.c, collect.c)
 * against the rules of the two text formats, without network or root.
 *
 * The checker here reads the text back line by line as a scraper would:
 * every line is metadata (# TYPE/# HELP, # UNIT and # EOF in OpenMetrics
 * only) or a sample of the family last declared, whose name carries the
 * suffix its type requires; families appear once; label values unescape
 * to what was written.  Then the naming rules of DESIGN.md and the
 * numbers: a synthetic totals reply, and one from a simulated sampler
 * through daemon/totals.c, scaled to base units. */
#include "config.h"

#include <jansson.h>
#include <regex.h>

#include "collect.h"
#include "expo.h"
#include "macro.h"
#include "sampler.h"
#include "source.h"
#include "tap.h"
#include "totals.h"

/* Unescape a label value starting after its opening quote; returns the
 * position after the closing quote, or NULL if it is malformed. */
static const char *read_value(const char *p, char *out, size_t n)
{
        size_t o = 0;

        for (; *p && *p != '"'; p++) {
                char c = *p;
                if (c == '\n')
                        return NULL;
                if (c == '\\') {
                        p++;
                        c = *p == 'n' ? '\n' : *p == '\\' ? '\\' : *p == '"' ? '"' : 0;
                        if (!c)
                                return NULL;
                }
                if (o + 1 < n)
                        out[o++] = c;
        }
        out[o] = 0;
        return *p == '"' ? p + 1 : NULL;
}

/* Check text as format f; returns the number of problems, printed as
 * diagnostics.  If want_label/want_value are given, also that some
 * sample's label unescapes to that value. */
static int check_format(const char *text, enum expo_format f, const char *want_label, const char *want_value,
                        bool *found)
{
        bool om = f == EXPO_OPENMETRICS;
        char family[256] = "", type[32] = "", seen[64][256], l[4096] = "", prev[4096];
        size_t nseen = 0;
        int bad = 0, line = 0;
        bool eof = false;
        regex_t name_re;

        regcomp(&name_re, "^[a-zA-Z_:][a-zA-Z0-9_:]*$", REG_EXTENDED | REG_NOSUB);
        for (const char *p = text; *p; line++) {
                const char *nl = strchr(p, '\n');
                char a[256], b[256];
                size_t n;

                if (!nl) {
                        printf("#   line %d has no newline\n", line);
                        bad++;
                        break;
                }
                n = MIN((size_t)(nl - p), sizeof l - 1);
                snprintf(prev, sizeof prev, "%s", l);
                memcpy(l, p, n);
                l[n] = 0;
                p = nl + 1;
                if (eof) {
                        printf("#   line %d after # EOF\n", line);
                        bad++;
                }
                if (streq(l, "# EOF")) {
                        if (!om) {
                                printf("#   # EOF in 0.0.4\n");
                                bad++;
                        }
                        eof = true;
                        continue;
                }
                if (sscanf(l, "# TYPE %255s %255s", a, b) == 2) {
                        if (regexec(&name_re, a, 0, NULL, 0) != 0) {
                                printf("#   bad family name %s\n", a);
                                bad++;
                        }
                        for (size_t i = 0; i < nseen; i++)
                                if (streq(seen[i], a)) {
                                        printf("#   family %s twice\n", a);
                                        bad++;
                                }
                        if (nseen < ELEMENTSOF(seen))
                                snprintf(seen[nseen++], sizeof seen[0], "%s", a);
                        snprintf(family, sizeof family, "%s", a);
                        snprintf(type, sizeof type, "%s", b);
                        if (!(streq(b, "counter") || streq(b, "gauge") || (om && streq(b, "info")))) {
                                printf("#   type %s in %s\n", b, om ? "OpenMetrics" : "0.0.4");
                                bad++;
                        }
                        if (!om && streq(b, "counter") && !strstr(a, "_total")) {
                                printf("#   0.0.4 counter %s without _total\n", a);
                                bad++;
                        }
                        if (om && streq(b, "counter") && strstr(a, "_total")) {
                                printf("#   OpenMetrics counter family %s named with _total\n", a);
                                bad++;
                        }
                        continue;
                }
                if (sscanf(l, "# UNIT %255s %255s", a, b) == 2) {
                        size_t fa = strlen(a), fb = strlen(b);
                        if (!om || !streq(a, family) || fa <= fb || !streq(a + fa - fb, b)) {
                                printf("#   bad # UNIT line: %s\n", l);
                                bad++;
                        }
                        continue;
                }
                if (sscanf(l, "# HELP %255s", a) == 1) {
                        if (!streq(a, family)) {
                                printf("#   # HELP for %s inside %s\n", a, family);
                                bad++;
                        }
                        continue;
                }
                if (l[0] == '#') {
                        printf("#   unknown comment line: %s\n", l);
                        bad++;
                        continue;
                }
                /* a sample: name, optional {labels}, space, value */
                {
                        char want[300], created[300], name[256];
                        const char *q = l;
                        size_t k = strcspn(q, "{ ");
                        char *end;

                        snprintf(name, sizeof name, "%.*s", (int)k, q);
                        snprintf(want, sizeof want, "%s%s", family,
                                 om && streq(type, "counter") ? "_total" : om && streq(type, "info") ? "_info" : "");
                        /* OpenMetrics: a counter's point is _total and, after it, _created */
                        snprintf(created, sizeof created, "%s_created", family);
                        if (om && streq(type, "counter") && streq(name, created)) {
                                const char *lab = l + strlen(created);
                                size_t wn = strlen(want), ln = strcspn(lab, " ");
                                if (strncmp(prev, want, wn) != 0 || strncmp(prev + wn, lab, ln) != 0 ||
                                    prev[wn + ln] != ' ') {
                                        printf("#   %s does not follow its _total sample: %s\n", l, prev);
                                        bad++;
                                }
                        } else if (!streq(name, want)) {
                                printf("#   sample %s in family %s (%s)\n", name, family, type);
                                bad++;
                        }
                        q += k;
                        if (*q == '{') {
                                q++;
                                while (*q != '}') {
                                        char ln[128], lv[1024];
                                        size_t m = strcspn(q, "=");
                                        snprintf(ln, sizeof ln, "%.*s", (int)m, q);
                                        if (!expo_valid_label_name(ln) || q[m] != '=' || q[m + 1] != '"') {
                                                printf("#   bad label at %s\n", q);
                                                bad++;
                                                break;
                                        }
                                        q = read_value(q + m + 2, lv, sizeof lv);
                                        if (!q) {
                                                printf("#   bad label value in %s\n", l);
                                                bad++;
                                                break;
                                        }
                                        if (want_label && streq(ln, want_label) && streq(lv, want_value))
                                                *found = true;
                                        if (*q == ',')
                                                q++;
                                        else if (*q != '}') {
                                                printf("#   no ',' or '}' after a label in %s\n", l);
                                                bad++;
                                                break;
                                        }
                                }
                                if (!q || *q != '}')
                                        continue;
                                q++;
                        }
                        if (*q != ' ') {
                                printf("#   no space before the value: %s\n", l);
                                bad++;
                                continue;
                        }
                        q++;
                        if (!(streq(q, "NaN") || streq(q, "+Inf") || streq(q, "-Inf"))) {
                                strtod(q, &end);
                                if (end == q || *end) {
                                        printf("#   bad value in %s\n", l);
                                        bad++;
                                }
                        }
                }
        }
        if (om && !eof) {
                printf("#   OpenMetrics without # EOF\n");
                bad++;
        }
        regfree(&name_re);
        return bad;
}

static char *expose(const struct collect_input *in, enum expo_format f, size_t *ret_samples)
{
        char *text = NULL;
        size_t len;
        int r = collect_exposition(in, f, &text, &len, ret_samples);
        ok(r == 0 && text && strlen(text) == len, "exposition built (%s)", f == EXPO_OPENMETRICS ? "OpenMetrics" : "0.0.4");
        return text;
}

static double sample_value(const char *text, const char *series)
{
        const char *p = strstr(text, series);
        char want[512];

        snprintf(want, sizeof want, "\n%s ", series);
        p = strstr(text, want);
        return p ? strtod(p + strlen(want), NULL) : -1;
}

static void test_writer(void)
{
        struct expo *e;
        char *text;
        size_t len;
        bool found = false;
        const char *nasty = "a\"b\\c\nd \xc3\xa9 \xff end";
        struct expo_label l[] = { { "run", "r1" }, { "tag", nasty } };
        char lab[80];

        for (int f = EXPO_PROMETHEUS; f <= EXPO_OPENMETRICS; f++) {
                ok(expo_new(f, &e) == 0, "writer");
                ok(expo_family(e, "x_seconds", EXPO_COUNTER, "seconds", "help with \\ and \"quotes\"\nand a newline") == 0,
                   "counter family with a unit");
                ok(expo_sample(e, l, 2, 1.5) == 0, "sample with user text in a label");
                ok(expo_created(e, l, 2, 1700000000.25) == 0, "its created time");
                ok(expo_family(e, "bad name", EXPO_GAUGE, NULL, "h") == -EINVAL, "a bad family name is refused");
                ok(expo_family(e, "y_total", EXPO_COUNTER, NULL, "h") == -EINVAL, "a counter named _total is refused");
                ok(expo_family(e, "z_bytes", EXPO_GAUGE, "seconds", "h") == -EINVAL, "a unit the name lacks is refused");
                ok(expo_family(e, "g", EXPO_GAUGE, NULL, NULL) == 0, "gauge family without help");
                ok(expo_created(e, NULL, 0, 1) == -EINVAL, "a gauge has no created time");
                ok(expo_sample(e, (struct expo_label[]){ { "__x", "1" } }, 1, 1) == -EINVAL, "reserved label name refused");
                ok(expo_sample(e, NULL, 0, 12345678901.0) == 0 && expo_sample(e, NULL, 0, 0.1) == 0, "values");
                ok(expo_sample_decimal(e, (struct expo_label[]){ { "d", "1" } }, 1, 237, 2) == 0 &&
                   expo_sample_decimal(e, (struct expo_label[]){ { "d", "2" } }, 1, 250, 2) == 0 &&
                   expo_sample_decimal(e, (struct expo_label[]){ { "d", "3" } }, 1, 7, 9) == 0 &&
                   expo_sample_decimal(e, (struct expo_label[]){ { "d", "4" } }, 1, -1500, 3) == 0 &&
                   expo_sample_decimal(e, (struct expo_label[]){ { "d", "5" } }, 1, 300, 2) == 0, "decimal values");
                ok(expo_family(e, "r", EXPO_INFO, NULL, "runs") == 0 && expo_sample(e, l, 1, 1) == 0, "info family");
                ok(expo_finish(e, &text, &len) == 0, "finish");
                expo_free(e);
                is_int(check_format(text, f, "tag", "a\"b\\c\nd \xc3\xa9 \xef\xbf\xbd end", &found), 0,
                       f == EXPO_OPENMETRICS ? "OpenMetrics text follows the format's rules"
                                             : "0.0.4 text follows the format's rules");
                ok(found, "a label value with quote, backslash, newline and a bad byte reads back escaped");
                contains(text, "\ng 12345678901\n", "an integer is written as one");
                contains(text, "\ng 0.1\n", "0.1 in the fewest digits");
                contains(text, "\ng{d=\"1\"} 2.37\ng{d=\"2\"} 2.5\ng{d=\"3\"} 0.000000007\ng{d=\"4\"} -1.5\ng{d=\"5\"} 3\n",
                         "decimals written exactly, trailing zeros dropped");
                if (f == EXPO_OPENMETRICS) {
                        contains(text, "# TYPE x_seconds counter\n# UNIT x_seconds seconds\n", "OpenMetrics counter metadata");
                        contains(text, "\nx_seconds_created{run=\"r1\",tag=", "the created sample, named NAME_created");
                        contains(text, "end\"} 1700000000.25\n", "the created time in seconds");
                        contains(text, "\\\"quotes\\\"\\nand", "OpenMetrics escapes \" and newline in HELP");
                        contains(text, "\nr_info{run=\"r1\"} 1\n", "info samples end in _info");
                        ok(len >= 6 && streq(text + len - 6, "# EOF\n"), "ends with # EOF");
                } else {
                        contains(text, "# TYPE x_seconds_total counter\n", "0.0.4 counter named with _total");
                        ok(!strstr(text, "# UNIT") && !strstr(text, "# EOF"), "no # UNIT or # EOF in 0.0.4");
                        contains(text, "# TYPE r_info gauge\n", "info as a gauge in 0.0.4");
                }
                free(text);
        }
        expo_label_name_from("weird.key-1", lab, sizeof lab);
        is_str(lab, "weird_key_1", "tag key to label name");
        expo_label_name_from("9lives", lab, sizeof lab);
        is_str(lab, "_9lives", "a leading digit");
        expo_label_name_from("__name__", lab, sizeof lab);
        ok(expo_valid_label_name(lab), "a reserved name is made valid (%s)", lab);

        is_int(expo_negotiate(NULL), EXPO_PROMETHEUS, "no Accept: 0.0.4");
        is_int(expo_negotiate("text/plain;version=0.0.4"), EXPO_PROMETHEUS, "text/plain: 0.0.4");
        is_int(expo_negotiate("application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;"
                              "q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"),
               EXPO_OPENMETRICS, "Prometheus 2.x's Accept: OpenMetrics");
        is_int(expo_negotiate("application/openmetrics-text;q=0.2, text/plain;q=0.9"), EXPO_PROMETHEUS,
               "text/plain preferred by q");
        is_int(expo_negotiate("application/openmetrics-text;q=0"), EXPO_PROMETHEUS, "q=0 means not");
}

static void test_names(void)
{
        char n[128];
        const char *unit;
        double f;

        ok(collect_family_name("cpu_user", "s", n, sizeof n, &f, &unit) == 0 && streq(n, "scalemon_cpu_user_seconds") &&
           f == 1 && unit && streq(unit, "seconds"), "cpu_user -> scalemon_cpu_user_seconds");
        ok(collect_family_name("lock_wait_ns", "ns", n, sizeof n, &f, &unit) == 0 &&
           streq(n, "scalemon_lock_wait_seconds") && f == 1e-9, "lock_wait_ns -> scalemon_lock_wait_seconds, /1e9");
        ok(collect_family_name("psi_cpu_some_us", "us", n, sizeof n, &f, &unit) == 0 &&
           streq(n, "scalemon_psi_cpu_some_seconds") && f == 1e-6, "psi_cpu_some_us -> _seconds, /1e6");
        ok(collect_family_name("lock_wait_max_ns", "ns", n, sizeof n, &f, &unit) == -ENOENT, "a maximum is no counter");
        ok(collect_family_name("context_switches", "switches", n, sizeof n, &f, &unit) == 0 &&
           streq(n, "scalemon_context_switches") && !unit, "context_switches as it is");
}

static void test_collect(void)
{
        static const char reply[] =
                "{\"ok\":true,\"started_ns\":1700000000500000000,\"sampled_at_ns\":1700000100000000000,"
                "\"interval_s\":1.0,\"ticks\":100,\"tick_late_max_us\":250,\"held_intervals\":0,\"cpus\":4,"
                "\"cpu_node\":[0,0,1,1],\"nodes\":[0,1],"
                "\"metrics\":[{\"name\":\"context_switches\",\"scope\":\"cpu\",\"unit\":\"switches\",\"scale\":1.0,"
                "\"values\":[10,20,30,45]},"
                "{\"name\":\"cpu_user\",\"scope\":\"cpu\",\"unit\":\"s\",\"scale\":0.01,\"values\":[100,200,0,50]},"
                "{\"name\":\"numa_hit\",\"scope\":\"node\",\"unit\":\"pages\",\"scale\":1.0,\"values\":[7,9]},"
                "{\"name\":\"thp_fault_alloc\",\"scope\":\"system\",\"unit\":\"pages\",\"scale\":1.0,\"values\":[3]},"
                "{\"name\":\"from_the_future\",\"scope\":\"cpu\",\"unit\":\"x\",\"scale\":1.0,\"values\":[1,1,1,1]}],"
                "\"unavailable\":[{\"name\":\"cycles\",\"why\":\"no PMU \\\"here\\\"\"}]}";
        struct proto_totals t = { 0 };
        struct store_kv tags[] = { { (char *)"ways", (char *)"8" }, { (char *)"run", (char *)"clash" },
                                   { (char *)"kernel.ver", (char *)"6.1 \"rc\"" } };
        struct store_score scores[] = { { (char *)"jobs_per_min", 43210.5 } };
        struct src_run run = { .name = "r1", .status = "done", .start = 1700000050000000000, .end = 1700000060250000000,
                               .tags = tags, .ntags = 3, .scores = scores, .nscores = 1 };
        char *err = NULL, *text;
        size_t ns_cpu = 0, ns_node = 0;
        bool found = false;

        ok(proto_totals_decode(reply, &t, &err) == 0, "a totals reply decodes (%s)", err ? err : "");
        is_int(t.nmetrics, 4, "a metric this exporter does not know is left out");
        ok(proto_totals_decode("{\"ok\":false,\"error\":\"unknown cmd 'totals'\"}", &(struct proto_totals){ 0 }, &err) < 0 &&
           err && strstr(err, "unknown cmd"), "an old daemon's refusal is said");
        free(err);
        err = NULL;

        for (int f = EXPO_PROMETHEUS; f <= EXPO_OPENMETRICS; f++) {
                struct collect_input in = { .totals = &t, .runs = &run, .nruns = 1, .runs_read = true };
                text = expose(&in, f, &ns_cpu);
                is_int(check_format(text, f, "kernel_ver", "6.1 \"rc\"", &found), 0, "the exposition follows the rules");
                ok(found, "a tag's value with quotes reads back");
                is_near(sample_value(text, "scalemon_context_switches_total{cpu=\"3\",node=\"1\"}"), 45, 0, "cpu 3's switches");
                is_near(sample_value(text, "scalemon_cpu_user_seconds_total{cpu=\"1\",node=\"0\"}"), 2.0, 1e-12,
                        "cpu_user in seconds (clock ticks scaled)");
                is_near(sample_value(text, "scalemon_numa_hit_total{node=\"1\"}"), 9, 0, "a node metric per node");
                is_near(sample_value(text, "scalemon_thp_fault_alloc_total"), 3, 0, "a system metric without label");
                is_near(sample_value(text, "scalemon_start_time_seconds"), 1700000000.5, 1e-6, "the daemon's start");
                if (f == EXPO_OPENMETRICS) {
                        is_near(sample_value(text, "scalemon_context_switches_created{cpu=\"3\",node=\"1\"}"),
                                1700000000.5, 1e-6, "a counter's created time is the daemon's start");
                        is_near(sample_value(text, "scalemon_thp_fault_alloc_created"), 1700000000.5, 1e-6,
                                "a system counter's too");
                        is_near(sample_value(text, "scalemon_intervals_created"), 1700000000.5, 1e-6,
                                "and the intervals counter's");
                        contains(text, "scalemon_cpu_user_seconds_total{cpu=\"1\",node=\"0\"} 2\n"
                                       "scalemon_cpu_user_seconds_created{cpu=\"1\",node=\"0\"} 1700000000.5\n",
                                 "_created follows its _total, with its labels");
                        ok(!strstr(text, "scalemon_up_created") && !strstr(text, "scalemon_run_created"),
                           "no gauge or info has a created time");
                } else
                        ok(!strstr(text, "_created"), "0.0.4 has no _created samples");
                is_near(sample_value(text, "scalemon_up"), 1, 0, "up");
                is_near(sample_value(text, "scalemon_run_end_timestamp_seconds{run=\"r1\"}"), 1700000060.25, 1e-6,
                        "a run's end in seconds");
                is_near(sample_value(text, "scalemon_run_score{run=\"r1\",score=\"jobs_per_min\"}"), 43210.5, 0, "a score");
                contains(text, "{run=\"r1\",status=\"done\",ways=\"8\",kernel_ver=", "run info with tags; a tag 'run' left out");
                contains(text, "scalemon_metric_unavailable{metric=\"cycles\",reason=\"no PMU \\\"here\\\"\"} 1",
                         "an unavailable metric with its reason");
                free(text);

                in.per = COLLECT_PER_NODE;
                text = expose(&in, f, &ns_node);
                is_int(check_format(text, f, NULL, NULL, NULL), 0, "per node: the exposition follows the rules");
                is_near(sample_value(text, "scalemon_context_switches_total{node=\"0\"}"), 30, 0, "node 0 sums cpus 0-1");
                is_near(sample_value(text, "scalemon_context_switches_total{node=\"1\"}"), 75, 0, "node 1 sums cpus 2-3");
                if (f == EXPO_OPENMETRICS)
                        is_near(sample_value(text, "scalemon_context_switches_created{node=\"1\"}"), 1700000000.5,
                                1e-6, "per node: the created time too");
                ok(!strstr(text, "cpu=\""), "per node: no cpu label anywhere");
                ok(ns_node < ns_cpu, "per node has fewer series (%zu < %zu)", ns_node, ns_cpu);
                free(text);

                in = (struct collect_input){ .totals = NULL, .runs_read = false };
                text = expose(&in, f, NULL);
                is_int(check_format(text, f, NULL, NULL, NULL), 0, "without the daemon: still valid");
                is_near(sample_value(text, "scalemon_up"), 0, 0, "scalemon_up 0 when the daemon did not answer");
                free(text);
        }
        proto_totals_clear(&t);
}

/* daemon/totals.c on a simulated 16-CPU sampler: what it replies
 * decodes, and the exposition's totals are the sampler's. */
static void test_daemon_reply(void)
{
        struct sampler_config cfg = { .sysroot = "/sys", .procroot = "/proc", .simulate_cpus = 16 };
        struct sampler *s = NULL;
        struct tick tk = { 0 };
        struct proto_totals t = { 0 };
        char *err = NULL, *line, *text;
        json_t *o;
        double sum = 0, want = 0;

        for (int m = 0; m < _M_MAX; m++)
                cfg.enabled[m] = true;
        if (sampler_new(&cfg, &s, &err) < 0) {
                printf("# simulated sampler not available: %s\n", err ? err : "?");
                free(err);
                return;
        }
        for (int i = 0; i < 4; i++) {
                sampler_sample(s, &tk);
                usleep(20000);  /* the real CPUs switch meanwhile; simulated ones replay them */
        }
        tick_clear(&tk);
        o = totals_reply(s, NULL, &(struct totals_health){ .interval_ns = NSEC_PER_SEC, .ticks = 3 });
        ok(o != NULL, "totals_reply on a simulated 16-CPU sampler");
        json_object_set_new(o, "ok", json_true());
        line = json_dumps(o, JSON_COMPACT);
        json_decref(o);
        ok(proto_totals_decode(line, &t, &err) == 0 && t.ncpus == 16, "its reply decodes (%s)", err ? err : "16 CPUs");
        free(line);
        for (int c = 0; c < 16; c++)
                want += (double)sampler_totals(s)[M_CONTEXT_SWITCHES * sampler_nloc(s) + c];
        text = expose(&(struct collect_input){ .totals = &t, .runs_read = true }, EXPO_OPENMETRICS, NULL);
        for (int c = 0; c < 16; c++) {
                char series[128];
                snprintf(series, sizeof series, "scalemon_context_switches_total{cpu=\"%d\",node=\"%d\"}", c, t.cpu_node[c]);
                sum += sample_value(text, series);
        }
        ok(want > 0 && sum == want, "the 16 CPUs' switches add up to the sampler's total (%.0f = %.0f)", sum, want);
        is_int(check_format(text, EXPO_OPENMETRICS, NULL, NULL, NULL), 0, "and follow the rules");
        free(text);
        proto_totals_clear(&t);
        sampler_free(s);
}

int main(void)
{
        test_writer();
        test_names();
        test_collect();
        test_daemon_reply();
        printf("1..%d\n", tap_n);
        return tap_failed ? 1 : 0;
}
