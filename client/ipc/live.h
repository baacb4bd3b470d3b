/* live.h - the live line of `scalemonctl run exec`: elapsed time and the
 * run's rates, on the terminal while the command runs. */
#ifndef SCALEMON_LIVE_H
#define SCALEMON_LIVE_H

#include <stdbool.h>
#include <stddef.h>

#include "cli.h"

struct live;

/* The line for run name, if stderr is a terminal and the daemon takes a
 * subscription; call before starting the run (the line counts the ticks
 * that have the run open).  NULL: no live line. */
struct live *live_new(struct ctl *ctl, const char *name);
/* The run is recorded under another name (run exec --name-suffix): follow
 * that one.  Accepts NULL. */
void live_set_name(struct live *lv, const char *name);
/* Clears the line.  Accepts NULL. */
struct live *live_free(struct live *lv);
/* The descriptor to poll for ticks, or -1. */
int live_fd(const struct live *lv);
/* Read the ticks that came; redraw the line once a second of them. */
void live_read(struct live *lv);
/* Write the command's output to fd (a terminal, or whatever it is): the
 * line is cleared first and drawn again only while the output ends at the
 * start of a line, so the two never share one.  lv may be NULL. */
void live_output(struct live *lv, int fd, const char *buf, size_t n);

#endif
