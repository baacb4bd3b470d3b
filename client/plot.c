/* plot.c - `scalemonctl plot KIND`: charts drawn by gnuplot.
 *
 * Each kind gathers its data into one model - series of points (with
 * optional min/max bars), vertical markers, fitted functions, or a heat
 * map - and the model is either written as JSON (--format json), or as a
 * gnuplot script piped into gnuplot: the dumb terminal, sized to the
 * terminal, without -o; svg or pngcairo with -o FILE.svg|FILE.png.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "explain.h"         /* plot explain (issue 14) */
#include "proto.h"
#include "report.h"
#include "stats.h"
#include "timeutil.h"

#define MAX_POINTS 300          /* a time series is merged down to this many */
#define HEAT_BINS  120

enum pstyle {
        STYLE_LINES,            /* lines with small points */
        STYLE_ERRORLINES,       /* points joined, with min/max bars */
        STYLE_POINTS,           /* points alone */
        STYLE_MARKED,           /* big open circles over other points */
        STYLE_BAND,             /* the area between ylo and yhi (plot explain) */
};

struct pseries {
        char *name;
        enum pstyle style;
        double *x, *y, *ylo, *yhi;
        size_t n, cap;
};

struct pmark {
        double x;
        char *text;
};

struct pfunc {
        char *name;
        char *expr;             /* gnuplot expression in x */
        bool dashed, grey;
};

struct plot {
        const char *kind;
        char title[512], xlabel[256], ylabel[256];
        struct pseries *s;
        size_t ns;
        struct pmark *marks;
        size_t nmarks;
        struct pfunc *funcs;
        size_t nfuncs;
        double (*shade)[2];     /* x ranges shaded behind the series (plot explain's phases) */
        size_t nshade;
        json_t *xtics;          /* [{"label", "x"}] for categories, or NULL */
        bool logx;
        const char *key;        /* where the legend goes in files (gnuplot "set key") */
        bool yzero;             /* y axis from 0 */
        /* heat map: z[y * hx + x] */
        bool heat;
        size_t hx, hy;
        double *hz, hx0, hdx;
        char zlabel[128];
};

static void plot_free(struct plot *p)
{
        for (size_t i = 0; i < p->ns; i++) {
                free(p->s[i].name);
                free(p->s[i].x);
                free(p->s[i].y);
                free(p->s[i].ylo);
                free(p->s[i].yhi);
        }
        free(p->s);
        for (size_t i = 0; i < p->nmarks; i++)
                free(p->marks[i].text);
        free(p->marks);
        for (size_t i = 0; i < p->nfuncs; i++) {
                free(p->funcs[i].name);
                free(p->funcs[i].expr);
        }
        free(p->funcs);
        free(p->shade);
        json_decref(p->xtics);
        free(p->hz);
}

static void set_text(char *buf, size_t len, const char *fmt, ...) _printf_(3, 4);
static void set_text(char *buf, size_t len, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, len, fmt, ap);
        va_end(ap);
}

static struct pseries *add_series(struct plot *p, const char *name, enum pstyle style)
{
        struct pseries *s = realloc(p->s, (p->ns + 1) * sizeof *s);
        if (!s)
                return NULL;
        p->s = s;
        s = &p->s[p->ns++];
        memset(s, 0, sizeof *s);
        s->name = strdup(name);
        s->style = style;
        return s->name ? s : NULL;
}

static int add_point(struct pseries *s, double x, double y, double ylo, double yhi)
{
        if (s->n == s->cap) {
                size_t cap = s->cap ? s->cap * 2 : 64;
                double *a = realloc(s->x, cap * sizeof *a), *b, *c, *d;
                if (!a)
                        return -ENOMEM;
                s->x = a;
                if (!(b = realloc(s->y, cap * sizeof *b)))
                        return -ENOMEM;
                s->y = b;
                if (!(c = realloc(s->ylo, cap * sizeof *c)))
                        return -ENOMEM;
                s->ylo = c;
                if (!(d = realloc(s->yhi, cap * sizeof *d)))
                        return -ENOMEM;
                s->yhi = d;
                s->cap = cap;
        }
        s->x[s->n] = x;
        s->y[s->n] = y;
        s->ylo[s->n] = ylo;
        s->yhi[s->n] = yhi;
        s->n++;
        return 0;
}

static int add_mark(struct plot *p, double x, const char *text)
{
        struct pmark *m = realloc(p->marks, (p->nmarks + 1) * sizeof *m);
        if (!m)
                return -ENOMEM;
        p->marks = m;
        m[p->nmarks].x = x;
        m[p->nmarks].text = strdup(text);
        return m[p->nmarks++].text ? 0 : -ENOMEM;
}

static int add_func(struct plot *p, const char *name, const char *expr, bool dashed, bool grey)
{
        struct pfunc *f = realloc(p->funcs, (p->nfuncs + 1) * sizeof *f);
        if (!f)
                return -ENOMEM;
        p->funcs = f;
        f = &f[p->nfuncs++];
        f->name = strdup(name);
        f->expr = strdup(expr);
        f->dashed = dashed;
        f->grey = grey;
        return f->name && f->expr ? 0 : -ENOMEM;
}

/* ---- JSON ---- */

