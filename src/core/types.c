/* String forms of the shared enums, one spelling for the snapshot, the report and the docs. */
#include "sc_types.h"

#include "sc_backend.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const layer_names[] = {"driver", "runtime", "libraries", "framework", "app"};
static const char *const status_names[] = {"pass",  "skip",    "warn", "fail",
                                           "error", "timeout", "crash"};
static const char *const severity_names[] = {"info", "warn", "error"};

const char *sc_layer_name(sc_layer layer)
{
    return (layer >= 0 && layer < SC_LAYER_COUNT) ? layer_names[layer] : "?";
}

const char *sc_backend_name(sc_backend backend)
{
    if (backend == SC_BACKEND_NONE)
        return "none";
    const sc_backend_desc *desc = sc_backend_get(backend);
    return desc ? desc->name : "?";
}

const char *sc_status_name(sc_status status)
{
    return (status >= SC_STATUS_PASS && status <= SC_STATUS_CRASH) ? status_names[status] : "?";
}

sc_status sc_status_parse(const char *name)
{
    for (int i = 0; name && i <= SC_STATUS_CRASH; i++)
        if (strcmp(name, status_names[i]) == 0)
            return (sc_status)i;
    return SC_STATUS_UNSET;
}

const char *sc_severity_name(sc_severity severity)
{
    return (severity >= SC_SEV_INFO && severity <= SC_SEV_ERROR) ? severity_names[severity] : "?";
}

int sc_severity_parse(const char *name)
{
    for (int i = 0; name && i <= SC_SEV_ERROR; i++)
        if (strcmp(name, severity_names[i]) == 0)
            return i;
    return -1;
}

bool sc_status_is_failure(sc_status status)
{
    return status == SC_STATUS_FAIL || status == SC_STATUS_ERROR || status == SC_STATUS_TIMEOUT ||
           status == SC_STATUS_CRASH;
}

int sc_error_set(sc_error *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return code;
}
