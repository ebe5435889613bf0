/* Runs a function in a forked child with a deadline. The child sends its result as JSON on a pipe;
 * a signal becomes a crash with the signal's name, a missed deadline a timeout (the child's whole
 * process group is killed), and the parent carries on. */
#ifndef SC_ISOLATE_H
#define SC_ISOLATE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

typedef enum {
    SC_ISOLATE_OK,      /* the child exited and sent a JSON result */
    SC_ISOLATE_CRASH,   /* the child died of a signal */
    SC_ISOLATE_TIMEOUT, /* the deadline passed; the child's group was killed */
    SC_ISOLATE_ERROR    /* no valid result: fork failed, bad JSON, non-zero exit */
} sc_isolate_outcome;

typedef struct {
    sc_isolate_outcome outcome;
    cJSON *result;          /* the child's JSON (caller frees), when outcome is OK */
    int exit_code;          /* the child's exit status, or -1 */
    int signal;             /* the signal that ended it, or 0 */
    char detail[256];       /* what went wrong, in words */
    char output_tail[2048]; /* the last part of what the child wrote to stdout and stderr */
    double duration_ms;
} sc_isolate_report;

/* The function a child runs: it returns its result as a JSON tree (it may return NULL). */
typedef cJSON *(*sc_isolated_fn)(void *arg);

/* Runs fn(arg) in a child in its own process group with a deadline of timeout_s seconds; fills rep.
 * The child's standard output and error are captured (tail kept). Nothing the child starts
 * outlives the call: the child is a subreaper that kills its descendants when fn returns, and the
 * caller becomes one too and kills what comes back to it when the child crashes or is killed (so
 * the caller must have no other child it means to keep). Returns 0 or -errno when the child could
 * not be started. */
int sc_isolate_run(sc_isolated_fn fn, void *arg, double timeout_s, sc_isolate_report *rep);

/* A child started with sc_isolate_start, until sc_isolate_end. */
typedef struct sc_isolate_child sc_isolate_child;
/* Hears each step line the child sends (see sc_step.h). */
typedef void (*sc_isolate_step_fn)(const char *step, void *arg);

#define SC_ISOLATE_WAIT_MAX 64 /* children one sc_isolate_wait watches at most */

/* Starts fn(arg) in a child as sc_isolate_run does, without waiting for it: *out is the child.
 * Its step lines go to on_step (NULL: passed on with sc_step_text). Until it ends, cleanups of this
 * process (sc_reap_descendants) spare it. Returns 0 or -errno. */
int sc_isolate_start(sc_isolated_fn fn, void *arg, double timeout_s, sc_isolate_step_fn on_step,
                     void *step_arg, sc_isolate_child **out);
/* Waits up to wait_ms for any of the n children: reads their pipes, passes their steps on, notes
 * which exited. */
void sc_isolate_wait(sc_isolate_child *const *children, size_t n, int wait_ms);
/* True when the child has sent all it will send, or its deadline has passed. */
bool sc_isolate_done(const sc_isolate_child *c);
/* Kills the child's group now without waiting for it (sc_isolate_end still ends it): a child whose
 * work is no longer wanted stops using the CPU while its caller goes on. */
void sc_isolate_kill(sc_isolate_child *c);
/* Ends the child (killing its group and whatever it left if it still runs), fills rep as
 * sc_isolate_run does and frees c. Before it is done, the outcome is a timeout. */
void sc_isolate_end(sc_isolate_child *c, sc_isolate_report *rep);

/* Name of a signal ("SIGSEGV"), or "signal N". */
const char *sc_signal_name(int sig, char *buf, size_t size);

#endif