static json_t *plot_json(const struct plot *p)
{
        json_t *o = json_pack("{s:s,s:s,s:s,s:s}", "kind", p->kind, "title", p->title, "xlabel", p->xlabel, "ylabel",
                              p->ylabel);
        json_t *series = json_array(), *marks = json_array(), *funcs = json_array();

        for (size_t i = 0; i < p->ns; i++) {
                json_t *pts = json_array();
                for (size_t k = 0; k < p->s[i].n; k++) {
                        json_t *pt = json_pack("{s:o,s:o}", "x", json_number(p->s[i].x[k]), "y", json_number(p->s[i].y[k]));
                        if (p->s[i].style == STYLE_ERRORLINES || p->s[i].style == STYLE_BAND) {
                                json_object_set_new(pt, "ymin", json_number(p->s[i].ylo[k]));
                                json_object_set_new(pt, "ymax", json_number(p->s[i].yhi[k]));
                        }
                        json_array_append_new(pts, pt);
                }
                json_array_append_new(series, json_pack("{s:s,s:o}", "name", p->s[i].name, "points", pts));
        }
        for (size_t i = 0; i < p->nmarks; i++)
                json_array_append_new(marks, json_pack("{s:f,s:s}", "x", p->marks[i].x, "text", p->marks[i].text));
        for (size_t i = 0; i < p->nfuncs; i++)
                json_array_append_new(funcs, json_pack("{s:s,s:s}", "name", p->funcs[i].name, "expression", p->funcs[i].expr));
        json_object_set_new(o, "series", series);
        json_object_set_new(o, "markers", marks);
        json_object_set_new(o, "functions", funcs);
        if (p->nshade) {
                json_t *sh = json_array();
                for (size_t i = 0; i < p->nshade; i++)
                        json_array_append_new(sh, json_pack("{s:f,s:f}", "from", p->shade[i][0], "to", p->shade[i][1]));
                json_object_set_new(o, "shaded", sh);
        }
        if (p->xtics)
                json_object_set(o, "categories", p->xtics);
        if (p->heat) {
                json_t *xs = json_array(), *ys = json_array(), *z = json_array();
                for (size_t x = 0; x < p->hx; x++)
                        json_array_append_new(xs, json_real(p->hx0 + (double)x * p->hdx));
                for (size_t y = 0; y < p->hy; y++) {
                        json_t *row = json_array();
                        json_array_append_new(ys, json_integer((json_int_t)y));
                        for (size_t x = 0; x < p->hx; x++)
                                json_array_append_new(row, json_number(p->hz[y * p->hx + x]));
                        json_array_append_new(z, row);
                }
                json_object_set_new(o, "heatmap", json_pack("{s:o,s:o,s:o,s:s}", "x", xs, "y", ys, "z", z, "zlabel",
                                                            p->zlabel));
        }
        return o;
}

/* ---- gnuplot ---- */

/* A gnuplot single-quoted string: no escapes but '' for a quote. */
static void gp_str(FILE *f, const char *s)
{
        fputc('\'', f);
        for (; *s; s++) {
                if (*s == '\'')
                        fputc('\'', f);
                if ((unsigned char)*s >= 0x20)
                        fputc(*s, f);
        }
        fputc('\'', f);
}

static const char *const colours[] = { "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
                                       "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22" };

static void terminal_size(int *cols, int *rows)
{
        struct winsize ws;
        const char *c = getenv("COLUMNS"), *l = getenv("LINES");

        *cols = 100;
        *rows = 30;
        if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20 && ws.ws_row > 10) {
                *cols = ws.ws_col;
                *rows = ws.ws_row - 1;
        } else {
                if (c && atoi(c) > 20)
                        *cols = atoi(c);
                if (l && atoi(l) > 10)
                        *rows = atoi(l) - 1;
        }
        if (*cols > 400)
                *cols = 400;
        if (*rows > 150)
                *rows = 150;
}

