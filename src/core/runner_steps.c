/* The steps of the probe that runs in this process (or in a child the runner waits for there):
 * recorded in its outcome as timing facts and told to the observer, with the ticks of waits. */
#include "sc_runner_internal.h"
#include "sc_step.h"
#include "sc_util.h"

static struct {
    sc_run_state *rs;
    size_t index;
    const sc_run_observer *observer;
} current;

void sc_runner_note_step(sc_run_state *rs, size_t i, const sc_run_observer *observer,
                         const char *name)
{
    if (rs->outcomes[i].phase != SC_OUTCOME_RUNNING)
        return; /* a skip's inventory names no steps of its own */
    sc_outcome_step(&rs->outcomes[i], name, sc_now_ms());
    if (observer && observer->step)
        observer->step(rs, i, observer->arg);
}

static void heard_step(const char *name, void *arg)
{
    (void)arg;
    if (current.rs)
        sc_runner_note_step(current.rs, current.index, current.observer, name);
}

static void heard_tick(void *arg)
{
    (void)arg;
    if (current.rs && current.observer && current.observer->tick)
        current.observer->tick(current.rs, current.observer->arg);
}

void sc_runner_listen(sc_run_state *rs, size_t i, const sc_run_observer *observer)
{
    static const sc_step_listener listener = {.step = heard_step, .tick = heard_tick};
    current.rs = rs;
    current.index = i;
    current.observer = observer;
    sc_step_listen(&listener);
}
