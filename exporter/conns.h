/* conns.h - the exporter's connections, so that clients that never send a
 * whole request cannot keep a scrape out.
 *
 * Every connection is either waiting for a request (just accepted, or
 * kept alive after an answer) or has one being answered.  When a new
 * connection makes --max-connections, the one that has waited longest for
 * a request is shut down, so there is always room for the next client: a
 * scraper, which sends its request at once, is answered however many slow
 * clients there are.  Called from libmicrohttpd's one thread only.
 */
#ifndef SCALEMON_EXPORTER_CONNS_H
#define SCALEMON_EXPORTER_CONNS_H

#include <stdbool.h>

struct conns;
struct conn;

/* max: the connections held at most (2 or more) */
int conns_new(unsigned max, struct conns **ret);
struct conns *conns_free(struct conns *c);

/* A connection on fd was accepted: *ret is its handle.  Returns 1 when
 * another connection, the one waiting longest for a request, was shut
 * down (shutdown(2); libmicrohttpd then sees it end and closes it) to
 * keep one place free, 0 when not, -ENOMEM. */
int conns_started(struct conns *c, int fd, struct conn **ret);
void conns_busy(struct conns *c, struct conn *conn);    /* a whole request arrived */
void conns_idle(struct conns *c, struct conn *conn);    /* answered; kept alive for the next */
void conns_closed(struct conns *c, struct conn *conn);  /* NULL: nothing */

unsigned conns_held(const struct conns *c);             /* accepted and not yet closed */

#endif
