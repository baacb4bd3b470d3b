/* fuzz-exporter.c - libFuzzer target: what the exporter reads from
 * outside.  The first byte chooses: an Accept header for
 * expo_negotiate() (a scraper's), or a totals reply for
 * proto_totals_decode() (scalemond's, or whatever answers on its socket).
 * A reply is decoded or refused with a message; a decoded one makes an
 * exposition in both formats that ends as the format says. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collect.h"
#include "expo.h"
#include "source.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct proto_totals t = { 0 };
        char *s, *err = NULL, *text;
        size_t len;
        int r;

        if (size < 1)
                return 0;
        s = strndup((const char *)data + 1, size - 1);
        if (!s)
                return 0;
        if (data[0] & 1) {
                enum expo_format f = expo_negotiate(s);
                assert(f == EXPO_PROMETHEUS || f == EXPO_OPENMETRICS);
                free(s);
                return 0;
        }
        r = proto_totals_decode(s, &t, &err);
        free(s);
        if (r < 0) {
                assert(err || r == -ENOMEM);
                free(err);
                return 0;
        }
        for (int f = EXPO_PROMETHEUS; f <= EXPO_OPENMETRICS; f++) {
                for (int per = COLLECT_PER_CPU; per <= COLLECT_PER_NODE; per++) {
                        struct collect_input in = { .totals = &t, .per = per };
                        r = collect_exposition(&in, f, &text, &len, NULL);
                        assert(r == 0 || r == -ENOMEM);
                        if (r < 0)
                                continue;
                        assert(strlen(text) == len && len > 0 && text[len - 1] == '\n');
                        assert(f != EXPO_OPENMETRICS || (len >= 6 && strcmp(text + len - 6, "# EOF\n") == 0));
                        free(text);
                }
        }
        proto_totals_clear(&t);
        return 0;
}
