/* test-packed.c - the per-CPU blob format of cpu_sample (lib/packed.c):
 * round trips, runs of zeros, NULLs, large values, the bytes the format
 * promises, and truncated or corrupt input refused; then the SQL
 * functions over it on an in-memory database. */
#include "config.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>

#include "packed-sql.h"
#include "packed.h"
#include "tap.h"

static int roundtrip(const int64_t *vals, const bool *nulls, int n, size_t *ret_len)
{
        uint8_t *buf = malloc(packed_encode_bound(n) + 1);
        int64_t *back = malloc((size_t)(n + 1) * sizeof *back);
        bool *bnull = malloc((size_t)(n + 1) * sizeof *bnull);
        size_t len = 0;
        int r, bad = 0;

        r = packed_encode(vals, nulls, n, buf, packed_encode_bound(n), &len);
        if (r == 0)
                r = packed_decode(buf, len, back, bnull, n);
        for (int c = 0; r == 0 && c < n; c++)
                if (bnull[c] != (nulls && nulls[c]) || (!bnull[c] && back[c] != vals[c]))
                        bad++;
        free(buf);
        free(back);
        free(bnull);
        if (ret_len)
                *ret_len = len;
        return r < 0 ? r : bad;
}

static int decode_bytes(const uint8_t *b, size_t len, int n)
{
        int64_t vals[64];
        bool nulls[64];
        return packed_decode(b, len, vals, nulls, n);
}

static void test_format(void)
{
        int64_t v[8] = { 5, 0, 0, 0, 0, 127, 128, 0 };
        bool nl[8] = { false, false, false, false, false, false, false, true };
        uint8_t buf[80];
        size_t len;
        /* 5 -> 7; 4 zeros -> 0, 2; 127 -> 129 = 0x81 0x01; 128 -> 130 = 0x82 0x01; NULL -> 1 */
        static const uint8_t want[] = { 7, 0, 2, 0x81, 0x01, 0x82, 0x01, 1 };

        ok(packed_encode(v, nl, 8, buf, sizeof buf, &len) == 0, "encode");
        ok(len == sizeof want && memcmp(buf, want, len) == 0, "bytes as the format says (%zu bytes)", len);

        int64_t z[5] = { 0, 0, 0, 0, 0 };
        ok(packed_encode(z, NULL, 5, buf, sizeof buf, &len) == 0 && len == 0, "all zero: the empty blob");
        int64_t one[3] = { 0, 3, 0 };
        static const uint8_t want1[] = { 2, 5 };
        ok(packed_encode(one, NULL, 3, buf, sizeof buf, &len) == 0 && len == 2 && memcmp(buf, want1, 2) == 0,
           "a single zero is the token 2, trailing zeros are left out");
        int64_t neg[2] = { 1, -1 };
        is_int(packed_encode(neg, NULL, 2, buf, sizeof buf, &len), -ERANGE, "a negative value is refused");
        int64_t big[2] = { INT64_MAX, INT64_MAX - 1 };
        is_int(packed_encode(big, NULL, 2, buf, 5, &len), -ENOBUFS, "a buffer too small is refused");
}

