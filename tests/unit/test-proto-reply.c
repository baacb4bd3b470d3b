/* test-proto-reply.c - the control protocol's replies: each encoder gives
 * the bytes the daemon has always sent (the key order is what
 * scalemonctl --format json prints), and each decoder reads a reply line
 * back to the same struct. */
#include "config.h"

#include <errno.h>

#include "macro.h"
#include "proto-reply.h"
#include "tap.h"

#define T1 "2026-12-07T10:00:00.000+00:00"
#define T2 "2026-12-07T10:01:01.500+00:00"

/* o as the daemon sends it (ctl.c: compact, in order), then freed. */
static char *dump(json_t *o)
{
        char *s = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
        json_decref(o);
        return s;
}

/* A reply line for body, parsed back: the object, or NULL. */
static json_t *wire(json_t *body)
{
        char *line = dump(proto_reply_ok(body)), *err = NULL;
        json_t *o = NULL;
        int r = line ? proto_reply_parse(line, &o, &err) : -ENOMEM;

        ok(r == 0 && o && !json_object_get(o, "ok"), "  the reply line parses, \"ok\" taken out");
        free(line);
        free(err);
        return o;
}

static void test_framing(void)
{
        json_t *o = NULL;
        char *err = NULL, *s = dump(proto_reply_error("no run named x"));

        is_str(s, "{\"ok\":false,\"error\":\"no run named x\"}", "an error reply");
        ok(proto_reply_parse(s, &o, &err) == -EPROTO && err && streq(err, "no run named x") && !o,
           "  parses as refused, with its error");
        free(s);
        free(err);
        ok(proto_reply_parse("{\"ok\":false}", &o, &err) == -EPROTO && !err, "a refusal without a reason");
        ok(proto_reply_parse("[1]", &o, &err) == -EINVAL && err, "an array is not a reply");
        free(err);
        ok(proto_reply_parse("{\"ok\":tru", &o, &err) == -EINVAL && err, "nor is broken JSON");
        free(err);
}

static void test_run(void)
{
        struct proto_run_reply start = { .name = "loop-2", .cgroup = "/sys/fs/cgroup/scalemon/loop-2" }, back;
        struct proto_run_reply stop = { .name = "loop-2", .status = "ok", .duration_s = 61.5 };
        char *s, *again;
        json_t *o;

        snprintf(start.start, sizeof start.start, T1);
        s = dump(proto_run_reply_to_json(&start));
        is_str(s, "{\"run\":{\"name\":\"loop-2\",\"start\":\"" T1 "\",\"cgroup\":\"/sys/fs/cgroup/scalemon/loop-2\"}}",
               "run-start's reply");
        o = wire(proto_run_reply_to_json(&start));
        ok(proto_run_reply_from_json(o, &back) == 0 && streq(back.name, "loop-2") && streq(back.start, T1) &&
           back.cgroup && streq(back.cgroup, start.cgroup) && !back.cgroup_why && !back.status && !back.end[0],
           "  decodes to the same run");
        again = dump(proto_run_reply_to_json(&back));
        is_str(again, s, "  and encodes to the same bytes");
        free(s);
        free(again);
        json_decref(o);
        proto_run_reply_clear(&back);

        snprintf(stop.start, sizeof stop.start, T1);
        snprintf(stop.end, sizeof stop.end, T2);
        s = dump(proto_run_reply_to_json(&stop));
        is_str(s, "{\"run\":{\"name\":\"loop-2\",\"status\":\"ok\",\"start\":\"" T1 "\",\"end\":\"" T2
                  "\",\"duration_s\":61.5}}", "run-stop's reply");
        o = wire(proto_run_reply_to_json(&stop));
        ok(proto_run_reply_from_json(o, &back) == 0 && streq(back.status, "ok") && streq(back.end, T2) &&
           back.duration_s == 61.5 && !back.cgroup, "  decodes to the same run");
        again = dump(proto_run_reply_to_json(&back));
        is_str(again, s, "  and encodes to the same bytes");
        free(s);
        free(again);
        json_decref(o);
        proto_run_reply_clear(&back);

        o = json_pack("{s:{s:s}}", "run", "start", T1);
        ok(proto_run_reply_from_json(o, &back) == -EINVAL, "a run without a name is refused");
        json_decref(o);
}

