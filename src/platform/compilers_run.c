/* Asking a compiler for its version: `PATH --version` in an isolated child (its own deadline,
 * crash signals at their defaults), which runs the compiler without a shell under a deadline of
 * its own and kills whatever it started; the output is parsed in the child and only the version
 * comes back. Used only for a compiler the user runs whose install has no version file. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "sc_compilers.h"
#include "sc_exec.h"
#include "sc_isolate.h"
#include "sc_util.h"

#define ISOLATE_MARGIN_S 5.0 /* the child's own deadline, kill and reap come first */

typedef struct {
    const char *path;
    sc_compiler_parse_fn parse;
    double timeout_ms;
} version_job;

/* {"version": V} or {"error": why}. */
static cJSON *query_in_child(void *arg)
{
    const version_job *job = arg;
    const char *const argv[] = {job->path, "--version", NULL};
    cJSON *out = cJSON_CreateObject();
    sc_buf text;
    sc_error err = {0};
    int status = 0;
    char version[64], why[256];
    sc_buf_init(&text);
    int rc = sc_exec_capture(argv, job->timeout_ms, false, &text, &status, &err);
    if (rc == -ETIMEDOUT)
        sc_fmt(why, sizeof why, "--version did not finish within %.1f s; killed",
               job->timeout_ms / 1000);
    else if (rc < 0)
        sc_fmt(why, sizeof why, "could not run it: %s", err.message);
    else if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
        sc_fmt(why, sizeof why, "could not run it (not executable, or its interpreter is missing)");
    else if (text.oom || job->parse(text.data ? text.data : "", version, sizeof version) < 0)
        sc_fmt(why, sizeof why, "--version printed no version it could read (%s %d)",
               WIFEXITED(status) ? "exit status" : "signal",
               WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    else
        why[0] = '\0';
    if (why[0])
        cJSON_AddStringToObject(out, "error", why);
    else
        cJSON_AddStringToObject(out, "version", version);
    sc_buf_free(&text);
    return out;
}

void sc_compiler_run_version(sc_compiler *c, sc_compiler_parse_fn parse, double timeout_ms)
{
    version_job job = {c->path, parse, timeout_ms};
    sc_isolate_report rep;
    const char *v = NULL, *e = NULL;
    if (sc_isolate_run(query_in_child, &job, timeout_ms / 1000 + ISOLATE_MARGIN_S, &rep) < 0) {
        sc_fmt(c->version_error, sizeof c->version_error, "could not start an isolated child");
        return;
    }
    if (rep.outcome == SC_ISOLATE_OK) {
        v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(rep.result, "version"));
        e = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(rep.result, "error"));
    }
    if (v && strlen(v) < sizeof c->version) {
        snprintf(c->version, sizeof c->version, "%s", v);
        sc_fmt(c->version_from, sizeof c->version_from, "ran %s --version", c->path);
    } else {
        sc_fmt(c->version_error, sizeof c->version_error, "no version file; ran %s --version: %s",
               c->path, e ? e : rep.detail);
    }
    cJSON_Delete(rep.result);
}
