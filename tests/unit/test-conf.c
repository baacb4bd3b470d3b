/* test-conf.c - scalemon.conf parsing: values, and file:line errors. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "conf.h"
#include "macro.h"
#include "tap.h"

#define NS 1000000000LL

static int parse(const char *text, struct conf *c, char **err)
{
        *err = NULL;
        return conf_parse(text, strlen(text), "test.conf", c, err);
}

static void bad(const char *text, const char *want_msg, const char *name)
{
        struct conf c;
        char *err = NULL;
        int r;

        conf_defaults(&c);
        r = parse(text, &c, &err);
        ok(r < 0, "%s: refused", name);
        contains(err, want_msg, name);
        ok(c.interval_ns == CONF_DEFAULT_INTERVAL && strcmp(c.database, CONF_DEFAULT_DATABASE) == 0,
           "%s: settings untouched", name);
        free(err);
        conf_free(&c);
}

int main(void)
{
        struct conf c;
        char *err = NULL;
        int r;

        conf_defaults(&c);
        r = parse("# scalemon.conf\n"
                  "interval = 250ms   # faster\n"
                  "\n"
                  "database=/srv/scalemon/sm.db\n"
                  "  socket =  /run/sm.sock  \n"
                  "exclude = kvm_exits, kvm_pause_exits\n",
                  &c, &err);
        is_int(r, 0, "good file parses");
        is_int(c.interval_ns, 250000000, "interval 250ms");
        is_str(c.database, "/srv/scalemon/sm.db", "database");
        is_str(c.socket, "/run/sm.sock", "socket, blanks trimmed");
        ok(c.enabled[M_CONTEXT_SWITCHES] && !c.enabled[M_KVM_EXITS] && !c.enabled[M_KVM_PAUSE_EXITS] &&
           c.enabled[M_KVM_PLE_WINDOW_UPDATES], "exclude removes exactly the listed metrics");
        conf_free(&c);

        conf_defaults(&c);
        r = parse("metrics = context_switches lock_contentions\nexclude = lock_contentions\n", &c, &err);
        ok(r == 0 && c.enabled[M_CONTEXT_SWITCHES] && !c.enabled[M_LOCK_CONTENTIONS] && !c.enabled[M_CPU_USER],
           "metrics list, then exclude");
        conf_free(&c);

        conf_defaults(&c);
        ok(parse("", &c, &err) == 0 && c.interval_ns == CONF_DEFAULT_INTERVAL, "empty file keeps defaults");
        conf_free(&c);

        conf_defaults(&c);
        ok(c.retain_raw_ns == 7 * 86400 * NS && c.rollup_interval_ns == 60 * NS && c.retain_rollup_ns == 90 * 86400 * NS &&
                   c.max_db_size == 0,
           "defaults: raw 7d, 1m rollups, kept 90d, no size cap");
        ok(parse("retention = 30d\n", &c, &err) == 0 && c.retain_rollup_ns == 30 * 86400 * NS,
           "retention (retain_rollup's older name) 30d");
        ok(parse("retention = forever\n", &c, &err) == 0 && c.retain_rollup_ns == 0, "retention forever");
        ok(parse("retain_raw = 2d\nrollup_interval = 5m\nretain_rollup = 365d\nmax_db_size = 10G\n", &c, &err) == 0 &&
                   c.retain_raw_ns == 2 * 86400 * NS && c.rollup_interval_ns == 300 * NS &&
                   c.retain_rollup_ns == 365 * 86400 * NS && c.max_db_size == 10LL << 30,
           "retain_raw, rollup_interval, retain_rollup, max_db_size");
        ok(parse("retain_raw = forever\nmax_db_size = none\n", &c, &err) == 0 && c.retain_raw_ns == 0 &&
                   c.max_db_size == 0,
           "retain_raw forever, max_db_size none");
        conf_free(&c);
        bad("retain_raw = 30m\n", "test.conf:1: retain_raw 30m is too short: at least 1h, or 'forever'", "retain_raw under an hour");
        bad("rollup_interval = 500ms\n", "test.conf:1: rollup_interval 500ms is out of range (1s..1d)", "rollup_interval under 1s");
        bad("rollup_interval = 2d\n", "out of range (1s..1d)", "rollup_interval over a day");
        bad("max_db_size = 512K\n", "test.conf:1: max_db_size 512K is too small: at least 1M, or 'none'", "max_db_size tiny");
        bad("max_db_size = lots\n", "max_db_size 'lots' is not a size or 'none'", "max_db_size word");
        bad("retain_rollup = 30d\nretention = 30d\n",
            "test.conf:2: 'retention' is the older name of 'retain_rollup': set only retain_rollup", "both names");
        bad("retention = 10m\n", "test.conf:1: retention 10m is too short: at least 1h", "retention under an hour");
        bad("retention = always\n", "retention 'always' is not a duration or 'forever'", "retention word");
        bad("interval = 1s\nintervl = 2s\n", "test.conf:2: unknown key 'intervl'", "unknown key, with line");
        bad("\n\ninterval = fast\n", "test.conf:3: interval 'fast' is not a duration", "bad duration");
        bad("interval = 5ms\n", "test.conf:1: interval 5ms is out of range (10ms..1m)", "interval below 10ms");
        bad("interval = 2m\n", "out of range", "interval above 60s");
        bad("metrics = context_switches, bogus\n", "test.conf:1: unknown metric 'bogus'", "unknown metric");
        /* commit_interval, how much a crash may lose */
        conf_defaults(&c);
        ok(c.commit_interval_ns == CONF_DEFAULT_COMMIT, "default commit_interval");
        ok(parse("commit_interval = 30s\n", &c, &err) == 0 && c.commit_interval_ns == 30 * NS, "commit_interval 30s");
        ok(parse("commit_interval = 0\n", &c, &err) == 0 && c.commit_interval_ns == 0, "commit_interval 0: every tick");
        ok(parse("commit_interval = 1h\n", &c, &err) == 0 && c.commit_interval_ns == 3600 * NS, "commit_interval 1h");
        conf_free(&c);
        bad("commit_interval = 2h\n", "test.conf:1: commit_interval 2h is out of range (0..1h; 0 commits every tick)",
            "commit_interval over an hour");
        bad("\ncommit_interval = often\n", "test.conf:2: commit_interval 'often' is not a duration", "commit_interval word");
        bad("commit_interval = -1s\n", "test.conf:1: commit_interval '-1s' is not a duration", "commit_interval negative");
        bad("commit_interval = 1s\ncommit_interval = 2s\n", "test.conf:2: 'commit_interval' is set twice",
            "commit_interval twice");
        /* a set that enables nothing is refused, at the line that emptied it */
        bad("metrics = context_switches\nexclude = context_switches\n",
            "test.conf:2: metrics and exclude leave no metric enabled", "metrics minus exclude is empty");
        bad("exclude = context_switches\n\nmetrics = context_switches\n",
            "test.conf:3: metrics and exclude leave no metric enabled", "the later of the two lines is named");
        bad("metrics = ,\n", "test.conf:1: no metric enabled", "an empty metrics list");
        /* the per-CPU fault events: off by default, on with per_cpu_faults = yes */
        conf_defaults(&c);
        ok(!c.per_cpu_faults && !c.enabled[M_PAGE_FAULTS] && !c.enabled[M_PAGE_FAULTS_MINOR] &&
           !c.enabled[M_PAGE_FAULTS_MAJOR] && c.enabled[M_PGFAULT] && c.enabled[M_PGMAJFAULT] &&
           c.enabled[M_CONTEXT_SWITCHES], "default: no fault event, pgfault and pgmajfault from vmstat");
        ok(parse("per_cpu_faults = yes\n", &c, &err) == 0 && c.per_cpu_faults && c.enabled[M_PAGE_FAULTS] &&
           c.enabled[M_PAGE_FAULTS_MINOR] && c.enabled[M_PAGE_FAULTS_MAJOR], "per_cpu_faults = yes: the three events");
        conf_free(&c);
        conf_defaults(&c);
        ok(parse("per_cpu_faults = yes\nexclude = page_faults_minor\n", &c, &err) == 0 && c.enabled[M_PAGE_FAULTS] &&
           !c.enabled[M_PAGE_FAULTS_MINOR], "per_cpu_faults = yes with exclude");
        conf_free(&c);
        conf_defaults(&c);
        ok(parse("metrics = page_faults, context_switches\n", &c, &err) == 0 && !c.enabled[M_PAGE_FAULTS] &&
           c.enabled[M_CONTEXT_SWITCHES], "metrics naming page_faults without per_cpu_faults: still off");
        conf_free(&c);
        bad("metrics = page_faults\n", "test.conf:1: metrics names only page-fault events, which are counted per CPU only "
            "with per_cpu_faults = yes", "only fault events, per_cpu_faults = no");
        bad("per_cpu_faults = maybe\n", "test.conf:1: per_cpu_faults 'maybe' is neither yes nor no", "per_cpu_faults word");
        bad("interval = 1s\ninterval = 2s\n", "test.conf:2: 'interval' is set twice", "duplicate key");
        bad("interval 1s\n", "test.conf:1: expected 'key = value'", "missing =");
        bad("database = relative.db\n", "must be an absolute path", "relative database path");
        bad("interval =\n", "'interval' has no value", "empty value");
        bad("exclude = all\n", "unknown metric 'all'", "exclude all is not a thing");
        bad("control_group = wheel;rm\n", "not a group name", "bad group name");
        {
                char big[6000];
                memset(big, 'x', sizeof big - 1);
                big[sizeof big - 1] = 0;
                bad(big, "test.conf:1: line is too long", "overlong line");
        }
        {
                struct conf c2;
                char text[] = "interval = 1s\0x\n";
                conf_defaults(&c2);
                r = conf_parse(text, sizeof text - 1, "test.conf", &c2, &err);
                ok(r < 0 && err && strstr(err, "NUL"), "NUL byte refused");
                free(err);
                conf_free(&c2);
        }

        conf_defaults(&c);
        r = conf_load("/nonexistent/scalemon.conf", true, &c, &err);
        ok(r == 0 && c.interval_ns == CONF_DEFAULT_INTERVAL, "missing default file is fine");
        r = conf_load("/nonexistent/scalemon.conf", false, &c, &err);
        ok(r == -ENOENT, "missing explicit file is an error");
        contains(err, "/nonexistent/scalemon.conf: cannot read", "and says which file");
        free(err);
        r = conf_load("/", false, &c, &err);
        ok(r < 0, "a directory is refused");
        free(err);
        conf_free(&c);

        /* conf_read(): the file, then the command line's values over it,
         * the same at start and on reload */
        {
                char path[] = "/tmp/test-conf-XXXXXX";
                const char text[] = "interval = 5s\ndatabase = /var/tmp/file.db\nsocket = /run/file.sock\n"
                                    "backlog_limit = 1M\n";
                struct conf_source src = { .path = path, .interval_ns = 2 * CONF_MIN_INTERVAL,
                                           .database = (char *)"/tmp/cli.db" };
                int fd = mkstemp(path);

                ok(fd >= 0 && write(fd, text, sizeof text - 1) == (ssize_t)(sizeof text - 1), "a file to read");
                close(fd);
                r = conf_read(&src, &c, &err);
                ok(r == 0 && c.interval_ns == 2 * CONF_MIN_INTERVAL, "--interval wins over the file");
                ok(r == 0 && streq(c.database, "/tmp/cli.db"), "--db wins over the file");
                ok(r == 0 && streq(c.socket, "/run/file.sock"), "the file's socket where --socket is not given");
                ok(r == 0 && c.backlog_limit == 1 << 20, "and the file's other settings");
                conf_free(&c);
                src.commit_interval_ns = 0;
                src.commit_interval_set = true;
                r = conf_read(&src, &c, &err);
                ok(r == 0 && c.commit_interval_ns == 0, "--commit-interval 0 wins over the default");
                conf_free(&c);
                fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
                ok(fd >= 0 && write(fd, "interval = soon\n", 16) == 16, "the file broken");
                close(fd);
                err = NULL;
                r = conf_read(&src, &c, &err);
                ok(r == -EINVAL, "a broken file is refused, whatever the overrides");
                contains(err, ":1: interval 'soon' is not a duration", "and says file:line");
                free(err);
                conf_free(&c);
                unlink(path);
        }
        return tap_done();
}
