/* chart.h - a chart as data (series of points, markers, fitted functions,
 * or a heat map), and its two formatters: JSON, and a gnuplot script run
 * by gnuplot (chart.c).  plot.c fills charts from the analysis. */
#ifndef SCALEMON_CLIENT_CHART_H
#define SCALEMON_CLIENT_CHART_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

enum chart_style {
        CHART_LINES,            /* lines with small points */
        CHART_ERRORLINES,       /* points joined, with min/max bars */
        CHART_POINTS,           /* points alone */
        CHART_MARKED,           /* big open circles over other points */
        CHART_BAND,             /* the area between ylo and yhi, in the next series' colour (plot explain) */
};

struct chart_series {
        char *name;
        enum chart_style style;
        double *x, *y, *ylo, *yhi;
        json_t **pools;         /* per point: what its group pools ({"TAG": {"VALUE": RUNS}}), or NULL */
        size_t n, cap;
};

struct chart_mark {
        double x;
        char *text;
};

/* A run's window on a time axis: its start and end drawn as lines, named. */
struct chart_window {
        double x0, x1;
        char *text;
};

struct chart_func {
        char *name;
        char *expr;             /* gnuplot expression in x */
        bool dashed, grey;
};

struct chart {
        const char *kind;
        char title[512], xlabel[256], ylabel[256];
        struct chart_series *s;
        size_t ns;
        struct chart_mark *marks;
        size_t nmarks;
        struct chart_func *funcs;
        size_t nfuncs;
        struct chart_window *windows;
        size_t nwindows;
        bool xfix;              /* x axis from the first point to the last, not to round tics */
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
        char **notes;           /* lines under the chart (a group that pools runs) */
        size_t nnotes;
};
/* Frees what the chart holds (not the struct itself). */
void chart_free(struct chart *p);
/* A series, point, marker or function added; NULL or -ENOMEM. */
struct chart_series *chart_add_series(struct chart *p, const char *name, enum chart_style style);
int chart_add_point(struct chart_series *s, double x, double y, double ylo, double yhi);
int chart_add_mark(struct chart *p, double x, const char *text);
int chart_add_func(struct chart *p, const char *name, const char *expr, bool dashed, bool grey);
int chart_add_window(struct chart *p, double x0, double x1, const char *text);
int chart_add_shade(struct chart *p, double from, double to);
/* The last point added to s pools runs: pools (taken over; an empty
 * object is dropped). */
int chart_point_pools(struct chart_series *s, json_t *pools);
int chart_add_note(struct chart *p, const char *text);

/* {"kind", "title", "xlabel", "ylabel", "series", "markers", "windows",
 * "functions", "categories", "heatmap", "shaded": [{"from", "to"}],
 * "notes": [TEXT]}; a point of a group that pools runs has "pools". */
json_t *chart_json(const struct chart *p);
/* Draw it with gnuplot: in the terminal without output, else into the
 * .svg or .png file output (whole, or not at all).  The notes go under
 * the chart, and with output to stderr too.  An exit code, after
 * printing why on failure. */
int chart_render(const struct chart *p, const char *output);

#endif
