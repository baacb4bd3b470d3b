/* test-proto.c - control requests: what is accepted, what is refused and
 * with which message, and that a built request parses back the same. */
#include "config.h"

#include <errno.h>

#include "macro.h"
#include "proto.h"
#include "requests.h"
#include "tap.h"

static void good(const char *line, enum proto_cmd cmd, const char *name)
{
        struct proto_request req;
        char *err = NULL;
        int r = proto_parse_request(line, strlen(line), &req, &err);
        ok(r == 0 && req.cmd == cmd, "accepted: %s", line);
        if (r < 0)
                printf("#   %s\n", err);
        free(err);
        proto_request_free(&req);
        (void)name;
}

static void bad(const char *line, const char *want)
{
        struct proto_request req;
        char *err = NULL;
        int r = proto_parse_request(line, strlen(line), &req, &err);
        ok(r == -EINVAL && err && strstr(err, want), "refused: %s", line);
        if (!(r == -EINVAL && err && strstr(err, want)))
                printf("#   got r=%d '%s', want '%s'\n", r, err ? err : "(null)", want);
        free(err);
        ok(req.name == NULL && req.tags == NULL && req.scores == NULL, "  and the request is left empty");
}

int main(void)
{
        struct proto_request req, back;
        char *err = NULL, *line;
        json_t *j;

        good("{\"cmd\":\"status\"}", CMD_STATUS, NULL);
        good("{\"cmd\":\"run-start\",\"name\":\"run42\",\"tags\":{\"ways\":\"80\",\"config\":\"2\"}}", CMD_RUN_START, "run42");
        good("{\"cmd\":\"run-stop\"}", CMD_RUN_STOP, NULL);
        good("{\"cmd\":\"run-stop\",\"name\":\"r\",\"scores\":{\"jpm\":43210.5},\"exit_status\":0,"
             "\"wall_s\":1,\"user_s\":0.5,\"sys_s\":0.25}", CMD_RUN_STOP, "r");
        good("{\"cmd\":\"run-mark\",\"text\":\"warm-up done\"}", CMD_RUN_MARK, NULL);
        good("  {\"cmd\":\"reload\"}  ", CMD_RELOAD, NULL);
        good("{\"cmd\":\"import\"}", CMD_IMPORT, NULL);
        good("{\"cmd\":\"subscribe\",\"metrics\":[\"context_switches\",\"cpu_user\"],\"per\":\"node\"}", CMD_SUBSCRIBE, NULL);
        good("{\"cmd\":\"subscribe\",\"metrics\":[\"lock_wait_ns\"]}", CMD_SUBSCRIBE, NULL);
        ok(!proto_cmd_changes_state(CMD_SUBSCRIBE) && proto_cmd_is_stream(CMD_SUBSCRIBE) &&
           !proto_cmd_is_stream(CMD_STATUS), "subscribe: anyone may, and it makes a stream");
        good("{\"cmd\":\"totals\"}", CMD_TOTALS, NULL);
        bad("{\"cmd\":\"totals\",\"name\":\"x\"}", "'totals' does not take 'name'");
        ok(!proto_cmd_changes_state(CMD_TOTALS), "totals changes nothing: any peer that may connect may ask");

        bad("", "not JSON");
        bad("{\"cmd\":\"status\"", "not JSON");
        bad("\"status\"", "not JSON");
        bad("[1]", "a request is a JSON object");
        bad("{\"name\":\"x\"}", "a request needs 'cmd'");
        bad("{\"cmd\":7}", "a request needs 'cmd'");
        bad("{\"cmd\":\"launch\"}", "unknown cmd 'launch'");
        bad("{\"cmd\":\"run-start\"}", "'run-start' needs a 'name'");
        bad("{\"cmd\":\"run-start\",\"name\":\"\"}", "1 to 128 characters");
        bad("{\"cmd\":\"run-start\",\"name\":\"a b\"}", "only letters, digits");
        bad("{\"cmd\":\"run-start\",\"name\":\"-x\"}", "does not start with '-'");
        bad("{\"cmd\":\"run-start\",\"name\":\"x\",\"tags\":[]}", "'tags' must be an object");
        bad("{\"cmd\":\"run-start\",\"name\":\"x\",\"tags\":{\"w\":80}}", "tag 'w' must be a string");
        bad("{\"cmd\":\"run-start\",\"name\":\"x\",\"tags\":{\"1w\":\"8\"}}", "a key starts with a letter");
        bad("{\"cmd\":\"run-start\",\"name\":\"x\",\"tags\":{\"w\":\"a\\nb\"}}", "control characters");
        bad("{\"cmd\":\"run-start\",\"name\":\"x\",\"scores\":{}}", "'run-start' does not take 'scores'");
        bad("{\"cmd\":\"run-stop\",\"scores\":{\"s\":\"1\"}}", "score 's' must be a finite number");
        bad("{\"cmd\":\"run-stop\",\"exit_status\":256}", "'exit_status' must be a whole number from 0 to 255");
        bad("{\"cmd\":\"run-stop\",\"exit_status\":1.5}", "'exit_status' must be a whole number");
        bad("{\"cmd\":\"run-stop\",\"wall_s\":1}", "come together");
        bad("{\"cmd\":\"run-stop\",\"wall_s\":-1,\"user_s\":0,\"sys_s\":0}", "'wall_s' must be a number of seconds");
        bad("{\"cmd\":\"run-mark\"}", "'run-mark' needs a 'text'");
        bad("{\"cmd\":\"run-mark\",\"text\":\"\"}", "'text'");
        bad("{\"cmd\":\"status\",\"name\":\"x\"}", "'status' does not take 'name'");
        bad("{\"cmd\":\"subscribe\"}", "'subscribe' needs 'metrics'");
        bad("{\"cmd\":\"subscribe\",\"metrics\":[]}", "an array of 1 to 64 metric names");
        bad("{\"cmd\":\"subscribe\",\"metrics\":[7]}", "'metrics' holds metric names");
        bad("{\"cmd\":\"subscribe\",\"metrics\":[\"a b\"]}", "'metrics' holds metric names");
        bad("{\"cmd\":\"subscribe\",\"metrics\":[\"x\"],\"per\":\"socket\"}", "'per' must be");
        bad("{\"cmd\":\"subscribe\",\"metrics\":[\"x\"],\"name\":\"r\"}", "'subscribe' does not take 'name'");
        bad("{\"cmd\":\"status\",\"cmd\":\"reload\"}", "not JSON");
        {
                char big[PROTO_MAX_LINE + 10];
                memset(big, ' ', sizeof big);
                memcpy(big, "{\"cmd\":\"status\"}", 16);
                ok(proto_parse_request(big, sizeof big, &req, &err) == -EINVAL && strstr(err, "longer than"),
                   "a request over the size limit is refused");
                free(err);
        }
        {
                char nul[] = "{\"cmd\":\"status\"}\0x";
                ok(proto_parse_request(nul, sizeof nul - 1, &req, &err) == -EINVAL && strstr(err, "NUL"),
                   "NUL bytes refused");
                free(err);
        }

        /* a built request parses back to the same */
        line = "{\"cmd\":\"run-stop\",\"name\":\"r1\",\"scores\":{\"a\":1.5,\"b\":-2},\"exit_status\":3,"
               "\"wall_s\":10.25,\"user_s\":1,\"sys_s\":9}";
        ok(proto_parse_request(line, strlen(line), &req, &err) == 0, "parse for the round trip");
        j = proto_request_to_json(&req);
        line = json_dumps(j, JSON_COMPACT);
        ok(proto_parse_request(line, strlen(line), &back, &err) == 0, "built request parses");
        ok(back.cmd == req.cmd && streq(back.name, req.name) && back.nscores == 2 &&
           back.scores[1].value == req.scores[1].value && back.exit_status == 3 && back.has_times &&
           back.wall_s == 10.25, "and means the same");
        free(line);
        json_decref(j);
        proto_request_free(&req);
        proto_request_free(&back);

        /* run-start's if_exists */
        bad("{\"cmd\":\"run-start\",\"name\":\"r\",\"if_exists\":\"overwrite\"}",
            "'if_exists' must be \"refuse\", \"number\" or \"replace\"");
        bad("{\"cmd\":\"run-start\",\"name\":\"r\",\"if_exists\":1}", "'if_exists' must be");
        bad("{\"cmd\":\"run-stop\",\"if_exists\":\"number\"}", "'run-stop' does not take 'if_exists'");
        for (int k = 0; k < 3; k++) {
                static const char *const how[] = { "refuse", "number", "replace" };
                char buf[128];
                snprintf(buf, sizeof buf, "{\"cmd\":\"run-start\",\"name\":\"loop\",\"if_exists\":\"%s\"}", how[k]);
                ok(proto_parse_request(buf, strlen(buf), &req, &err) == 0 && (int)req.if_exists == k,
                   "if_exists %s parsed", how[k]);
                j = proto_request_to_json(&req);
                line = json_dumps(j, JSON_COMPACT);
                ok(proto_parse_request(line, strlen(line), &back, &err) == 0 && back.if_exists == req.if_exists,
                   "and built back the same: %s", line);
                free(line);
                json_decref(j);
                proto_request_free(&req);
                proto_request_free(&back);
        }

        {
                const char *missing = NULL;
                ok(requests_check(&missing) == 0, "the daemon has a handler for every command");
                if (missing)
                        printf("#   none for '%s'\n", missing);
        }
        return tap_done();
}
