/* framework.collective's judgement of what its launcher reported: the ranks' verified values and
 * timings into facts, and the findings for a hang, a wrong result, a failed rank and a collective
 * library from another install than the runtime's. */
#ifndef SC_COLLECTIVE_H
#define SC_COLLECTIVE_H

#include "sc_probe.h"

/* Takes result ({world, deadline_s, expired, ranks[]}) apart into res->facts and findings. */
void sc_collective_check(const sc_ctx *ctx, sc_result *res, cJSON *result);

#endif
