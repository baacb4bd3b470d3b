/* conns.c - the exporter's connections: which wait for a request, which
 * to shut down to make room (conns.h).
 *
 * The waiting ones are a list in the order they began to wait, so the
 * one to shut down is its head.  Invariants:
 *   1. a connection is on the list iff it waits and was not shut down;
 *   2. live (held, less those shut down and not yet closed) stays below
 *      max once conns_started() returns, unless every live connection is
 *      having a request answered.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "conns.h"

struct conn {
        struct conn *prev, *next;       /* on the waiting list (invariant 1) */
        int fd;                         /* libmicrohttpd's; never closed here */
        bool waiting;
        bool shut;                      /* shut down to make room, not yet closed */
};

struct conns {
        struct conn *head, *tail;       /* waiting, longest first */
        unsigned max;
        unsigned held;                  /* accepted, not yet closed */
        unsigned live;                  /* held less those shut */
};

int conns_new(unsigned max, struct conns **ret)
{
        struct conns *c = calloc(1, sizeof *c);

        if (!c)
                return -ENOMEM;
        c->max = max < 2 ? 2 : max;
        *ret = c;
        return 0;
}

struct conns *conns_free(struct conns *c)
{
        free(c);        /* every conn is freed by conns_closed() */
        return NULL;
}

static void unlink_waiting(struct conns *c, struct conn *n)
{
        if (!n->waiting)
                return;
        if (n->prev)
                n->prev->next = n->next;
        else
                c->head = n->next;
        if (n->next)
                n->next->prev = n->prev;
        else
                c->tail = n->prev;
        n->prev = n->next = NULL;
        n->waiting = false;
}

static void link_waiting(struct conns *c, struct conn *n)
{
        if (n->waiting || n->shut)
                return;
        n->prev = c->tail;
        n->next = NULL;
        if (c->tail)
                c->tail->next = n;
        else
                c->head = n;
        c->tail = n;
        n->waiting = true;
}

int conns_started(struct conns *c, int fd, struct conn **ret)
{
        struct conn *n = calloc(1, sizeof *n), *old;

        if (!n)
                return -ENOMEM;
        n->fd = fd;
        c->held++;
        c->live++;
        link_waiting(c, n);
        *ret = n;
        old = c->head;
        if (c->live < c->max || old == n)
                return 0;
        /* invariant 2: the longest waiting goes */
        unlink_waiting(c, old);
        old->shut = true;
        c->live--;
        (void)shutdown(old->fd, SHUT_RDWR);
        return 1;
}

void conns_busy(struct conns *c, struct conn *n)
{
        if (n)
                unlink_waiting(c, n);
}

void conns_idle(struct conns *c, struct conn *n)
{
        if (n)
                link_waiting(c, n);
}

void conns_closed(struct conns *c, struct conn *n)
{
        if (!n)
                return;
        unlink_waiting(c, n);
        c->held--;
        if (!n->shut)
                c->live--;
        free(n);
}

unsigned conns_held(const struct conns *c)
{
        return c->held;
}
