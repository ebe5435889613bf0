/* The parallel runner: probes run in children, started as soon as the layers they read are final
 * and a slot is free, even before their own gate is known (speculatively); a probe that is not
 * isolated runs in this process at its turn when no child runs (nothing to watch meanwhile).
 * Outcomes are still made final one by one in report order, each gated at its turn exactly as in a
 * serial run: a speculative child whose gate turns out closed is killed and its result discarded.
 */
#include <stdlib.h>
#include <string.h>

#include "sc_runner_internal.h"
#include "sc_util.h"

typedef struct plan plan;

typedef struct {
    plan *plan;
    size_t index;
} step_route;

struct plan {
    sc_run_state *rs;
    const sc_ctx *ctx;
    const sc_run_observer *observer;
    size_t jobs, running;
    sc_isolate_child **child; /* per outcome: its child while it has one */
    sc_runner_job *job;
    step_route *route;
    double *prepared_ms; /* the time its prepare hook took in this process */
    int *start_error;    /* -errno when its child could not be started */
    bool *gate_open;     /* its gate was found open at its turn */
    char *warm;          /* 0, or its warm_up ran: 1, and cool_down(false) too: 2 */
};

/* True when every probe of the layers p reads is final; a probe that reads its own layer (a
 * sibling's facts, as framework.collective reads framework.torch's) waits for the probes before it
 * in that layer too. */
static bool needs_final(const sc_run_state *rs, const sc_probe *p)
{
    bool own_layer = p->needs & SC_NEEDS(p->layer);
    for (size_t k = 0; k < rs->count; k++) {
        const sc_outcome *q = sc_run_state_at(rs, k);
        if (q->probe == p || q->probe->layer > p->layer)
            break;
        bool read = q->probe->layer == p->layer
                        ? own_layer
                        : p->needs == 0 || (p->needs & SC_NEEDS(q->probe->layer));
        if (read && q->phase != SC_OUTCOME_FINAL)
            return false;
    }
    return true;
}

static void child_step(const char *name, void *arg)
{
    step_route *r = arg;
    sc_runner_note_step(r->plan->rs, r->index, r->plan->observer, name);
}

static void start(plan *pl, size_t i)
{
    const sc_probe *probe = pl->rs->outcomes[i].probe;
    double t0 = sc_now_ms();
    sc_runner_started(pl->rs, i, pl->observer);
    sc_runner_listen(pl->rs, i, pl->observer);
    if (probe->prepare)
        probe->prepare(pl->ctx);
    pl->prepared_ms[i] = sc_now_ms() - t0;
    pl->job[i] = (sc_runner_job){probe, pl->ctx};
    pl->route[i] = (step_route){pl, i};
    pl->start_error[i] =
        sc_isolate_start(sc_runner_child, &pl->job[i], sc_runner_timeout_s(probe, pl->ctx),
                         child_step, &pl->route[i], &pl->child[i]);
    pl->running += pl->start_error[i] == 0;
}

/* Ends outcome i's child; its report in rep. */
static void end_child(plan *pl, size_t i, sc_isolate_report *rep)
{
    sc_isolate_end(pl->child[i], rep);
    pl->child[i] = NULL;
    pl->running--;
}

/* A speculative child whose gate closed: killed, its result and its steps forgotten. */
static void discard(plan *pl, size_t i)
{
    sc_outcome *o = &pl->rs->outcomes[i];
    if (pl->child[i]) {
        sc_isolate_report rep;
        end_child(pl, i, &rep);
        cJSON_Delete(rep.result);
    }
    cJSON_Delete(o->steps);
    o->steps = NULL;
    o->phase = SC_OUTCOME_PENDING;
}

/* The gate of outcome i at its turn; true when the outcome became final as a skip. */
static bool gated(plan *pl, size_t i)
{
    char why[512];
    bool not_applicable;
    const sc_probe *probe = pl->rs->outcomes[i].probe;
    if (sc_opt_deadline_passed(pl->ctx->opt) ||
        sc_gate_blocks(probe, pl->ctx, why, sizeof why, &not_applicable) ||
        (probe->turn_gate && !probe->turn_gate(pl->ctx, why, sizeof why)))
        discard(pl, i);
    pl->gate_open[i] = !sc_runner_skip_if_gated(pl->rs, i, pl->ctx, pl->observer);
    return !pl->gate_open[i];
}

/* Outcome i's turn: gated, started when it has no child yet, made final when its child is done.
 * True when it is final. */
