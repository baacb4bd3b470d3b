/* head.h - the head file: the ticks sampled since the last commit, beside
 * the database (DATABASE-head), appended one record per tick.
 *
 * scalemond appends each tick's rows, exactly as the writer will insert
 * them, with one write(); readers (scalemonctl) and a daemon restarted
 * after a crash read them.  The format (version 1, little-endian):
 *
 *   header   "SMHEAD\r\n" (8 bytes), u32 version, u32 header size (32),
 *            u64 the database's head_id (meta), u64 reserved (0)
 *   record   u32 payload length, u32 CRC-32 of the payload, payload
 *   payload  rows, each a kind byte and its fields; the first is the tick.
 *            Integers are LEB128 varints, zigzag-encoded (v: signed);
 *            u8 is a byte (a flag, 0 or 1), f64 an IEEE double (LE):
 *     'T' v tick id (the id the tick gets in the database), v t, v dur
 *     'S' v metric.id, v loc, u8 null, v value                  (sample)
 *     'C' v metric.id, u8 total null, v total, v n, n bytes     (cpu_sample)
 *     'O' v run, v metric.id, f64 value                         (run_own_sample)
 *     'M' v cpu, f64 duty, v n, n bytes grp with its NUL         (mux)
 *     'E' v t, v cpu (-1: none), v n, kind with its NUL, v n,
 *         detail with its NUL (n = 0: none)                      (event)
 *
 * A last record cut short or failing its CRC is a torn write (a crash in
 * the middle of one): it is dropped and the records before it are read.
 */
#ifndef SCALEMON_HEAD_H
#define SCALEMON_HEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HEAD_SUFFIX "-head"
#define HEAD_VERSION 1
#define HEAD_HEADER_SIZE 32

/* One or more records being built (the writer's, one tick each). */
struct head_buf {
        uint8_t *p;
        size_t len, cap;
        size_t rec;             /* offset of the open record's length word */
        bool open;
        int err;                /* -ENOMEM once an append failed */
        int64_t tick_id;        /* the id of the tick being captured */
};

void head_buf_reset(struct head_buf *b);
void head_buf_free(struct head_buf *b);
/* The file header for a database's head_id. */
void head_put_header(struct head_buf *b, uint64_t db_id);
/* A new record: its tick.  Closes the record before it. */
void head_put_tick(struct head_buf *b, int64_t id, int64_t t, int64_t dur);
void head_put_sample(struct head_buf *b, int64_t metric, int loc, int64_t value, bool null);
void head_put_cpu(struct head_buf *b, int64_t metric, int64_t total, bool total_null, const uint8_t *vals, size_t n);
void head_put_own(struct head_buf *b, int64_t run, int64_t metric, double value);
void head_put_mux(struct head_buf *b, int cpu, const char *grp, double duty);
void head_put_event(struct head_buf *b, int64_t t, const char *kind, int cpu, const char *detail);
/* Close the open record (its length and CRC).  0, or -ENOMEM. */
int head_finish(struct head_buf *b);

enum head_row_kind {
        HEAD_TICK = 'T',
        HEAD_SAMPLE = 'S',
        HEAD_CPU = 'C',
        HEAD_OWN = 'O',
        HEAD_MUX = 'M',
        HEAD_EVENT = 'E',
};

/* A row read back; pointers point into the buffer read. */
struct head_row {
        enum head_row_kind kind;
        int64_t tick;           /* the record's tick id (every row) */
        int64_t t, dur;         /* T; E: t */
        int64_t metric, run, value;
        int loc;                /* S: loc; M, E: cpu (-1: none) */
        bool null;              /* S: value; C: total */
        double dval;            /* O: value; M: duty */
        const uint8_t *blob;    /* C */
        size_t blob_len;
        const char *text, *text2; /* M: grp; E: kind, detail (or NULL) */
};

struct head_iter {
        const uint8_t *p;
        size_t n, off;          /* the next record */
        size_t row, rec_end;    /* the next row of the current record, its end */
        int64_t tick;
        bool torn;              /* the last record was cut short or corrupt */
};

/* Check the header (magic, version, size): -EBADMSG with a one-line
 * reason in err.  *ret_db_id: the database it belongs to. */
int head_iter_init(struct head_iter *it, const uint8_t *p, size_t n, uint64_t *ret_db_id, char *err, size_t errlen);
/* The next row: 1, or 0 at the end (it->torn: a torn last record was
 * dropped).  -EBADMSG: a record that passed its CRC holds a bad row. */
int head_iter_next(struct head_iter *it, struct head_row *row);

/* The whole file at path into *ret (malloc'd), *ret_n bytes. */
int head_read_file(const char *path, uint8_t **ret, size_t *ret_n);

#endif
