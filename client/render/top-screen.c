/* top-screen.c - the formatters of `scalemonctl top`: a frame (top.h) as
 * plain text, or on the terminal through ncurses (no escape sequence is
 * written by hand).  Both lay out the same lines: the ticks shown, the
 * column names, a row per CPU or node, the totals row, the system and
 * pressure lines, the open runs; the terminal adds the keys. */
#include "config.h"

#include <math.h>
#include <ncurses.h>
#include <stdio.h>
#include <string.h>

#include "macro.h"
#include "timeutil.h"
#include "top-screen.h"

#define COL_WIDTH    10
#define LOC_WIDTH    6
#define RESERVED     7          /* screen lines besides the rows: header, columns, totals, others, runs, keys */

/* ---- shared by both ---- */

static void fmt_value(double v, bool null, bool share, int width, char *buf, size_t len)
{
        static const char suffix[] = " KMGTP";
        int k = 0;

        if (null) {
                snprintf(buf, len, "-");
                return;
        }
        if (share) {
                snprintf(buf, len, "%.1f", v);
                return;
        }
        snprintf(buf, len, fabs(v) >= 100 || v == 0 ? "%.0f" : "%.1f", v);
        /* too wide for the column: 1234.5K */
        while ((int)strlen(buf) > width && k < 5) {
                v /= 1000;
                k++;
                snprintf(buf, len, "%.1f%c", v, suffix[k]);
        }
}

static void fmt_elapsed(double s, char *buf, size_t len)
{
        long t = s < 0 ? 0 : (long)s;

        if (t >= 3600)
                snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
        else
                snprintf(buf, len, "%ld:%02ld", t / 60, t % 60);
}

static void fmt_header(const struct top_frame *f, char *buf, size_t len)
{
        char a[40], b[40], iv[16];

        time_format_rfc3339(f->start_ns, a, sizeof a);
        time_format_rfc3339(f->end_ns, b, sizeof b);
        duration_format((int64_t)llround(f->interval_s * 1e9), iv, sizeof iv);
        snprintf(buf, len, "ticks %s .. %s (%.3fs)  %d CPU%s, %s%s, every %s", a, b, f->dur_s, f->online,
                 f->online == 1 ? "" : "s", f->per == SUB_LOC_NODE ? "per node" : "per cpu",
                 f->folded ? " (folded: the CPUs do not fit)" : "", iv);
}

static void fmt_keys(const struct top_frame *f, char *buf, size_t len)
{
        snprintf(buf, len, "q quit  m/1-%d counters [%s]  s/S sort [%s]  n cpu/node  space pause", f->nsets,
                 f->set_name, f->sort >= 0 ? f->cols[f->sort].label : f->per == SUB_LOC_NODE ? "NODE" : "CPU");
}

static void fmt_row(const struct top_frame *f, const struct top_row *r, char *buf, size_t len)
{
        size_t off = 0;

        if (r->loc < 0)
                strbuf_appendf(buf, len, &off, "%*s", LOC_WIDTH, "all");
        else
                strbuf_appendf(buf, len, &off, "%*d", LOC_WIDTH, r->loc);
        for (int k = 0; k < f->ncols; k++) {
                char v[32];
                fmt_value(r->v[k], r->null[k], f->cols[k].share != 0, COL_WIDTH - 1, v, sizeof v);
                strbuf_appendf(buf, len, &off, " %*s", COL_WIDTH, v);
        }
}

static void fmt_columns(const struct top_frame *f, char *buf, size_t len)
{
        size_t off = 0;

        strbuf_appendf(buf, len, &off, "%*s", LOC_WIDTH, f->per == SUB_LOC_NODE ? "NODE" : "CPU");
        for (int k = 0; k < f->ncols; k++)
                strbuf_appendf(buf, len, &off, " %*s", COL_WIDTH, f->cols[k].label);
}

static void fmt_others(const struct top_frame *f, char *buf, size_t len)
{
        size_t off = 0;

        buf[0] = 0;
        for (int i = 0; i < f->nothers; i++) {
                char v[32];
                fmt_value(f->others[i].v, false, f->others[i].share, 12, v, sizeof v);
                strbuf_appendf(buf, len, &off, "%s%s %s%s", i ? "  " : "system: ", f->others[i].label, v,
                               f->others[i].share ? "%" : "/s");
        }
}

static void fmt_psi(const struct top_frame *f, char *buf, size_t len)
{
        size_t off = 0;

        buf[0] = 0;
        for (int i = 0; i < f->npsi; i++)
                strbuf_appendf(buf, len, &off, "%s%s %.1f%%", i ? "  " : "pressure (PSI): ", f->psi[i].label,
                               f->psi[i].v);
}

