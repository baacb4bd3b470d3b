/* log.c - log lines to the journal, stderr or syslog.
 *
 * Under systemd stderr is a stream to the journal (JOURNAL_STREAM names
 * it); then lines go through sd_journal_send() instead, so they carry
 * PRIORITY and fields like CPU=, METRIC=, RUN= that `journalctl -u
 * scalemon CPU=3` can select on.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <systemd/sd-journal.h>

#include "log.h"

static const char *log_ident = "scalemon";
static enum log_target log_target_ = LOG_TARGET_STDERR;
static int log_max_level = LOG_INFO;

static bool stderr_is_journal(void)
{
        const char *e = getenv("JOURNAL_STREAM");
        unsigned long long dev, ino;
        struct stat st;

        if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2)
                return false;
        if (fstat(STDERR_FILENO, &st) < 0)
                return false;
        return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

void log_setup(const char *ident, enum log_target target)
{
        log_ident = ident;
        if (target == LOG_TARGET_AUTO)
                target = stderr_is_journal() ? LOG_TARGET_JOURNAL : LOG_TARGET_STDERR;
        if (target == LOG_TARGET_SYSLOG)
                openlog(ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
        log_target_ = target;
}

void log_set_max_level(int prio) { log_max_level = prio; }
bool log_to_journal(void) { return log_target_ == LOG_TARGET_JOURNAL; }

static void log_emit(int prio, const char *key, const char *value, const char *fmt, va_list ap)
{
        char msg[2048];
        int saved = errno;

        if (prio > log_max_level)
                return;
        vsnprintf(msg, sizeof msg, fmt, ap);
        switch (log_target_) {
        case LOG_TARGET_JOURNAL:
                if (key)
                        sd_journal_send("MESSAGE=%s", msg, "PRIORITY=%d", prio, "SYSLOG_IDENTIFIER=%s", log_ident,
                                        "%s=%s", key, value, NULL);
                else
                        sd_journal_send("MESSAGE=%s", msg, "PRIORITY=%d", prio, "SYSLOG_IDENTIFIER=%s", log_ident,
                                        NULL);
                break;
        case LOG_TARGET_SYSLOG:
                syslog(prio, "%s", msg);
                break;
        default:
                fprintf(stderr, "%s: %s\n", log_ident, msg);
                break;
        }
        errno = saved;
}

void log_struct(int prio, const char *key, const char *value, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        log_emit(prio, key, value, fmt, ap);
        va_end(ap);
}

void log_cpu(int prio, int cpu, const char *fmt, ...)
{
        char v[16];
        va_list ap;

        snprintf(v, sizeof v, "%d", cpu);
        va_start(ap, fmt);
        log_emit(prio, "CPU", v, fmt, ap);
        va_end(ap);
}
