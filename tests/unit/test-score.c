/* test-score.c - the --score-from parsers (client/score.c) on the real
 * output of stress-ng 0.15, perf 6.1 and fio 3.33 as captured in
 * tests/fixtures/scores/ on this project's machine.  The wanted values are
 * read off the captures by eye, and for fio by Python's json module. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "score.h"
#include "tap.h"

/* tests/fixtures/scores/NAME, whole */
static char *capture_file(const char *name, size_t *ret_len)
{
        char path[256];
        size_t len;

        snprintf(path, sizeof path, "scores/%s", name);
        return fixture(path, ret_len ? ret_len : &len);
}

static const struct score_value *find(const struct score_list *l, const char *key)
{
        for (size_t i = 0; i < l->n; i++)
                if (strcmp(l->v[i].key, key) == 0)
                        return &l->v[i];
        return NULL;
}

static void has(const struct score_list *l, const char *key, double want, double tol, const char *what)
{
        const struct score_value *v = find(l, key);
        ok(v != NULL, "%s: score %s", what, key);
        if (v)
                is_near(v->value, want, tol, "  its value");
}

/* The parsers with one signature, for the table below. */
static int stress_ng_text(const char *t, size_t n, struct score_list *l, char **e)
{
        (void)n;
        return score_parse_stress_ng(t, l, e);
}
static int stress_ng_yaml(const char *t, size_t n, struct score_list *l, char **e)
{
        (void)n;
        return score_parse_stress_ng_yaml(t, l, e);
}
static int perf_bench(const char *t, size_t n, struct score_list *l, char **e)
{
        (void)n;
        return score_parse_perf_bench(t, l, e);
}

typedef int (*parser)(const char *t, size_t n, struct score_list *l, char **e);

/* Each capture, what its parser finds there: how many scores, and some of
 * them with their values (0 tolerance where the tool printed the digits
 * the parser reads). */
static const struct capture_case {
        const char *file, *what;
        parser parse;
        size_t n;
        struct { const char *key; double value, tol; } want[4];
} captures[] = {
        { "stress-ng-brief.txt", "stress-ng --metrics-brief (its miscellaneous metrics are no scores)", stress_ng_text, 2,
          { { "cpu", 1712.42, 0 }, { "matrix", 3733.44, 0 } } },
        /* --metrics and --yaml of one run: the same scores, the YAML's with more digits */
        { "stress-ng-metrics.txt", "stress-ng --metrics", stress_ng_text, 2,
          { { "cpu", 2286.53, 0 }, { "af-alg", 0, 0 } } },
        { "stress-ng.yaml", "stress-ng --yaml", stress_ng_yaml, 2,
          { { "cpu", 2286.528638, 0 }, { "af-alg", 0, 0 } } },
        { "perf-bench-sched-messaging.txt", "perf bench sched messaging", perf_bench, 1, { { "total_time", 0.036, 0 } } },
        { "perf-bench-sched-pipe.txt", "perf bench sched pipe", perf_bench, 3,
          { { "total_time", 0.049, 0 }, { "usecs_per_op", 2.4858, 1e-12 }, { "ops_per_sec", 402284, 0 } } },
        { "perf-bench-syscall-basic.txt", "perf bench syscall basic", perf_bench, 3, { { "ops_per_sec", 15297537, 0 } } },
        { "perf-bench-futex-hash.txt", "perf bench futex hash (the average, not the threads' lines)", perf_bench, 1,
          { { "ops_per_sec", 3496960, 0 } } },
        { "perf-bench-mem-memcpy.txt", "perf bench mem memcpy -f all (a score per function)", perf_bench, 4,
          { { "default.gb_per_sec", 16.779424, 1e-12 }, { "x86-64-movsb.gb_per_sec", 34.386004, 1e-12 } } },
        { "fio-randread.json", "fio randread JSON (reads only)", score_parse_fio, 3,
          { { "read.iops", 15653.346653, 1e-6 }, { "read.bw_bytes", 64116107, 0 },
            { "read.lat_ns.mean", 63223.577446, 1e-6 } } },
        { "fio-randrw-jsonplus.json", "fio randrw json+ (reads and writes)", score_parse_fio, 6,
          { { "read.iops", 9003.996004, 1e-6 }, { "write.lat_ns.mean", 2284.209375, 1e-6 } } },
        /* two reader jobs (numjobs=2) and a writer: the readers add up,
         * their mean latency weighted by I/Os */
        { "fio-two-jobs.json", "fio, two job names", score_parse_fio, 6,
          { { "reader.read.iops", 149900.0999 + 157822.177822, 1e-4 },
            { "reader.read.bw_bytes", 613990809.0 + 646439640.0, 0 },
            { "reader.read.lat_ns.mean", (4851.826911 * 150050 + 4649.784783 * 157980) / (150050 + 157980), 1e-6 },
            { "writer.write.iops", 309371.628372, 1e-6 } } },
        /* --output-format=normal,json: text before and after the JSON */
        { "fio-normal-json.txt", "fio normal,json", score_parse_fio, 3, { { "read.bw_bytes", 2564677050, 0 } } },
};

static void parsers(void)
{
        for (size_t i = 0; i < ELEMENTSOF(captures); i++) {
                const struct capture_case *c = &captures[i];
                struct score_list l = { .n = 0 };
                char *err = NULL, *t;
                size_t len;

                t = capture_file(c->file, &len);
                is_int(c->parse(t, len, &l, &err), 0, c->what);
                is_int(l.n, c->n, "  the number of scores");
                for (size_t k = 0; k < ELEMENTSOF(c->want) && c->want[k].key; k++)
                        has(&l, c->want[k].key, c->want[k].value, c->want[k].tol, c->what);
                free(err);
                free(t);
        }
}

