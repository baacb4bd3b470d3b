/* top.c - `scalemonctl top`: watch the counters while a benchmark runs.
 *
 * scalemond pushes each tick's deltas on a subscription (sub.c); top
 * turns them into frames (struct top_frame: one row per CPU or node, the
 * chosen counters' rates, a totals row, the open runs) and one of two
 * formatters prints a frame: ncurses on a terminal, plain text otherwise
 * (and with --once).  A frame covers whole ticks, at least half an
 * interval of them (a run boundary's short tick is merged into the next),
 * and its rates are its deltas divided by its length: the first frame is
 * one interval's rate, never a difference of two unrelated totals.  Each
 * frame shows the times of the ticks it covers, so that `scalemonctl
 * query --since START --until END` sums the same ticks.
 *
 * The socket is always read before anything is drawn, and drawing is
 * cheap, so a slow terminal does not make top fall behind; if it did,
 * the daemon would drop it rather than wait (scalemond(8)).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <locale.h>
#include <math.h>
#include <ncurses.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "metric.h"
#include "sub.h"
#include "timeutil.h"

#define TOP_MAX_COLS 16
#define COL_WIDTH    10
#define LOC_WIDTH    6
#define WAIT_MS      500        /* keys are looked at this often at least */
#define RESERVED     7          /* screen lines besides the rows: header, columns, totals, others, runs, keys */

/* The counter sets the keys switch between (1..N, m); --metric makes its
 * own set, the first.  A metric the kernel cannot count shows as "-". */
static const struct counter_set {
        const char *name;
        const char *metrics[8];
} builtin_sets[] = {
        { "sched", { "context_switches", "cpu_migrations", "lock_contentions", "cpu_user", "cpu_system" } },
        { "faults", { "page_faults", "page_faults_minor", "page_faults_major", "cpu_user", "cpu_system" } },
        { "kvm", { "kvm_exits", "kvm_pause_exits", "kvm_ple_window_updates", "cpu_guest", "cpu_steal" } },
        { "pmu", { "cycles", "instructions", "cpu_user", "cpu_system" } },
};

/* Shown with every set, where the catalogue has them (second stage). */
static const char *const extra_cols[] = { "lock_wait_ns" };
static const struct {
        const char *metric, *label;
} psi_metrics[] = {
        { "psi_cpu_some_us", "cpu some" },       { "psi_memory_some_us", "memory some" },
        { "psi_memory_full_us", "memory full" }, { "psi_io_some_us", "io some" },
        { "psi_io_full_us", "io full" },
};

static const struct {
        const char *metric, *label;
} labels[] = {
        { "context_switches", "CSW/s" },   { "cpu_migrations", "MIGR/s" },  { "lock_contentions", "LOCK/s" },
        { "page_faults", "FLT/s" },        { "page_faults_minor", "MINFLT/s" }, { "page_faults_major", "MAJFLT/s" },
        { "kvm_exits", "EXIT/s" },         { "kvm_pause_exits", "PAUSE/s" }, { "kvm_ple_window_updates", "PLEWIN/s" },
        { "cycles", "CYCLES/s" },          { "instructions", "INSTR/s" },   { "cpu_user", "USR%" },
        { "cpu_nice", "NICE%" },           { "cpu_system", "SYS%" },        { "cpu_idle", "IDLE%" },
        { "cpu_iowait", "IOWAIT%" },       { "cpu_irq", "IRQ%" },           { "cpu_softirq", "SOFTIRQ%" },
        { "cpu_steal", "STEAL%" },         { "cpu_guest", "GUEST%" },       { "lock_wait_ns", "LOCKWAIT%" },
        { "runqueue_wait_ns", "RQWAIT%" },
};

/* ---- the typed result: one frame ---- */

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
};

