/* lockwait-rows.c - a run's contended locks from two readings of the
 * BPF per-(caller, lock) map (see lockwait-decode.h): the readings sorted
 * and folded, then the run's rows by caller and by lock.
 *
 * The map's key is (stack, flags, lock address, own slot).  The "by
 * caller" table merges keys by (caller name, type): several stacks may
 * end in one caller, and each caller waits for one or many lock objects
 * (counted).  The "by lock" table merges keys by lock address: its name,
 * the type of most of its wait, and how many callers waited for it.  A
 * key of the run's own slot is also its own tasks' wait.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lockwait-decode.h"
#include "macro.h"

/* ---- snapshots and folding ---- */

static int key_cmp(const struct lw_caller_key *a, const struct lw_caller_key *b)
{
        if (a->stackid != b->stackid)
                return a->stackid < b->stackid ? -1 : 1;
        if (a->flags != b->flags)
                return a->flags < b->flags ? -1 : 1;
        if (a->lock != b->lock)
                return a->lock < b->lock ? -1 : 1;
        return a->own < b->own ? -1 : a->own > b->own;
}

static int entry_cmp(const void *a, const void *b)
{
        return key_cmp(&((const struct lw_entry *)a)->key, &((const struct lw_entry *)b)->key);
}

void lw_snap_sort(struct lw_snap *s)
{
        if (s->n > 1)
                qsort(s->e, s->n, sizeof *s->e, entry_cmp);
}

void lw_snap_clear(struct lw_snap *s)
{
        free(s->e);
        memset(s, 0, sizeof *s);
}

static const struct lw_entry *find(const struct lw_entry *v, size_t n, const struct lw_caller_key *k)
{
        struct lw_entry probe = { .key = *k };
        return n ? bsearch(&probe, v, n, sizeof *v, entry_cmp) : NULL;
}

int lw_acc_fold(struct lw_acc *acc, const struct lw_snap *s)
{
        size_t nold = acc->nmm;

        for (size_t i = 0; i < s->n; i++) {
                const struct lw_entry *e = &s->e[i];
                struct lw_entry *m;

                if (e->val.epoch != s->epoch || e->val.count == 0)
                        continue;       /* no wait on this key since the last boundary */
                m = (struct lw_entry *)find(acc->mm, nold, &e->key);    /* the sorted part */
                if (m) {
                        m->val.max_ns = MAX(m->val.max_ns, e->val.max_ns);
                        m->val.min_ns = MIN(m->val.min_ns, e->val.min_ns);
                        continue;
                }
                if (acc->nmm == acc->capmm) {
                        size_t cap = acc->capmm ? acc->capmm * 2 : 64;
                        struct lw_entry *t = realloc(acc->mm, cap * sizeof *t);
                        if (!t)
                                return -ENOMEM;
                        acc->mm = t;
                        acc->capmm = cap;
                }
                /* s has each key once: appended, sorted in once below */
                acc->mm[acc->nmm++] = (struct lw_entry){ .key = e->key, .val = { .max_ns = e->val.max_ns,
                                                                                 .min_ns = e->val.min_ns } };
        }
        if (acc->nmm > nold)
                qsort(acc->mm, acc->nmm, sizeof *acc->mm, entry_cmp);
        return 0;
}

void lw_acc_clear(struct lw_acc *acc)
{
        lw_snap_clear(&acc->start);
        free(acc->mm);
        memset(acc, 0, sizeof *acc);
}

/* ---- a run's rows ---- */

static const char *const kind_names[] = {
        [LW_KIND_MMAP] = "mmap_lock",
        [LW_KIND_SIGLOCK] = "siglock",
        [LW_KIND_RQ] = "rq_lock",
        [LW_KIND_MMAP_WAIT] = "mmap_lock.wait_lock",
};

const char *lw_kind_name(uint32_t kind)
{
        return kind < ELEMENTSOF(kind_names) ? kind_names[kind] : NULL;
}