/* Nothing of its kind: each parser says what it looks for. */
static void nothing_found(void)
{
        static const struct { const char *file; parser parse; const char *says, *what; } cases[] = {
                { "perf-bench-sched-pipe.txt", stress_ng_text, "--metrics-brief", "stress-ng on perf bench's output" },
                { "perf-bench-sched-pipe.txt", stress_ng_yaml, "metrics", "stress-ng YAML on perf bench's output" },
                { "stress-ng-brief.txt", perf_bench, "Total time", "perf bench on stress-ng's output" },
                { "perf-bench-sched-pipe.txt", score_parse_fio, "--output-format=json", "fio on perf bench's output" },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct score_list l = { .n = 0 };
                char *err = NULL, *t;
                size_t len;

                t = capture_file(cases[i].file, &len);
                is_int(cases[i].parse(t, len, &l, &err), -ENOENT, cases[i].what);
                contains(err, cases[i].says, "  and the message says what to do");
                free(err);
                free(t);
        }
        {
                struct score_list l = { .n = 0 };
                char *err = NULL;
                is_int(score_parse_perf_bench("# function 'default' (glibc)\n\n   812.5 MB/sec\n", &l, &err), 0,
                       "perf bench mem, one function, in MB/sec");
                has(&l, "gb_per_sec", 812.5 / 1024, 1e-12, "perf bench mem, one function");
        }
}

static void json_path(void)
{
        struct score_list l = { .n = 0 };
        size_t len;
        char *err = NULL, *t = capture_file("fio-randread.json", &len);

        is_int(score_parse_json_path(t, len, "jobs.0.read.iops", &l, &err), 0, "json path jobs.0.read.iops");
        has(&l, "iops", 15653.346653, 1e-6, "named by its last key");
        is_int(score_parse_json_path(t, len, "$.jobs[0].job_runtime", &l, &err), 0, "json path $.jobs[0].x");
        has(&l, "job_runtime", 1000, 0, "the bracket form");
        is_int(score_parse_json_path(t, len, "jobs.0.job options.runtime", &l, &err), 0,
               "a string holding a number");
        has(&l, "runtime", 1, 0, "  is the number");
        is_int(score_parse_json_path(t, len, "jobs.0.jobname", &l, &err), -EINVAL, "a string that is no number");
        contains(err, "not a number", "  says so");
        free(err);
        err = NULL;
        is_int(score_parse_json_path(t, len, "jobs.3.read.iops", &l, &err), -ENOENT, "a path to nothing");
        contains(err, "nothing at", "  says so");
        free(err);
        err = NULL;
        free(t);
        is_int(score_parse_json_path("no json here\n", 13, "a", &l, &err), -EINVAL, "no JSON at all");
        free(err);
}

static void sources(void)
{
        struct score_source s;
        char *err = NULL;
        char *argv1[] = { "stress-ng", "--cpu", "2", "--yaml", "out.yaml", NULL };
        char *argv2[] = { "stress-ng", "--cpu", "2", "-Y", "y.yaml", NULL };
        char *argv3[] = { "fio", "--output-format=json", "--output=fio.json", "job.fio", NULL };
        char *argv4[] = { "stress-ng", "--cpu", "2", "--metrics-brief", NULL };

        is_int(score_source_parse("stress-ng", &s, &err), 0, "--score-from stress-ng");
        is_str(score_source_file(&s, argv1), "out.yaml", "  reads the --yaml FILE the command writes");
        is_str(score_source_file(&s, argv2), "y.yaml", "  or its -Y FILE");
        ok(score_source_file(&s, argv4) == NULL, "  else the command's output");
        is_int(score_source_parse("fio", &s, &err), 0, "--score-from fio");
        is_str(score_source_file(&s, argv3), "fio.json", "  reads --output=FILE");
        is_int(score_source_parse("perf-bench", &s, &err), 0, "--score-from perf-bench");
        is_int(score_source_parse("json:dir/a:b.json:x.y", &s, &err), 0, "json:FILE:PATH");
        is_str(s.file, "dir/a:b.json", "  FILE up to the last colon");
        is_str(s.path, "x.y", "  PATH after it");
        score_source_clear(&s);
        is_int(score_source_parse("json:only", &s, &err), -EINVAL, "json: without a PATH is refused");
        contains(err, "json:FILE:PATH", "  saying the form");
        free(err);
        err = NULL;
        is_int(score_source_parse("sysbench", &s, &err), -EINVAL, "an unknown format is refused");
        contains(err, "stress-ng, perf-bench, fio or json:FILE:PATH", "  naming the known ones");
        free(err);
}

static void capture(void)
{
        struct score_capture c = { .overflow = 0 };
        struct score_list l = { .n = 0 };
        struct score_source s = { .format = SCORE_STRESS_NG };
        char *argv[] = { "stress-ng", NULL };
        char *err = NULL, *t = capture_file("stress-ng-brief.txt", NULL);
        size_t n = strlen(t);

        /* stress-ng writes its table to standard error, in pieces */
        score_capture_add(&c, 0, "unrelated stdout\n", 17);
        for (size_t i = 0; i < n; i += 7)
                score_capture_add(&c, 1, t + i, n - i < 7 ? n - i : 7);
        is_int(score_collect(&s, argv, &c, &l, &err), 0, "collected from standard error, written in pieces");
        has(&l, "matrix", 3733.44, 0, "stress-ng from the capture");
        score_capture_free(&c);
        free(t);
}

int main(void)
{
        parsers();
        nothing_found();
        json_path();
        sources();
        capture();
        return tap_done();
}
