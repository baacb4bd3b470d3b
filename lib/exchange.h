/* exchange.h - runs out of one database and into another, as one
 * versioned JSON document. */
#ifndef SCALEMON_EXCHANGE_H
#define SCALEMON_EXCHANGE_H

#include <jansson.h>
#include <stddef.h>

#include "store.h"

#define EXCHANGE_FORMAT  "scalemon-runs"
#define EXCHANGE_VERSION 1
#define EXCHANGE_MAX_BYTES (256L << 20)

/* The runs that f selects (running ones are left out: *ret_skipped
 * counts them), with their hosts, context, tags, scores, marks and
 * totals. */
int exchange_export(struct store *s, const struct run_filter *f, json_t **ret, size_t *ret_skipped);

/* Check a document completely; on error *ret_err says where and what. */
int exchange_validate(json_t *doc, char **ret_err);

/* What an import did with the document's runs. */
struct exchange_counts {
        size_t imported;        /* added (renamed ones included) */
        size_t skipped;         /* already there: same name, host and start */
        size_t renamed;         /* added as NAME:HOSTNAME, the name being another host's run */
};

/* Validate, then add every run in one transaction: all or nothing.  Runs
 * keep the host they came from.  Importing the same document twice adds
 * nothing the second time: a run whose name, host and start are in the
 * database already is skipped.  A run named like another host's run is
 * added as NAME:HOSTNAME; a name this host already used for another run
 * is an error. */
int exchange_import(struct store *s, json_t *doc, struct exchange_counts *ret, char **ret_err);
/* The same, reading the document from fd (closed by the caller). */
int exchange_import_fd(struct store *s, int fd, struct exchange_counts *ret, char **ret_err);

#endif