static void test_mark_import_delete(void)
{
        struct proto_mark_reply m = { .run = "r1", .text = "warm-up done" }, mb;
        struct proto_import_reply c = { 2, 1, 0 }, cb = { 0 };
        char *s;
        json_t *o;

        snprintf(m.time, sizeof m.time, T2);
        s = dump(proto_mark_reply_to_json(&m));
        is_str(s, "{\"mark\":{\"run\":\"r1\",\"time\":\"" T2 "\",\"text\":\"warm-up done\"}}", "run-mark's reply");
        free(s);
        o = wire(proto_mark_reply_to_json(&m));
        ok(proto_mark_reply_from_json(o, &mb) == 0 && streq(mb.run, "r1") && streq(mb.time, T2) &&
           streq(mb.text, "warm-up done"), "  decodes to the same mark");
        json_decref(o);
        proto_mark_reply_clear(&mb);

        s = dump(proto_import_reply_to_json(&c));
        is_str(s, "{\"imported\":2,\"skipped\":1,\"renamed\":0}", "import's reply");
        free(s);
        o = wire(proto_import_reply_to_json(&c));
        ok(proto_import_reply_from_json(o, &cb) == 0 && cb.imported == 2 && cb.skipped == 1 && cb.renamed == 0,
           "  decodes to the same counts");
        json_decref(o);

        s = dump(proto_delete_reply_to_json("old"));
        is_str(s, "{\"deleted\":\"old\"}", "run-delete's reply");
        free(s);
}

static void test_reload(void)
{
        struct proto_not_applied na = { "database", "/new.db", "/var/lib/scalemon/scalemon.db",
                                        "the database is opened once, at start: restart scalemond" };
        struct proto_reload_reply r = { .status = "sampling 12 metrics", .not_applied = &na, .nnot_applied = 1 }, b;
        char *s = dump(proto_reload_reply_to_json(&r)), *again;
        json_t *o;

        is_str(s, "{\"status\":\"sampling 12 metrics\",\"not_applied\":[{\"key\":\"database\",\"value\":\"/new.db\","
                  "\"running\":\"/var/lib/scalemon/scalemon.db\",\"why\":\"the database is opened once, at start: "
                  "restart scalemond\"}]}", "reload's reply");
        o = wire(proto_reload_reply_to_json(&r));
        ok(proto_reload_reply_from_json(o, &b) == 0 && b.nnot_applied == 1 && streq(b.not_applied[0].running, na.running),
           "  decodes to the same keys");
        again = dump(proto_reload_reply_to_json(&b));
        is_str(again, s, "  and encodes to the same bytes");
        free(s);
        free(again);
        json_decref(o);
        proto_reload_reply_clear(&b);
}

