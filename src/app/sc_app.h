/* The app layer's machinery: the stage-marker parser over an app's output streams (bounded memory,
 * a tail of each stream and of each stage kept), running a shell command with a deadline and
 * cleaning up what it leaves behind, and the start-up/steady-state and memory-growth arithmetic. */
#ifndef SC_APP_H
#define SC_APP_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sc_types.h"

#define SC_APP_STAGE_MAX 64   /* more stage markers than this are counted, not recorded */
#define SC_APP_METRIC_MAX 64  /* the same for metrics */
#define SC_APP_NAME_MAX 128   /* stage and metric names are cut to this */
#define SC_APP_LINE_MAX 1024  /* a line longer than this is output, never a marker */
#define SC_APP_SLICE_MAX 2048 /* each stage keeps the last bytes of its output */
#define SC_APP_TAIL_MAX 16384 /* each stream keeps its last bytes */

/* The last bytes written to a stream: a ring over caller-provided storage. */
typedef struct {
    char *buf;
    size_t cap;
    uint64_t total; /* bytes ever appended */
} sc_tail;

void sc_tail_init(sc_tail *t, char *storage, size_t cap);
void sc_tail_append(sc_tail *t, const char *p, size_t n);
/* Copies the kept bytes, oldest first, into out (size >= t->cap); returns how many. */
size_t sc_tail_copy(const sc_tail *t, char *out);

typedef struct {
    char name[SC_APP_NAME_MAX];
    double start_ms, end_ms;
    bool implicit; /* output before the first marker */
    char slice_buf[SC_APP_SLICE_MAX];
    sc_tail slice;
} sc_app_stage;

typedef struct {
    char name[SC_APP_NAME_MAX];
    double value;
    int stage; /* index into stages */
} sc_app_metric;

enum { SC_APP_STDOUT = 1, SC_APP_STDERR = 2 };

/* The parser's state; large (tens of KiB), so callers allocate it. */
typedef struct {
    sc_app_stage stages[SC_APP_STAGE_MAX];
    int stage_count;
    int stages_dropped;
    sc_app_metric metrics[SC_APP_METRIC_MAX];
    int metric_count;
    int metrics_dropped;
    int malformed; /* lines that start like a marker but are not one */
    char out_buf[SC_APP_TAIL_MAX], err_buf[SC_APP_TAIL_MAX];
    sc_tail out, err;
    char line[SC_APP_LINE_MAX]; /* the start of the current stdout line, while it may be a marker */
    size_t line_len;
    int line_state; /* at line start, maybe a marker, plain output */
    double finish_ms;
} sc_app_parse;

/* Starts a parse at time now_ms (the implicit first stage begins then). */
void sc_app_parse_init(sc_app_parse *p, double now_ms);
/* Feeds n bytes read from stream (SC_APP_STDOUT or SC_APP_STDERR) at time now_ms. Markers are
 * `::stackcheck stage NAME` and `::stackcheck metric NAME VALUE` lines on standard output. */
void sc_app_parse_feed(sc_app_parse *p, int stream, const char *data, size_t n, double now_ms);
/* Ends the parse at now_ms: a pending last line without newline is handled, the last stage closed.
 */
void sc_app_parse_finish(sc_app_parse *p, double now_ms);
/* Index of the stage the output would be in now (the last one). */
int sc_app_current_stage(const sc_app_parse *p);
/* True when the stage is reported: explicit stages, and the implicit one when it holds output or
 * is the only stage. */
bool sc_app_stage_reported(const sc_app_parse *p, int i);

/* A JSON string of n bytes of process output: invalid UTF-8 and NUL bytes become U+FFFD. */
cJSON *sc_app_text_json(const char *data, size_t n);
/* The stages as a JSON array [{name, status, duration_ms, output_bytes, output_tail, metrics{}}]:
 * every stage passed but the last, which failed when run_ok is false. */
cJSON *sc_app_stages_json(const sc_app_parse *p, bool run_ok);
/* The metrics as an object {name: value}; the last value of a name wins. */
cJSON *sc_app_metrics_json(const sc_app_parse *p);
/* {bytes, truncated, tail} of one stream (SC_APP_STDOUT or SC_APP_STDERR). */
cJSON *sc_app_stream_json(const sc_app_parse *p, int stream);
/* The name of the stage the run failed in (the last reported one), or NULL when there is none. */
const char *sc_app_failed_stage(const sc_app_parse *p);

/* The end of n bytes of output as one printable line for a finding's message: redacted and made
 * valid UTF-8 first, then cut on a character boundary; newlines become " | ", other control
 * characters '?', at most size - 1 bytes. */
void sc_app_one_line(const char *data, size_t n, char *out, size_t size);
/* The same for the output slice of stage i (a partial first line dropped when it wrapped). */
void sc_app_stage_tail_line(const sc_app_parse *p, int stage, char *out, size_t size);

/* How one run of the app command ended. */
typedef struct {
    int exit_code;  /* the shell's exit status, or -1 when it was killed */
    int signal;     /* the signal that ended it, or 0 */
    bool timed_out; /* the deadline passed; everything it started was killed */
    double duration_ms;
    int strays_killed; /* processes it left behind that were killed afterwards */
} sc_app_outcome;

/* Runs cmd through /bin/sh -c with stdin from /dev/null, stdout and stderr into parse, until it
 * exits or the monotonic deadline_ms passes. The command and every process it starts stay in one
 * process group: the caller's when in_my_group (an isolated probe, which leads a group of its own,
 * so the runner's kill of that group reaches the app too), else a new one. The caller becomes a
 * child subreaper; at the deadline, and once the command exits, every descendant of the caller is
 * killed (sc_reap_descendants: background children, children holding the output open, setsid'd
 * or double-forked ones), so the caller never waits on them. Returns 0 or a negative errno with
 * err filled. */
int sc_app_exec(const char *cmd, double deadline_ms, bool in_my_group, sc_app_parse *parse,
                sc_app_outcome *out, sc_error *err);

/* The median of n values (n >= 1), without changing them. */
double sc_app_median(const double *values, int n);
/* A least-squares line through memory measured after each repetition, the first left out: it is
 * start-up and may allocate what later ones reuse. */
typedef struct {
    int points;            /* repetitions fitted (n - 1) */
    double bytes_per_step; /* the slope */
    double intercept;      /* at the second repetition */
    double r2;             /* how well a line explains the values: 1 is a perfect line */
    double growth;         /* bytes_per_step * (points - 1): the rise the line makes */
} sc_app_fit;

/* Fits values (bytes, one per repetition, n of them) from the second on; false when fewer than
 * three remain. */
bool sc_app_memory_fit(const double *values, int n, sc_app_fit *fit);
/* True when the fit says memory keeps growing: at least three repetitions after the first, the
 * line rises by min_rise bytes or more over them, and explains them (r2 >= SC_APP_FIT_R2), so a
 * single jump or noise is not growth. */
#define SC_APP_FIT_R2 0.9
bool sc_app_memory_growing(const sc_app_fit *fit, double min_rise);
/* Start-up apart from steady state: from runs [{duration_ms, stages{name: ms}}], the object
 * {first_ms, steady_median_ms, steady_runs, stages[{name, first_ms, steady_median_ms,
 * steady_runs}]} where steady is the median of every run but the first (null with a reason for one
 * run). */
cJSON *sc_app_timing_json(const cJSON *runs);
/* The app's own deadline inside a probe deadline of probe_s seconds: a margin earlier, so the
 * probe can report the timeout as a finding before its own deadline passes. */
double sc_app_deadline_s(double probe_s);

#endif
