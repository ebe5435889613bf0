/* --app-trace FILE: the Chrome trace of the profiled repetition, taken from the interpreter's
 * private directory and written through the one door out (every string redacted and made valid
 * UTF-8) and the one output writer to the file the user named. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sc_app_script.h"
#include "sc_json.h"
#include "sc_output.h"
#include "sc_redact.h"
#include "sc_snapshot.h"

#define TRACE_MAX (256u << 20) /* a profile of one repetition; larger is refused, not parsed */

static int copy_trace(const char *src, const char *dest, sc_error *err)
{
    cJSON *trace = sc_json_read_file(src, TRACE_MAX, err);
    if (!trace)
        return err->code ? err->code : -EINVAL;
    sc_redact_json(trace);
    char *text = cJSON_PrintUnformatted(trace);
    cJSON_Delete(trace);
    if (!text)
        return sc_error_set(err, -ENOMEM, "out of memory printing the trace");
    int rc = sc_output_write(dest, text, strlen(text), err);
    free(text);
    return rc;
}

void sc_app_write_trace(sc_result *res, const char *src, const char *dest)
{
    cJSON *profile = cJSON_GetObjectItemCaseSensitive(res->facts, "profile");
    if (!cJSON_IsObject(profile))
        return; /* the repetition failed before a profile existed: nothing to write */
    cJSON_DeleteItemFromObjectCaseSensitive(profile, "trace_file");
    sc_error err = {0};
    if (copy_trace(src, dest, &err) == 0) {
        cJSON_AddStringToObject(profile, "trace_file", dest);
        return;
    }
    sc_fact_null(profile, "trace_file", "%s", err.message);
    sc_finding(res, "app.trace-not-written", SC_SEV_WARN,
               "check that --app-trace names a writable place (its directories are made when "
               "missing), and that the "
               "profiler wrote a trace (facts.profile.profiler)",
               "the Chrome trace of the profiled repetition was not written to %s: %s", dest,
               err.message);
}
