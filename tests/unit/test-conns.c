/* test-conns.c - the exporter's connections (exporter/conns.c) on real
 * sockets (socketpairs): at the limit the longest waiting connection is
 * shut down, and its peer reads the end; one with a request being
 * answered never is; one answered waits again from the back. */
#include "config.h"

#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include "conns.h"
#include "macro.h"
#include "tap.h"

#define N 6

static int fds[N][2];           /* [i][0] the exporter's side, [i][1] the client's */

/* true when the client's side of connection i reads the end */
static bool ended(int i)
{
        char c;
        ssize_t r = recv(fds[i][1], &c, 1, MSG_DONTWAIT);

        return r == 0;
}

int main(void)
{
        struct conns *c = NULL;
        struct conn *cn[N] = { 0 };
        int r;

        for (int i = 0; i < N; i++)
                if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds[i]) < 0)
                        return 99;
        ok(conns_new(3, &c) == 0, "conns_new(3)");

        is_int(conns_started(c, fds[0][0], &cn[0]), 0, "the first of 3: nothing shut");
        is_int(conns_started(c, fds[1][0], &cn[1]), 0, "the second: nothing shut");
        r = conns_started(c, fds[2][0], &cn[2]);
        is_int(r, 1, "the third takes the last place: one shut");
        ok(ended(0) && !ended(1) && !ended(2), "the one shut is the first, the longest waiting");
        is_int(conns_held(c), 3, "held: 3 until libmicrohttpd closes the one shut");
        conns_closed(c, cn[0]);
        is_int(conns_held(c), 2, "held: 2 after it closes");

        /* 1 has a request being answered: 3 arriving shuts 2, not 1 */
        conns_busy(c, cn[1]);
        is_int(conns_started(c, fds[3][0], &cn[3]), 1, "the next one makes 3 again: one shut");
        ok(!ended(1) && ended(2) && !ended(3), "the one answered is kept, the waiting one shut");
        conns_closed(c, cn[2]);

        /* 1 answered, waits again from the back: 3 is now the longest waiting */
        conns_idle(c, cn[1]);
        is_int(conns_started(c, fds[4][0], &cn[4]), 1, "the next one: one shut");
        ok(ended(3) && !ended(1) && !ended(4), "the one waiting since before 1's answer is shut");
        conns_closed(c, cn[3]);

        /* all but the new one busy: nothing to shut, the limit is libmicrohttpd's */
        conns_busy(c, cn[1]);
        conns_busy(c, cn[4]);
        is_int(conns_started(c, fds[5][0], &cn[5]), 0, "every other one answered: nothing shut");
        ok(!ended(1) && !ended(4) && !ended(5), "and nothing ended");
        is_int(conns_held(c), 3, "held: 3");

        conns_closed(c, NULL);
        conns_busy(c, NULL);
        conns_idle(c, NULL);
        for (int i = 1; i < N; i += 3)
                conns_closed(c, cn[i]);
        conns_closed(c, cn[5]);
        is_int(conns_held(c), 0, "held: 0 after all closed");
        c = conns_free(c);
        ok(!c, "conns_free returns NULL");
        for (int i = 0; i < N; i++) {
                close(fds[i][0]);
                close(fds[i][1]);
        }
        return tap_done();
}
