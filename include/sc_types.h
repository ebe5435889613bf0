/* Shared vocabulary of stackcheck: layers, backends, statuses, severities, errors.
 * Every enum has a to-string function so the snapshot and the report use one spelling. */
#ifndef SC_TYPES_H
#define SC_TYPES_H

#include <stdbool.h>
#include <stddef.h>

typedef enum {
    SC_LAYER_DRIVER,
    SC_LAYER_RUNTIME,
    SC_LAYER_LIBRARIES,
    SC_LAYER_FRAMEWORK,
    SC_LAYER_APP,
    SC_LAYER_COUNT
} sc_layer;

typedef enum { SC_BACKEND_NONE, SC_BACKEND_AMD, SC_BACKEND_NVIDIA, SC_BACKEND_ASCEND } sc_backend;

/* Ordered from best to worst, so a summary is the maximum. SC_STATUS_UNSET lets a probe leave
 * its status to be derived from its findings. */
typedef enum {
    SC_STATUS_UNSET = -1,
    SC_STATUS_PASS = 0,
    SC_STATUS_SKIP,
    SC_STATUS_WARN,
    SC_STATUS_FAIL,
    SC_STATUS_ERROR,
    SC_STATUS_TIMEOUT,
    SC_STATUS_CRASH
} sc_status;

typedef enum { SC_SEV_INFO, SC_SEV_WARN, SC_SEV_ERROR } sc_severity;

/* A caller-owned error: code is a negative errno-style value, message says what failed. */
typedef struct {
    int code;
    char message[256];
} sc_error;

/* Returns "driver", "runtime", ... ; "?" for out-of-range values. */
const char *sc_layer_name(sc_layer layer);
/* Returns "none", "amd", "nvidia", "ascend". */
const char *sc_backend_name(sc_backend backend);
/* Returns "pass", "warn", "fail", "skip", "crash", "timeout", "error". */
const char *sc_status_name(sc_status status);
/* Parses a status name; returns SC_STATUS_UNSET when unknown. */
sc_status sc_status_parse(const char *name);
/* Returns "info", "warn", "error". */
const char *sc_severity_name(sc_severity severity);
/* Parses a severity name; returns -1 when unknown. */
int sc_severity_parse(const char *name);
/* True for fail, error, timeout and crash: statuses that make the run exit 1. */
bool sc_status_is_failure(sc_status status);
/* Fills err (when not NULL) with code and a printf-style message; returns code. */
int sc_error_set(sc_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
