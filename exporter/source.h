/* source.h - what the exporter reads: scalemond's running totals over the
 * control socket (the totals request: lib/proto-totals.c) and recent runs from
 * the database, read-only.  Both as plain structs for collect.c. */
#ifndef SCALEMON_EXPORTER_SOURCE_H
#define SCALEMON_EXPORTER_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metric.h"
#include "proto-reply.h"
#include "store.h"

/* Ask scalemond at socket_path; wait at most timeout_ms in all.  On error
 * *ret_err says why in one line.  proto_totals_clear() frees *ret. */
int src_totals_fetch(const char *socket_path, int timeout_ms, struct proto_totals *ret, char **ret_err);

struct src_run {
        char name[160];
        char status[16];
        int64_t start, end;             /* ns since the epoch; end 0 while running */
        struct store_kv *tags;
        size_t ntags;
        struct store_score *scores;
        size_t nscores;
};
void src_runs_free(struct src_run *r, size_t n);

/* The newest max_runs runs that started at or after since_ns, and any
 * still running. */
int src_runs_read(struct store *st, int64_t since_ns, size_t max_runs, struct src_run **ret, size_t *ret_n);

#endif
