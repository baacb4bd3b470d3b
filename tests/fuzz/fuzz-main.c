/* fuzz-main.c - run a libFuzzer target over saved inputs, without
 * libFuzzer: `make check` replays each corpus this way, so every input
 * that once found a bug (and every seed) keeps being run under the
 * sanitizers.  Arguments: files or directories of inputs. */
#include "config.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path, int *n)
{
        FILE *f = fopen(path, "rb");
        uint8_t *buf;
        long len;

        if (!f)
                return -1;
        fseek(f, 0, SEEK_END);
        len = ftell(f);
        fseek(f, 0, SEEK_SET);
        buf = malloc(len > 0 ? (size_t)len : 1);
        if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
                fclose(f);
                free(buf);
                return -1;
        }
        fclose(f);
        LLVMFuzzerTestOneInput(buf, (size_t)len);
        free(buf);
        printf("ok %d - %s\n", ++*n, path);
        return 0;
}

/* Without arguments: the corpus named after the program, fuzz-NAME ->
 * $srcdir/tests/fuzz/NAME. */
static char *default_corpus(const char *argv0)
{
        const char *base = strrchr(argv0, '/'), *srcdir = getenv("srcdir");
        char *path;

        base = base ? base + 1 : argv0;
        if (strncmp(base, "fuzz-", 5) != 0)
                return NULL;
        if (asprintf(&path, "%s/tests/fuzz/%s", srcdir ? srcdir : ".", base + 5) < 0)
                return NULL;
        return path;
}

int main(int argc, char **argv)
{
        char *def = NULL, *defv[3] = { argv[0], NULL, NULL };
        int n = 0;

        if (argc < 2) {
                def = default_corpus(argv[0]);
                if (!def) {
                        printf("Bail out! usage: %s CORPUS...\n", argv[0]);
                        return 1;
                }
                defv[1] = def;
                argv = defv;
                argc = 2;
        }
        for (int i = 1; i < argc; i++) {
                struct stat st;
                if (stat(argv[i], &st) < 0) {
                        printf("Bail out! %s: cannot stat\n", argv[i]);
                        return 1;
                }
                if (S_ISDIR(st.st_mode)) {
                        struct dirent **ents;
                        int k = scandir(argv[i], &ents, NULL, alphasort);
                        for (int j = 0; j < k; j++) {
                                char path[4096];
                                if (ents[j]->d_name[0] != '.') {
                                        snprintf(path, sizeof path, "%s/%s", argv[i], ents[j]->d_name);
                                        if (run_file(path, &n) < 0) {
                                                printf("Bail out! %s: cannot read\n", path);
                                                return 1;
                                        }
                                }
                                free(ents[j]);
                        }
                        free(ents);
                } else if (run_file(argv[i], &n) < 0) {
                        printf("Bail out! %s: cannot read\n", argv[i]);
                        return 1;
                }
        }
        printf("1..%d\n", n);
        free(def);
        return 0;
}
