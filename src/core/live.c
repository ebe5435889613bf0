/* The live report. Results are printed layer by layer in report order, from copies of the final
 * outcomes passed through the door (the run state is sealed only as the run ends), so what
 * scrolls by is the report a run prints at its end. The status line names every running probe,
 * its current step and its elapsed time against its deadline. */
#include "sc_live.h"

#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "sc_redact.h"
#include "sc_report.h"
#include "sc_text.h"
#include "sc_util.h"

#define REDRAW_MS 100.0        /* the status line is redrawn at most this often between events */
#define STILL_AFTER_MS 5000.0  /* off a terminal, a probe running this long is named... */
#define STILL_EVERY_MS 15000.0 /* ...and again at this interval */

struct sc_live {
    FILE *out;
    const sc_options *opt;
    bool color, stream, rewrite, still;
    int next_layer; /* the first layer not printed yet */
    size_t shown;   /* the width of the status line on the screen; 0: none */
    double last_draw;
    double *last_still; /* per outcome: when it was last named "still running" */
    sc_run_observer observer;
};

/* The deadline a probe runs against, in seconds; 0 when it has none. */
static double deadline_s(const sc_live *lv, const sc_outcome *o)
{
    return lv->opt->timeout_s > 0 ? lv->opt->timeout_s : o->probe->timeout_s;
}

/* "framework.torch (importing torch) 3.2 s of 60 s" into buf at len; returns the new length. */
static size_t describe(const sc_live *lv, const sc_outcome *o, double now, char *buf, size_t len,
                       size_t size)
{
    char *step = sc_outcome_current_step(o) ? sc_redact_value(sc_outcome_current_step(o)) : NULL;
    double limit = deadline_s(lv, o);
    if (len < size)
        len += (size_t)snprintf(buf + len, size - len, "%s%s%s%s %.1f s", o->probe->id,
                                step ? " (" : "", step ? step : "", step ? ")" : "",
                                (now - o->started_ms) / 1000.0);
    if (len < size && limit > 0)
        len += (size_t)snprintf(buf + len, size - len, " of %.0f s", limit);
    free(step);
    return len;
}

/* Erases the status line: with an escape where colour is allowed, else with blanks (NO_COLOR
 * asks for no escape sequences at all). */
static void erase(sc_live *lv)
{
    if (lv->shown && lv->color)
        fputs("\r\033[K", lv->out);
    else if (lv->shown)
        fprintf(lv->out, "\r%*s\r", (int)lv->shown, "");
    lv->shown = 0;
}

