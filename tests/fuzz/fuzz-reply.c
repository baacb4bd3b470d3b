/* fuzz-reply.c - libFuzzer target: the replies scalemonctl reads from the
 * control socket (lib/proto-reply.c), from scalemond or whatever answers
 * there.  The first byte chooses the decoder: status, run, mark, reload
 * or import.  A line is refused, or decoded into a struct whose encoding
 * decodes again to the same encoding. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto-reply.h"

/* Encode, decode that and encode again: the two encodings are equal. */
#define ROUND_TRIP(type, v, enc, dec, clear)                                            \
        do {                                                                            \
                json_t *a = enc(&v), *b;                                                \
                type again;                                                             \
                if (!a)                                                                 \
                        break;                                                          \
                if (dec(a, &again) == 0) {                                              \
                        b = enc(&again);                                                \
                        assert(!b || json_equal(a, b));                                 \
                        json_decref(b);                                                 \
                        clear(&again);                                                  \
                }                                                                       \
                json_decref(a);                                                         \
        } while (0)

static void import_clear(struct proto_import_reply *c)
{
        (void)c;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *s, *err = NULL;
        json_t *o = NULL;
        int r;

        if (size < 1)
                return 0;
        s = strndup((const char *)data + 1, size - 1);
        if (!s)
                return 0;
        r = proto_reply_parse(s, &o, &err);
        free(s);
        free(err);
        if (r < 0) {
                assert(r == -EINVAL || r == -EPROTO || r == -ENOMEM);
                return 0;
        }
        switch (data[0] % 5) {
        case 0: {
                struct proto_status_reply v;
                if (proto_status_reply_from_json(o, &v) == 0) {
                        ROUND_TRIP(struct proto_status_reply, v, proto_status_reply_to_json,
                                   proto_status_reply_from_json, proto_status_reply_clear);
                        (void)proto_status_total(&v, "lock_wait_ns");
                        proto_status_reply_clear(&v);
                }
                break;
        }
        case 1: {
                struct proto_run_reply v;
                if (proto_run_reply_from_json(o, &v) == 0) {
                        ROUND_TRIP(struct proto_run_reply, v, proto_run_reply_to_json, proto_run_reply_from_json,
                                   proto_run_reply_clear);
                        proto_run_reply_clear(&v);
                }
                break;
        }
        case 2: {
                struct proto_mark_reply v;
                if (proto_mark_reply_from_json(o, &v) == 0) {
                        ROUND_TRIP(struct proto_mark_reply, v, proto_mark_reply_to_json, proto_mark_reply_from_json,
                                   proto_mark_reply_clear);
                        proto_mark_reply_clear(&v);
                }
                break;
        }
        case 3: {
                struct proto_reload_reply v;
                if (proto_reload_reply_from_json(o, &v) == 0) {
                        ROUND_TRIP(struct proto_reload_reply, v, proto_reload_reply_to_json,
                                   proto_reload_reply_from_json, proto_reload_reply_clear);
                        proto_reload_reply_clear(&v);
                }
                break;
        }
        default: {
                struct proto_import_reply v;
                if (proto_import_reply_from_json(o, &v) == 0)
                        ROUND_TRIP(struct proto_import_reply, v, proto_import_reply_to_json,
                                   proto_import_reply_from_json, import_clear);
                break;
        }
        }
        json_decref(o);
        return 0;
}
