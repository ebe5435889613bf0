/* stackcheck as Slurm's HealthCheckProgram or prolog (--slurm): a failing verdict drains the node
 * it runs on with a reason "stackcheck: <layer> <finding id>", a passing one resumes it only when
 * stackcheck drained it, and a node someone else drained is left as it is (the convention of
 * LBNL's Node Health Check). scontrol does the work, run as a child with a deadline. */
#ifndef SC_SLURM_H
#define SC_SLURM_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "sc_options.h"
#include "sc_types.h"

#define SC_SLURM_PREFIX "stackcheck:" /* how stackcheck's drain reasons begin */
/* Slurm takes a reason of any length, but its accounting database keeps node events' reasons in
 * a TINYTEXT column (255 bytes): a longer one would be cut there. */
#define SC_SLURM_REASON_MAX 255
#define SC_SLURM_DEADLINE_S 35.0 /* the run's default --deadline under --slurm */
#define SC_SLURM_SCONTROL_S 10.0 /* each scontrol call; two at most: 35 + 2 x 10 < Slurm's 60 */

/* What `scontrol show node NAME` says about the node. */
typedef struct {
    bool found;       /* a NodeName= line was there */
    char state[128];  /* "IDLE+DRAIN", "MIXED", "DOWN+DRAIN+NOT_RESPONDING" */
    char reason[512]; /* the drain reason without the " [user@time]" Slurm shows after it; "" */
} sc_slurm_node;

/* Parses the output of `scontrol show node NAME` (len bytes, any content); returns 0, or -ENOENT
 * when it names no node. Only the first node of the output is read. */
int sc_slurm_parse_node(const char *text, size_t len, sc_slurm_node *node);

typedef enum { SC_SLURM_KEEP, SC_SLURM_DRAIN, SC_SLURM_RESUME } sc_slurm_action;

/* What to do with node after a failing (failed) or passing verdict whose drain reason would be
 * reason: drain when it fails (unless someone else drained or downed it, or it is drained with
 * this very reason), resume when it passes and stackcheck drained it. *why says it in words. */
sc_slurm_action sc_slurm_decide(bool failed, const sc_slurm_node *node, const char *reason,
                                const char **why);
/* The drain reason of a snapshot's verdict, "stackcheck: <layer> <finding id>" ("<probe>
 * <status>" when no finding says why): printable ASCII without quotes or backslashes, at most
 * SC_SLURM_REASON_MAX bytes. "" for a verdict that did not fail. */
void sc_slurm_reason(const cJSON *snapshot, char *buf, size_t size);
/* The Slurm name of this node: $SLURMD_NODENAME (slurmd sets it for the health check and the
 * prolog), else the short host name; 0 or -EINVAL with err filled when it is not a plain name. */
int sc_slurm_node_name(char *buf, size_t size, sc_error *err);
/* Acts on the node after a run whose snapshot (redacted) ended with exit_code: reads its state,
 * drains or resumes it, and prints the one line of --slurm to out. Returns the exit code: the
 * run's, or 2 when scontrol could not be run or refused. */
int sc_slurm_act(const cJSON *snapshot, const sc_options *opt, int exit_code, FILE *out);

#endif