static void write_script(FILE *f, const struct plot *p, const char *output, bool png)
{
        bool dumb = !output;
        bool first = true;
        int cols, rows;

        if (dumb) {
                terminal_size(&cols, &rows);
                fprintf(f, "set terminal dumb size %d,%d nofeed\n", cols, rows);
        } else if (png)
                fprintf(f, "set terminal pngcairo size 1000,620 enhanced font 'Sans,12' background '#ffffff'\n");
        else
                fprintf(f, "set terminal svg size 1000,620 dynamic enhanced font 'Sans,13' background '#ffffff'\n");
        /* Every text is set noenhanced (metric names have underscores);
         * the terminal stays enhanced so that svg names each series. */
        if (output) {
                fprintf(f, "set output ");
                gp_str(f, output);
                fputc('\n', f);
        }
        fprintf(f, "set encoding utf8\nset title ");
        if (dumb && p->heat) {
                char t[700];
                snprintf(t, sizeof t, "%s (from low to high: . : - = + * # %% @)", p->title);
                gp_str(f, t);
        } else
                gp_str(f, p->title);
        fprintf(f, " noenhanced\nset xlabel ");
        gp_str(f, p->xlabel);
        if (dumb) {
                /* a dumb terminal cannot turn text: the y label is the
                 * title's second line */
                fprintf(f, " noenhanced\nset title \"");
                for (const char *c = p->title; *c; c++)
                        fprintf(f, "%s%c", *c == '"' || *c == '\\' ? "\\" : "", (unsigned char)*c >= 0x20 ? *c : ' ');
                fprintf(f, "\\ny: ");
                for (const char *c = p->ylabel; *c; c++)
                        fprintf(f, "%s%c", *c == '"' || *c == '\\' ? "\\" : "", (unsigned char)*c >= 0x20 ? *c : ' ');
                fprintf(f, "\" noenhanced");
        } else {
                fprintf(f, " noenhanced\nset ylabel ");
                gp_str(f, p->ylabel);
                fprintf(f, " noenhanced");
        }
        fprintf(f, "\nset xtics noenhanced\nset ytics noenhanced");
        fprintf(f, "\nset key %s\n", dumb ? (p->heat ? "off" : "below") : p->heat ? "off" : p->key ? p->key : "outside right top");
        if (p->yzero)
                fprintf(f, "set yrange [0:*]\n");
        if (!dumb)
                fprintf(f, "set grid lc rgb '#dddddd'\nset border lc rgb '#444444'\n");
        if (p->logx)
                fprintf(f, "set logscale x 2\n");
        if (p->xtics) {
                size_t i;
                json_t *t;
                fprintf(f, "set xtics (");
                json_array_foreach(p->xtics, i, t) {
                        fprintf(f, "%s", i ? ", " : "");
                        gp_str(f, json_string_value(json_object_get(t, "label")));
                        fprintf(f, " %g", json_number_value(json_object_get(t, "x")));
                }
                fprintf(f, ") noenhanced\nset xrange [-0.5:%g]\n", (double)json_array_size(p->xtics) - 0.5);
        }
        for (size_t i = 0; i < p->nshade; i++)
                fprintf(f, "set object %zu rect from %.6g, graph 0 to %.6g, graph 1 behind fc rgb '#f4c7c3' fs solid 0.6 noborder\n",
                        i + 1, p->shade[i][0], p->shade[i][1]);
        for (size_t i = 0; i < p->nmarks; i++) {
                fprintf(f, "set arrow from %.6g, graph 0 to %.6g, graph 1 nohead front lc rgb '#555555' dt 3 lw 1.5\n",
                        p->marks[i].x, p->marks[i].x);
                fprintf(f, "set label ");
                gp_str(f, p->marks[i].text);
                fprintf(f, " at %.6g, graph 0.97 left rotate by -90 offset 0.5,0 front tc rgb '#333333' noenhanced\n",
                        p->marks[i].x);
        }

        if (p->heat) {
                fprintf(f, "$heat << EOD\n");
                for (size_t y = 0; y < p->hy; y++)
                        for (size_t x = 0; x < p->hx; x++)
                                fprintf(f, "%.6g %zu %.6g\n", p->hx0 + (double)x * p->hdx, y, p->hz[y * p->hx + x]);
                fprintf(f, "EOD\n");
                fprintf(f, "set yrange [-0.5:%g]\nset ytics 1\nset cblabel ", (double)p->hy - 0.5);
                gp_str(f, p->zlabel);
                fprintf(f, " noenhanced\n");
                if (dumb) {
                        /* no colours here: one character per cell, by intensity */
                        double max = 0;
                        for (size_t i = 0; i < p->hx * p->hy; i++)
                                max = fmax(max, p->hz[i]);
                        fprintf(f, "set xrange [%g:%g]\nunset colorbox\n", p->hx0 - p->hdx / 2,
                                p->hx0 + (double)p->hx * p->hdx - p->hdx / 2);
                        fprintf(f, "shade(z) = z <= 0 ? ' ' : substr('.:-=+*#%%@', int(z / %.17g * 8.999) + 1, int(z / %.17g * 8.999) + 1)\n",
                                max > 0 ? max : 1, max > 0 ? max : 1);
                        fprintf(f, "plot $heat using 1:2:(shade($3)) with labels notitle\n");
                } else {
                        fprintf(f, "set palette defined (0 '#ffffff', 1 '#fde725', 2 '#f89540', 3 '#cc4778', 4 '#0d0887')\n");
                        fprintf(f, "set xrange [%g:%g]\n", p->hx0 - p->hdx / 2, p->hx0 + (double)p->hx * p->hdx - p->hdx / 2);
                        fprintf(f, "plot $heat using 1:2:3 with image title ");
                        gp_str(f, p->zlabel);
                        fprintf(f, " noenhanced\n");
                }
                return;
        }

        for (size_t i = 0; i < p->ns; i++) {
                fprintf(f, "$s%zu << EOD\n", i);
                for (size_t k = 0; k < p->s[i].n; k++)
                        fprintf(f, "%.10g %.10g %.10g %.10g\n", p->s[i].x[k], p->s[i].y[k], p->s[i].ylo[k], p->s[i].yhi[k]);
                fprintf(f, "EOD\n");
        }
        for (size_t i = 0; i < p->nfuncs; i++)
                fprintf(f, "f%zu(x) = %s\n", i, p->funcs[i].expr);
        fprintf(f, "plot ");
        for (size_t i = 0; i < p->ns; i++) {
                const char *c = colours[i % ELEMENTSOF(colours)];
                if (p->s[i].n == 0)
                        continue;
                fprintf(f, "%s$s%zu ", first ? "" : ", \\\n     ", i);
                switch (p->s[i].style) {
                case STYLE_LINES:
                        fprintf(f, "using 1:2 with linespoints pt 7 ps 0.35 lw 1.5 lc rgb '%s'", c);
                        break;
                case STYLE_ERRORLINES:
                        fprintf(f, "using 1:2:3:4 with yerrorlines pt 7 ps 0.9 lw 2 lc rgb '%s'", c);
                        break;
                case STYLE_POINTS:
                        fprintf(f, "using 1:2 with points pt 7 ps 1.2 lc rgb '%s'", c);
                        break;
                case STYLE_MARKED:
                        fprintf(f, "using 1:2 with points pt 6 ps 3.5 lw 2 lc rgb '#e41a1c'");
                        break;
                case STYLE_BAND:    /* in the colour of the line drawn after it */
                        fprintf(f, "using 1:3:4 with filledcurves fc rgb '%s' fs transparent solid 0.2 noborder",
                                colours[(i + 1) % ELEMENTSOF(colours)]);
                        break;
                }
                fprintf(f, " title ");
                gp_str(f, p->s[i].name);
                fprintf(f, " noenhanced");
                first = false;
        }
        for (size_t i = 0; i < p->nfuncs; i++) {
                const char *c = p->funcs[i].grey ? "#999999" : colours[i % ELEMENTSOF(colours)];
                fprintf(f, "%sf%zu(x) with lines lw 1.5 %s lc rgb '%s' title ", first ? "" : ", \\\n     ", i,
                        p->funcs[i].dashed ? "dt 2" : "", c);
                gp_str(f, p->funcs[i].name);
                fprintf(f, " noenhanced");
                first = false;
        }
        if (first)
                fprintf(f, "NaN notitle");
        fputc('\n', f);
}

/* gnuplot on PATH, or NULL. */
static char *find_gnuplot(void)
{
        const char *env = getenv("SCALEMON_GNUPLOT"), *path = getenv("PATH");
        char buf[4096];

        if (env && *env)
                return access(env, X_OK) == 0 ? strdup(env) : NULL;
        if (!path)
                return NULL;
        for (const char *p = path; *p;) {
                const char *e = strchr(p, ':');
                size_t n = e ? (size_t)(e - p) : strlen(p);
                if (n > 0 && n < sizeof buf - 10) {
                        snprintf(buf, sizeof buf, "%.*s/gnuplot", (int)n, p);
                        if (access(buf, X_OK) == 0)
                                return strdup(buf);
                }
                p = e ? e + 1 : p + n;
        }
        return NULL;
}

