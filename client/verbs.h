/* verbs.h - scalemonctl's verbs, one function each (the table is in
 * scalemonctl.c).  argv[0] is the verb itself; each returns an exit code. */
#ifndef SCALEMON_CLIENT_VERBS_H
#define SCALEMON_CLIENT_VERBS_H

#include "cli.h"

typedef int (*verb_fn)(struct ctl *ctl, int argc, char **argv);

int verb_status(struct ctl *ctl, int argc, char **argv);       /* status.c */
int verb_metrics(struct ctl *ctl, int argc, char **argv);      /* status.c */
int verb_reload(struct ctl *ctl, int argc, char **argv);       /* status.c */
int verb_query(struct ctl *ctl, int argc, char **argv);        /* query.c */
int verb_run(struct ctl *ctl, int argc, char **argv);          /* run.c */
int verb_runs(struct ctl *ctl, int argc, char **argv);         /* runs.c */
int verb_report(struct ctl *ctl, int argc, char **argv);       /* report.c */
int verb_curve(struct ctl *ctl, int argc, char **argv);        /* curve.c */
int verb_plot(struct ctl *ctl, int argc, char **argv);         /* plot.c */
int verb_export(struct ctl *ctl, int argc, char **argv);       /* exchange.c */
int verb_import(struct ctl *ctl, int argc, char **argv);       /* exchange.c */

#endif
