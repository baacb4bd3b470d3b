/* fuzz-packed.c - libFuzzer target: a cpu_sample.vals blob, as a corrupt
 * or hostile database could hold it.  Decoding never crashes nor reads
 * past the blob; what decodes encodes back to a blob that decodes to the
 * same values. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "packed.h"

#define NCPUS 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static int64_t vals[NCPUS], back[NCPUS];
        static bool nulls[NCPUS], bnulls[NCPUS];
        static uint8_t buf[NCPUS * 10];
        size_t len;
        int64_t sum;
        int r, nnull;

        r = packed_decode(data, size, vals, nulls, NCPUS);
        assert(r == 0 || r == -EBADMSG || r == -ERANGE);
        /* decode stops at the first error, sum reads to the end */
        if (packed_sum(data, size, &sum, &nnull) == 0)
                assert(r != -EBADMSG);
        else
                assert(r != 0);
        if (r < 0)
                return 0;
        r = packed_encode(vals, nulls, NCPUS, buf, sizeof buf, &len);
        assert(r == 0 && len <= size);  /* canonical: never longer */
        r = packed_decode(buf, len, back, bnulls, NCPUS);
        assert(r == 0);
        assert(memcmp(vals, back, sizeof vals) == 0 && memcmp(nulls, bnulls, sizeof nulls) == 0);
        return 0;
}
