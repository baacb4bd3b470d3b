/* explain-internal.h - what explain.c (loading, context, counters, place)
 * and explain-time.c (phases) share; not for other callers. */
#ifndef SCALEMON_CLIENT_EXPLAIN_INTERNAL_H
#define SCALEMON_CLIENT_EXPLAIN_INTERNAL_H

#include "analysis.h"
#include "explain.h"

struct ex {
        struct store *s;
        struct analysis_run *all;               /* every finished run: tags, scores, context, system totals */
        size_t nall;
        size_t run;                     /* index in all */
        size_t *sib;                    /* indexes in all */
        size_t nsib;
        struct run_detail *full;        /* [0] the run, [1 + k] sibling k: every total */
        const char *score;
        size_t keep;                    /* series to keep for plot */
        bool borrowed;                  /* all is the caller's */
};

/* 0: the run, 1 + j: sibling j */
const struct analysis_run *ex_run(const struct ex *e, size_t k);

int explain_cmp_double(const void *a, const void *b);
/* Median of v[0..n) (sorts v); NAN if n is 0. */
double explain_median(double *v, size_t n);
/* The k-th smallest of v[0..n) (Hoare's selection; v is reordered). */
double explain_select_kth(double *v, size_t n, size_t k);
/* CPU differences d[0..ncpu) (positive: more like the departure) into the
 * CPUs and nodes that carry them. */
int explain_place_from(struct store *s, const double *d, int ncpu, int **cpus, size_t *ncpus, int **nodes,
                       size_t *nnodes);

/* 2. what counter c's excess over the siblings' range (its edge: edge)
 * cost the run, and whether it passes the floors (explain-causes.c). */
void explain_cost(const struct analysis_run *run, struct explain_run_counter *c, double dur, double cpu_s,
                  double edge);
/* 5. the distinct causes, after the phases (explain-causes.c). */
int explain_causes(struct ex *e, struct explain_run_result *res);
/* When another process's CPU time rose: from the run's own per-tick CPU
 * time against the machine's busy time, the longest stretch where the
 * run's everything else is half a CPU above every sibling's at the same
 * offset (tv[j]: run sibidx[j]'s tick values in nbins bins of iv ns;
 * explain-causes.c). */
struct store_tick_values;
int explain_others_window(struct ex *e, struct explain_run_result *res, const struct store_tick_values *tv,
                          const size_t *sibidx, size_t nruns, size_t nbins, int64_t iv);
/* Their plain-words lines (explain-words.c). */
void explain_causes_words(struct explain_run_result *res);

/* 4. the whole run's place, from the top cpu counter's per-CPU totals
 * (explain-place.c). */
int explain_whole_run_place(struct ex *e, struct explain_run_result *res);

/* 3. time: the phases, their counters and place (explain-time.c). */
int explain_time(struct ex *e, struct explain_run_result *res);

#endif
