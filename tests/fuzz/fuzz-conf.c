/* fuzz-conf.c - libFuzzer target: scalemon.conf text.  Whatever the input,
 * conf_parse either accepts it with every value in range, or refuses it
 * with a "file:line: " message and leaves the settings as they were. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct conf c;
        char *err = NULL;
        int r;

        conf_defaults(&c);
        r = conf_parse((const char *)data, size, "fuzz.conf", &c, &err);
        if (r == 0) {
                assert(c.interval_ns >= CONF_MIN_INTERVAL && c.interval_ns <= CONF_MAX_INTERVAL);
                assert(c.database && c.database[0] == '/');
                assert(c.socket && c.socket[0] == '/' && strlen(c.socket) < 108);
        } else if (r != -ENOMEM) {
                assert(err && strncmp(err, "fuzz.conf:", 10) == 0);
                assert(c.interval_ns == CONF_DEFAULT_INTERVAL);
                assert(strcmp(c.database, CONF_DEFAULT_DATABASE) == 0);
        }
        free(err);
        conf_free(&c);
        return 0;
}
