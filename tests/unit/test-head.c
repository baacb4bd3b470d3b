/* test-head.c - the head file (lib/head.c): records of every row kind read
 * back as written; a torn last record (cut at every byte, or its CRC
 * broken) dropped with the records before it kept; a bad header refused
 * with one line.  Then the store: a tick captured into the head is what a
 * reader sees before the commit, and seen once after it; a restarted
 * writer replays what the database lacks, and nothing twice.  The sqlite3
 * shell with scalemon.so loaded sees the head's ticks too, and a committed
 * one once. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "head.h"
#include "store.h"
#include "tap.h"

static void build(struct head_buf *b)
{
        static const uint8_t blob[] = { 2, 7, 1, 9 };

        head_put_header(b, 0x1234abcdULL);
        head_put_tick(b, 41, 1000, 100);
        head_put_sample(b, 5, 0, -3, false);
        head_put_sample(b, 6, 1, 0, true);
        head_put_cpu(b, 7, 12, false, blob, sizeof blob);
        head_put_own(b, 3, 8, 2.5);
        head_put_mux(b, 1, "hw", 0.25);
        head_put_event(b, 1100, "cpu_offline", 1, NULL);
        head_put_tick(b, 42, 1100, 100);
        head_put_cpu(b, 7, 0, true, blob, 2);
        head_finish(b);
}

/* rows read, and whether the last record was torn */
static int count_rows(const uint8_t *p, size_t n, int *ret_ticks, bool *ret_torn)
{
        struct head_iter it;
        struct head_row row;
        uint64_t id;
        char err[256];
        int r, rows = 0;

        *ret_ticks = 0;
        r = head_iter_init(&it, p, n, &id, err, sizeof err);
        if (r < 0)
                return r;
        while ((r = head_iter_next(&it, &row)) > 0) {
                rows++;
                *ret_ticks += row.kind == HEAD_TICK;
        }
        *ret_torn = it.torn;
        return r < 0 ? r : rows;
}

static void test_format(void)
{
        struct head_buf b = { 0 };
        struct head_iter it;
        struct head_row r[9];
        uint64_t id = 0;
        char err[256];
        int n = 0, k, ticks;
        bool torn;

        build(&b);
        is_int(b.err, 0, "records built");
        is_int(head_iter_init(&it, b.p, b.len, &id, err, sizeof err), 0, "header read");
        ok(id == 0x1234abcdULL, "the database's id comes back");
        while (n < 9 && (k = head_iter_next(&it, &r[n])) > 0)
                n++;
        is_int(n, 9, "nine rows");
        ok(!it.torn, "nothing torn");
        ok(r[0].kind == HEAD_TICK && r[0].tick == 41 && r[0].t == 1000 && r[0].dur == 100, "tick 41");
        ok(r[1].kind == HEAD_SAMPLE && r[1].tick == 41 && r[1].metric == 5 && r[1].value == -3 && !r[1].null,
           "sample, negative value");
        ok(r[2].kind == HEAD_SAMPLE && r[2].loc == 1 && r[2].null, "sample, NULL");
        ok(r[3].kind == HEAD_CPU && r[3].value == 12 && r[3].blob_len == 4 && r[3].blob[3] == 9, "cpu blob");
        ok(r[4].kind == HEAD_OWN && r[4].run == 3 && r[4].metric == 8 && r[4].dval == 2.5, "own sample");
        ok(r[5].kind == HEAD_MUX && r[5].loc == 1 && strcmp(r[5].text, "hw") == 0 && r[5].dval == 0.25, "mux");
        ok(r[6].kind == HEAD_EVENT && r[6].t == 1100 && strcmp(r[6].text, "cpu_offline") == 0 && !r[6].text2,
           "event without detail");
        ok(r[7].kind == HEAD_TICK && r[7].tick == 42 && r[8].tick == 42 && r[8].null, "tick 42 and its row");

        /* the second record cut at every length: the first always read */
        {
                size_t second = 0;
                int bad = 0;
                struct head_iter it2;
                struct head_row row;
                head_iter_init(&it2, b.p, b.len, &id, err, sizeof err);
                while (head_iter_next(&it2, &row) > 0 && row.tick == 41)
                        second = it2.rec_end;   /* the end of the first record */
                for (size_t cut = second; cut < b.len; cut++) {
                        k = count_rows(b.p, cut, &ticks, &torn);
                        if (k != 7 || ticks != 1 || torn != (cut > second))
                                bad++;
                }
                is_int(bad, 0, "a torn last record at any length: dropped, the one before kept");
        }
        b.p[b.len - 1] ^= 0x40;
        k = count_rows(b.p, b.len, &ticks, &torn);
        ok(k == 7 && ticks == 1 && torn, "a last record failing its CRC: dropped");

        memcpy(b.p, "SMHEAX", 6);
        is_int(head_iter_init(&it, b.p, b.len, &id, err, sizeof err), -EBADMSG, "bad magic refused");
        ok(strchr(err, '\n') == NULL && strstr(err, "not a scalemon head file"), "in one line: %s", err);
        memcpy(b.p, "SMHEAD", 6);
        b.p[8] = 9;
        is_int(head_iter_init(&it, b.p, b.len, &id, err, sizeof err), -EBADMSG, "another version refused");
        contains(err, "version 9", "says which");
        is_int(head_iter_init(&it, b.p, 10, &id, err, sizeof err), -EBADMSG, "a header cut short refused");
        head_buf_free(&b);
}

static int write_file(const char *path, const struct head_buf *b)
{
        FILE *f = fopen(path, "w");
        int r = f && fwrite(b->p, 1, b->len, f) == b->len ? 0 : -EIO;

        if (f)
                fclose(f);
        return r;
}

