/* conf.h - scalemon.conf: the daemon's settings. */
#ifndef SCALEMON_CONF_H
#define SCALEMON_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metric.h"

#define CONF_DEFAULT_PATH     "/etc/scalemon/scalemon.conf"
#define CONF_DEFAULT_DATABASE "/var/lib/scalemon/scalemon.db"
#define CONF_DEFAULT_SOCKET   "/run/scalemon/control.sock"
#define CONF_DEFAULT_INTERVAL (1000 * 1000 * 1000LL)
#define CONF_MIN_INTERVAL     (10 * 1000 * 1000LL)
#define CONF_MAX_INTERVAL     (60 * 1000 * 1000 * 1000LL)
#define CONF_MIN_RETENTION    (3600LL * 1000 * 1000 * 1000)

struct conf {
        int64_t interval_ns;
        char *database;
        char *socket;
        char *control_group;            /* group allowed to change state */
        int64_t retention_ns;           /* samples older than this are deleted; 0: kept */
        bool enabled[_M_MAX];
};

void conf_defaults(struct conf *c);
void conf_free(struct conf *c);
int conf_copy(struct conf *dst, const struct conf *src);

/* Parse a configuration text.  fname is only for messages.  On error
 * *ret_err is "fname:line: what is wrong" and c is unchanged. */
int conf_parse(const char *text, size_t len, const char *fname, struct conf *c, char **ret_err);
/* Read and parse a file.  missing_ok: a missing file leaves the defaults. */
int conf_load(const char *path, bool missing_ok, struct conf *c, char **ret_err);

#endif