struct top {
        struct ctl *ctl;
        struct sub *sub;
        bool curses, once;
        long iterations;                /* 0: until q */
        bool per_given;
        enum sub_loc per;               /* what is asked (and, once answered, what comes) */
        bool folded;                    /* per node because the CPUs do not fit */
        const char *custom[TOP_MAX_COLS];
        size_t ncustom;
        int set;                        /* index into sets: 0 is --metric's if given */
        int nsets;
        int sort;
        bool paused;
        bool waiting;                   /* a request is out: ticks are of the previous one */
        /* accumulated ticks, [nmetrics * nloc] */
        double *sum;
        int *count;
        double dur;
        int64_t start_ns, end_ns;
        int nticks;
        long frames;
        struct top_frame frame;
        char *err;                      /* why top stopped, printed once the terminal is restored */
};

static int fail(struct top *tp, int code, const char *fmt, ...) _printf_(3, 4);
static int fail(struct top *tp, int code, const char *fmt, ...)
{
        va_list ap;

        if (tp->err)
                return code;
        va_start(ap, fmt);
        if (vasprintf(&tp->err, fmt, ap) < 0)
                tp->err = NULL;
        va_end(ap);
        return code;
}

static const char *label_of(const char *metric)
{
        for (size_t i = 0; i < ELEMENTSOF(labels); i++)
                if (streq(labels[i].metric, metric))
                        return labels[i].label;
        return NULL;
}

/* Time metrics are shown as a share of the interval, in %. */
static double share_factor(const char *unit)
{
        return streq(unit, "s") ? 100.0 : streq(unit, "ms") ? 0.1 : streq(unit, "us") ? 1e-4
             : streq(unit, "ns") ? 1e-7 : 0;
}

static size_t set_metrics(const struct top *tp, int set, const char **out, size_t max)
{
        size_t n = 0;

        if (tp->ncustom && set == 0) {
                for (size_t i = 0; i < tp->ncustom && n < max; i++)
                        out[n++] = tp->custom[i];
        } else {
                const struct counter_set *cs = &builtin_sets[set - (tp->ncustom ? 1 : 0)];
                for (size_t i = 0; i < ELEMENTSOF(cs->metrics) && cs->metrics[i] && n < max; i++)
                        out[n++] = cs->metrics[i];
        }
        return n;
}

static const char *set_name(const struct top *tp, int set)
{
        return tp->ncustom && set == 0 ? "--metric" : builtin_sets[set - (tp->ncustom ? 1 : 0)].name;
}

/* Ask for the current set (plus the extras this catalogue knows). */
static int request(struct top *tp)
{
        const char *m[TOP_MAX_COLS + ELEMENTSOF(extra_cols) + ELEMENTSOF(psi_metrics)];
        size_t n = set_metrics(tp, tp->set, m, TOP_MAX_COLS);

        for (size_t i = 0; i < ELEMENTSOF(extra_cols); i++)
                if (metric_id_by_name(extra_cols[i]) >= 0)
                        m[n++] = extra_cols[i];
        for (size_t i = 0; i < ELEMENTSOF(psi_metrics); i++)
                if (metric_id_by_name(psi_metrics[i].metric) >= 0)
                        m[n++] = psi_metrics[i].metric;
        tp->waiting = true;
        return sub_request(tp->sub, m, n, tp->per);
}

static void acc_reset(struct top *tp)
{
        const struct sub_info *in = sub_info(tp->sub);
        size_t n = in->nmetrics * (size_t)in->nloc;

        free(tp->sum);
        free(tp->count);
        tp->sum = calloc(n + 1, sizeof *tp->sum);
        tp->count = calloc(n + 1, sizeof *tp->count);
        tp->dur = 0;
        tp->nticks = 0;
}

static void acc_add(struct top *tp, const struct sub_tick *t)
{
        const struct sub_info *in = sub_info(tp->sub);
        size_t n = in->nmetrics * (size_t)in->nloc;

        if (tp->nticks == 0)
                tp->start_ns = t->start_ns;
        tp->end_ns = t->end_ns;
        tp->dur += t->interval_s;
        tp->nticks++;
        for (size_t i = 0; i < n; i++)
                if (!t->null[i]) {
                        tp->sum[i] += t->v[i];
                        tp->count[i]++;
                }
}

