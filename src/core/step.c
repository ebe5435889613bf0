/* Steps of a probe: written as lines on the step pipe in an isolated child, handed to the runner's
 * listener in the parent. One line per step, cut to SC_STEP_MAX bytes, newlines turned to spaces,
 * so a line is one write and never interleaves with another child's. */
#include "sc_step.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int step_fd = -1;
static sc_step_listener listener;

void sc_step_listen(const sc_step_listener *l)
{
    static const sc_step_listener none;
    listener = l ? *l : none;
}

void sc_step_to_fd(int fd)
{
    sc_step_listen(NULL);
    step_fd = fd;
}

void sc_step_tick(void)
{
    if (step_fd < 0 && listener.tick)
        listener.tick(listener.arg);
}

void sc_step_text(const char *text)
{
    char line[SC_STEP_MAX + 2];
    size_t n = 0;
    for (; text && text[n] && n < SC_STEP_MAX; n++)
        line[n] = text[n] == '\n' || text[n] == '\r' ? ' ' : text[n];
    line[n] = '\0';
    if (step_fd < 0) {
        if (listener.step)
            listener.step(line, listener.arg);
        return;
    }
    line[n++] = '\n';
    while (write(step_fd, line, n) < 0 && errno == EINTR)
        ;
}

void sc_step(const char *fmt, ...)
{
    char text[SC_STEP_MAX + 1];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    sc_step_text(text);
}