static void test_roundtrips(void)
{
        enum { N = 1024 };
        int64_t *v = calloc(N, sizeof *v);
        bool *nl = calloc(N, sizeof *nl);
        size_t len;
        unsigned seed = 12345;

        is_int(roundtrip(v, NULL, 0, &len), 0, "no CPUs");
        is_int(roundtrip(v, nl, N, &len), 0, "1024 zeros");
        is_int((long long)len, 0, "take no bytes");

        for (int c = 0; c < N; c++)
                v[c] = c % 3 == 0 ? 0 : c * 1000;
        is_int(roundtrip(v, nl, N, NULL), 0, "single zeros between values");

        v[0] = INT64_MAX;
        v[1] = INT64_MAX - 1;
        v[2] = (int64_t)1 << 62;
        v[N - 1] = 1;
        is_int(roundtrip(v, NULL, N, NULL), 0, "INT64_MAX and other large values");

        for (int c = 0; c < N; c++) {
                seed = seed * 1103515245 + 12345;
                v[c] = (seed >> 16) % 4 == 0 ? (seed >> 8) % 100000 : 0;
                nl[c] = (seed >> 20) % 17 == 0;
        }
        is_int(roundtrip(v, nl, N, &len), 0, "random values, zero runs and NULLs");
        printf("# 1024 CPUs, 1/4 busy: %zu bytes\n", len);

        for (int c = 0; c < N; c++) {
                v[c] = 0;
                nl[c] = c >= 500 && c < 510;
        }
        is_int(roundtrip(v, nl, N, NULL), 0, "NULLs inside zeros");
        for (int c = 0; c < N; c++)
                nl[c] = true;
        is_int(roundtrip(v, nl, N, &len), 0, "every CPU not counted");
        is_int((long long)len, N, "one byte each");
        free(v);
        free(nl);
}

static void test_corrupt(void)
{
        static const uint8_t trunc_leb[] = { 5, 0x85 };
        static const uint8_t trunc_run[] = { 0 };
        static const uint8_t trunc_run2[] = { 0, 0x80 };
        static const uint8_t too_long[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01 };
        static const uint8_t past64[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x03 };
        static const uint8_t past_int64[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
        static const uint8_t huge_run[] = { 0, 0xff, 0xff, 0xff, 0x7f, 5 };
        static const uint8_t max_ok[] = { 0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01 };
        static const uint8_t beyond[] = { 0, 10, 7 };   /* CPU 12 = 5 */
        int64_t v[16];
        bool nl[16];

        is_int(decode_bytes(trunc_leb, sizeof trunc_leb, 8), -EBADMSG, "a token cut short");
        is_int(decode_bytes(trunc_run, sizeof trunc_run, 8), -EBADMSG, "a zero run without its count");
        is_int(decode_bytes(trunc_run2, sizeof trunc_run2, 8), -EBADMSG, "a zero run with its count cut short");
        is_int(decode_bytes(too_long, sizeof too_long, 8), -EBADMSG, "a token of 11 bytes");
        is_int(decode_bytes(past64, sizeof past64, 8), -EBADMSG, "a token past 64 bits");
        is_int(decode_bytes(past_int64, sizeof past_int64, 8), -EBADMSG, "a value past INT64_MAX");
        is_int(decode_bytes(huge_run, sizeof huge_run, 8), -EBADMSG, "a zero run past PACKED_MAX_CPUS");
        is_int(packed_decode(max_ok, sizeof max_ok, v, nl, 2), 0, "2^63 + 1 - 2 = INT64_MAX decodes");
        ok(v[0] == INT64_MAX && v[1] == 0, "to INT64_MAX");
        is_int(packed_decode(beyond, sizeof beyond, v, nl, 12), -ERANGE, "a value for a CPU past ncpus");
        is_int(packed_decode(beyond, sizeof beyond, v, nl, 13), 0, "the same blob with 13 CPUs");
        is_int(v[12], 5, "CPU 12 after a run of 12 zeros");

        int64_t sum;
        int nulls;
        static const uint8_t mixed[] = { 12, 1, 0, 3, 22, 1 };       /* 10, NULL, 5 zeros, 20, NULL */
        ok(packed_sum(mixed, sizeof mixed, &sum, &nulls) == 0 && sum == 30 && nulls == 2, "sum 30, 2 not counted");
}

/* Every prefix of a valid blob either decodes or is refused, never read
 * past its end (run under ASan in the sanitizer build). */
static void test_prefixes(void)
{
        int64_t v[40];
        bool nl[40];
        uint8_t buf[400];
        size_t len = 0;
        int bad = 0;

        for (int c = 0; c < 40; c++) {
                v[c] = c % 5 ? (int64_t)c << (c % 60) : 0;
                if (v[c] < 0)
                        v[c] = 7;
                nl[c] = c % 11 == 3;
        }
        ok(packed_encode(v, nl, 40, buf, sizeof buf, &len) == 0, "encode 40 CPUs (%zu bytes)", len);
        for (size_t l = 0; l < len; l++) {
                uint8_t *p = malloc(l ? l : 1);
                int64_t back[40];
                bool bn[40];
                memcpy(p, buf, l);
                int r = packed_decode(p, l, back, bn, 40);
                if (r != 0 && r != -EBADMSG)
                        bad++;
                free(p);
        }
        is_int(bad, 0, "every prefix decodes or is refused as corrupt");
}

static long long sql_int(sqlite3 *db, const char *sql, int *ret_rc)
{
        sqlite3_stmt *st;
        long long v = -999;
        int r = sqlite3_prepare_v2(db, sql, -1, &st, NULL);

        if (r == SQLITE_OK) {
                r = sqlite3_step(st);
                if (r == SQLITE_ROW) {
                        v = sqlite3_column_type(st, 0) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 0);
                        r = SQLITE_OK;
                }
                sqlite3_finalize(st);
        }
        if (ret_rc)
                *ret_rc = r;
        return v;
}