/* ---- building a frame ---- */

static int cmp_loc;     /* qsort has no argument: the column sorted by */

static int row_cmp(const void *a, const void *b)
{
        const struct top_row *x = a, *y = b;

        if (cmp_loc >= 0) {
                if (x->null[cmp_loc] != y->null[cmp_loc])
                        return x->null[cmp_loc] ? 1 : -1;
                if (x->v[cmp_loc] != y->v[cmp_loc])
                        return x->v[cmp_loc] > y->v[cmp_loc] ? -1 : 1;
        }
        return x->loc - y->loc;
}

/* Metric mi's value at a row: locations whose deltas are summed (one CPU,
 * a node's CPUs, all), as a rate or a share of the time of n CPUs. */
static void cell(const struct top *tp, int mi, const struct top_col *col, int loc, bool all, double *v, bool *null)
{
        const struct sub_info *in = sub_info(tp->sub);
        const struct sub_metric *m = &in->metrics[mi];
        size_t nloc = (size_t)in->nloc;
        int nl = m->loc == SUB_LOC_CPU ? in->ncpus : m->loc == SUB_LOC_NODE ? in->nnodes : 1;
        double s = 0;
        int got = 0, ncpu = 0;

        for (int l = 0; l < nl; l++) {
                if (!all && l != loc)
                        continue;
                if (tp->count[(size_t)mi * nloc + (size_t)l] == 0)
                        continue;
                s += tp->sum[(size_t)mi * nloc + (size_t)l];
                got++;
                /* a node's share is of its online CPUs' time */
                if (m->loc == SUB_LOC_NODE && col && col->share) {
                        for (int c = 0; c < in->ncpus; c++)
                                ncpu += in->online[c] && in->node_of[c] == l;
                } else
                        ncpu++;
        }
        *null = got == 0 || tp->dur <= 0;
        if (*null) {
                *v = 0;
                return;
        }
        *v = s / tp->dur;
        if (col && col->share)
                *v = *v * col->share / MAX(ncpu, 1);
}

