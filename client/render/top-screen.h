/* top-screen.h - `scalemonctl top`: the frame it shows (a typed result, built
 * in top.c from the subscription's ticks) and its two formatters
 * (top-screen.c): plain text, and the terminal through ncurses. */
#ifndef SCALEMON_TOP_H
#define SCALEMON_TOP_H

#include <stdbool.h>
#include <stdint.h>

#include "sub.h"

#define TOP_MAX_COLS 16

struct top_col {
        int mi;                         /* index in sub_info()->metrics */
        char label[72];
        double share;                   /* time metrics: unit to a % of the interval; 0: a rate per second */
};

struct top_row {
        int loc;                        /* CPU or node number; -1 for the totals */
        double v[TOP_MAX_COLS];
        bool null[TOP_MAX_COLS];
};

struct top_other {                      /* a system value (or per node while per CPU) */
        char label[64];
        double v;
        bool share;
};

struct top_frame {
        int64_t start_ns, end_ns;       /* the ticks it covers */
        double dur_s;
        int nticks;
        enum sub_loc per;
        int ncpus, online, nnodes;
        double interval_s;
        struct top_col cols[TOP_MAX_COLS];
        int ncols;
        int sort;                       /* column sorted by, descending; -1: by location */
        struct top_row *rows;           /* sorted */
        int nrows;
        struct top_row total;
        struct top_other others[TOP_MAX_COLS + 8];
        int nothers;
        struct top_other psi[8];
        int npsi;
        struct sub_run *runs;           /* of the last tick (a copy) */
        size_t nruns;
        const char *set_name;           /* the counter set shown, of nsets */
        int nsets;
        bool folded;                    /* per node because the CPUs do not fit */
        bool paused;
};

/* Plain text, one block: for pipes, scripts and --once. */
void top_print_plain(const struct top_frame *f);
/* The terminal (after initscr()): the frame, or a line while waiting. */
void top_draw(const struct top_frame *f);
void top_draw_waiting(const char *what);
/* How many rows of CPUs or nodes fit on the terminal. */
int top_rows_fit(void);

#endif