static void test_sql(void)
{
        sqlite3 *db;
        int rc;

        ok(sqlite3_open(":memory:", &db) == SQLITE_OK && packed_sql_register(db) == SQLITE_OK, "SQL functions");
        sqlite3_exec(db, "CREATE TABLE s (cpu, value); INSERT INTO s VALUES (0, 10), (3, NULL), (7, 20), (1000, 5);"
                         "CREATE TABLE b AS SELECT scalemon_pack(cpu, value) AS vals FROM s;",
                     NULL, NULL, NULL);
        is_int(sql_int(db, "SELECT scalemon_cpu(vals, 7) FROM b", NULL), 20, "scalemon_cpu: a value");
        is_int(sql_int(db, "SELECT scalemon_cpu(vals, 3) FROM b", NULL), -1, "scalemon_cpu: NULL, not counted");
        is_int(sql_int(db, "SELECT scalemon_cpu(vals, 500) FROM b", NULL), 0, "scalemon_cpu: 0 in a run of zeros");
        is_int(sql_int(db, "SELECT scalemon_cpu(vals, 5000) FROM b", NULL), 0, "scalemon_cpu: 0 past the end");
        is_int(sql_int(db, "SELECT count(*) FROM b, scalemon_cpus(b.vals)", NULL), 4, "scalemon_cpus: four rows");
        is_int(sql_int(db, "SELECT sum(u.value) FROM b, scalemon_cpus(b.vals) u", NULL), 35, "summing to 35");
        is_int(sql_int(db, "SELECT group_concat(u.cpu) = '0,3,7,1000' FROM b, scalemon_cpus(b.vals) u", NULL), 1,
               "in CPU order");
        is_int(sql_int(db, "SELECT count(*) FROM scalemon_cpus(x'')", NULL), 0, "the empty blob has no rows");
        sql_int(db, "SELECT count(*) FROM scalemon_cpus(x'0580')", &rc);
        ok(rc != SQLITE_OK, "a corrupt blob is an SQL error (%s)", sqlite3_errmsg(db));
        sql_int(db, "SELECT scalemon_cpu(x'0580', 3)", &rc);
        ok(rc != SQLITE_OK, "in scalemon_cpu too");
        sql_int(db, "SELECT scalemon_pack(cpu, value) FROM (SELECT 0 AS cpu, -5 AS value)", &rc);
        ok(rc != SQLITE_OK, "scalemon_pack refuses a negative value");
        sqlite3_close(db);
}

int main(void)
{
        test_format();
        test_roundtrips();
        test_corrupt();
        test_prefixes();
        test_sql();
        printf("1..%d\n", tap_n);
        return tap_failed ? 1 : 0;
}