static bool turn(plan *pl, size_t i)
{
    if (!pl->gate_open[i] && gated(pl, i))
        return true;
    sc_result res;
    if (!pl->child[i] && !pl->start_error[i] && pl->running == 0 &&
        !pl->rs->outcomes[i].probe->isolated) {
        /* nothing runs beside it: in this process as in a serial run, without a child's cost */
        sc_runner_run_here(pl->rs, i, pl->ctx, pl->observer);
        return true;
    }
    if (!pl->child[i] && !pl->start_error[i]) {
        if (pl->running >= pl->jobs)
            return false;
        start(pl, i);
    }
    if (pl->child[i] && !sc_isolate_done(pl->child[i]))
        return false;
    if (sc_result_init(&res) < 0)
        return true; /* left pending: nothing can be said */
    if (pl->start_error[i]) {
        sc_result_error(&res, "could not start a child: %s", strerror(-pl->start_error[i]));
        sc_runner_ran(pl->rs, i, pl->ctx, pl->observer, &res, pl->prepared_ms[i], NULL);
        return true;
    }
    sc_isolate_report rep;
    end_child(pl, i, &rep);
    sc_runner_result_from_report(&rep, &res);
    sc_runner_ran(pl->rs, i, pl->ctx, pl->observer, &res, rep.duration_ms + pl->prepared_ms[i],
                  rep.output_tail);
    return true;
}

/* True when outcome i may start now: pending, the layers it reads final, its gate not already
 * closed. */
static bool startable(const plan *pl, size_t i)
{
    char why[512];
    bool not_applicable;
    const sc_outcome *o = &pl->rs->outcomes[i];
    return o->phase == SC_OUTCOME_PENDING && !pl->start_error[i] &&
           !sc_opt_deadline_passed(pl->ctx->opt) && needs_final(pl->rs, o->probe) &&
           !sc_gate_blocks(o->probe, pl->ctx, why, sizeof why, &not_applicable);
}

/* Starts the pending probes after the turn that may start, while fewer than slots run: the active
 * ones first (initialising a runtime, importing torch: the slow part of a run, so the longest
 * chain), then the passive ones, each kind in report order. */
static void speculate(plan *pl, size_t from, size_t slots)
{
    for (int pass = 0; pass < 2; pass++)
        for (size_t k = from; k < pl->rs->count && pl->running < slots; k++) {
            size_t i = pl->rs->order[k];
            if (pl->rs->outcomes[i].probe->active == (pass == 0) && startable(pl, i))
                start(pl, i);
        }
}

/* Waits a little for the running children; the observer hears the tick. */
static void wait_round(plan *pl)
{
    sc_isolate_child *live[SC_ISOLATE_WAIT_MAX];
    size_t n = 0;
    for (size_t i = 0; i < pl->rs->count && n < SC_ISOLATE_WAIT_MAX; i++)
        if (pl->child[i] && !sc_isolate_done(pl->child[i]))
            live[n++] = pl->child[i];
    if (n)
        sc_isolate_wait(live, n, 100);
    if (pl->observer && pl->observer->tick)
        pl->observer->tick(pl->rs, pl->observer->arg);
}

static bool plan_init(plan *pl, sc_run_state *rs, size_t n)
{
    pl->child = calloc(n, sizeof *pl->child);
    pl->job = calloc(n, sizeof *pl->job);
    pl->route = calloc(n, sizeof *pl->route);
    pl->prepared_ms = calloc(n, sizeof *pl->prepared_ms);
    pl->start_error = calloc(n, sizeof *pl->start_error);
    pl->gate_open = calloc(n, sizeof *pl->gate_open);
    pl->warm = calloc(n, sizeof *pl->warm);
    pl->rs = rs;
    return pl->child && pl->job && pl->route && pl->prepared_ms && pl->start_error &&
           pl->gate_open && pl->warm;
}

static void plan_free(plan *pl)
{
    free(pl->child);
    free(pl->job);
    free(pl->route);
    free(pl->prepared_ms);
    free(pl->start_error);
    free(pl->gate_open);
    free(pl->warm);
}

void sc_runner_parallel(sc_run_state *rs, const sc_ctx *ctx, const sc_run_observer *observer,
                        int jobs)
{
    plan pl = {.ctx = ctx, .observer = observer};
    pl.jobs = jobs < SC_ISOLATE_WAIT_MAX ? (size_t)jobs : SC_ISOLATE_WAIT_MAX;
    size_t n = rs->count ? rs->count : 1, cursor = 0;
    if (!plan_init(&pl, rs, n)) {
        plan_free(&pl);
        return; /* out of memory: every outcome stays pending, so nothing is said */
    }
    for (size_t i = 0; i < rs->count; i++) /* every warm-up at once */
        sc_runner_warm_up(rs, i, ctx, pl.warm);
    while (cursor < rs->count) {
        /* one slot stays free for the turn while it has not started */
        size_t i = rs->order[cursor];
        bool waiting = rs->outcomes[i].phase == SC_OUTCOME_PENDING && !pl.start_error[i];
        speculate(&pl, cursor + 1, waiting ? pl.jobs - 1 : pl.jobs);
        if (turn(&pl, i))
            sc_runner_cool_down(rs, ++cursor, ctx, pl.warm);
        else
            wait_round(&pl);
    }
    sc_runner_warm_release(rs, pl.warm);
    plan_free(&pl);
}
