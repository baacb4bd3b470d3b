/* verb-plot.h - what the plot kinds share: the options, the metric a
 * kind draws, rates put in the units a person reads (verb-plot-time.c),
 * and the kinds over time. */
#ifndef SCALEMON_CLIENT_VERB_PLOT_H
#define SCALEMON_CLIENT_VERB_PLOT_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis.h"
#include "chart.h"
#include "cli.h"
#include "selection.h"

struct popts {
        const char *kind;       /* timeseries, heatmap, curve, groups, scatter, explain */
        const char *metric, *run, *score, *by, *series, *output;
        char *against;          /* explain: --against RUN,... */
        const char *per;
        struct run_select sel;
        struct group_opts go;
        bool y_score;           /* curve: the score rather than the speedup */
        const char *lower;      /* curve: --lower-is-better K,... */
        enum curve_work work;   /* curve: --work */
};

/* The metric named m, or NULL after setting *r to the exit code of the
 * message printed (none named, or not a metric). */
const struct metric_def *plot_need_metric(const char *m, int *r);
/* Rates of metric m into the units a person reads: the values of the
 * chart's series from series `from` on (y, or x with on_x), or of its heat
 * map, multiplied by one factor chosen from their largest; the unit
 * returned ("ms/s" for a time, "switches/s" for a count, "ms" for a
 * maximum, which is no rate) goes into the axis label. */
const char *plot_scale_rates(struct chart *p, int m, size_t from, bool on_x, char *unit, size_t len);

int plot_kind_timeseries(struct ctl *ctl, struct popts *o, struct chart *p);
int plot_kind_heatmap(struct ctl *ctl, struct popts *o, struct chart *p);

#endif