static int columns(FILE *out)
{
    struct winsize ws;
    if (ioctl(fileno(out), TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
        return ws.ws_col;
    return 80;
}

/* The status line: every running probe, in report order. */
static void draw(sc_live *lv, const sc_run_state *rs)
{
    char line[1024];
    size_t len = (size_t)snprintf(line, sizeof line, "running: ");
    double now = sc_now_ms();
    int running = 0;
    for (size_t k = 0; k < rs->count; k++) {
        const sc_outcome *o = sc_run_state_at(rs, k);
        if (o->phase != SC_OUTCOME_RUNNING)
            continue;
        if (running++ && len < sizeof line)
            len += (size_t)snprintf(line + len, sizeof line - len, ", ");
        len = describe(lv, o, now, line, len, sizeof line);
    }
    erase(lv);
    if (running) {
        size_t width = (size_t)columns(lv->out) - 1;
        fputs(lv->color ? "\033[2m" : "", lv->out);
        sc_term_print(lv->out, line, width);
        fputs(lv->color ? "\033[0m" : "", lv->out);
        lv->shown = len < width ? len : width;
    }
    fflush(lv->out);
    lv->last_draw = now;
}

/* Off a terminal: a plain line for each probe that has run long, now and then. */
static void say_still(sc_live *lv, const sc_run_state *rs)
{
    double now = sc_now_ms();
    if (!lv->last_still)
        lv->last_still = calloc(rs->count ? rs->count : 1, sizeof *lv->last_still);
    for (size_t i = 0; lv->last_still && i < rs->count; i++) {
        const sc_outcome *o = &rs->outcomes[i];
        if (o->phase != SC_OUTCOME_RUNNING || now - o->started_ms < STILL_AFTER_MS ||
            (lv->last_still[i] > o->started_ms && now - lv->last_still[i] < STILL_EVERY_MS))
            continue;
        char line[512];
        describe(lv, o, now, line, 0, sizeof line);
        fputs("still running: ", lv->out);
        sc_term_print(lv->out, line, sizeof line);
        fputc('\n', lv->out);
        fflush(lv->out);
        lv->last_still[i] = now;
    }
}

/* Prints layer l from sealed copies of its final outcomes. */
static void print_layer(sc_live *lv, const sc_run_state *rs, int l)
{
    sc_report_layer_title(lv->out, (sc_layer)l, sc_run_state_layer_status(rs, (sc_layer)l),
                          lv->color);
    for (size_t k = 0; k < rs->count; k++) {
        const sc_outcome *o = sc_run_state_at(rs, k);
        if (o->probe->layer != (sc_layer)l || o->phase != SC_OUTCOME_FINAL)
            continue;
        sc_outcome copy;
        sc_outcome_sealed_copy(o, &copy);
        sc_report_probe(lv->out, &copy, lv->color, lv->opt->verbosity);
        sc_outcome_copy_free(&copy);
    }
}

static bool layer_final(const sc_run_state *rs, int l)
{
    for (size_t i = 0; i < rs->count; i++)
        if (rs->outcomes[i].probe->layer == (sc_layer)l &&
            rs->outcomes[i].phase != SC_OUTCOME_FINAL)
            return false;
    return true;
}

static void heard_final(const sc_run_state *rs, size_t index, void *arg)
{
    sc_live *lv = arg;
    (void)index;
    if (!lv->stream)
        return;
    erase(lv);
    for (; lv->next_layer < SC_LAYER_COUNT && layer_final(rs, lv->next_layer); lv->next_layer++)
        print_layer(lv, rs, lv->next_layer);
    fflush(lv->out);
    if (lv->rewrite)
        draw(lv, rs);
}

static void heard_start(const sc_run_state *rs, size_t index, void *arg)
{
    sc_live *lv = arg;
    if (lv->opt->verbosity > 0) {
        erase(lv);
        fflush(lv->out);
        fprintf(stderr, "stackcheck: running %s\n", rs->outcomes[index].probe->id);
    }
    if (lv->rewrite)
        draw(lv, rs);
}

static void heard_step(const sc_run_state *rs, size_t index, void *arg)
{
    (void)index;
    sc_live *lv = arg;
    if (lv->rewrite)
        draw(lv, rs);
}

static void heard_tick(const sc_run_state *rs, void *arg)
{
    sc_live *lv = arg;
    if (lv->rewrite && sc_now_ms() - lv->last_draw >= REDRAW_MS)
        draw(lv, rs);
    if (lv->still)
        say_still(lv, rs);
}

sc_live *sc_live_new(FILE *out, const cJSON *header, const sc_options *opt, bool color)
{
    bool tty = isatty(fileno(out));
    sc_progress progress = opt->verbosity < 0 ? SC_PROGRESS_NEVER : opt->progress;
    sc_live *lv = calloc(1, sizeof *lv);
    if (!lv)
        return NULL; /* the report is printed at the end instead */
    *lv = (sc_live){.out = out, .opt = opt, .color = color};
    lv->stream = opt->verbosity >= 0;
    lv->rewrite = progress == SC_PROGRESS_ALWAYS || (progress == SC_PROGRESS_AUTO && tty);
    lv->still = progress == SC_PROGRESS_AUTO && !tty;
    lv->observer = (sc_run_observer){.started = heard_start,
                                     .final = heard_final,
                                     .step = heard_step,
                                     .tick = heard_tick,
                                     .arg = lv};
    if (lv->stream) {
        sc_report_header(out, header);
        fflush(out);
    }
    return lv;
}

const sc_run_observer *sc_live_observer(sc_live *live)
{
    return live ? &live->observer : NULL;
}

void sc_live_finish(sc_live *lv, const sc_run_state *rs)
{
    erase(lv);
    if (lv->stream) {
        for (; lv->next_layer < SC_LAYER_COUNT; lv->next_layer++)
            print_layer(lv, rs, lv->next_layer);
        fputc('\n', lv->out);
    }
    sc_report_verdict(lv->out, &rs->summary, lv->color);
    free(lv->last_still);
    free(lv);
}
