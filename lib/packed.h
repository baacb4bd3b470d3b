/* packed.h - one metric's per-CPU values in one tick, packed into a blob.
 *
 * The format (schema/0004-packed.sql says the same): a stream of unsigned
 * LEB128 tokens for CPUs 0, 1, 2, ...
 *
 *   u >= 2        the next CPU's value is u - 2
 *   u == 1        the next CPU was not counted (NULL)
 *   u == 0, k     the next k + 2 CPUs are 0 (a run of zeros)
 *
 * CPUs past the end of the stream are 0.  A token is at most 10 bytes.
 * The encoder writes runs of two zeros or more as a run, a single zero as
 * the token 2, and no trailing zeros, so the empty blob means all zero.
 */
#ifndef SCALEMON_PACKED_H
#define SCALEMON_PACKED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The decoder refuses streams that describe more CPUs than this. */
#define PACKED_MAX_CPUS (1 << 20)

/* Bytes that packed_encode() needs at most for ncpus values. */
size_t packed_encode_bound(int ncpus);

/* Pack vals[0..ncpus) (nulls[c]: CPU c not counted; nulls may be NULL)
 * into buf, which holds len bytes.  *ret_len: bytes written.  Errors:
 * -ERANGE (a negative value), -ENOBUFS (len too small), -EINVAL. */
int packed_encode(const int64_t *vals, const bool *nulls, int ncpus, uint8_t *buf, size_t len, size_t *ret_len);

/* Walks a blob's non-zero and NULL CPUs, in CPU order. */
struct packed_iter {
        const uint8_t *p, *end;
        int cpu;                        /* the CPU of the next token */
};
void packed_iter_init(struct packed_iter *it, const void *blob, size_t len);
/* The next CPU whose value is not 0: 1 with *ret_cpu, *ret_value and
 * *ret_null (not counted, *ret_value 0) set; 0 at the end; -EBADMSG if
 * the blob is truncated or corrupt (a token too long, a value past
 * INT64_MAX, more than PACKED_MAX_CPUS CPUs). */
int packed_next(struct packed_iter *it, int *ret_cpu, int64_t *ret_value, bool *ret_null);

/* Unpack into vals[0..ncpus) and nulls[0..ncpus) (nulls may be NULL);
 * CPUs the blob does not reach are 0.  -EBADMSG as above, -ERANGE if the
 * blob has a non-zero value or a NULL for a CPU >= ncpus.  On failure the
 * arrays hold garbage. */
int packed_decode(const void *blob, size_t len, int64_t *vals, bool *nulls, int ncpus);

/* Sum of the non-NULL values; *ret_nulls: how many CPUs were NULL. */
int packed_sum(const void *blob, size_t len, int64_t *ret_sum, int *ret_nulls);

#endif
