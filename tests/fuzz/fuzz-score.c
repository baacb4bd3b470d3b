/* fuzz-score.c - libFuzzer target: what a benchmark printed, read by the
 * --score-from parsers (client/score.c).  The first byte chooses the
 * parser (stress-ng table, stress-ng YAML, perf bench, fio JSON, a JSON
 * path), the rest is the text.  Whatever the text, a parser either finds
 * scores, each with a valid key and a finite value, or says why not. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"
#include "score.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct score_list l = { .n = 0 };
        char *text, *err = NULL;
        const char *why;
        int r;

        if (size < 1)
                return 0;
        text = malloc(size);
        if (!text)
                return 0;
        memcpy(text, data + 1, size - 1);
        text[size - 1] = 0;     /* the parsers of lines read C strings; JSON is given its length */
        switch (data[0] % 5) {
        case 0:
                r = score_parse_stress_ng(text, &l, &err);
                break;
        case 1:
                r = score_parse_stress_ng_yaml(text, &l, &err);
                break;
        case 2:
                r = score_parse_perf_bench(text, &l, &err);
                break;
        case 3:
                r = score_parse_fio(text, size - 1, &l, &err);
                break;
        default:
                r = score_parse_json_path(text, size - 1, "jobs.0.read.iops", &l, &err);
                break;
        }
        if (r == 0)
                assert(l.n >= 1);
        else if (r != -ENOMEM)
                assert(err && *err);
        for (size_t i = 0; i < l.n; i++) {
                assert(proto_valid_key(l.v[i].key, &why));
                assert(isfinite(l.v[i].value));
        }
        free(err);
        free(text);
        return 0;
}
