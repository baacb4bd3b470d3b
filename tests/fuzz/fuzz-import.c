/* fuzz-import.c - libFuzzer target: an export document.  Validation never
 * crashes, and what it accepts has the shape import relies on. */
#include "config.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "exchange.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        json_error_t jerr;
        json_t *doc = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &jerr);
        char *err = NULL;
        int r;

        if (!doc)
                return 0;
        r = exchange_validate(doc, &err);
        if (r == 0) {
                json_t *runs = json_object_get(doc, "runs"), *run;
                size_t i;
                assert(json_is_array(runs) && json_is_array(json_object_get(doc, "hosts")));
                json_array_foreach(runs, i, run)
                        assert(json_is_string(json_object_get(run, "name")) &&
                               json_is_string(json_object_get(run, "status")));
        } else
                assert(err);
        free(err);
        json_decref(doc);
        return 0;
}
