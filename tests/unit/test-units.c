/* test-units.c - counters in the units a person reads (client/render/
 * units.c), what a group pools (analysis-pools.c) and a maximum compared
 * as a maximum (analysis-changes.c), on values and runs built here: the
 * expected strings and numbers are worked out by hand. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "groups.h"
#include "macro.h"
#include "tap.h"
#include "units.h"

static void test_format(void)
{
        char b[64];
        double f;

        units_rate(M_LOCK_WAIT_NS, 49217449.5, false, b, sizeof b);
        is_str(b, "49.2 ms/s", "lock wait 49217449.5 ns/s is 49.2 ms/s");
        units_rate(M_PSI_CPU_SOME, 490000, true, b, sizeof b);
        is_str(b, "490 ms/s", "PSI 490000 us/s is 490 ms/s");
        units_rate(M_CPU_USER, 1.2, true, b, sizeof b);
        is_str(b, "1.20 s/s", "CPU time 1.2 s/s");
        units_rate(M_CONTEXT_SWITCHES, 1234.5, false, b, sizeof b);
        is_str(b, "1234.5/s", "a count per second");
        units_rate(M_CONTEXT_SWITCHES, 1234.5, true, b, sizeof b);
        is_str(b, "1234.5", "bare under a PER_S heading");
        units_total(M_LOCK_WAIT_NS, 984348990, b, sizeof b);
        is_str(b, "984 ms", "984348990 ns is 984 ms");
        units_total(M_LOCK_WAIT_MAX_NS, 1259307, b, sizeof b);
        is_str(b, "1.26 ms", "a maximum of 1259307 ns is 1.26 ms");
        units_total(M_RUNQUEUE_WAIT, 750, b, sizeof b);
        is_str(b, "750 ns", "below a microsecond: ns");
        units_total(M_PAGE_FAULTS, 3000, b, sizeof b);
        is_str(b, "3000", "a count stays a count");
        units_seconds(0.9996, b, sizeof b);
        is_str(b, "1.00 s", "0.9996 s rounds to 1.00 s, not 1000 ms");
        units_seconds(0.9994, b, sizeof b);
        is_str(b, "999 ms", "0.9994 s is 999 ms");
        units_seconds(0.09996, b, sizeof b);
        is_str(b, "100 ms", "0.09996 s is 100 ms, not 99.96");
        units_seconds(0, b, sizeof b);
        is_str(b, "0 s", "zero");
        units_seconds(NAN, b, sizeof b);
        is_str(b, "-", "not a number: -");
        units_per_work(M_LOCK_WAIT_NS, 49424.28, b, sizeof b);
        is_str(b, "49.4 us", "49424 ns per unit of work is 49.4 us");
        units_per_work(M_CONTEXT_SWITCHES, 16000, b, sizeof b);
        is_str(b, "16000", "a count per unit of work without an exponent");
        is_str(units_rate_axis(M_LOCK_WAIT_NS, 1.97e8, &f), "ms/s", "an axis up to 1.97e8 ns/s is in ms/s");
        is_near(f, 1e-6, 1e-18, "its factor 1e-6");
        is_str(units_rate_axis(M_LOCK_WAIT_NS, 172800, &f), "us/s", "up to 172800 ns/s: us/s");
        is_str(units_rate_axis(M_PSI_CPU_SOME, 490000, &f), "ms/s", "PSI up to 490000 us/s: ms/s");
        is_near(f, 1e-3, 1e-15, "its factor 1e-3");
        is_str(units_rate_axis(M_CYCLES, 9.6e9, &f), "/s", "a count: per second");
        ok(f == 1, "its factor 1");
}

/* Runs with tags: the keys and values point at static strings. */
static struct analysis_run *runs_with_tags(const char *const (*tags)[4], size_t n)
{
        struct analysis_run *runs = calloc(n, sizeof *runs);

        for (size_t i = 0; runs && i < n; i++) {
                size_t k = 0;
                runs[i].d.tags = calloc(2, sizeof *runs[i].d.tags);
                for (; runs[i].d.tags && k < 2 && tags[i][2 * k]; k++)
                        runs[i].d.tags[k] = (struct store_kv){ (char *)tags[i][2 * k], (char *)tags[i][2 * k + 1] };
                runs[i].d.ntags = k;
        }
        return runs;
}

static void free_runs(struct analysis_run *runs, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(runs[i].d.tags);
        free(runs);
}

