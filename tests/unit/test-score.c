/* test-score.c - the --score-from parsers (client/score.c) on the real
 * output of stress-ng 0.15, perf 6.1 and fio 3.33 as captured in
 * tests/fixtures/scores/ on this project's machine.  The wanted values are
 * read off the captures by eye, and for fio by Python's json module. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static void stress_ng(void)
{
        struct score_list l = { .n = 0 };
        char *err = NULL, *t = capture_file("stress-ng-brief.txt", NULL);

        is_int(score_parse_stress_ng(t, &l, &err), 0, "stress-ng --metrics-brief: parsed");
        is_int(l.n, 2, "  two stressors, and none of the miscellaneous metrics");
        has(&l, "cpu", 1712.42, 0, "stress-ng --metrics-brief");
        has(&l, "matrix", 3733.44, 0, "stress-ng --metrics-brief");
        free(t);

        /* --metrics and --yaml of one run: the same scores, the YAML's
         * with more digits */
        l.n = 0;
        t = capture_file("stress-ng-metrics.txt", NULL);
        is_int(score_parse_stress_ng(t, &l, &err), 0, "stress-ng --metrics: parsed");
        is_int(l.n, 2, "  two stressors");
        has(&l, "cpu", 2286.53, 0, "stress-ng --metrics");
        has(&l, "af-alg", 0, 0, "stress-ng --metrics (a stressor with no bogo ops, hyphenated)");
        free(t);
        l.n = 0;
        t = capture_file("stress-ng.yaml", NULL);
        is_int(score_parse_stress_ng_yaml(t, &l, &err), 0, "stress-ng --yaml: parsed");
        is_int(l.n, 2, "  two stressors");
        has(&l, "cpu", 2286.528638, 0, "stress-ng --yaml");
        has(&l, "af-alg", 0, 0, "stress-ng --yaml");
        free(t);

        l.n = 0;
        t = capture_file("perf-bench-sched-pipe.txt", NULL);
        is_int(score_parse_stress_ng(t, &l, &err), -ENOENT, "stress-ng on perf bench's output: nothing found");
        contains(err, "--metrics-brief", "  and the message says what to run stress-ng with");
        free(err);
        err = NULL;
        is_int(score_parse_stress_ng_yaml(t, &l, &err), -ENOENT, "stress-ng YAML on perf bench's output: nothing");
        free(err);
        free(t);
}

static void perf_bench(void)
{
        struct score_list l = { .n = 0 };
        char *err = NULL, *t = capture_file("perf-bench-sched-messaging.txt", NULL);

        is_int(score_parse_perf_bench(t, &l, &err), 0, "perf bench sched messaging: parsed");
        is_int(l.n, 1, "  one score");
        has(&l, "total_time", 0.036, 0, "perf bench sched messaging");
        free(t);
        l.n = 0;
        t = capture_file("perf-bench-sched-pipe.txt", NULL);
        is_int(score_parse_perf_bench(t, &l, &err), 0, "perf bench sched pipe: parsed");
        is_int(l.n, 3, "  three scores");
        has(&l, "total_time", 0.049, 0, "perf bench sched pipe");
        has(&l, "usecs_per_op", 2.4858, 1e-12, "perf bench sched pipe");
        has(&l, "ops_per_sec", 402284, 0, "perf bench sched pipe");
        free(t);
        l.n = 0;
        t = capture_file("perf-bench-syscall-basic.txt", NULL);
        is_int(score_parse_perf_bench(t, &l, &err), 0, "perf bench syscall basic: parsed");
        has(&l, "ops_per_sec", 15297537, 0, "perf bench syscall basic");
        free(t);
        l.n = 0;
        t = capture_file("perf-bench-futex-hash.txt", NULL);
        is_int(score_parse_perf_bench(t, &l, &err), 0, "perf bench futex hash: parsed");
        is_int(l.n, 1, "  one score: the average, not the threads' lines");
        has(&l, "ops_per_sec", 3496960, 0, "perf bench futex hash");
        free(t);
        l.n = 0;
        t = capture_file("perf-bench-mem-memcpy.txt", NULL);
        is_int(score_parse_perf_bench(t, &l, &err), 0, "perf bench mem memcpy -f all: parsed");
        is_int(l.n, 4, "  a score per function");
        has(&l, "default.gb_per_sec", 16.779424, 1e-12, "perf bench mem memcpy");
        has(&l, "x86-64-movsb.gb_per_sec", 34.386004, 1e-12, "perf bench mem memcpy");
        free(t);
        l.n = 0;
        is_int(score_parse_perf_bench("# function 'default' (glibc)\n\n   812.5 MB/sec\n", &l, &err), 0,
               "one function, in MB/sec");
        has(&l, "gb_per_sec", 812.5 / 1024, 1e-12, "perf bench mem, one function");

        l.n = 0;
        t = capture_file("stress-ng-brief.txt", NULL);
        is_int(score_parse_perf_bench(t, &l, &err), -ENOENT, "perf bench on stress-ng's output: nothing found");
        contains(err, "Total time", "  and the message names what it looks for");
        free(err);
        free(t);
}

