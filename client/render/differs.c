/* differs.c - the context that differs between the runs of a report
 * (analysis_context_differs): as JSON, and as the lines above the runs. */
#include "config.h"

#include <stdio.h>

#include "differs.h"
#include "macro.h"

json_t *differs_json(const struct context_differs *cd, const struct analysis_run *runs)
{
        json_t *out = json_object();

        for (size_t k = 0; k < cd->nkeys; k++) {
                json_t *per = json_object();
                for (size_t j = 0; j < cd->nruns; j++)
                        json_object_set_new(per, runs[j].info.name,
                                            cd->keys[k].value[j] ? json_string(cd->keys[k].value[j]) : json_null());
                json_object_set_new(out, cd->keys[k].key, per);
        }
        return out;
}

static const char *differ_shown(const struct context_differ *d, size_t j)
{
        return d->value[j] ? d->value[j] : "(not recorded)";
}

void differs_print(const struct context_differs *cd, const struct analysis_run *runs)
{
        if (cd->nkeys == 0)
                return;
        printf("Context that differs between these runs:\n");
        for (size_t k = 0; k < cd->nkeys; k++) {
                /* the runs by value, in the order the values first appear:
                 * "always (r1, r2); madvise (r3)" */
                const struct context_differ *d = &cd->keys[k];
                bool firstv = true;

                printf("  %s:", d->key);
                for (size_t j = 0; j < cd->nruns; j++) {
                        const char *v = differ_shown(d, j);
                        bool before = false, firstr = true;
                        for (size_t i = 0; i < j && !before; i++)
                                before = streq(differ_shown(d, i), v);
                        if (before)
                                continue;
                        printf("%s %s (", firstv ? "" : ";", v);
                        for (size_t i = j; i < cd->nruns; i++)
                                if (streq(differ_shown(d, i), v)) {
                                        printf("%s%s", firstr ? "" : ", ", runs[i].info.name);
                                        firstr = false;
                                }
                        printf(")");
                        firstv = false;
                }
                printf("\n");
        }
        printf("\n");
}