static int render(const struct plot *p, const char *output)
{
        _cleanup_free_ char *gp = find_gnuplot(), *tmp = NULL;
        bool png = output && strlen(output) > 4 && streq(output + strlen(output) - 4, ".png");
        int pfd[2], ofd[2] = { -1, -1 }, status;
        pid_t pid;
        FILE *f;

        if (!gp)
                return ctl_fail(EXIT_FAILED, "plot needs gnuplot, which is not on PATH: install it (Debian: "
                                             "apt-get install gnuplot-nox), or use --format json to get the data");
        if (output && asprintf(&tmp, "%s.tmp%d", output, (int)getpid()) < 0)
                return ctl_fail(EXIT_FAILED, "out of memory");
        if (pipe2(pfd, O_CLOEXEC) < 0 || (!output && pipe2(ofd, O_CLOEXEC) < 0))
                return ctl_fail(EXIT_FAILED, "cannot make a pipe: %s", strerror(errno));
        fflush(stdout);
        pid = fork();
        if (pid < 0)
                return ctl_fail(EXIT_FAILED, "cannot fork: %s", strerror(errno));
        if (pid == 0) {
                dup2(pfd[0], STDIN_FILENO);
                if (ofd[1] >= 0)
                        dup2(ofd[1], STDOUT_FILENO);
                execl(gp, "gnuplot", (char *)NULL);
                fprintf(stderr, "scalemonctl: cannot run %s: %s\n", gp, strerror(errno));
                _exit(127);
        }
        close(pfd[0]);
        f = fdopen(pfd[1], "w");
        if (!f) {
                close(pfd[1]);
                waitpid(pid, NULL, 0);
                return ctl_fail(EXIT_FAILED, "out of memory");
        }
        write_script(f, p, tmp, png);
        fclose(f);
        if (ofd[0] >= 0) {
                /* the terminal chart, without the form feed gnuplot starts
                 * a page with */
                char buf[8192];
                ssize_t k;
                close(ofd[1]);
                while ((k = read(ofd[0], buf, sizeof buf)) > 0)
                        for (ssize_t i = 0; i < k; i++)
                                if (buf[i] != '\f')
                                        putchar(buf[i]);
                close(ofd[0]);
                fflush(stdout);
        }
        if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                if (tmp)
                        unlink(tmp);
                return ctl_fail(EXIT_FAILED, "gnuplot failed (exit %d) drawing the %s chart", WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                                p->kind);
        }
        /* the file appears whole, or not at all */
        if (tmp && rename(tmp, output) < 0) {
                int e = errno;
                unlink(tmp);
                return ctl_fail(EXIT_FAILED, "cannot write %s: %s", output, strerror(e));
        }
        return EXIT_OK;
}

/* ---- the kinds ---- */

struct popts {
        const char *metric, *run, *score, *by, *series, *output;
        char *against;          /* plot explain --against RUN,... */
        const char *per;
        struct run_select sel;
        struct group_opts go;
        bool y_score;           /* curve: the score rather than the speedup */
};

static double pick_step(int64_t span, int64_t tick)
{
        int64_t step = span / MAX_POINTS;
        return step > tick ? (double)step : 0;
}

/* Time range and markers: a run, or --since/--until. */
static int time_range(struct ctl *ctl, struct popts *o, struct plot *p, int64_t *since, int64_t *until, char *what,
                      size_t whatlen)
{
        int r;

        if (o->run) {
                struct run_info ri;
                struct run_detail d;
                const char *why;
                if (!proto_valid_name(o->run, &why))
                        return ctl_fail(EXIT_USAGE, "--run '%s': %s", o->run, why);
                if (store_run_find(ctl->store, o->run, &ri) < 0)
                        return ctl_fail(EXIT_FAILED, "no run named '%s' (see scalemonctl runs)", o->run);
                if (ri.imported) {
                        run_info_free(&ri);
                        return ctl_fail(EXIT_FAILED, "run %s was imported: its samples are in the database it came from",
                                        o->run);
                }
                *since = ri.start;
                *until = ri.end ? ri.end : now_realtime_ns();
                if (store_run_detail(ctl->store, ri.id, &d) == 0) {
                        for (size_t i = 0; i < d.nmarks; i++)
                                add_mark(p, (double)(d.marks[i].t - ri.start) / 1e9, d.marks[i].text);
                        run_detail_free(&d);
                }
                set_text(what, whatlen, "run %s", o->run);
                run_info_free(&ri);
                return 0;
        }
        if ((r = ctl_when(ctl, "--since", o->sel.since_arg ? o->sel.since_arg : "-5m", false, since)) ||
            (r = ctl_when(ctl, "--until", o->sel.until_arg ? o->sel.until_arg : "now", true, until)))
                return r;
        if (*until <= *since)
                return ctl_fail(EXIT_USAGE, "--until is not after --since");
        set_text(what, whatlen, "%s", o->sel.since_arg ? o->sel.since_arg : "the last 5 minutes");
        return 0;
}

static const struct metric_def *need_metric(const char *m, int *r)
{
        const struct metric_def *def = m ? metric_by_name(m) : NULL;
        if (!m)
                *r = ctl_fail(EXIT_USAGE, "this plot needs a METRIC (scalemonctl metrics lists them)");
        else if (!def)
                *r = ctl_fail(EXIT_USAGE, "unknown metric '%s' (scalemonctl metrics lists them)", m);
        return def;
}

static int64_t interval_ns(struct ctl *ctl)
{
        int64_t iv = NSEC_PER_SEC;
        store_meta_get_int(ctl->store, "interval_ns", &iv);
        return iv;
}