static int64_t ticks_seen(const char *db)
{
        struct store *rd = NULL;
        struct store_summary sum = { 0 };

        if (store_open(db, STORE_READ, &rd, NULL) < 0)
                return -1;
        store_head_attach(rd);
        if (store_summary(rd, &sum) < 0)
                sum.ticks = -1;
        store_close(rd);
        return sum.ticks;
}

/* The sqlite3 shell's answer to sql on db, with scalemon.so loaded (or
 * not), its stderr included; "" if it could not run. */
static void shell(const char *db, bool load, const char *sql, char *out, size_t outlen)
{
        const char *top = getenv("top_builddir");
        char cmd[2048];
        size_t n = 0;
        FILE *f;

        snprintf(cmd, sizeof cmd, "sqlite3 -readonly -batch -noheader %s%s%s '%s' \"%s\" 2>&1",
                 load ? "-cmd '.load " : "", load ? (top ? top : ".") : "", load ? "/scalemon'" : "", db, sql);
        out[0] = 0;
        f = popen(cmd, "r");
        if (!f)
                return;
        n = fread(out, 1, outlen - 1, f);
        out[n] = 0;
        while (n > 0 && out[n - 1] == '\n')
                out[--n] = 0;
        pclose(f);
}

/* One tick through the write path: captured into b, or inserted. */
static int put_tick(struct store *w, struct head_buf *b, int64_t id, int64_t t)
{
        int64_t vals[2] = { 5, 7 }, got;
        int r;

        store_capture(w, b);
        if (b)
                b->tick_id = id;
        r = store_add_tick(w, t, 100, &got);
        if (r >= 0)
                r = store_add_cpu_values(w, got, M_CONTEXT_SWITCHES, vals, NULL, 2);
        store_capture(w, NULL);
        return r < 0 ? r : got == id ? 0 : -ERANGE;
}

/* Ticks, context switches summed from cpu_sample, from the view
 * cpu_samples, the ticks in the database file and the intervals in the
 * ticks (tick.n: every column of the table), through the shell: with
 * scalemon.so loaded (want) and without it (want_bare, the file's alone). */
static void test_shell(const char *db, const char *want, const char *want_bare, const char *when)
{
        static const char q[] =
                "SELECT (SELECT count(*) FROM tick),"
                " (SELECT sum(total) FROM cpu_sample),"
                " (SELECT sum(value) FROM cpu_samples WHERE metric = 'context_switches'),"
                " (SELECT count(*) FROM main.tick), (SELECT sum(n) FROM tick)";
        static const char q_bare[] =
                "SELECT (SELECT count(*) FROM tick), (SELECT sum(total) FROM cpu_sample)";
        char out[1024], name[256];

        shell(db, true, q, out, sizeof out);
        snprintf(name, sizeof name, "%s: sqlite3 with scalemon.so loaded sees every tick, each once", when);
        is_str(out, want, name);
        shell(db, false, q_bare, out, sizeof out);
        snprintf(name, sizeof name, "%s: without it, the database file's ticks only", when);
        is_str(out, want_bare, name);
}

static void test_store(void)
{
        char dir[] = "/tmp/test-head.XXXXXX", db[256], head[300];
        struct store *w = NULL;
        struct head_buf b = { 0 };
        uint64_t id = 0;
        int64_t next = 0, n = 0;

        ok(mkdtemp(dir) != NULL, "temp dir");
        snprintf(db, sizeof db, "%s/db", dir);
        snprintf(head, sizeof head, "%s" HEAD_SUFFIX, db);
        is_int(store_open(db, STORE_WRITE, &w, NULL), 0, "writer");
        is_int(store_metrics_sync(w, (bool[_M_MAX]){ [M_CONTEXT_SWITCHES] = true }, NULL, NULL), 0, "catalogue");
        is_int(store_head_id(w, &id), 0, "head id made");
        is_int(store_next_tick_id(w, &next), 0, "next tick id");
        is_int(next, 1, "is 1 in a new database");

        /* two ticks in the head, none committed */
        head_put_header(&b, id);
        is_int(put_tick(w, &b, 1, 1000), 0, "tick 1 captured");
        is_int(put_tick(w, &b, 2, 1100), 0, "tick 2 captured");
        head_finish(&b);
        is_int(write_file(head, &b), 0, "head written");
        is_int(ticks_seen(db), 2, "a reader sees the head's two ticks before any commit");
        test_shell(db, "2|24|24.0|0|2", "0|", "before any commit");

        /* tick 1 committed: seen once */
        store_begin(w);
        is_int(put_tick(w, NULL, 1, 1000), 0, "tick 1 inserted with the id the head gave it");
        store_commit(w);
        is_int(ticks_seen(db), 2, "after its commit, tick 1 is seen once");
        test_shell(db, "2|24|24.0|1|2", "1|12", "after tick 1's commit");

        /* a restart: the replay adds tick 2 only */
        is_int(store_head_replay(w, b.p, b.len, &n), 0, "replay");
        is_int(n, 1, "one tick replayed (the one not committed)");
        is_int(ticks_seen(db), 2, "and a reader sees two ticks, not three");
        is_int(store_head_replay(w, b.p, b.len, &n), 0, "a second replay");
        is_int(n, 0, "adds nothing");

        /* another database's head is not read */
        b.p[16] ^= 1;
        is_int(store_head_replay(w, b.p, b.len, &n), -ESTALE, "another database's head refused");
        head_buf_free(&b);
        store_close(w);
        unlink(head);
        unlink(db);
        {
                char p[300];
                snprintf(p, sizeof p, "%s-wal", db);
                unlink(p);
                snprintf(p, sizeof p, "%s-shm", db);
                unlink(p);
        }
        rmdir(dir);
}

int main(void)
{
        test_format();
        test_store();
        return tap_done();
}