static void fmt_run(const struct sub_run *u, char *buf, size_t len)
{
        char el[32], at[32];
        size_t off = 0;

        fmt_elapsed(u->elapsed_s, el, sizeof el);
        strbuf_appendf(buf, len, &off, "run %s: running %s", u->name, el);
        if (u->has_mark) {
                fmt_elapsed((double)(u->mark_ns - u->start_ns) / 1e9, at, sizeof at);
                strbuf_appendf(buf, len, &off, ", last mark '%s' at %s", u->mark, at);
        }
}

/* ---- plain text: scripts, pipes, --once ---- */

void top_print_plain(const struct top_frame *f)
{
        char line[1024];

        fmt_header(f, line, sizeof line);
        printf("%s\n", line);
        fmt_columns(f, line, sizeof line);
        printf("%s\n", line);
        for (int i = 0; i < f->nrows; i++) {
                fmt_row(f, &f->rows[i], line, sizeof line);
                printf("%s\n", line);
        }
        fmt_row(f, &f->total, line, sizeof line);
        printf("%s\n", line);
        fmt_others(f, line, sizeof line);
        if (line[0])
                printf("%s\n", line);
        fmt_psi(f, line, sizeof line);
        if (line[0])
                printf("%s\n", line);
        for (size_t i = 0; i < f->nruns; i++) {
                fmt_run(&f->runs[i], line, sizeof line);
                printf("%s\n", line);
        }
        if (f->nruns == 0)
                printf("no run open\n");
        printf("\n");
        fflush(stdout);
}

/* ---- the terminal ---- */

int top_rows_fit(void)
{
        return MAX(LINES - RESERVED, 1);
}

void top_draw(const struct top_frame *f)
{
        char line[1024];
        int y = 0, fit = top_rows_fit(), shown;

        erase();
        fmt_header(f, line, sizeof line);
        mvaddnstr(y++, 0, line, COLS);
        if (f->paused)
                mvaddnstr(0, MAX(COLS - 8, 0), " PAUSED ", 8);
        fmt_columns(f, line, sizeof line);
        attron(A_REVERSE);
        mvaddnstr(y, 0, line, COLS);
        for (int x = (int)strlen(line); x < COLS; x++)
                mvaddch(y, x, ' ');
        if (f->sort >= 0)
                mvchgat(y, LOC_WIDTH + f->sort * (COL_WIDTH + 1) + 1, COL_WIDTH, A_REVERSE | A_BOLD, 0, NULL);
        attroff(A_REVERSE);
        y++;
        shown = MIN(f->nrows, fit);
        if (shown < f->nrows)
                shown = MAX(shown - 1, 0);
        for (int i = 0; i < shown; i++) {
                fmt_row(f, &f->rows[i], line, sizeof line);
                mvaddnstr(y++, 0, line, COLS);
        }
        if (shown < f->nrows) {
                snprintf(line, sizeof line, "%*s  ... %d more %s (n: per node, or a taller terminal)", LOC_WIDTH, "",
                         f->nrows - shown, f->per == SUB_LOC_NODE ? "nodes" : "CPUs");
                mvaddnstr(y++, 0, line, COLS);
        }
        attron(A_BOLD);
        fmt_row(f, &f->total, line, sizeof line);
        mvaddnstr(y++, 0, line, COLS);
        attroff(A_BOLD);
        fmt_others(f, line, sizeof line);
        if (line[0])
                mvaddnstr(y++, 0, line, COLS);
        fmt_psi(f, line, sizeof line);
        if (line[0])
                mvaddnstr(y++, 0, line, COLS);
        for (size_t i = 0; i < f->nruns && y < LINES - 1; i++) {
                fmt_run(&f->runs[i], line, sizeof line);
                mvaddnstr(y++, 0, line, COLS);
        }
        if (f->nruns == 0 && y < LINES - 1)
                mvaddnstr(y++, 0, "no run open", COLS);
        fmt_keys(f, line, sizeof line);
        attron(A_DIM);
        mvaddnstr(LINES - 1, 0, line, COLS);
        attroff(A_DIM);
        refresh();
}

void top_draw_waiting(const char *what)
{
        erase();
        mvaddnstr(0, 0, what, COLS);
        mvaddnstr(LINES - 1, 0, "q quit", COLS);
        refresh();
}

/* Per node when the CPUs do not fit on the screen (and --per was not
 * given); back per CPU when they do again. */