static int kind_timeseries(struct ctl *ctl, struct popts *o, struct plot *p)
{
        const struct metric_def *def;
        int64_t since, until, step;
        _cleanup_free_ int *node_of = NULL;
        int ncpu = 0, r = 0;
        char what[256];
        enum series_filter f = SERIES_ALL;
        int nlocs = 1;

        def = need_metric(o->metric, &r);
        if (!def)
                return r;
        if ((r = time_range(ctl, o, p, &since, &until, what, sizeof what)))
                return r;
        if (store_topology_get(ctl->store, &node_of, NULL, &ncpu) < 0)
                return ctl_fail(EXIT_FAILED, "cannot read the CPU map: %s", store_errmsg(ctl->store));
        if (o->per && streq(o->per, "cpu")) {
                if (def->scope != SCOPE_CPU)
                        return ctl_fail(EXIT_USAGE, "--per cpu: %s is not a per-CPU metric", o->metric);
                f = SERIES_CPU;
                nlocs = ncpu;
        } else if (o->per && streq(o->per, "node")) {
                int maxnode = 0;
                if (def->scope == SCOPE_SYSTEM)
                        return ctl_fail(EXIT_USAGE, "--per node: %s is a system-wide metric", o->metric);
                for (int i = 0; i < ncpu; i++)
                        maxnode = MAX(maxnode, node_of[i]);
                f = SERIES_NODE;
                nlocs = maxnode + 1;
        } else if (o->per && !streq(o->per, "system"))
                return ctl_fail(EXIT_USAGE, "--per '%s': use system, node or cpu", o->per);
        step = (int64_t)pick_step(until - since, interval_ns(ctl));

        for (int loc = 0; loc < nlocs; loc++) {
                struct series_point *pts = NULL;
                struct pseries *s;
                size_t n = 0;
                char name[64];
                if (f == SERIES_NODE) {
                        bool exists = false;
                        for (int i = 0; i < ncpu; i++)
                                exists |= node_of[i] == loc;
                        if (!exists)
                                continue;
                }
                if (store_series(ctl->store, o->metric, f, loc, since - interval_ns(ctl) / 2, until, step, &pts, &n) < 0)
                        return ctl_fail(EXIT_FAILED, "cannot read %s: %s", o->metric, store_errmsg(ctl->store));
                if (f == SERIES_CPU)
                        snprintf(name, sizeof name, "cpu%d", loc);
                else if (f == SERIES_NODE)
                        snprintf(name, sizeof name, "node%d", loc);
                else
                        snprintf(name, sizeof name, "all CPUs");
                s = add_series(p, name, STYLE_LINES);
                for (size_t i = 0; s && i < n; i++)
                        if (!pts[i].not_counted && pts[i].dur_ns > 0)
                                add_point(s, (double)(pts[i].t_ns - since) / 1e9, pts[i].value / ((double)pts[i].dur_ns / 1e9), 0, 0);
                free(pts);
        }
        {
                size_t total = 0;
                for (size_t i = 0; i < p->ns; i++)
                        total += p->s[i].n;
                if (total == 0)
                        return ctl_fail(EXIT_FAILED, "no samples of %s in %s", o->metric, what);
        }
        set_text(p->title, sizeof p->title, "%s per second, %s%s", o->metric, what,
                 f == SERIES_CPU ? ", per CPU" : f == SERIES_NODE ? ", per node" : "");
        set_text(p->xlabel, sizeof p->xlabel, "seconds since the start of %s", o->run ? o->run : "the range");
        set_text(p->ylabel, sizeof p->ylabel, "%s per second (%s/s)", o->metric, def->unit);
        p->yzero = true;
        return 0;
}

static int kind_heatmap(struct ctl *ctl, struct popts *o, struct plot *p)
{
        const struct metric_def *def;
        int64_t since, until, iv = interval_ns(ctl), step;
        _cleanup_free_ int *node_of = NULL;
        int ncpu = 0, r = 0;
        char what[256];

        def = need_metric(o->metric, &r);
        if (!def)
                return r;
        if (def->scope != SCOPE_CPU)
                return ctl_fail(EXIT_USAGE, "heatmap: %s is a %s metric; the heat map is CPUs by time", o->metric,
                                metric_scope_name(def->scope));
        if ((r = time_range(ctl, o, p, &since, &until, what, sizeof what)))
                return r;
        if (store_topology_get(ctl->store, &node_of, NULL, &ncpu) < 0 || ncpu == 0)
                return ctl_fail(EXIT_FAILED, "cannot read the CPU map: %s", store_errmsg(ctl->store));
        step = (until - since) / HEAT_BINS;
        if (step < iv)
                step = iv;
        p->heat = true;
        p->hx = (size_t)((until - since + step - 1) / step);
        if (p->hx == 0)
                p->hx = 1;
        p->hy = (size_t)ncpu;
        p->hdx = (double)step / 1e9;
        p->hx0 = p->hdx / 2;
        p->hz = calloc(p->hx * p->hy, sizeof *p->hz);
        if (!p->hz)
                return ctl_fail(EXIT_FAILED, "out of memory");
        for (int c = 0; c < ncpu; c++) {
                struct series_point *pts = NULL;
                double *sum = calloc(p->hx, sizeof *sum), *dur = calloc(p->hx, sizeof *dur);
                size_t n = 0;
                if (!sum || !dur || store_series(ctl->store, o->metric, SERIES_CPU, c, since - iv / 2, until, 0, &pts, &n) < 0) {
                        free(sum);
                        free(dur);
                        return ctl_fail(EXIT_FAILED, "cannot read %s: %s", o->metric, store_errmsg(ctl->store));
                }
                for (size_t i = 0; i < n; i++) {
                        int64_t off = pts[i].t_ns - since;
                        size_t b = off < 0 ? 0 : (size_t)(off / step);
                        if (b >= p->hx || pts[i].not_counted)
                                continue;
                        sum[b] += pts[i].value;
                        dur[b] += (double)pts[i].dur_ns / 1e9;
                }
                for (size_t b = 0; b < p->hx; b++)
                        p->hz[(size_t)c * p->hx + b] = dur[b] > 0 ? sum[b] / dur[b] : 0;
                free(pts);
                free(sum);
                free(dur);
        }
        set_text(p->title, sizeof p->title, "%s per second on each CPU, %s", o->metric, what);
        set_text(p->xlabel, sizeof p->xlabel, "seconds since the start of %s", o->run ? o->run : "the range");
        set_text(p->ylabel, sizeof p->ylabel, "CPU");
        set_text(p->zlabel, sizeof p->zlabel, "%s per second (%s/s)", o->metric, def->unit);
        return 0;
}

