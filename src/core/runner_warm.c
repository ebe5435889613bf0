/* Warm-ups of a run (sc_probe.warm_up): a probe's slow part begun before its turn, in this
 * process, when the probe may run; stopped once its layer is final or its gate closes, released at
 * the run's end. A parallel run starts them all at its first moment, a serial one at the probe's
 * turn (so what it starts serves the probes after it too: the warm interpreter that
 * framework.torch starts also serves framework.collective). */
#include "sc_runner_internal.h"

#include <stdlib.h>
#include <string.h>

/* The process environment may turn warm-ups off (a Python that misbehaves when forked). */
static bool warm_ups_allowed(void)
{
    const char *v = getenv("STACKCHECK_WARM");
    return !v || strcmp(v, "0") != 0;
}

void sc_runner_warm_up(const sc_run_state *rs, size_t i, const sc_ctx *ctx, char *warm)
{
    char why[512];
    bool not_applicable;
    const sc_probe *p = rs->outcomes[i].probe;
    if (p->warm_up && !warm[i] && !ctx->offline && !sc_opt_deadline_passed(ctx->opt) &&
        warm_ups_allowed() && !sc_gate_blocks(p, ctx, why, sizeof why, &not_applicable)) {
        p->warm_up(ctx);
        warm[i] = 1;
    }
}

void sc_runner_cool_down(const sc_run_state *rs, size_t cursor, const sc_ctx *ctx, char *warm)
{
    char why[512];
    bool not_applicable;
    const sc_outcome *next = cursor < rs->count ? &rs->outcomes[rs->order[cursor]] : NULL;
    for (size_t i = 0; i < rs->count; i++) {
        const sc_probe *p = rs->outcomes[i].probe;
        if (warm[i] == 1 && (!next || next->probe->layer > p->layer ||
                             sc_gate_blocks(p, ctx, why, sizeof why, &not_applicable))) {
            p->cool_down(false);
            warm[i] = 2;
        }
    }
}

void sc_runner_warm_release(const sc_run_state *rs, char *warm)
{
    for (size_t i = 0; i < rs->count; i++)
        if (warm[i])
            rs->outcomes[i].probe->cool_down(true);
}