static void fio(void)
{
        struct score_list l = { .n = 0 };
        size_t len;
        char *err = NULL, *t = capture_file("fio-randread.json", &len);

        is_int(score_parse_fio(t, len, &l, &err), 0, "fio randread JSON: parsed");
        is_int(l.n, 3, "  reads only: iops, bw_bytes, lat_ns.mean");
        has(&l, "read.iops", 15653.346653, 1e-6, "fio randread");
        has(&l, "read.bw_bytes", 64116107, 0, "fio randread");
        has(&l, "read.lat_ns.mean", 63223.577446, 1e-6, "fio randread");
        free(t);

        l.n = 0;
        t = capture_file("fio-randrw-jsonplus.json", &len);
        is_int(score_parse_fio(t, len, &l, &err), 0, "fio randrw json+: parsed");
        is_int(l.n, 6, "  reads and writes");
        has(&l, "read.iops", 9003.996004, 1e-6, "fio randrw");
        has(&l, "write.lat_ns.mean", 2284.209375, 1e-6, "fio randrw");
        free(t);

        /* two reader jobs (numjobs=2) and a writer: the readers add up */
        l.n = 0;
        t = capture_file("fio-two-jobs.json", &len);
        is_int(score_parse_fio(t, len, &l, &err), 0, "fio, two job names: parsed");
        is_int(l.n, 6, "  three scores per job name");
        has(&l, "reader.read.iops", 149900.0999 + 157822.177822, 1e-4, "fio numjobs=2: iops add up");
        has(&l, "reader.read.bw_bytes", 613990809.0 + 646439640.0, 0, "fio numjobs=2: bandwidth adds up");
        has(&l, "reader.read.lat_ns.mean", (4851.826911 * 150050 + 4649.784783 * 157980) / (150050 + 157980), 1e-6,
            "fio numjobs=2: mean latency weighted by I/Os");
        has(&l, "writer.write.iops", 309371.628372, 1e-6, "fio writer");
        free(t);

        /* --output-format=normal,json: text before and after the JSON */
        l.n = 0;
        t = capture_file("fio-normal-json.txt", &len);
        is_int(score_parse_fio(t, len, &l, &err), 0, "fio normal,json: the JSON among the text");
        has(&l, "read.bw_bytes", 2564677050, 0, "fio normal,json");
        free(t);

        l.n = 0;
        t = capture_file("perf-bench-sched-pipe.txt", &len);
        is_int(score_parse_fio(t, len, &l, &err), -ENOENT, "fio on perf bench's output: no JSON");
        contains(err, "--output-format=json", "  and the message says how to run fio");
        free(err);
        free(t);
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
        stress_ng();
        perf_bench();
        fio();
        json_path();
        sources();
        capture();
        return tap_done();
}