static int kind_curve(struct ctl *ctl, struct popts *o, struct plot *p)
{
        struct rrun *runs = NULL;
        bool shown[_M_MAX];
        const char *score;
        json_t *series, *s;
        size_t n = 0, j;
        int r;

        if (!o->by)
                return ctl_fail(EXIT_USAGE, "plot curve needs --by TAG, the tag that holds N");
        if ((r = report_load(ctl, &o->sel, REPORT_TOTALS_SYSTEM, &runs, &n)))
                return r;
        score = curve_pick_score(runs, n, o->by, o->score, &r);
        if (!score) {
                report_unload(runs, n);
                return r;
        }
        for (int m = 0; m < _M_MAX; m++)
                shown[m] = false;
        series = curve_series(runs, n, o->by, o->series, score, shown, false);
        json_array_foreach(series, j, s) {
                const char *v = json_string_value(json_object_get(s, "value"));
                json_t *pts = json_object_get(s, "points"), *pt, *u = json_object_get(s, "usl");
                double x0 = 0, n0 = 1;
                char name[256], expr[512];
                struct pseries *ps;
                size_t k;

                snprintf(name, sizeof name, "%s", o->series ? v : score);
                ps = add_series(p, name, STYLE_ERRORLINES);
                json_array_foreach(pts, k, pt) {
                        double mean = json_number_value(json_object_get(pt, "mean"));
                        double nn = json_number_value(json_object_get(pt, "n"));
                        if (k == 0) {
                                x0 = mean;
                                n0 = nn;
                        }
                        if (o->y_score)
                                add_point(ps, nn, mean, json_number_value(json_object_get(pt, "min")),
                                          json_number_value(json_object_get(pt, "max")));
                        else
                                add_point(ps, nn, mean / x0 * n0, json_number_value(json_object_get(pt, "min")) / x0 * n0,
                                          json_number_value(json_object_get(pt, "max")) / x0 * n0);
                }
                if (json_is_number(json_object_get(u, "sigma")) && x0 > 0) {
                        double l = json_number_value(json_object_get(u, "lambda")),
                               sg = json_number_value(json_object_get(u, "sigma")),
                               kp = json_number_value(json_object_get(u, "kappa"));
                        /* the fitted X(N), or as a speedup: X(N) / X(N0) * N0 */
                        if (o->y_score)
                                snprintf(expr, sizeof expr, "%.10g*x/(1+%.10g*(x-1)+%.10g*x*(x-1))", l, sg, kp);
                        else
                                snprintf(expr, sizeof expr, "%.10g*x/(1+%.10g*(x-1)+%.10g*x*(x-1))/%.10g*%.10g", l, sg,
                                         kp, x0, n0);
                        snprintf(name, sizeof name, "USL fit%s%s (sigma %.3g, kappa %.3g)", o->series ? " " : "",
                                 o->series ? v : "", sg, kp);
                        add_func(p, name, expr, true, false);
                }
        }
        if (!o->y_score)
                add_func(p, "linear (ideal)", "x", true, true);
        p->key = "inside top left box";
        p->yzero = true;
        set_text(p->title, sizeof p->title, "%s by %s%s%s", o->y_score ? score : "speedup", o->by,
                 o->series ? ", one line per " : "", o->series ? o->series : "");
        set_text(p->xlabel, sizeof p->xlabel, "N (%s)", o->by);
        if (o->y_score)
                set_text(p->ylabel, sizeof p->ylabel, "%s (mean, bars: min to max)", score);
        else
                set_text(p->ylabel, sizeof p->ylabel, "speedup over the smallest N (%s, x N)", score);
        json_decref(series);
        report_unload(runs, n);
        return 0;
}

static int kind_groups(struct ctl *ctl, struct popts *o, struct plot *p)
{
        struct rrun *runs = NULL;
        json_t *groups = NULL, *all = NULL, *g, *cats;
        const char *score;
        size_t n = 0, i;
        struct pseries *hv;
        int r;

        if (!o->go.nby)
                return ctl_fail(EXIT_USAGE, "plot groups needs --group-by TAG[,TAG...]");
        if ((r = report_load(ctl, &o->sel, REPORT_TOTALS_NODE, &runs, &n)))
                return r;
        cats = json_array();    /* after the usage checks: they return early */
        score = curve_pick_score(runs, n, NULL, o->score, &r);
        if (!score || report_groups(runs, n, &o->go, &groups, &all) < 0) {
                report_unload(runs, n);
                json_decref(cats);
                return score ? ctl_fail(EXIT_FAILED, "out of memory") : r;
        }
        /* with several tags: one line per value of the first, the others
         * along x (config by ways, as the AIM7 table); with one, one line */
        json_array_foreach(groups, i, g) {
                json_t *tags = json_object_get(g, "tags"), *sc = json_object_get(json_object_get(g, "scores"), score);
                char line[256] = "", cat[256] = "";
                size_t lo = 0, co = 0, k;
                const char *key;
                json_t *v, *c;
                struct pseries *ps = NULL;
                double x = -1;
                int t = 0;

                if (!sc)
                        continue;
                json_object_foreach(tags, key, v) {
                        const char *val = json_is_string(v) ? json_string_value(v) : "(none)";
                        if (t++ == 0 && o->go.nby > 1)
                                strbuf_appendf(line, sizeof line, &lo, "%s=%s", key, val);
                        else
                                strbuf_appendf(cat, sizeof cat, &co, "%s%s=%s", co ? " " : "",
                                                       key, val);
                }
                if (!line[0])
                        snprintf(line, sizeof line, "%s", score);
                json_array_foreach(cats, k, c)
                        if (streq(json_string_value(json_object_get(c, "label")), cat))
                                x = (double)k;
                if (x < 0) {
                        x = (double)json_array_size(cats);
                        json_array_append_new(cats, json_pack("{s:s,s:f}", "label", cat, "x", x));
                }
                for (k = 0; k < p->ns; k++)
                        if (streq(p->s[k].name, line))
                                ps = &p->s[k];
                if (!ps)
                        ps = add_series(p, line, STYLE_ERRORLINES);
                add_point(ps, x, json_number_value(json_object_get(sc, "mean")), json_number_value(json_object_get(sc, "min")),
                          json_number_value(json_object_get(sc, "max")));
        }
        hv = add_series(p, "HIGH VARIANCE", STYLE_MARKED);
        json_array_foreach(groups, i, g) {
                json_t *sc = json_object_get(json_object_get(g, "scores"), score), *tags = json_object_get(g, "tags"), *c, *v;
                char cat[256] = "";
                size_t co = 0, k;
                const char *key;
                int t = 0;
                if (!sc || !json_is_true(json_object_get(g, "high_variance")))
                        continue;
                json_object_foreach(tags, key, v)
                        if (!(t++ == 0 && o->go.nby > 1))
                                strbuf_appendf(cat, sizeof cat, &co, "%s%s=%s", co ? " " : "",
                                                       key, json_is_string(v) ? json_string_value(v) : "(none)");
                json_array_foreach(cats, k, c)
                        if (streq(json_string_value(json_object_get(c, "label")), cat))
                                add_point(hv, (double)k, json_number_value(json_object_get(sc, "mean")), 0, 0);
        }
        p->xtics = cats;
        p->key = "inside top right box";
        p->yzero = true;
        set_text(p->title, sizeof p->title, "%s by group (mean, bars: min to max; circled: CV above %.0f%% or min/max below %.2f)",
                 score, o->go.cv_limit * 100, o->go.minmax_limit);
        {
                char by[256] = "";
                size_t bo = 0;
                for (size_t k = (o->go.nby > 1); k < o->go.nby; k++)
                        strbuf_appendf(by, sizeof by, &bo, "%s%s", bo ? ", " : "", o->go.by[k]);
                set_text(p->xlabel, sizeof p->xlabel, "%s", by);
        }
        set_text(p->ylabel, sizeof p->ylabel, "%s", score);
        json_decref(groups);
        json_decref(all);
        report_unload(runs, n);
        return 0;
}

