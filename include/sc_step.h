/* Steps: what a probe is doing now ("initialising", "device 3 of 8", "importing torch"). A probe
 * names each step as it begins; in an isolated child the name travels to the parent on the step
 * pipe (STACKCHECK_STEP_FD for what the child executes), in the parent it goes to the runner. */
#ifndef SC_STEP_H
#define SC_STEP_H

#include <stdbool.h>

#define SC_STEP_MAX 160 /* a step name is cut to this many bytes */
#define SC_STEP_FD_ENV "STACKCHECK_STEP_FD"

/* Names the step the calling probe begins now (printf-style). */
void sc_step(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same with a ready text: to the step pipe in a child, to the listener in the parent. */
void sc_step_text(const char *text);

/* Who hears steps and the ticks of waits in this process (the runner). */
typedef struct {
    void (*step)(const char *text, void *arg);
    void (*tick)(void *arg); /* a wait for a child goes round: time to redraw */
    void *arg;
} sc_step_listener;

/* Sets (or with NULL clears) the listener of this process. */
void sc_step_listen(const sc_step_listener *listener);
/* In a child: steps go to fd from now on, and the listener is forgotten. */
void sc_step_to_fd(int fd);
/* Called by waits that go round while a child works: passes the tick to the listener. */
void sc_step_tick(void);

#endif