static void test_status(void)
{
        struct proto_open_run runs[] = { { "r1", T1 } };
        struct proto_total tot[] = { { "context_switches", 1234.0 }, { "lock_wait_ns", 2.5e9 } };
        struct proto_status_reply st = {
                .pid = 4242, .version = "0.9", .status = "sampling", .interval_s = 1, .cpus_online = 2, .cpus = 4,
                .database = "/var/lib/scalemon/scalemon.db", .open_runs = runs, .nopen_runs = 1,
                .sampled_at = T2, .sampled_at_ns = 1765101661500000000LL, .totals = tot, .ntotals = 2,
                .has_memory = true, .memory = { 1000, 2, 300 }, .has_retention = true,
                .retention = { 5, 6, 700, 80, 9000 }, .access = "root and group scalemon",
        }, b;
        char *s = dump(proto_status_reply_to_json(&st)), *again;
        json_t *o;

        is_str(s, "{\"pid\":4242,\"version\":\"0.9\",\"status\":\"sampling\",\"interval_s\":1.0,\"cpus_online\":2,"
                  "\"cpus\":4,\"database\":\"/var/lib/scalemon/scalemon.db\",\"open_runs\":[{\"name\":\"r1\","
                  "\"start\":\"" T1 "\"}],\"sampled_at\":\"" T2 "\",\"sampled_at_ns\":1765101661500000000,"
                  "\"totals\":{\"context_switches\":1234.0,\"lock_wait_ns\":2500000000.0},\"memory\":{\"sqlite_bytes\":"
                  "1000,\"held_intervals\":2,\"held_bytes\":300},\"retention\":{\"merged_intervals\":5,"
                  "\"deleted_intervals\":6,\"step_max_us\":700,\"tick_late_max_us\":80,\"db_bytes\":9000},"
                  "\"access\":\"root and group scalemon\"}", "status's reply");
        o = wire(proto_status_reply_to_json(&st));
        ok(proto_status_reply_from_json(o, &b) == 0 && b.pid == 4242 && b.nopen_runs == 1 &&
           streq(b.open_runs[0].name, "r1") && b.ntotals == 2 && b.has_memory && b.memory.held_bytes == 300 &&
           b.has_retention && b.retention.db_bytes == 9000 && streq(b.access, st.access),
           "  decodes to the same status");
        ok(proto_status_total(&b, "lock_wait_ns") && proto_status_total(&b, "lock_wait_ns")->value == 2.5e9 &&
           !proto_status_total(&b, "lock_wait_lost"), "  its totals by name");
        again = dump(proto_status_reply_to_json(&b));
        is_str(again, s, "  and encodes to the same bytes");
        free(s);
        free(again);
        json_decref(o);
        proto_status_reply_clear(&b);
}

static void test_totals(void)
{
        int64_t v0[] = { 10, 20 }, v1[] = { 7 };
        int cpu_node[] = { 0, 0 }, nodes[] = { 0 };
        struct proto_totals_metric ms[] = {
                { "context_switches", SCOPE_CPU, "count", 1, v0, 2 },
                { "no_such_metric", SCOPE_SYSTEM, "count", 1, v1, 1 },
        };
        struct proto_totals_unavailable us[] = { { "llc_misses", "not supported by this CPU" } };
        struct proto_totals t = { .started_ns = 5, .sampled_at_ns = 6, .interval_s = 1, .ticks = 7,
                                  .tick_late_max_us = 8, .held_intervals = 1, .ncpus = 2, .cpu_node = cpu_node,
                                  .nodes = nodes, .nnodes = 1, .metrics = ms, .nmetrics = 2, .unavailable = us,
                                  .nunavailable = 1 }, b = { 0 };
        char *s = dump(proto_reply_ok(proto_totals_to_json(&t))), *err = NULL;

        ok(s && strstr(s, "{\"started_ns\":5,\"sampled_at_ns\":6,\"interval_s\":1.0,\"ticks\":7,\"tick_late_max_us\":8,"
                          "\"held_intervals\":1,\"cpus\":2,\"cpu_node\":[0,0],\"nodes\":[0],\"metrics\":[{\"name\":"
                          "\"context_switches\",\"scope\":\"cpu\",\"unit\":\"count\",\"scale\":1.0,\"values\":[10,20]}") == s,
           "totals' reply");
        ok(proto_totals_decode(s, &b, &err) == 0 && b.ncpus == 2 && b.nmetrics == 1 && b.metrics[0].nvalues == 2 &&
           b.metrics[0].values[1] == 20 && b.nunavailable == 1 && streq(b.unavailable[0].why, us[0].why) &&
           b.ticks == 7, "  decodes, the metric the catalogue does not know left out");
        free(s);
        free(err);
        proto_totals_clear(&b);
}

int main(void)
{
        test_framing();
        test_run();
        test_mark_import_delete();
        test_reload();
        test_status();
        test_totals();
        return tap_done();
}