void lw_result_clear(struct lw_result *r)
{
        free(r->rows);
        free(r->locks);
        memset(r, 0, sizeof *r);
}

/* One key's share of the run. */
struct item {
        char caller[128];
        char type[24];
        uint64_t lock;
        uint32_t kind;
        bool own;
        uint64_t cnt, total, max, min;
        size_t crow;            /* its by-caller row */
};

static uint64_t sub0(uint64_t a, uint64_t b)
{
        return a >= b ? a - b : 0;
}

static int item_by_caller(const void *a, const void *b)
{
        const struct item *x = a, *y = b;
        int c = strcmp(x->caller, y->caller);

        if (!c)
                c = strcmp(x->type, y->type);
        if (!c)
                c = x->lock < y->lock ? -1 : x->lock > y->lock;
        return c;
}

static int item_by_lock(const void *a, const void *b)
{
        const struct item *x = a, *y = b;

        int c;

        if (x->lock != y->lock)
                return x->lock < y->lock ? -1 : 1;
        c = strcmp(x->type, y->type);
        if (c)
                return c;
        return x->crow < y->crow ? -1 : x->crow > y->crow;
}

static int row_cmp(const void *a, const void *b)
{
        const struct lw_row *x = a, *y = b;
        if (x->total_ns != y->total_ns)
                return x->total_ns > y->total_ns ? -1 : 1;
        if (x->contended != y->contended)
                return x->contended > y->contended ? -1 : 1;
        return strcmp(x->caller, y->caller);
}

static int lock_row_cmp(const void *a, const void *b)
{
        const struct lw_lock_row *x = a, *y = b;
        if (x->total_ns != y->total_ns)
                return x->total_ns > y->total_ns ? -1 : 1;
        if (x->contended != y->contended)
                return x->contended > y->contended ? -1 : 1;
        return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The keys with waits in the run, named. */
static int run_items(const struct lw_acc *acc, const struct lw_snap *end, lw_caller_fn caller, void *userdata,
                     uint32_t own, struct item **ret, size_t *ret_n)
{
        struct item *v = end->n ? calloc(end->n, sizeof *v) : NULL;
        size_t n = 0;

        if (end->n && !v)
                return -ENOMEM;
        for (size_t i = 0; i < end->n; i++) {
                const struct lw_entry *e = &end->e[i], *s = find(acc->start.e, acc->start.n, &e->key);
                const struct lw_entry *m = find(acc->mm, acc->nmm, &e->key);
                struct item *it = &v[n];
                char lb[24];

                it->cnt = sub0(e->val.count, s ? s->val.count : 0);
                if (it->cnt == 0)
                        continue;
                caller(userdata, e->key.stackid, it->caller, sizeof it->caller);
                snprintf(it->type, sizeof it->type, "%s", lw_flags_label(e->key.flags, lb, sizeof lb));
                it->lock = e->key.lock;
                it->kind = e->val.kind;
                it->own = own && e->key.own == own;
                it->total = sub0(e->val.total_ns, s ? s->val.total_ns : 0);
                /* every wait counted in the run lies in some epoch folded
                 * into acc; m is missing only if a boundary's read raced
                 * with the wait's end: then the best known is the total */
                it->max = m ? m->val.max_ns : it->total;
                it->min = m ? m->val.min_ns : it->total / it->cnt;
                n++;
        }
        *ret = v;
        *ret_n = n;
        return 0;
}

static void add_to(uint64_t *cnt, uint64_t *total, uint64_t *max, uint64_t *min, bool first, const struct item *it)
{
        *cnt += it->cnt;
        *total += it->total;
        *max = first ? it->max : MAX(*max, it->max);
        *min = first ? it->min : MIN(*min, it->min);
}

/* Items sorted by caller: one row per (caller, type), its distinct locks. */
static int caller_rows(struct item *v, size_t n, struct lw_result *res)
{
        res->rows = n ? calloc(n, sizeof *res->rows) : NULL;
        if (n && !res->rows)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                struct lw_row *r;
                bool first = i == 0 || strcmp(v[i].caller, v[i - 1].caller) || strcmp(v[i].type, v[i - 1].type);

                if (first) {
                        r = &res->rows[res->n++];
                        snprintf(r->caller, sizeof r->caller, "%s", v[i].caller);
                        snprintf(r->type, sizeof r->type, "%s", v[i].type);
                } else
                        r = &res->rows[res->n - 1];
                add_to(&r->contended, &r->total_ns, &r->max_ns, &r->min_ns, first, &v[i]);
                if (first || v[i].lock != v[i - 1].lock)
                        r->locks++;
                if (v[i].own) {
                        r->own_contended += v[i].cnt;
                        r->own_total_ns += v[i].total;
                        res->own_contended += v[i].cnt;
                        res->own_total_ns += v[i].total;
                }
                v[i].crow = res->n - 1;
        }
        return 0;
}

