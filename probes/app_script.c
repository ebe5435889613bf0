/* Probe app.script: a Python script (--app-script FILE.py) run --app-repeat times in the framework
 * layer's interpreter, with the `stackcheck` helper module importable for stages, metrics and the
 * numerics watch. The interpreter runs in one more isolated child with a deadline shorter than the
 * probe's, so a crash or a hang in the script becomes a finding naming its stage. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probes.h"
#include "sc_app.h"
#include "sc_app_script.h"
#include "sc_isolate.h"
#include "sc_json.h"
#include "sc_python.h"
#include "sc_redact.h"
#include "sc_util.h"

#define APP_TIMEOUT_S 300.0

extern const char sc_py_app_stackcheck[];
extern const char sc_py_app_stackcheck_ops[];
extern const char sc_py_app_stackcheck_profile[];
extern const char sc_py_app_stackcheck_train[];

/* The helper's modules, as the script imports them. */
static const struct {
    const char *file;
    const char *text;
} helper_files[] = {
    {"stackcheck.py", sc_py_app_stackcheck},
    {"stackcheck_ops.py", sc_py_app_stackcheck_ops},
    {"stackcheck_profile.py", sc_py_app_stackcheck_profile},
    {"stackcheck_train.py", sc_py_app_stackcheck_train},
};
#define HELPER_FILES (sizeof helper_files / sizeof helper_files[0])

/* Imports the helper from its directory and runs the script: argv = [name, dir, script, repeat]. */
static const char boot_code[] = "import sys\n"
                                "sys.path.insert(0, sys.argv[1])\n"
                                "import stackcheck\n"
                                "stackcheck._main(sys.argv[2], int(sys.argv[3]))\n";

typedef struct {
    const sc_python_info *info;
    char dir[PATH_MAX];
    char script[PATH_MAX];
    char repeat[16];
    char progress[PATH_MAX + 16];
    char
        trace[PATH_MAX + 16]; /* where the helper writes the Chrome trace; "" without --app-trace */
    bool profile;
} script_job;

static cJSON *script_child(void *arg)
{
    script_job *job = arg;
    const char *argv[] = {"stackcheck-app", job->dir, job->script, job->repeat, NULL};
    cJSON *result = NULL, *out = cJSON_CreateObject();
    const char *mode = "?";
    sc_error err = {0};
    setenv("STACKCHECK_PROGRESS", job->progress, 1);
    if (job->profile)
        setenv("STACKCHECK_APP_PROFILE", "1", 1);
    if (job->trace[0])
        setenv("STACKCHECK_TRACE_OUT", job->trace, 1);
    int rc = sc_python_run(job->info, boot_code, argv, &result, &mode, &err);
    cJSON_AddStringToObject(out, "mode", mode);
    if (rc < 0 && !result)
        cJSON_AddStringToObject(out, "error", err.message);
    if (result)
        cJSON_AddItemToObject(out, "result", result);
    return out;
}

