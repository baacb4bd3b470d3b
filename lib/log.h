/* log.h - one place that writes log lines: the journal (with structured
 * fields) under systemd, stderr in the foreground, syslog otherwise. */
#ifndef SCALEMON_LOG_H
#define SCALEMON_LOG_H

#include <stdbool.h>
#include <syslog.h>

#include "macro.h"

enum log_target {
        LOG_TARGET_AUTO,        /* journal if stderr is connected to it, else stderr */
        LOG_TARGET_STDERR,
        LOG_TARGET_JOURNAL,
        LOG_TARGET_SYSLOG,
};

void log_setup(const char *ident, enum log_target target);
void log_set_max_level(int prio);
bool log_to_journal(void);

/* key/value: one structured journal field (e.g. "CPU", "3"), or NULL. */
void log_struct(int prio, const char *key, const char *value, const char *fmt, ...) _printf_(4, 5);
void log_cpu(int prio, int cpu, const char *fmt, ...) _printf_(3, 4);

#define log_debug(...)   log_struct(LOG_DEBUG, NULL, NULL, __VA_ARGS__)
#define log_info(...)    log_struct(LOG_INFO, NULL, NULL, __VA_ARGS__)
#define log_notice(...)  log_struct(LOG_NOTICE, NULL, NULL, __VA_ARGS__)
#define log_warning(...) log_struct(LOG_WARNING, NULL, NULL, __VA_ARGS__)
#define log_error(...)   log_struct(LOG_ERR, NULL, NULL, __VA_ARGS__)
#define log_metric(prio, metric, ...) log_struct(prio, "METRIC", metric, __VA_ARGS__)
#define log_run(prio, run, ...)       log_struct(prio, "RUN", run, __VA_ARGS__)

#endif