/* Items sorted by (lock, type, caller row): one row per address, its
 * distinct callers, the type of most of its wait. */
static int lock_rows(const struct item *v, size_t n, lw_lock_fn lock, void *userdata, struct lw_result *res)
{
        uint64_t best = 0, cur = 0;     /* the row's type's wait; the current type's so far */

        res->locks = n ? calloc(n, sizeof *res->locks) : NULL;
        if (n && !res->locks)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                struct lw_lock_row *r;
                bool first = i == 0 || v[i].lock != v[i - 1].lock;

                if (first) {
                        r = &res->locks[res->nlocks++];
                        r->addr = v[i].lock;
                        lock(userdata, v[i].lock, v[i].kind, r->name, sizeof r->name);
                } else
                        r = &res->locks[res->nlocks - 1];
                add_to(&r->contended, &r->total_ns, &r->max_ns, &r->min_ns, first, &v[i]);
                if (first || v[i].crow != v[i - 1].crow)
                        r->callers++;
                if (v[i].own) {
                        r->own_contended += v[i].cnt;
                        r->own_total_ns += v[i].total;
                }
                cur = first || strcmp(v[i].type, v[i - 1].type) ? v[i].total : cur + v[i].total;
                if (first || cur > best) {
                        best = cur;
                        snprintf(r->type, sizeof r->type, "%s", v[i].type);
                }
        }
        return 0;
}

int lw_run_rows(const struct lw_acc *acc, const struct lw_snap *end, lw_caller_fn caller, lw_lock_fn lock,
                void *userdata, uint32_t own, struct lw_result *ret)
{
        _cleanup_free_ struct item *v = NULL;
        struct lw_result res = { .has_own = own != 0 };
        size_t n = 0;
        int r;

        r = run_items(acc, end, caller, userdata, own, &v, &n);
        if (r < 0)
                return r;
        if (n > 1)
                qsort(v, n, sizeof *v, item_by_caller);
        r = caller_rows(v, n, &res);
        if (r >= 0 && n > 1)
                qsort(v, n, sizeof *v, item_by_lock);
        if (r >= 0)
                r = lock_rows(v, n, lock, userdata, &res);
        if (r < 0) {
                lw_result_clear(&res);
                return r;
        }
        if (res.n > 1)
                qsort(res.rows, res.n, sizeof *res.rows, row_cmp);
        if (res.nlocks > 1)
                qsort(res.locks, res.nlocks, sizeof *res.locks, lock_row_cmp);
        res.lost = (struct lw_lost){ .untimed = sub0(end->lost_task, acc->start.lost_task),
                                     .unattributed = sub0(end->lost_caller, acc->start.lost_caller),
                                     .unattributed_ns = sub0(end->lost_caller_ns, acc->start.lost_caller_ns),
                                     .nested = sub0(end->nested, acc->start.nested) };
        *ret = res;
        return 0;
}