static void test_pools(void)
{
        static const char *const tags[6][4] = {
                { "study", "noisy", "workers", "1" }, { "study", "noisy", "workers", "1" },
                { "study", "noisy", "workers", "1" }, { "observer", "perf", "workers", "1" },
                { "lower_is_better", "s", "workers", "1" }, { "workers", "1" },
        };
        static const char *const agree[2][4] = { { "study", "quiet", "workers", "2" }, { "study", "quiet", "workers", "2" } };
        const char *keys[] = { "workers" };
        size_t idx[6] = { 0, 1, 2, 3, 4, 5 };
        struct analysis_run *runs = runs_with_tags(tags, 6), *same = runs_with_tags(agree, 2);
        struct pools p = { 0 };
        char line[512];
        json_t *j;
        char *s;

        ok(analysis_pools(runs, idx, 6, keys, 1, &p) == 0, "pools of six runs");
        ok(p.ntags == 2 && streq(p.tags[0].key, "study") && streq(p.tags[1].key, "observer"),
           "two tags pooled: study, observer (not workers, the key; not lower_is_better)");
        ok(p.ntags == 2 && p.tags[0].nv == 1 && p.tags[0].v[0].runs == 3 && p.tags[1].v[0].runs == 1,
           "study=noisy on 3 runs, observer=perf on 1");
        groups_pools_line("workers=1", &p, "--group-by", line, sizeof line);
        is_str(line, "workers=1 pools study=noisy (3 runs) and observer=perf (1 run): add --tag or --group-by study",
               "the line");
        j = groups_pools_json(&p);
        s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
        is_str(s, "{\"study\":{\"noisy\":3},\"observer\":{\"perf\":1}}", "the JSON");
        free(s);
        json_decref(j);
        pools_free(&p);
        ok(analysis_pools(same, idx, 2, keys, 1, &p) == 0 && p.ntags == 0, "two runs that agree pool nothing");
        groups_pools_line("workers=2", &p, "--group-by", line, sizeof line);
        is_str(line, "", "and say nothing");
        pools_free(&p);
        ok(analysis_pools(runs, idx, 3, keys, 1, &p) == 0 && p.ntags == 0, "three study=noisy runs pool nothing");
        pools_free(&p);
        free_runs(runs, 6);
        free_runs(same, 2);
}

/* A maximum against a baseline: the largest against the largest, never a
 * t-test; a rate beside it as before. */
static void test_maximum(void)
{
        static struct analysis_run runs[6];
        static const double maxima[6] = { 1145136, 900000, 1000000, 1259307, 1200000, 800000 };
        size_t gi[3] = { 3, 4, 5 }, bi[3] = { 0, 1, 2 };
        struct group g = { .idx = gi, .n = 3 }, b = { .idx = bi, .n = 3 };
        struct group_opts go = GROUP_OPTS_DEFAULT;
        double x[4], w[4];
        const struct metric_change *mx = NULL, *lw = NULL;

        for (size_t i = 0; i < 6; i++) {
                runs[i].dur = 10;
                runs[i].m[M_LOCK_WAIT_MAX_NS] = (struct mstat){ .have = true, .total = maxima[i], .per_s = maxima[i] / 10 };
                runs[i].m[M_LOCK_WAIT_NS] = (struct mstat){ .have = true, .total = 4.9e8 * (i < 3 ? 1 : 2) + 1e6 * (double)i,
                                                            .per_s = 4.9e7 * (i < 3 ? 1 : 2) + 1e5 * (double)i };
        }
        g.changes = calloc(_M_MAX, sizeof *g.changes);
        ok(g.changes && analysis_metric_changes(runs, &g, &b, &go) == 0, "changes against the baseline");
        for (size_t i = 0; i < g.nchanges; i++) {
                if (g.changes[i].metric == M_LOCK_WAIT_MAX_NS)
                        mx = &g.changes[i];
                if (g.changes[i].metric == M_LOCK_WAIT_NS)
                        lw = &g.changes[i];
        }
        ok(mx && mx->rank == CHANGE_MAXIMUM && !mx->has_p, "the maximum: rank maximum, untested");
        ok(mx && mx->max == 1259307 && mx->baseline_max == 1145136, "the largest of each side's maxima");
        is_near(mx ? mx->change_pct : 0, (1259307.0 - 1145136.0) / 1145136.0 * 100, 1e-9, "its change: +9.97%");
        ok(mx && mx->per_s == 0 && mx->baseline_per_s == 0, "no rate");
        ok(lw && lw->rank == CHANGE_SIGNIFICANT && lw->has_p, "the lock wait beside it: a rate, tested");
        ok(g.nchanges && g.changes[0].metric == M_LOCK_WAIT_NS, "the tested rate ranks first");
        analysis_group_metrics(runs, &b, x, w);
        ok(b.metrics[M_LOCK_WAIT_MAX_NS].is_max && b.metrics[M_LOCK_WAIT_MAX_NS].max == 1145136,
           "a group's maximum is its largest run's");
        ok(!b.metrics[M_LOCK_WAIT_NS].is_max && b.metrics[M_LOCK_WAIT_NS].per_s.n == 3, "a rate's group has its summary");
        free(g.changes);
}

int main(void)
{
        test_format();
        test_pools();
        test_maximum();
        return tap_done();
}