static int write_helper(const char *dir, sc_error *err)
{
    for (size_t i = 0; i < HELPER_FILES; i++) {
        char path[PATH_MAX + 64];
        int rc = sc_python_write_file(dir, helper_files[i].file, helper_files[i].text, path,
                                      sizeof path, err);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static void remove_in(const char *dir, const char *name)
{
    char path[PATH_MAX + 300];
    if (sc_fmt(path, sizeof path, "%s/%s", dir, name))
        unlink(path);
}

/* The helper's files, the progress file, the trace and the byte code Python left. */
static void remove_workdir(const script_job *job)
{
    char cache[PATH_MAX + 16];
    snprintf(cache, sizeof cache, "%s/__pycache__", job->dir);
    DIR *d = opendir(cache);
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.')
            remove_in(cache, e->d_name);
    if (d)
        closedir(d);
    rmdir(cache);
    for (size_t i = 0; i < HELPER_FILES; i++)
        remove_in(job->dir, helper_files[i].file);
    remove_in(job->dir, "progress");
    remove_in(job->dir, "trace.json");
    rmdir(job->dir);
}

/* Where the script was when it died: "repetition\tstage" from the progress file. */
static void read_progress(const script_job *job, char *stage, size_t size, int *repetition)
{
    snprintf(stage, size, "(before the first stage)");
    *repetition = 1;
    FILE *f = fopen(job->progress, "re");
    char line[512];
    if (!f)
        return;
    if (fgets(line, sizeof line, f)) {
        char *tab = strchr(sc_rstrip(line), '\t');
        if (tab) {
            *tab = '\0';
            *repetition = atoi(line);
            snprintf(stage, size, "%s", tab + 1);
        }
    }
    fclose(f);
}

static int prepare(const sc_ctx *ctx, script_job *job, sc_error *err)
{
    const char *tmp = getenv("TMPDIR");
    if (!realpath(ctx->opt->app_script, job->script))
        return sc_error_set(err, -errno, "cannot read --app-script %s: %s", ctx->opt->app_script,
                            strerror(errno));
    if (access(job->script, R_OK) < 0)
        return sc_error_set(err, -errno, "cannot read --app-script %s: %s", job->script,
                            strerror(errno));
    snprintf(job->repeat, sizeof job->repeat, "%d",
             ctx->opt->app_repeat > 0 ? ctx->opt->app_repeat : 1);
    if (!sc_fmt(job->dir, sizeof job->dir, "%s/stackcheck-app-XXXXXX",
                tmp && tmp[0] == '/' ? tmp : "/tmp"))
        return sc_error_set(err, -ENAMETOOLONG, "TMPDIR is too long");
    if (!mkdtemp(job->dir))
        return sc_error_set(err, -errno, "mkdtemp %s: %s", job->dir, strerror(errno));
    snprintf(job->progress, sizeof job->progress, "%s/progress", job->dir);
    job->profile = ctx->opt->app_profile;
    if (ctx->opt->app_trace)
        snprintf(job->trace, sizeof job->trace, "%s/trace.json", job->dir);
    return write_helper(job->dir, err);
}

static void add_python_facts(cJSON *facts, const sc_python_info *info, const char *mode)
{
    cJSON *py = cJSON_AddObjectToObject(facts, "python");
    cJSON_AddStringToObject(py, "executable", info->executable);
    cJSON_AddStringToObject(py, "version", info->version);
    sc_fact_str(py, "mode", mode, "the interpreter did not start");
}

/* The interpreter child died or hung: place it in a stage from the progress file. */
static void report_abnormal(sc_result *res, const script_job *job, const sc_isolate_report *rep,
                            double deadline_s)
{
    char stage[256], tail[400], name[32];
    int repetition;
    read_progress(job, stage, sizeof stage, &repetition);
    cJSON_AddStringToObject(res->facts, "first_failed_stage", stage);
    sc_app_one_line(rep->output_tail, strlen(rep->output_tail), tail, sizeof tail);
    if (rep->outcome == SC_ISOLATE_TIMEOUT)
        sc_finding(res, "app.timeout", SC_SEV_ERROR,
                   "find what the stage waits for; give the app more time with --timeout SECONDS",
                   "the app script did not finish within %.1f s, in stage '%s' of repetition %d; "
                   "its interpreter was killed; last output: %s",
                   deadline_s, stage, repetition, tail[0] ? tail : "(none)");
    else if (rep->outcome == SC_ISOLATE_CRASH)
        sc_finding(res, "app.crashed", SC_SEV_ERROR,
                   "run the stage alone under a debugger (gdb --args python3 FILE.py) or with "
                   "faulthandler (python3 -X faulthandler); check the layers below",
                   "the app script's interpreter was killed by %s in stage '%s' of repetition %d; "
                   "last output: %s",
                   sc_signal_name(rep->signal, name, sizeof name), stage, repetition,
                   tail[0] ? tail : "(none)");
    else
        sc_finding(res, "app.failed", SC_SEV_ERROR,
                   "something in the script ended the interpreter (os._exit, a fatal error); its "
                   "output tail is in facts.output_tail",
                   "the app script ended its interpreter in stage '%s' of repetition %d without a "
                   "result (%s); last output: %s",
                   stage, repetition, rep->detail, tail[0] ? tail : "(none)");
}

static void run_script(const sc_ctx *ctx, sc_result *res, const sc_python_info *info,
                       script_job *job)
{
    double probe_s = ctx->opt->timeout_s > 0 ? ctx->opt->timeout_s : APP_TIMEOUT_S;
    double deadline_s = sc_app_deadline_s(probe_s);
    cJSON_AddStringToObject(res->facts, "script", job->script);
    cJSON_AddNumberToObject(res->facts, "deadline_s", deadline_s);
    cJSON_AddNumberToObject(res->facts, "repeat", atoi(job->repeat));
    sc_isolate_report rep;
    int rc = sc_isolate_run(script_child, job, deadline_s, &rep);
    if (rc < 0) {
        sc_result_error(res, "cannot start the script's interpreter: %s", strerror(-rc));
        return;
    }
    add_python_facts(res->facts, info, sc_json_str(rep.result, "mode"));
    cJSON_AddItemToObject(res->facts, "output_tail",
                          sc_app_text_json(rep.output_tail, strlen(rep.output_tail)));
    cJSON *r = cJSON_GetObjectItemCaseSensitive(rep.result, "result");
    if (rep.outcome != SC_ISOLATE_OK)
        report_abnormal(res, job, &rep, deadline_s);
    else if (!cJSON_IsObject(r))
        sc_result_error(res, "the Python interpreter could not run the script: %s",
                        sc_json_str(rep.result, "error") ? sc_json_str(rep.result, "error")
                                                         : "no result");
    else
        sc_app_script_result(res, r);
    if (job->trace[0])
        sc_app_write_trace(res, job->trace, ctx->opt->app_trace);
    cJSON_Delete(rep.result);
}

static void run(const sc_ctx *ctx, sc_result *res)
{
    if (!ctx->opt->app_script) {
        sc_result_skip(res, true, "no --app-script given");
        return;
    }
    sc_python_info *info = calloc(1, sizeof *info);
    script_job *job = calloc(1, sizeof *job);
    sc_error err = {0};
    if (!info || !job) {
        sc_result_error(res, "out of memory");
    } else if (sc_python_locate(ctx->opt->python, ctx->opt->timeout_s, info, &err) < 0) {
        sc_result_error(res, "cannot use the Python interpreter %s: %s",
                        ctx->opt->python ? ctx->opt->python : "python3", err.message);
    } else if (prepare(ctx, job, &err) < 0) {
        sc_result_error(res, "%s", err.message);
    } else {
        job->info = info;
        run_script(ctx, res, info, job);
    }
    if (job && job->dir[0])
        remove_workdir(job);
    free(info);
    free(job);
    sc_redact_json(res->facts);
}

const sc_probe sc_probe_app_script = {
    .id = "app.script",
    .layer = SC_LAYER_APP,
    .backend = SC_BACKEND_NONE,
    .isolated = true,
    .active = true,
    .timeout_s = APP_TIMEOUT_S,
    .summary = "a Python app script (--app-script FILE.py): stages, metrics, numerics, memory",
    .run = run,
};
