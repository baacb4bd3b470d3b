/* verb-top.c - `scalemonctl top`: watch the counters while a benchmark runs.
 *
 * scalemond pushes each tick's deltas on a subscription (sub.c); top
 * turns them into frames (struct top_frame in top.h: one row per CPU or
 * node, the chosen counters' rates, a totals row, the open runs) and one
 * of two formatters (top-screen.c) prints a frame: ncurses on a terminal,
 * plain text otherwise (and with --once).  A frame covers whole ticks,
 * at least half an interval of them (a run boundary's short tick is
 * merged into the next),
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

#include "cli.h"
#include "metric.h"
#include "sub.h"
#include "suggest.h"
#include "timeutil.h"
#include "top-screen.h"
#include "verbs.h"

#define WAIT_MS      500        /* keys are looked at this often at least */

/* The counter sets the keys switch between (1..N, m); --metric makes its
 * own set, the first.  A metric the kernel cannot count shows as "-". */
static const struct counter_set {
        const char *name;
        const char *metrics[8];
} builtin_sets[] = {
        { "sched", { "context_switches", "cpu_migrations", "lock_contentions", "cpu_user", "cpu_system" } },
        { "faults", { "page_faults", "page_faults_minor", "page_faults_major", "cpu_user", "cpu_system", "pgfault",
                      "pgmajfault" } },
        { "kvm", { "kvm_exits", "kvm_pause_exits", "kvm_ple_window_updates", "cpu_guest", "cpu_steal" } },
        { "pmu", { "cycles", "instructions", "cpu_user", "cpu_system" } },
};

/* The per-CPU fault events are off by default (scalemon.conf(5),
 * per_cpu_faults): in a built-in set, such a column is left out where the
 * machine's own count (/proc/vmstat, on the system: line) stands in. */
static const struct {
        const char *metric, *stand_in;
} stand_ins[] = {
        { "page_faults", "pgfault" },
        { "page_faults_minor", "pgfault" },
        { "page_faults_major", "pgmajfault" },
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

static bool stood_in(const struct top *tp, const char *metric)
{
        const struct sub_info *in = sub_info(tp->sub);

        if (tp->ncustom && tp->set == 0)
                return false;   /* --metric shows what it names */
        for (size_t i = 0; i < ELEMENTSOF(stand_ins); i++)
                if (streq(stand_ins[i].metric, metric)) {
                        int mi = sub_metric_index(tp->sub, stand_ins[i].stand_in);
                        return mi >= 0 && in->metrics[mi].available;
                }
        return false;
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

/* The frame's columns: the set's metrics that have a value per row, then
 * the extras where the daemon has them; the rest go to "others"; and the
 * pressure figures. */
static void frame_columns(struct top *tp, struct top_frame *f, enum sub_loc rowloc)
{
        const struct sub_info *in = sub_info(tp->sub);
        const char *want[TOP_MAX_COLS];
        size_t nwant = set_metrics(tp, tp->set, want, TOP_MAX_COLS);

        for (size_t i = 0; i < nwant + ELEMENTSOF(extra_cols); i++) {
                const char *name = i < nwant ? want[i] : extra_cols[i - nwant];
                int mi = sub_metric_index(tp->sub, name);
                const struct sub_metric *m;
                const char *lb;

                if (mi < 0)
                        continue;
                m = &in->metrics[mi];
                if (!m->available && (i >= nwant || stood_in(tp, name)))
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
}

/* The frame's rows (a CPU's or a node's, those that exist), its total,
 * sorted by the chosen column. */
static int frame_rows(struct top *tp, struct top_frame *f, enum sub_loc rowloc)
{
        const struct sub_info *in = sub_info(tp->sub);
        int nrows = rowloc == SUB_LOC_CPU ? in->ncpus : in->nnodes;

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

static int build_frame(struct top *tp)
{
        const struct sub_info *in = sub_info(tp->sub);
        const struct sub_tick *t = sub_tick(tp->sub);
        struct top_frame *f = &tp->frame;
        enum sub_loc rowloc = in->per == SUB_LOC_NODE ? SUB_LOC_NODE : SUB_LOC_CPU;

        free(f->rows);
        free(f->runs);
        memset(f, 0, sizeof *f);
        f->set_name = set_name(tp, tp->set);
        f->nsets = tp->nsets;
        f->folded = tp->folded;
        f->paused = tp->paused;
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

        frame_columns(tp, f, rowloc);
        return frame_rows(tp, f, rowloc);
}

static bool want_fold(const struct top *tp)
{
        const struct sub_info *in = sub_info(tp->sub);

        if (!tp->curses || tp->per_given || !in->metrics)
                return tp->folded;
        return in->ncpus > top_rows_fit() && in->nnodes < in->ncpus;
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
                tp->paused = tp->frame.paused = !tp->paused;
                if (tp->frame.rows)
                        top_draw(&tp->frame);
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
                        top_draw(&tp->frame);
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
                        top_draw(&tp->frame);
        } else
                top_print_plain(&tp->frame);
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
                        top_draw_waiting("waiting for scalemond's first tick ...");
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
                if (metric_id_by_name(tok) < 0) {
                        char hint[160];
                        return ctl_fail(EXIT_USAGE, "--metric: unknown metric '%s' (scalemonctl metrics lists them)%s",
                                        tok, suggest_metric_hint(tok, hint, sizeof hint));
                }
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
                top_draw_waiting("waiting for scalemond ...");
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