static int build_frame(struct top *tp)
{
        const struct sub_info *in = sub_info(tp->sub);
        const struct sub_tick *t = sub_tick(tp->sub);
        struct top_frame *f = &tp->frame;
        enum sub_loc rowloc = in->per == SUB_LOC_NODE ? SUB_LOC_NODE : SUB_LOC_CPU;
        const char *want[TOP_MAX_COLS];
        size_t nwant = set_metrics(tp, tp->set, want, TOP_MAX_COLS);
        int nrows = rowloc == SUB_LOC_CPU ? in->ncpus : in->nnodes;

        free(f->rows);
        free(f->runs);
        memset(f, 0, sizeof *f);
        f->start_ns = tp->start_ns;
        f->end_ns = tp->end_ns;
        f->dur_s = tp->dur;
        f->nticks = tp->nticks;
        f->per = rowloc;
        f->ncpus = in->ncpus;
        f->nnodes = in->nnodes;
        f->interval_s = in->interval_s;
        for (int c = 0; c < in->ncpus; c++)
                f->online += in->online[c];
        if (t->nruns) {
                f->runs = malloc(t->nruns * sizeof *f->runs);
                if (!f->runs)
                        return -ENOMEM;
                memcpy(f->runs, t->runs, t->nruns * sizeof *f->runs);
                f->nruns = t->nruns;
        }

        /* columns: the set's metrics that have a value per row, then the
         * extras where the daemon has them; the rest go to "others" */
        for (size_t i = 0; i < nwant + ELEMENTSOF(extra_cols); i++) {
                const char *name = i < nwant ? want[i] : extra_cols[i - nwant];
                int mi = sub_metric_index(tp->sub, name);
                const struct sub_metric *m;
                const char *lb;

                if (mi < 0)
                        continue;
                m = &in->metrics[mi];
                if (i >= nwant && !m->available)
                        continue;
                if (m->loc == rowloc && f->ncols < TOP_MAX_COLS) {
                        struct top_col *c = &f->cols[f->ncols++];
                        c->mi = mi;
                        c->share = share_factor(m->unit);
                        lb = label_of(m->name);
                        if (lb)
                                snprintf(c->label, sizeof c->label, "%s", lb);
                        else
                                snprintf(c->label, sizeof c->label, "%s%s", m->name, c->share ? "%" : "/s");
                } else if (m->available && f->nothers < (int)ELEMENTSOF(f->others)) {
                        struct top_other *o = &f->others[f->nothers++];
                        bool null;
                        struct top_col tmp = { .mi = mi, .share = share_factor(m->unit) };
                        snprintf(o->label, sizeof o->label, "%s", m->name);
                        o->share = tmp.share != 0;
                        cell(tp, mi, tmp.share ? &tmp : NULL, 0, true, &o->v, &null);
                        if (tmp.share && m->loc == SUB_LOC_SYSTEM)
                                o->v = o->v * f->online;        /* a system time is not per CPU */
                }
        }
        for (size_t i = 0; i < ELEMENTSOF(psi_metrics); i++) {
                int mi = sub_metric_index(tp->sub, psi_metrics[i].metric);
                bool null;
                if (mi < 0 || !in->metrics[mi].available)
                        continue;
                struct top_other *o = &f->psi[f->npsi++];
                snprintf(o->label, sizeof o->label, "%s", psi_metrics[i].label);
                cell(tp, mi, NULL, 0, true, &o->v, &null);
                o->v *= share_factor(in->metrics[mi].unit);
                o->share = true;
        }

        f->rows = calloc((size_t)nrows + 1, sizeof *f->rows);
        if (!f->rows)
                return -ENOMEM;
        for (int l = 0; l < nrows; l++) {
                struct top_row *r = &f->rows[f->nrows];
                bool exists = rowloc == SUB_LOC_CPU;
                if (!exists)
                        for (int c = 0; c < in->ncpus; c++)
                                exists |= in->node_of[c] == l;
                if (!exists)
                        continue;
                r->loc = l;
                for (int k = 0; k < f->ncols; k++)
                        cell(tp, f->cols[k].mi, &f->cols[k], l, false, &r->v[k], &r->null[k]);
                f->nrows++;
        }
        f->total.loc = -1;
        for (int k = 0; k < f->ncols; k++)
                cell(tp, f->cols[k].mi, &f->cols[k], 0, true, &f->total.v[k], &f->total.null[k]);
        f->sort = tp->sort < f->ncols ? tp->sort : -1;
        cmp_loc = f->sort;
        qsort(f->rows, (size_t)f->nrows, sizeof *f->rows, row_cmp);
        return 0;
}

/* ---- formatting, shared by both formatters ---- */

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

static void fmt_header(const struct top *tp, const struct top_frame *f, char *buf, size_t len)
{
        char a[40], b[40], iv[16];

        time_format_rfc3339(f->start_ns, a, sizeof a);
        time_format_rfc3339(f->end_ns, b, sizeof b);
        duration_format((int64_t)llround(f->interval_s * 1e9), iv, sizeof iv);
        snprintf(buf, len, "ticks %s .. %s (%.3fs)  %d CPU%s, %s%s, every %s", a, b, f->dur_s, f->online,
                 f->online == 1 ? "" : "s", f->per == SUB_LOC_NODE ? "per node" : "per cpu",
                 tp->folded ? " (folded: the CPUs do not fit)" : "", iv);
}

