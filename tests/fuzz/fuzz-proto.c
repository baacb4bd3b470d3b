/* fuzz-proto.c - libFuzzer target: one control request line.  Whatever
 * arrives, it is accepted with every field in shape, or refused with a
 * message and an empty request; an accepted one survives a round trip. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct proto_request req, back;
        char *err = NULL, *line;
        const char *why;
        json_t *j;
        int r;

        r = proto_parse_request((const char *)data, size, &req, &err);
        if (r < 0) {
                assert(err || r == -ENOMEM);
                assert(!req.name && !req.tags && !req.scores && !req.text);
                free(err);
                return 0;
        }
        assert(req.cmd < _CMD_MAX);
        assert(!req.name || proto_valid_name(req.name, &why));
        for (size_t i = 0; i < req.ntags; i++)
                assert(proto_valid_key(req.tags[i].key, &why) && proto_valid_value(req.tags[i].value, &why));
        assert(req.ntags <= PROTO_MAX_TAGS && req.nscores <= PROTO_MAX_SCORES);
        assert(!req.has_exit_status || (req.exit_status >= 0 && req.exit_status <= 255));
        j = proto_request_to_json(&req);
        line = json_dumps(j, JSON_COMPACT);
        assert(line);
        r = proto_parse_request(line, strlen(line), &back, &err);
        assert(r == 0 && back.cmd == req.cmd && back.ntags == req.ntags && back.nscores == req.nscores);
        free(line);
        json_decref(j);
        proto_request_free(&back);
        proto_request_free(&req);
        return 0;
}
