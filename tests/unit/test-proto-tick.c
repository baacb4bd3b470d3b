/* test-proto-tick.c - a subscription's tick line (lib/proto-tick.c): the
 * bytes the encoder writes for a small tick, written out by hand from
 * the documented format; a round trip of a tick with integer, real, null
 * and system values and runs with and without a mark; lines that are not
 * ticks. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "proto-tick.h"
#include "tap.h"

#define T0 1700000000123000000LL        /* 2023-11-14T22:13:20.123Z */

static void test_bytes(void)
{
        double v[2] = { 1000, 4000000000.0 };
        bool nul[2] = { false, true };
        struct proto_tick_metric m = { .name = "context_switches", .integer = true, .n = 2, .v = v, .null = nul };
        struct proto_tick_run r = { .name = "r1", .start_ns = T0 - 2000000000LL, .elapsed_s = 3.0, .mark = "warm",
                                    .mark_ns = T0 };
        struct proto_tick t = { .start_ns = T0, .end_ns = T0 + 1000000000LL, .metrics = &m, .nmetrics = 1,
                                .runs = &r, .nruns = 1 };
        size_t len = 0;
        char *line = proto_tick_line(&t, &len);

        is_str(line,
               "{\"tick\":{\"start\":\"2023-11-14T22:13:20.123Z\",\"end\":\"2023-11-14T22:13:21.123Z\","
               "\"start_ns\":1700000000123000000,\"end_ns\":1700000001123000000,\"interval_s\":1.0},"
               "\"values\":{\"context_switches\":[1000,null]},"
               "\"runs\":[{\"name\":\"r1\",\"start\":\"2023-11-14T22:13:18.123Z\",\"elapsed_s\":3.0,"
               "\"mark\":{\"text\":\"warm\",\"time\":\"2023-11-14T22:13:20.123Z\"}}]}",
               "encode: the documented line, byte for byte");
        is_int(len, line ? strlen(line) : 0, "encode: its length");
        free(line);
}

static void test_round_trip(void)
{
        double cs[4] = { 1000, 2000, 0, 4000000000.0 }, us[2] = { 0.0123456789, 1.5 }, psi[1] = { 12.5 },
               none[1] = { 0 };
        bool csn[4] = { false, false, true, false }, usn[2] = { false, false }, psin[1] = { false }, nonen[1] = { true };
        struct proto_tick_metric ms[4] = {
                { .name = "context_switches", .integer = true, .n = 4, .v = cs, .null = csn },
                { .name = "cpu_user", .n = 2, .v = us, .null = usn },
                { .name = "psi_cpu_some_us", .scalar = true, .n = 1, .v = psi, .null = psin },
                { .name = "kvm_exits", .scalar = true, .integer = true, .n = 1, .v = none, .null = nonen },
        };
        struct proto_tick_run rs[2] = {
                { .name = "a \"quoted\" run \xc3\xa9", .start_ns = T0 - 5000000000LL, .elapsed_s = 6.25,
                  .mark = "phase 2", .mark_ns = T0 - 1000000000LL },
                { .name = "b", .start_ns = T0, .elapsed_s = 1.0 },
        };
        struct proto_tick t = { .start_ns = T0, .end_ns = T0 + 250000000LL, .metrics = ms, .nmetrics = 4,
                                .runs = rs, .nruns = 2 }, d;
        size_t len = 0;
        char *line = proto_tick_line(&t, &len), *err = NULL;
        int same = 0;

        is_int(proto_tick_decode(line, len, &d, &err), 0, "round trip: decoded");
        free(line);
        is_int(d.start_ns, T0, "round trip: start_ns");
        is_int(d.end_ns, T0 + 250000000LL, "round trip: end_ns");
        is_near(d.interval_s, 0.25, 0, "round trip: interval_s from the tick's bounds");
        is_int(d.nmetrics, 4, "round trip: four metrics");
        for (size_t i = 0; i < d.nmetrics && i < 4; i++) {
                bool eq = strcmp(d.metrics[i].name, ms[i].name) == 0 && d.metrics[i].scalar == ms[i].scalar &&
                          d.metrics[i].n == ms[i].n;
                for (size_t l = 0; eq && l < ms[i].n; l++)
                        eq = d.metrics[i].null[l] == ms[i].null[l] &&
                             (ms[i].null[l] ? d.metrics[i].v[l] == 0
                                            : fabs(d.metrics[i].v[l] - ms[i].v[l]) <= 1e-9 * fabs(ms[i].v[l]));
                same += eq;
        }
        is_int(same, 4, "round trip: names, shapes, nulls and values (10 significant digits)");
        is_int(d.nruns, 2, "round trip: two runs");
        if (d.nruns == 2) {
                is_str(d.runs[0].name, rs[0].name, "round trip: a name with quotes and UTF-8");
                is_int(d.runs[0].start_ns, rs[0].start_ns, "round trip: its start, to the millisecond");
                is_near(d.runs[0].elapsed_s, 6.25, 0, "round trip: its elapsed time");
                is_str(d.runs[0].mark, "phase 2", "round trip: its mark");
                is_int(d.runs[0].mark_ns, rs[0].mark_ns, "round trip: the mark's time");
                ok(d.runs[1].mark == NULL && d.runs[1].start_ns == T0, "round trip: a run without a mark");
        }
        proto_tick_clear(&d);
        free(err);
}

static void test_not_ticks(void)
{
        static const char *const bad[] = { "[1]", "not json", "{\"tick\":{}}", "{\"tick\":1}",
                                           "{\"tick\":{\"start_ns\":1,\"end_ns\":2},\"values\":[]}",
                                           "{\"tick\":{\"start_ns\":1,\"end_ns\":2},\"runs\":[1]}" };
        const char *reply = "{\"ok\":true,\"subscribed\":{}}";
        struct proto_tick d;
        char *err = NULL;
        int refused = 0;

        is_int(proto_tick_decode(reply, strlen(reply), &d, &err), -ENOMSG, "not a tick: a reply is left to the caller");
        ok(err == NULL && d.nmetrics == 0, "not a tick: no error, nothing decoded");
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
                err = NULL;
                if (proto_tick_decode(bad[i], strlen(bad[i]), &d, &err) == -EPROTO && err &&
                    strstr(err, "not a tick") && d.metrics == NULL && d.runs == NULL)
                        refused++;
                else
                        printf("# accepted: %s\n", bad[i]);
                free(err);
        }
        is_int(refused, sizeof bad / sizeof *bad, "not a tick: each malformed line refused with a reason");
}

int main(void)
{
        test_bytes();
        test_round_trip();
        test_not_ticks();
        return tap_done();
}
