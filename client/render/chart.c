/* chart.c - a chart's data as JSON (--format json), or as a gnuplot script
 * piped into gnuplot: the dumb terminal, sized to the terminal, without
 * -o; svg or pngcairo with -o FILE.svg|FILE.png.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chart.h"
#include "cli.h"
#include "output.h"

void chart_free(struct chart *p)
{
        for (size_t i = 0; i < p->ns; i++) {
                free(p->s[i].name);
                free(p->s[i].x);
                free(p->s[i].y);
                free(p->s[i].ylo);
                free(p->s[i].yhi);
                for (size_t k = 0; p->s[i].pools && k < p->s[i].n; k++)
                        json_decref(p->s[i].pools[k]);
                free(p->s[i].pools);
        }
        free(p->s);
        for (size_t i = 0; i < p->nnotes; i++)
                free(p->notes[i]);
        free(p->notes);
        for (size_t i = 0; i < p->nmarks; i++)
                free(p->marks[i].text);
        free(p->marks);
        for (size_t i = 0; i < p->nfuncs; i++) {
                free(p->funcs[i].name);
                free(p->funcs[i].expr);
        }
        free(p->funcs);
        for (size_t i = 0; i < p->nwindows; i++)
                free(p->windows[i].text);
        free(p->windows);
        free(p->shade);
        json_decref(p->xtics);
        free(p->hz);
}

int chart_add_shade(struct chart *p, double from, double to)
{
        double (*sh)[2] = realloc(p->shade, (p->nshade + 1) * sizeof *sh);
        if (!sh)
                return -ENOMEM;
        p->shade = sh;
        p->shade[p->nshade][0] = from;
        p->shade[p->nshade][1] = to;
        p->nshade++;
        return 0;
}

struct chart_series *chart_add_series(struct chart *p, const char *name, enum chart_style style)
{
        struct chart_series *s = realloc(p->s, (p->ns + 1) * sizeof *s);
        if (!s)
                return NULL;
        p->s = s;
        s = &p->s[p->ns++];
        memset(s, 0, sizeof *s);
        s->name = strdup(name);
        s->style = style;
        return s->name ? s : NULL;
}

int chart_add_point(struct chart_series *s, double x, double y, double ylo, double yhi)
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
                if (s->pools) {
                        json_t **pl = realloc(s->pools, cap * sizeof *pl);
                        if (!pl)
                                return -ENOMEM;
                        memset(pl + s->cap, 0, (cap - s->cap) * sizeof *pl);
                        s->pools = pl;
                }
                s->cap = cap;
        }
        s->x[s->n] = x;
        s->y[s->n] = y;
        s->ylo[s->n] = ylo;
        s->yhi[s->n] = yhi;
        s->n++;
        return 0;
}

int chart_point_pools(struct chart_series *s, json_t *pools)
{
        if (s->n == 0 || json_object_size(pools) == 0) {
                json_decref(pools);
                return 0;
        }
        if (!s->pools && !(s->pools = calloc(s->cap, sizeof *s->pools))) {
                json_decref(pools);
                return -ENOMEM;
        }
        json_decref(s->pools[s->n - 1]);
        s->pools[s->n - 1] = pools;
        return 0;
}

int chart_add_note(struct chart *p, const char *text)
{
        char **n = realloc(p->notes, (p->nnotes + 1) * sizeof *n);
        if (!n)
                return -ENOMEM;
        p->notes = n;
        n[p->nnotes] = strdup(text);
        return n[p->nnotes++] ? 0 : -ENOMEM;
}

int chart_add_mark(struct chart *p, double x, const char *text)
{
        struct chart_mark *m = realloc(p->marks, (p->nmarks + 1) * sizeof *m);
        if (!m)
                return -ENOMEM;
        p->marks = m;
        m[p->nmarks].x = x;
        m[p->nmarks].text = strdup(text);
        return m[p->nmarks++].text ? 0 : -ENOMEM;
}

int chart_add_func(struct chart *p, const char *name, const char *expr, bool dashed, bool grey)
{
        struct chart_func *f = realloc(p->funcs, (p->nfuncs + 1) * sizeof *f);
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

int chart_add_window(struct chart *p, double x0, double x1, const char *text)
{
        struct chart_window *w = realloc(p->windows, (p->nwindows + 1) * sizeof *w);
        if (!w)
                return -ENOMEM;
        p->windows = w;
        w[p->nwindows] = (struct chart_window){ .x0 = x0, .x1 = x1, .text = strdup(text) };
        return w[p->nwindows++].text ? 0 : -ENOMEM;
}

/* ---- JSON ---- */

