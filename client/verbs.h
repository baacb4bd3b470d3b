/* verbs.h - scalemonctl's verbs, one function each (the table is in
 * scalemonctl.c).  argv[0] is the verb itself; each returns an exit code. */
#ifndef SCALEMON_CLIENT_VERBS_H
#define SCALEMON_CLIENT_VERBS_H

#include "cli.h"

typedef int (*verb_fn)(struct ctl *ctl, int argc, char **argv);

/* A row of the verb table (scalemonctl.c): its usage lines name its
 * sub-verbs ("run start NAME", "plot timeseries|heatmap|...") for
 * completion too. */
struct verb {
        const char *name;
        verb_fn fn;
        const char *usage;
};

int verb_status(struct ctl *ctl, int argc, char **argv);       /* status.c */
int verb_metrics(struct ctl *ctl, int argc, char **argv);      /* status.c */
int verb_reload(struct ctl *ctl, int argc, char **argv);       /* status.c */
int verb_query(struct ctl *ctl, int argc, char **argv);        /* query.c */
int verb_run(struct ctl *ctl, int argc, char **argv);          /* run.c */
int verb_runs(struct ctl *ctl, int argc, char **argv);         /* runs.c */
int verb_report(struct ctl *ctl, int argc, char **argv);       /* report.c */
int verb_curve(struct ctl *ctl, int argc, char **argv);        /* curve.c */
int verb_explain(struct ctl *ctl, int argc, char **argv);      /* explain-text.c */
int verb_plot(struct ctl *ctl, int argc, char **argv);         /* plot.c */
int verb_export(struct ctl *ctl, int argc, char **argv);       /* exchange.c */
int verb_import(struct ctl *ctl, int argc, char **argv);       /* exchange.c */
int verb_top(struct ctl *ctl, int argc, char **argv);          /* top.c */

/* `scalemonctl __complete CWORD WORD...` (complete.c): candidates for a
 * shell, from the verb table, the verbs' option tables and the database. */
struct option;
int complete_main(struct ctl *ctl, const struct verb *verbs, size_t nverbs, const struct option *global, int argc,
                  char **argv);

#endif