static int kind_scatter(struct ctl *ctl, struct popts *o, struct plot *p)
{
        const struct metric_def *def;
        struct rrun *runs = NULL;
        double *xs, *ys, rho, pv;
        size_t n = 0, k = 0;
        const char *score;
        int r = 0;

        def = need_metric(o->metric, &r);
        if (!def)
                return r;
        if ((r = report_load(ctl, &o->sel, REPORT_TOTALS_SYSTEM, &runs, &n)))
                return r;
        score = curve_pick_score(runs, n, NULL, o->score, &r);
        if (!score) {
                report_unload(runs, n);
                return r;
        }
        xs = calloc(n + 1, sizeof *xs);
        ys = calloc(n + 1, sizeof *ys);
        for (size_t i = 0; xs && ys && i < n; i++) {
                const struct store_score *s = report_find_score(&runs[i].d, score);
                int m = (int)(def - metric_table);
                char label[256] = "runs";
                struct pseries *ps = NULL;
                size_t lo = 0;
                if (!s || !runs[i].m[m].have)
                        continue;
                if (o->go.nby) {
                        label[0] = 0;
                        for (size_t t = 0; t < o->go.nby; t++) {
                                const char *v = NULL;
                                for (size_t q = 0; q < runs[i].d.ntags; q++)
                                        if (streq(runs[i].d.tags[q].key, o->go.by[t]))
                                                v = runs[i].d.tags[q].value;
                                strbuf_appendf(label, sizeof label, &lo, "%s%s=%s",
                                                       lo ? " " : "", o->go.by[t], v ? v : "(none)");
                        }
                }
                for (size_t q = 0; q < p->ns; q++)
                        if (streq(p->s[q].name, label))
                                ps = &p->s[q];
                if (!ps)
                        ps = add_series(p, label, STYLE_POINTS);
                add_point(ps, runs[i].m[m].per_s, s->value, 0, 0);
                xs[k] = runs[i].m[m].per_s;
                ys[k] = s->value;
                k++;
        }
        if (k == 0) {
                free(xs);
                free(ys);
                report_unload(runs, n);
                return ctl_fail(EXIT_FAILED, "no run in range has both score %s and %s", score, o->metric);
        }
        if (stats_spearman(xs, ys, k, &rho, &pv) == 0) {
                char ps[32];
                if (pv < 0.001)
                        snprintf(ps, sizeof ps, "p<0.001");
                else
                        snprintf(ps, sizeof ps, "p=%.3g", pv);
                set_text(p->title, sizeof p->title, "%s against %s, one point per run (Spearman rho %+.2f, n=%zu, %s)",
                         score, o->metric, rho, k, ps);
        }
        else
                set_text(p->title, sizeof p->title, "%s against %s, one point per run (n=%zu)", score, o->metric, k);
        set_text(p->xlabel, sizeof p->xlabel, "%s per second (%s/s)", o->metric, def->unit);
        set_text(p->ylabel, sizeof p->ylabel, "%s", score);
        p->key = "outside right top box";
        free(xs);
        free(ys);
        report_unload(runs, n);
        return 0;
}

/* plot explain RUN: the top counters of `explain` over time, the run
 * against its siblings' range, in units of the siblings' mean; phases
 * shaded.  (issue 14) */
static int kind_explain(struct ctl *ctl, struct popts *o, struct plot *p)
{
        struct explain_run_opts eo = { .keep_series = 3, .score = o->score };
        struct explain_run_result res;
        _cleanup_free_ char *err = NULL;
        const char *why;
        char name[128], sibs[256];
        size_t off = 0;
        int r;

        if (!o->metric)
                return ctl_fail(EXIT_USAGE, "plot explain needs a RUN");
        if (!proto_valid_name(o->metric, &why))
                return ctl_fail(EXIT_USAGE, "plot explain '%s': not a run name: %s", o->metric, why);
        if (o->against) {
                r = explain_run_parse_against(&eo, o->against);
                if (r)
                        return r;
        }
        r = explain_run_compute(ctl->store, o->metric, &eo, &res, &err);
        if (r < 0)
                return ctl_fail(r == -EINVAL ? EXIT_USAGE : EXIT_FAILED, "%s", err ? err : strerror(-r));
        if (res.nseries == 0) {
                r = ctl_fail(EXIT_FAILED, "run %s: %s", o->metric,
                             res.have_series ? "no counter moved in it and its siblings" : res.phases_why);
                explain_run_free(&res);
                return r;
        }
        sibs[0] = 0;
        for (size_t k = 0; k < res.nsib && k < 3; k++)
                strbuf_appendf(sibs, sizeof sibs, &off, "%s%s", k ? ", " : "", res.siblings[k]);
        if (res.nsib > 3)
                strbuf_appendf(sibs, sizeof sibs, &off, ", ...");
        for (size_t i = 0; i < res.nseries; i++) {
                const struct explain_run_series *sr = &res.series[i];
                struct pseries *band, *line;
                /* add_series() moves the array: take both after */
                snprintf(name, sizeof name, "%s: siblings' range", metric_table[sr->metric].name);
                if (!add_series(p, name, STYLE_BAND))
                        break;
                snprintf(name, sizeof name, "%s: %s", metric_table[sr->metric].name, o->metric);
                if (!add_series(p, name, STYLE_LINES))
                        break;
                band = &p->s[p->ns - 2];
                line = &p->s[p->ns - 1];
                for (size_t k = 0; k < sr->n; k++) {
                        if (isfinite(sr->lo[k]))
                                add_point(band, sr->x[k], (sr->lo[k] + sr->hi[k]) / 2, sr->lo[k], sr->hi[k]);
                        if (isfinite(sr->run[k]))
                                add_point(line, sr->x[k], sr->run[k], 0, 0);
                }
        }
        for (size_t i = 0; i < res.nphases; i++) {
                double (*sh)[2] = realloc(p->shade, (p->nshade + 1) * sizeof *sh);
                if (!sh)
                        break;
                p->shade = sh;
                p->shade[p->nshade][0] = res.phases[i].start_s;
                p->shade[p->nshade][1] = res.phases[i].start_s + res.phases[i].dur_s;
                p->nshade++;
        }
        set_text(p->title, sizeof p->title, "%s against %s%s", o->metric, sibs,
                 res.nphases ? " (phases shaded)" : "");
        set_text(p->xlabel, sizeof p->xlabel, "seconds since the start of the run");
        set_text(p->ylabel, sizeof p->ylabel, "rate / the siblings' mean rate");
        p->yzero = true;
        explain_run_free(&res);
        return 0;
}