static void fmt_keys(const struct top *tp, const struct top_frame *f, char *buf, size_t len)
{
        snprintf(buf, len, "q quit  m/1-%d counters [%s]  s/S sort [%s]  n cpu/node  space pause", tp->nsets,
                 set_name(tp, tp->set), f->sort >= 0 ? f->cols[f->sort].label : f->per == SUB_LOC_NODE ? "NODE" : "CPU");
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

static void print_plain(const struct top *tp)
{
        const struct top_frame *f = &tp->frame;
        char line[1024];

        fmt_header(tp, f, line, sizeof line);
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

static int rows_fit(void)
{
        return MAX(LINES - RESERVED, 1);
}

static void draw(const struct top *tp)
{
        const struct top_frame *f = &tp->frame;
        char line[1024];
        int y = 0, fit = rows_fit(), shown;

        erase();
        fmt_header(tp, f, line, sizeof line);
        mvaddnstr(y++, 0, line, COLS);
        if (tp->paused)
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
        fmt_keys(tp, f, line, sizeof line);
        attron(A_DIM);
        mvaddnstr(LINES - 1, 0, line, COLS);
        attroff(A_DIM);
        refresh();
}

static void draw_waiting(const char *what)
{
        erase();
        mvaddnstr(0, 0, what, COLS);
        mvaddnstr(LINES - 1, 0, "q quit", COLS);
        refresh();
}

/* Per node when the CPUs do not fit on the screen (and --per was not
 * given); back per CPU when they do again. */
static bool want_fold(const struct top *tp)
{
        const struct sub_info *in = sub_info(tp->sub);

        if (!tp->curses || tp->per_given || !in->metrics)
                return tp->folded;
        return in->ncpus > rows_fit() && in->nnodes < in->ncpus;
}

static int relayout(struct top *tp)
{
        bool fold = want_fold(tp);

        if (fold == tp->folded)
                return 0;
        tp->folded = fold;
        tp->per = fold ? SUB_LOC_NODE : SUB_LOC_CPU;
        return request(tp);
}

/* ---- the loop ---- */

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
        got_signal = sig;
}

static int on_key(struct top *tp, int ch)
{
        switch (ch) {
        case 'q':
        case 'Q':
                return 1;
        case ' ':
        case 'p':
                tp->paused = !tp->paused;
                if (tp->frame.rows)
                        draw(tp);
                return 0;
        case 'm':
        case '\t':
                tp->set = (tp->set + 1) % tp->nsets;
                tp->sort = -1;
                return request(tp) < 0 ? -1 : 0;
        case 's':
                tp->sort = tp->sort + 1 >= tp->frame.ncols ? -1 : tp->sort + 1;
                break;
        case 'S':
                tp->sort = tp->sort < 0 ? tp->frame.ncols - 1 : tp->sort - 1;
                break;
        case 'n':
                tp->per_given = true;
                tp->folded = false;
                tp->per = tp->per == SUB_LOC_NODE ? SUB_LOC_CPU : SUB_LOC_NODE;
                return request(tp) < 0 ? -1 : 0;
        case KEY_RESIZE:
                if (relayout(tp) < 0)
                        return -1;
                break;
        default:
                if (ch >= '1' && ch < '1' + tp->nsets) {
                        tp->set = ch - '1';
                        tp->sort = -1;
                        return request(tp) < 0 ? -1 : 0;
                }
                return 0;
        }
        /* redraw the frame there is, sorted anew */
        if (tp->frame.rows) {
                tp->frame.sort = tp->sort < tp->frame.ncols ? tp->sort : -1;
                cmp_loc = tp->frame.sort;
                qsort(tp->frame.rows, (size_t)tp->frame.nrows, sizeof *tp->frame.rows, row_cmp);
                if (!tp->paused)
                        draw(tp);
        }
        return 0;
}

/* A tick or a reply came: 1 when top is done, 0 to go on, or an exit code
 * (negated) after saying why. */
static int on_event(struct top *tp, enum sub_event ev)
{
        const struct sub_info *in = sub_info(tp->sub);

        if (ev == SUB_INFO) {
                tp->waiting = false;
                acc_reset(tp);
                if (!tp->sum || !tp->count)
                        return -fail(tp, EXIT_FAILED, "out of memory");
                if (tp->curses && relayout(tp) < 0)
                        return -fail(tp, EXIT_FAILED, "lost the connection to scalemond");
                return 0;
        }
        if (ev != SUB_TICK || tp->waiting)
                return 0;       /* ticks of the request before: the reply resets */
        acc_add(tp, sub_tick(tp->sub));
        /* a frame is at least half an interval: a run boundary's short
         * tick is merged into the next */
        if (tp->dur < in->interval_s * 0.5)
                return 0;
        if (build_frame(tp) < 0)
                return -fail(tp, EXIT_FAILED, "out of memory");
        acc_reset(tp);
        tp->frames++;
        if (tp->curses) {
                if (!tp->paused)
                        draw(tp);
        } else
                print_plain(tp);
        if (tp->once || (tp->iterations > 0 && tp->frames >= tp->iterations))
                return 1;
        return 0;
}

static int loop(struct top *tp)
{
        int64_t last = now_monotonic_ns();

        for (;;) {
                struct pollfd p[2] = { { .fd = sub_fd(tp->sub), .events = POLLIN },
                                       { .fd = STDIN_FILENO, .events = POLLIN } };
                _cleanup_free_ char *err = NULL;
                enum sub_event ev;
                int r, ch;

                if (got_signal)
                        return 128 + got_signal;
                /* everything received first: drawing never holds the socket */
                while ((r = sub_next(tp->sub, &ev, &err)) == 0 && ev != SUB_NONE) {
                        last = now_monotonic_ns();
                        r = on_event(tp, ev);
                        if (r == 1)
                                return EXIT_OK;
                        if (r < 0)
                                return -r;
                }
                if (r == -ECONNRESET)
                        return fail(tp, EXIT_FAILED, "scalemond closed the connection (it stopped, or dropped this "
                                                     "subscriber for not reading fast enough: see its log)");
                if (r < 0)
                        return fail(tp, EXIT_FAILED, "%s", err ? err : strerror(-r));
                if (tp->curses)
                        while ((ch = getch()) != ERR) {
                                r = on_key(tp, ch);
                                if (r > 0)
                                        return EXIT_OK;
                                if (r < 0)
                                        return fail(tp, EXIT_FAILED, "lost the connection to scalemond");
                        }
                if (tp->curses && !tp->frame.rows && now_monotonic_ns() - last > 3 * NSEC_PER_SEC)
                        draw_waiting("waiting for scalemond's first tick ...");
                if (poll(p, tp->curses ? 2 : 1, WAIT_MS) < 0 && errno != EINTR)
                        return fail(tp, EXIT_FAILED, "poll: %s", strerror(errno));
        }
}

static void usage(void)
{
        printf("Usage: scalemonctl top [--per cpu|node] [--metric M,...] [--once] [--iterations N]\n"
               "Rates of the counters per CPU (or node), refreshed every tick while scalemond samples.\n"
               "On a terminal, keys: q quit, m or 1-%zu switch the counters (", ELEMENTSOF(builtin_sets));
        for (size_t i = 0; i < ELEMENTSOF(builtin_sets); i++)
                printf("%s%s", i ? ", " : "", builtin_sets[i].name);
        printf("),\n  s/S sort by the next/previous column, n per CPU/node, space pause.\n"
               "Not on a terminal, or with --once: plain text, one block per refresh.\n");
}

static int parse_metrics(struct top *tp, char *arg)
{
        char *save = NULL;

        for (char *tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                if (metric_id_by_name(tok) < 0)
                        return ctl_fail(EXIT_USAGE, "--metric: unknown metric '%s' (scalemonctl metrics lists them)",
                                        tok);
                if (tp->ncustom == TOP_MAX_COLS)
                        return ctl_fail(EXIT_USAGE, "--metric: at most %d metrics", TOP_MAX_COLS);
                tp->custom[tp->ncustom++] = tok;
        }
        if (tp->ncustom == 0)
                return ctl_fail(EXIT_USAGE, "--metric: give metric names, separated by commas");
        return 0;
}

int verb_top(struct ctl *ctl, int argc, char **argv)
{
        static const struct option options[] = {
                { "per", required_argument, NULL, 'p' },
                { "metric", required_argument, NULL, 'm' },
                { "once", no_argument, NULL, '1' },
                { "iterations", required_argument, NULL, 'n' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        struct top tp = { .ctl = ctl, .sort = -1, .per = SUB_LOC_CPU };
        struct sigaction sa = { .sa_handler = on_signal }, old[3];
        static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
        int c, r, cursor = -1;

        while ((c = ctl_getopt(argc, argv, "", options)) >= 0) {
                switch (c) {
                case 'p':
                        if (streq(optarg, "cpu"))
                                tp.per = SUB_LOC_CPU;
                        else if (streq(optarg, "node"))
                                tp.per = SUB_LOC_NODE;
                        else
                                return ctl_fail(EXIT_USAGE, "--per '%s': use cpu or node", optarg);
                        tp.per_given = true;
                        break;
                case 'm':
                        if ((r = parse_metrics(&tp, optarg)))
                                return r;
                        break;
                case '1':
                        tp.once = true;
                        break;
                case 'n':
                        if ((r = ctl_int("--iterations", optarg, 1, 1000000000L, &tp.iterations)))
                                return r;
                        break;
                case 'h':
                        usage();
                        return EXIT_OK;
                default:
                        return EXIT_USAGE;
                }
        }
        if (optind < argc)
                return ctl_fail(EXIT_USAGE, "top takes no arguments, got '%s'; try 'scalemonctl top --help'",
                                argv[optind]);
        if (tp.once && tp.iterations > 0)
                return ctl_fail(EXIT_USAGE, "use --once or --iterations, not both");
        tp.nsets = (int)ELEMENTSOF(builtin_sets) + (tp.ncustom ? 1 : 0);
        tp.curses = !tp.once && isatty(STDOUT_FILENO) && isatty(STDIN_FILENO);

        r = sub_open(ctl, false, &tp.sub);
        if (r)
                return r;
        if (request(&tp) < 0) {
                r = ctl_fail(EXIT_FAILED, "lost the connection to scalemond at %s", ctl->socket_path);
                goto out;
        }
        /* no work in the handlers: they set a flag that the loop reads; set
         * before initscr(), so that ncurses leaves them to us */
        for (size_t i = 0; i < ELEMENTSOF(sigs); i++)
                sigaction(sigs[i], &sa, &old[i]);
        if (tp.curses) {
                setlocale(LC_ALL, "");
                if (!initscr()) {
                        r = ctl_fail(EXIT_FAILED, "cannot set up the terminal");
                        goto restore;
                }
                cbreak();
                noecho();
                nodelay(stdscr, TRUE);
                keypad(stdscr, TRUE);
                cursor = curs_set(0);
                draw_waiting("waiting for scalemond ...");
        }
        r = loop(&tp);
        if (tp.curses) {
                if (cursor != ERR)
                        curs_set(cursor);
                endwin();
        }
        if (tp.err)
                ctl_fail(r, "%s", tp.err);
restore:
        for (size_t i = 0; i < ELEMENTSOF(sigs); i++)
                sigaction(sigs[i], &old[i], NULL);
out:
        free(tp.err);
        free(tp.frame.rows);
        free(tp.frame.runs);
        free(tp.sum);
        free(tp.count);
        sub_close(tp.sub);
        return r;
}
