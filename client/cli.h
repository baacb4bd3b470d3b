/* cli.h - what every scalemonctl verb shares: the global options, exit
 * codes and one-line errors (from output.h), option parsing and the
 * database (cli.c). */
#ifndef SCALEMON_CLIENT_CLI_H
#define SCALEMON_CLIENT_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "macro.h"
#include "output.h"
#include "store.h"

struct ctl {
        const char *db_path;
        const char *socket_path;
        enum output_format format;
        struct store *store;            /* opened on demand by ctl_store() */
        int sock_fd;                    /* control socket, connected on demand, or -1 */
        int sock_errno;                 /* why the last ctl_connect() failed (errno), or 0 */
};

/* getopt_long for verbs and main: on an unknown option, or one missing
 * its value, prints one line naming it and how to get help, and returns
 * '?'.  ctl_verb is what the hint names ("run start"). */
struct option;
extern const char *ctl_verb;
int ctl_getopt(int argc, char **argv, const char *optstring, const struct option *options);
/* Called by ctl_getopt, before it parses, with the verb's options, when
 * set: `scalemonctl __complete` (complete.c) catches a verb's table so. */
extern void (*ctl_getopt_hook)(const char *optstring, const struct option *options);

/* The database, opened read-only the first time; NULL after printing why. */
struct store *ctl_store(struct ctl *ctl);

/* Resolve a WHEN argument (run name or time) for option opt.  is_until:
 * a run name means its end, not its start.  Returns 0, or an exit code
 * after printing why (EXIT_USAGE malformed, EXIT_FAILED unknown run). */
int ctl_when(struct ctl *ctl, const char *opt, const char *arg, bool is_until, int64_t *ret);
int ctl_duration(const char *opt, const char *arg, int64_t *ret);
int ctl_int(const char *opt, const char *arg, long min, long max, long *ret);

#endif