static void usage(void)
{
        printf("Usage: scalemonctl plot KIND [selection] [-o FILE.svg|FILE.png]\n"
               "  timeseries METRIC (--run NAME | --since WHEN [--until WHEN]) [--per system|node|cpu]\n"
               "  heatmap METRIC (--run NAME | --since WHEN [--until WHEN])\n"
               "  curve --by TAG [--series TAG] [--score K] [--y speedup|score]\n"
               "  groups --group-by TAG,... [--score K]\n"
               "  scatter METRIC [--score K] [--group-by TAG,...]\n"
               "  explain RUN [--against RUN,...] [--score K]\n"
               "Runs are selected with --since, --until and --tag K=V as in report.\n"
               "Without -o the chart is drawn in the terminal; --format json writes the data instead.\n");
}

int verb_plot(struct ctl *ctl, int argc, char **argv)
{
        static const struct option options[] = {
                { "run", required_argument, NULL, 'R' },
                { "per", required_argument, NULL, 'p' },
                { "by", required_argument, NULL, 'b' },
                { "series", required_argument, NULL, 'S' },
                { "score", required_argument, NULL, 'k' },
                { "group-by", required_argument, NULL, 'g' },
                { "since", required_argument, NULL, 's' },
                { "until", required_argument, NULL, 'u' },
                { "tag", required_argument, NULL, 't' },
                { "y", required_argument, NULL, 'y' },
                { "against", required_argument, NULL, 'a' },
                { "output", required_argument, NULL, 'o' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        struct popts o = { .go = { .cv_limit = 0.05, .minmax_limit = 0.75, .alpha = 0.05 } };
        struct plot p = { 0 };
        const char *kind;
        int c, r = 0;

        while (r == 0 && (c = ctl_getopt(argc, argv, "o:", options)) >= 0) {
                switch (c) {
                case 'R':
                        o.run = optarg;
                        break;
                case 'p':
                        o.per = optarg;
                        break;
                case 'b':
                        o.by = optarg;
                        break;
                case 'S':
                        o.series = optarg;
                        break;
                case 'k':
                        o.score = optarg;
                        break;
                case 'g':
                        r = group_opts_parse_by(&o.go, optarg);
                        break;
                case 's':
                case 'u':
                case 't':
                        r = run_select_set(&o.sel, c, optarg);
                        break;
                case 'y':
                        if (streq(optarg, "score"))
                                o.y_score = true;
                        else if (!streq(optarg, "speedup"))
                                r = ctl_fail(EXIT_USAGE, "--y '%s': use speedup or score", optarg);
                        break;
                case 'o':
                        o.output = optarg;
                        break;
                case 'a':
                        o.against = optarg;
                        break;
                case 'h':
                        usage();
                        goto out;
                default:
                        r = EXIT_USAGE;
                }
        }
        if (r)
                goto out;
        if (optind >= argc) {
                r = ctl_fail(EXIT_USAGE, "plot needs a KIND: timeseries, heatmap, curve, groups, scatter or explain");
                goto out;
        }
        kind = argv[optind++];
        if (optind < argc)
                o.metric = argv[optind++];
        if (optind < argc) {
                r = ctl_fail(EXIT_USAGE, "plot %s: unexpected argument '%s'", kind, argv[optind]);
                goto out;
        }
        if (o.output) {
                size_t len = strlen(o.output);
                if (len < 5 || (!streq(o.output + len - 4, ".svg") && !streq(o.output + len - 4, ".png"))) {
                        r = ctl_fail(EXIT_USAGE, "-o %s: name a .svg or .png file", o.output);
                        goto out;
                }
        }
        if (ctl->format == FORMAT_CSV) {
                r = ctl_fail(EXIT_USAGE, "plot writes a chart, or its data with --format json; csv does not apply");
                goto out;
        }
        if (!ctl_store(ctl)) {
                r = EXIT_FAILED;
                goto out;
        }
        p.kind = kind;
        if (streq(kind, "timeseries"))
                r = kind_timeseries(ctl, &o, &p);
        else if (streq(kind, "heatmap"))
                r = kind_heatmap(ctl, &o, &p);
        else if (streq(kind, "curve")) {
                if (o.metric)
                        r = ctl_fail(EXIT_USAGE, "plot curve takes no METRIC, got '%s'", o.metric);
                else
                        r = kind_curve(ctl, &o, &p);
        } else if (streq(kind, "groups")) {
                if (o.metric)
                        r = ctl_fail(EXIT_USAGE, "plot groups takes no METRIC, got '%s'", o.metric);
                else
                        r = kind_groups(ctl, &o, &p);
        } else if (streq(kind, "scatter"))
                r = kind_scatter(ctl, &o, &p);
        else if (streq(kind, "explain"))
                r = kind_explain(ctl, &o, &p);
        else
                r = ctl_fail(EXIT_USAGE, "unknown plot kind '%s': use timeseries, heatmap, curve, groups, scatter or explain", kind);
        if (r)
                goto out;

        if (ctl->format == FORMAT_JSON) {
                json_t *doc = plot_json(&p);
                r = output_json(doc);
                json_decref(doc);
        } else
                r = render(&p, o.output);
out:
        plot_free(&p);
        run_select_free(&o.sel);
        group_opts_free(&o.go);
        return r;
}