json_t *chart_json(const struct chart *p)
{
        json_t *o = json_pack("{s:s,s:s,s:s,s:s}", "kind", p->kind, "title", p->title, "xlabel", p->xlabel, "ylabel",
                              p->ylabel);
        json_t *series = json_array(), *marks = json_array(), *funcs = json_array();

        for (size_t i = 0; i < p->ns; i++) {
                json_t *pts = json_array();
                for (size_t k = 0; k < p->s[i].n; k++) {
                        json_t *pt = json_pack("{s:o,s:o}", "x", json_number(p->s[i].x[k]), "y", json_number(p->s[i].y[k]));
                        if (p->s[i].style == CHART_ERRORLINES || p->s[i].style == CHART_BAND) {
                                json_object_set_new(pt, "ymin", json_number(p->s[i].ylo[k]));
                                json_object_set_new(pt, "ymax", json_number(p->s[i].yhi[k]));
                        }
                        if (p->s[i].pools && p->s[i].pools[k])
                                json_object_set(pt, "pools", p->s[i].pools[k]);
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
        if (p->nwindows) {
                json_t *ws = json_array();
                for (size_t i = 0; i < p->nwindows; i++)
                        json_array_append_new(ws, json_pack("{s:f,s:f,s:s}", "start", p->windows[i].x0, "end",
                                                            p->windows[i].x1, "run", p->windows[i].text));
                json_object_set_new(o, "windows", ws);
        }
        json_object_set_new(o, "functions", funcs);
        if (p->nshade) {
                json_t *sh = json_array();
                for (size_t i = 0; i < p->nshade; i++)
                        json_array_append_new(sh, json_pack("{s:f,s:f}", "from", p->shade[i][0], "to", p->shade[i][1]));
                json_object_set_new(o, "shaded", sh);
        }
        if (p->xtics)
                json_object_set(o, "categories", p->xtics);
        if (p->nnotes) {
                json_t *notes = json_array();
                for (size_t i = 0; i < p->nnotes; i++)
                        json_array_append_new(notes, json_string(p->notes[i]));
                json_object_set_new(o, "notes", notes);
        }
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

/* Into a gnuplot double-quoted string: \\ and " escaped, no control
 * characters. */
static void gp_dq(FILE *f, const char *s)
{
        for (; *s; s++)
                fprintf(f, "%s%c", *s == '"' || *s == '\\' ? "\\" : "", (unsigned char)*s >= 0x20 ? *s : ' ');
}

/* The characters the terminal heat map shades with, low to high, and
 * where each level ends: the cell's z / max * 8.999, truncated. */
static const char heat_chars[] = ".:-=+*#%@";

static double heat_max(const struct chart *p)
{
        double max = 0;
        for (size_t i = 0; i < p->hx * p->hy; i++)
                max = fmax(max, p->hz[i]);
        return max;
}

/* 930, 1.86k, 2.5M: short enough for a terminal line */
static void compact_number(double v, char *buf, size_t len)
{
        if (fabs(v) >= 1e6)
                snprintf(buf, len, "%.3gM", v / 1e6);
        else if (fabs(v) >= 1e3)
                snprintf(buf, len, "%.3gk", v / 1e3);
        else
                snprintf(buf, len, "%.3g", v);
}

/* "scale: .<930 :<1.86k -<2.79k ... @<=8.37k": what each character
 * stands for up to, in the chart's unit (its title says which) */
static void heat_scale(const struct chart *p, char *buf, size_t len)
{
        double max = heat_max(p);
        size_t o = 0;

        strbuf_appendf(buf, len, &o, "scale:");
        for (int k = 0; k < 9; k++) {
                char v[32];
                compact_number(k == 8 ? max : (k + 1) * max / 8.999, v, sizeof v);
                strbuf_appendf(buf, len, &o, " %c%s%s", heat_chars[k], k == 8 ? "<=" : "<", v);
        }
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

/* What is drawn over or behind the data: each run's window, the shaded
 * phases, the marks. */
static void write_overlays(FILE *f, const struct chart *p, bool dumb)
{
        /* each run's window: its start and end, and its name */
        for (size_t i = 0; i < p->nwindows; i++) {
                const struct chart_window *w = &p->windows[i];
                if (!dumb)
                        fprintf(f, "set object %zu rect from %.6g, graph 0 to %.6g, graph 1 behind fc rgb '%s' "
                                   "fs solid 0.5 noborder\n", p->nshade + i + 1, w->x0, w->x1, i % 2 ? "#e8eef7" : "#f3f3f3");
                fprintf(f, "set arrow from %.6g, graph 0 to %.6g, graph 1 nohead back lc rgb '#888888' dt 2\n", w->x0,
                        w->x0);
                fprintf(f, "set arrow from %.6g, graph 0 to %.6g, graph 1 nohead back lc rgb '#888888' dt 2\n", w->x1,
                        w->x1);
                fprintf(f, "set label ");
                gp_str(f, w->text);
                fprintf(f, " at %.6g, graph 0.99 left offset 0.5,0 front tc rgb '#333333' noenhanced\n", w->x0);
        }
        for (size_t i = 0; i < p->nshade; i++) {
                if (!dumb) {
                        fprintf(f, "set object %zu rect from %.6g, graph 0 to %.6g, graph 1 behind fc rgb '#f4c7c3' "
                                   "fs solid 0.6 noborder\n", i + 1, p->shade[i][0], p->shade[i][1]);
                        continue;
                }
                /* the terminal fills no area: each phase's bounds as
                 * lines, and its number between them at the top */
                for (int e = 0; e < 2; e++)
                        fprintf(f, "set arrow from %.6g, graph 0 to %.6g, graph 1 nohead back\n", p->shade[i][e],
                                p->shade[i][e]);
                fprintf(f, "set label \"phase %zu\" at %.6g, graph 0.97 center front\n", i + 1,
                        (p->shade[i][0] + p->shade[i][1]) / 2);
        }
        for (size_t i = 0; i < p->nmarks; i++) {
                fprintf(f, "set arrow from %.6g, graph 0 to %.6g, graph 1 nohead front lc rgb '#555555' dt 3 lw 1.5\n",
                        p->marks[i].x, p->marks[i].x);
                fprintf(f, "set label ");
                gp_str(f, p->marks[i].text);
                fprintf(f, " at %.6g, graph 0.97 left rotate by -90 offset 0.5,0 front tc rgb '#333333' noenhanced\n",
                        p->marks[i].x);
        }
}

/* Terminal, output, title, labels, legend and axes. */
static void write_frame(FILE *f, const struct chart *p, const char *output, bool png)
{
        bool dumb = !output;
        int cols, rows;

        if (dumb) {
                terminal_size(&cols, &rows);
                fprintf(f, "set terminal dumb size %d,%d nofeed\n", cols, rows);
        } else if (png)
                fprintf(f, "set terminal pngcairo size 1000,620 enhanced font 'Sans,12' background '#ffffff'\n");
        else
                fprintf(f, "set terminal svg size 1000,620 dynamic enhanced font 'Sans,13' background '#ffffff'\n");
        /* Every text is set noenhanced (metric names have underscores);
         * the terminal stays enhanced so that svg names each series, and
         * numeric tics are enhanced, so that gnuplot's "%h" format sets
         * 1.4x10^{8} as 1.4x10 with a raised 8, as it means to. */
        if (output) {
                fprintf(f, "set output ");
                gp_str(f, output);
                fputc('\n', f);
        }
        fprintf(f, "set encoding utf8\n");
        if (dumb) {
                /* a dumb terminal cannot turn text, and draws points over
                 * the x label: the title's second line is the y label,
                 * its third the x label (and the heat map's scale) */
                char scale[400] = "";
                if (p->heat)
                        heat_scale(p, scale, sizeof scale);
                fprintf(f, "set title \"");
                gp_dq(f, p->title);
                fprintf(f, "\\ny: ");
                gp_dq(f, p->ylabel);
                fprintf(f, "\\nx: ");
                gp_dq(f, p->xlabel);
                if (scale[0]) {
                        fprintf(f, "\\n");
                        gp_dq(f, scale);
                }
                fprintf(f, "\" noenhanced\nunset xlabel");
        } else {
                fprintf(f, "set title ");
                gp_str(f, p->title);
                fprintf(f, " noenhanced\nset xlabel ");
                gp_str(f, p->xlabel);
                fprintf(f, " noenhanced\nset ylabel ");
                gp_str(f, p->ylabel);
                fprintf(f, " noenhanced");
        }
        if (dumb)
                fprintf(f, "\nset xtics noenhanced\nset ytics noenhanced");
        else
                fprintf(f, "\nset xtics enhanced\nset ytics enhanced\nset cbtics enhanced\nset format '%%h'\n"
                           "set format cb '%%h'");
        for (size_t i = 0; !dumb && i < p->nnotes; i++) {
                /* under the chart, the last note lowest */
                if (i == 0)
                        fprintf(f, "\nset bmargin %zu", 4 + p->nnotes);
                fprintf(f, "\nset label ");
                gp_str(f, p->notes[i]);
                fprintf(f, " at screen 0.01, screen %.3f left front font ',10' tc rgb '#b22222' noenhanced",
                        0.015 + 0.03 * (double)(p->nnotes - 1 - i));
        }
        fprintf(f, "\nset key %s\n", dumb ? (p->heat ? "off" : "below") : p->heat ? "off" : p->key ? p->key : "outside right top");
        if (p->yzero)
                fprintf(f, "set yrange [0:*]\n");
        if (!dumb)
                fprintf(f, "set grid lc rgb '#dddddd'\nset border lc rgb '#444444'\n");
        if (p->logx)
                fprintf(f, "set logscale x 2\n");
        if (p->xfix)
                fprintf(f, "set autoscale xfix\n");
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
        write_overlays(f, p, dumb);
}

/* The heat map: colours in files, one character per cell in the terminal. */
static void write_heat(FILE *f, const struct chart *p, bool dumb)
{
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
                double max = heat_max(p);
                fprintf(f, "set xrange [%g:%g]\nunset colorbox\n", p->hx0 - p->hdx / 2,
                        p->hx0 + (double)p->hx * p->hdx - p->hdx / 2);
                fprintf(f, "shade(z) = z <= 0 ? ' ' : substr('%s', int(z / %.17g * 8.999) + 1, int(z / %.17g * 8.999) + 1)\n",
                        heat_chars, max > 0 ? max : 1, max > 0 ? max : 1);
                fprintf(f, "plot $heat using 1:2:(shade($3)) with labels notitle\n");
        } else {
                fprintf(f, "set palette defined (0 '#ffffff', 1 '#fde725', 2 '#f89540', 3 '#cc4778', 4 '#0d0887')\n");
                fprintf(f, "set xrange [%g:%g]\n", p->hx0 - p->hdx / 2, p->hx0 + (double)p->hx * p->hdx - p->hdx / 2);
                fprintf(f, "plot $heat using 1:2:3 with image title ");
                gp_str(f, p->zlabel);
                fprintf(f, " noenhanced\n");
        }
}

/* The series as inline data, the functions, and one plot command: the
 * functions (fits, the ideal line) first, so that the data is drawn over
 * them; in the terminal each series its own letter (point type). */
static void write_series(FILE *f, const struct chart *p, bool dumb)
{
        bool first = true;

        for (size_t i = 0; i < p->ns; i++) {
                fprintf(f, "$s%zu << EOD\n", i);
                for (size_t k = 0; k < p->s[i].n; k++)
                        fprintf(f, "%.10g %.10g %.10g %.10g\n", p->s[i].x[k], p->s[i].y[k], p->s[i].ylo[k], p->s[i].yhi[k]);
                fprintf(f, "EOD\n");
        }
        for (size_t i = 0; i < p->nfuncs; i++)
                fprintf(f, "f%zu(x) = %s\n", i, p->funcs[i].expr);
        fprintf(f, "plot ");
        for (size_t i = 0; i < p->nfuncs; i++) {
                const char *c = p->funcs[i].grey ? "#999999" : colours[i % ELEMENTSOF(colours)];
                fprintf(f, "%sf%zu(x) with lines lw 1.5 %s lc rgb '%s' title ", first ? "" : ", \\\n     ", i,
                        p->funcs[i].dashed ? "dt 2" : "", c);
                gp_str(f, p->funcs[i].name);
                fprintf(f, " noenhanced");
                first = false;
        }
        for (size_t i = 0; i < p->ns; i++) {
                const char *c = colours[i % ELEMENTSOF(colours)];
                int pt = dumb ? (int)(i % 26) + 1 : 7;  /* dumb: A, B, C, ... */
                if (p->s[i].n == 0)
                        continue;
                fprintf(f, "%s$s%zu ", first ? "" : ", \\\n     ", i);
                switch (p->s[i].style) {
                case CHART_LINES:
                        fprintf(f, "using 1:2 with linespoints pt %d ps 0.35 lw 1.5 lc rgb '%s'", pt, c);
                        break;
                case CHART_ERRORLINES:
                        fprintf(f, "using 1:2:3:4 with yerrorlines pt %d ps 0.9 lw 2 lc rgb '%s'", pt, c);
                        break;
                case CHART_POINTS:
                        fprintf(f, "using 1:2 with points pt %d ps 1.2 lc rgb '%s'", pt, c);
                        break;
                case CHART_MARKED:
                        fprintf(f, "using 1:2 with points pt %d ps 3.5 lw 2 lc rgb '#e41a1c'", dumb ? pt : 6);
                        break;
                case CHART_BAND:    /* in the colour of the line drawn after it */
                        fprintf(f, "using 1:3:4 with filledcurves fc rgb '%s' fs transparent solid 0.2 noborder",
                                colours[(i + 1) % ELEMENTSOF(colours)]);
                        break;
                }
                fprintf(f, " title ");
                gp_str(f, p->s[i].name);
                fprintf(f, " noenhanced");
                first = false;
        }
        if (first)
                fprintf(f, "NaN notitle");
        fputc('\n', f);
}

static void write_script(FILE *f, const struct chart *p, const char *output, bool png)
{
        write_frame(f, p, output, png);
        if (p->heat)
                write_heat(f, p, !output);
        else
                write_series(f, p, !output);
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

int chart_render(const struct chart *p, const char *output)
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
                for (size_t i = 0; i < p->nnotes; i++)
                        printf("%s\n", p->notes[i]);
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
        for (size_t i = 0; output && i < p->nnotes; i++)
                fprintf(stderr, "%s\n", p->notes[i]);
        return EXIT_OK;
}
