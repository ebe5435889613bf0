/* Sub-command dispatch, option parsing for `run` (getopt_long, GNU conventions), and the run
 * itself: build the snapshot, run the probes, write the snapshot, JUnit and the report, return the
 * exit code. */
#include "sc_cli.h"

#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sc_capture.h"
#include "sc_explain.h"
#include "sc_findings_doc.h"
#include "sc_live.h"
#include "sc_output.h"
#include "sc_probe.h"
#include "sc_prometheus.h"
#include "sc_redact.h"
#include "sc_report.h"
#include "sc_runner.h"
#include "sc_slurm.h"
#include "sc_snapshot.h"
#include "sc_text.h"
#include "sc_util.h"
#include "sc_version.h"

static const char usage_text[] =
    "Usage: stackcheck [run] [OPTIONS]\n"
    "       stackcheck explain ID|TEXT\n"
    "       stackcheck list\n"
    "       stackcheck libs [--arch ARCH]... [--json FILE] FILE...\n"
    "       stackcheck diff A.json B.json [--json FILE] [--rtol R] [--atol A]\n"
    "       stackcheck capture [--sysroot DIR] [--json FILE] OUT.tar.gz\n"
    "       stackcheck fleet [--json FILE] [--factor F] SNAPSHOT...|DIR...\n"
    "\n"
    "Checks an accelerator software stack bottom-up (driver, runtime, libraries, framework, app),\n"
    "names the first layer that fails and why, and writes a JSON snapshot of the environment.\n"
    "\n"
    "Options of run:\n"
    "  --json FILE          write the snapshot to FILE (- for standard output; the report then\n"
    "                       goes to standard error)\n"
    "  --junit FILE         write a JUnit XML file, one test case per probe\n"
    "  --sysroot DIR        inspect the root file system DIR offline (active probes are skipped);\n"
    "                       DIR may be a capture (OUT.tar.gz of stackcheck capture, or its\n"
    "                       unpacked directory), replayed as the captured machine answered\n"
    "  --keep-going         run every layer, also above a failed one\n"
    "  --timeout SECONDS    deadline of each isolated probe (default: the probe's own)\n"
    "  --hip-library PATH   the HIP runtime library to load (default: what the loader finds)\n"
    "  --python PATH        the Python interpreter to inspect (default: python3 on PATH)\n"
    "  --ext FILE|DIR       a user extension to check in the libraries layer (repeatable)\n"
    "  --import MODULE      a module to import after torch in the framework layer (repeatable)\n"
    "  --arch ARCH          a target device architecture for the libraries layer (repeatable)\n"
    "  --app CMD            the application's smallest real step, run through /bin/sh -c\n"
    "  --app-script FILE    a Python script run in the framework layer's interpreter\n"
    "  --app-repeat N       run the app step N times (first run apart from steady state)\n"
    "  --jobs N             run up to N probes at once (default: the online CPUs; 1: one by one)\n"
    "  --progress WHEN      auto, always or never: a status line of what runs (on a terminal),\n"
    "                       \"still running\" lines for slow probes (off one)\n"
    "  --app-profile        profile the app script's last repetition per operator\n"
    "  --app-trace FILE     write that profile's Chrome trace to FILE (implies --app-profile)\n"
    "  --collective-ranks N processes of the collective check (default: one per device)\n"
    "  --prometheus FILE    write node_exporter textfile-collector metrics to FILE\n"
    "  --deadline SECONDS   the whole run's deadline: each isolated probe gets at most what is\n"
    "                       left, probes not started by then are skipped (default: none; 35\n"
    "                       with --slurm)\n"
    "  --slurm              Slurm health check or prolog: one line of output; drain this node\n"
    "                       when the verdict fails, resume it when it passes and stackcheck had\n"
    "                       drained it (a node drained for another reason is left alone)\n"
    "  --scontrol PATH      the scontrol --slurm runs (default: scontrol on PATH)\n"
    "  --no-color           no colour (also when NO_COLOR is set)\n"
    "  -q, --quiet          print the verdict only\n"
    "  -v, --verbose        print every finding and each probe's duration\n"
    "  --version            print the version and exit\n"
    "  -h, --help           print this help and exit\n"
    "\n"
    "The paths of --json, --junit and --prometheus may hold %h (the short host name), %j\n"
    "(SLURM_JOB_ID, or none), %t (the run's UTC time) and %% (a %); missing directories are\n"
    "created.\n"
    "\n"
    "Exit status:\n"
    "  0  every layer that ran passed (warnings allowed)\n"
    "  1  a check failed, crashed or timed out\n"
    "  2  usage error or unreadable input; with --slurm also when scontrol failed\n";

enum {
    OPT_JSON = 256,
    OPT_JUNIT,
    OPT_SYSROOT,
    OPT_KEEP_GOING,
    OPT_TIMEOUT,
    OPT_NO_COLOR,
    OPT_VERSION,
    OPT_HIP_LIBRARY,
    OPT_PYTHON,
    OPT_EXT,
    OPT_IMPORT,
    OPT_ARCH,
    OPT_APP,
    OPT_APP_SCRIPT,
    OPT_APP_REPEAT,
    OPT_JOBS,
    OPT_PROGRESS,
    OPT_APP_PROFILE,
    OPT_APP_TRACE,
    OPT_COLLECTIVE_RANKS,
    OPT_PROMETHEUS,
    OPT_SLURM,
    OPT_SCONTROL,
    OPT_DEADLINE
};

static const struct option run_options[] = {
    {"json", required_argument, NULL, OPT_JSON},
    {"junit", required_argument, NULL, OPT_JUNIT},
    {"sysroot", required_argument, NULL, OPT_SYSROOT},
    {"keep-going", no_argument, NULL, OPT_KEEP_GOING},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"no-color", no_argument, NULL, OPT_NO_COLOR},
    {"quiet", no_argument, NULL, 'q'},
    {"verbose", no_argument, NULL, 'v'},
    {"version", no_argument, NULL, OPT_VERSION},
    {"help", no_argument, NULL, 'h'},
    {"hip-library", required_argument, NULL, OPT_HIP_LIBRARY},
    {"python", required_argument, NULL, OPT_PYTHON},
    {"ext", required_argument, NULL, OPT_EXT},
    {"import", required_argument, NULL, OPT_IMPORT},
    {"arch", required_argument, NULL, OPT_ARCH},
    {"app", required_argument, NULL, OPT_APP},
    {"app-script", required_argument, NULL, OPT_APP_SCRIPT},
    {"app-repeat", required_argument, NULL, OPT_APP_REPEAT},
    {"jobs", required_argument, NULL, OPT_JOBS},
    {"progress", required_argument, NULL, OPT_PROGRESS},
    {"app-profile", no_argument, NULL, OPT_APP_PROFILE},
    {"app-trace", required_argument, NULL, OPT_APP_TRACE},
    {"collective-ranks", required_argument, NULL, OPT_COLLECTIVE_RANKS},
    {"prometheus", required_argument, NULL, OPT_PROMETHEUS},
    {"slurm", no_argument, NULL, OPT_SLURM},
    {"scontrol", required_argument, NULL, OPT_SCONTROL},
    {"deadline", required_argument, NULL, OPT_DEADLINE},
    {NULL, 0, NULL, 0},
};

/* Says what was wrong with the command line; what the user typed is printed escaped. */
__attribute__((format(printf, 1, 2))) static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sc_print_vline(stderr, "stackcheck: ", fmt, ap);
    va_end(ap);
    fputs("Try 'stackcheck --help'.\n", stderr);
    return SC_EXIT_USAGE;
}

int sc_cli_bad_option(const char *command, int c, char **argv)
{
    const char *what = c == ':' ? "missing value for" : "invalid option";
    char prefix[64];
    snprintf(prefix, sizeof prefix, "stackcheck%s%s: ", command ? " " : "", command ? command : "");
    const char *arg = argv[optind - 1];
    if (strncmp(arg, "--", 2) != 0 && optopt > 0 && optopt < 256)
        sc_print_line(stderr, prefix, "%s '-%c'", what, optopt);
    else
        sc_print_line(stderr, prefix, "%s '%s'", what, arg);
    fprintf(stderr, "Try 'stackcheck%s%s --help'.\n", command ? " " : "", command ? command : "");
    return SC_EXIT_USAGE;
}

static int add_to(sc_strlist *list, const char *item, const char *what)
{
    return sc_strlist_add(list, item) == 0 ? 0 : usage_error("too many %s options", what);
}

/* --jobs and --progress; returns 0 or SC_EXIT_USAGE. */
static int apply_run_option(int c, sc_options *opt)
{
    static const char *const progress[] = {"auto", "always", "never"};
    char *end;
    if (c == OPT_JOBS) {
        opt->jobs = (int)strtol(optarg, &end, 10);
        if (*end || opt->jobs < 1 || opt->jobs > 64)
            return usage_error("invalid --jobs '%s' (1 to 64)", optarg);
        return 0;
    }
    for (int i = 0; i < 3; i++)
        if (strcmp(optarg, progress[i]) == 0) {
            opt->progress = (sc_progress)i;
            return 0;
        }
    return usage_error("invalid --progress '%s' (auto, always or never)", optarg);
}

/* An output path whose template does not expand is a usage error now, not after the run. */
static int output_path(const char **slot, const char *tmpl)
{
    char path[PATH_MAX];
    sc_error err = {0};
    if (sc_output_path(tmpl, path, sizeof path, &err) < 0)
        return usage_error("%s", err.message);
    *slot = tmpl;
    return 0;
}

static int seconds(const char *text, const char *name, double *out)
{
    char *end;
    *out = strtod(text, &end);
    if (*end || end == text || !(*out > 0) || *out > 86400)
        return usage_error("invalid %s '%s' (seconds, > 0)", name, text);
    return 0;
}

/* The options of clusters: metrics, Slurm, the run's deadline. */
static int apply_cluster_option(int c, sc_options *opt)
{
    switch (c) {
    case OPT_PROMETHEUS: return output_path(&opt->prometheus_path, optarg);
    case OPT_SLURM: opt->slurm = true; return 0;
    case OPT_SCONTROL: opt->scontrol = optarg; return 0;
    case OPT_DEADLINE: return seconds(optarg, "--deadline", &opt->deadline_s);
    default: return SC_EXIT_USAGE;
    }
}

/* Applies one parsed option; returns 0, 1 (help or version printed) or SC_EXIT_USAGE. */
static int apply_option(int c, sc_options *opt)
{
    char *end;
    switch (c) {
    case OPT_JSON: return output_path(&opt->json_path, optarg);
    case OPT_JUNIT: return output_path(&opt->junit_path, optarg);
    case OPT_SYSROOT: opt->sysroot = optarg; break;
    case OPT_KEEP_GOING: opt->keep_going = true; break;
    case OPT_NO_COLOR: opt->color = false; break;
    case 'q': opt->verbosity = -1; break; /* and no progress: see sc_live_new */
    case 'v': opt->verbosity = 1; break;
    case OPT_HIP_LIBRARY: opt->hip_library = optarg; break;
    case OPT_PYTHON: opt->python = optarg; break;
    case OPT_EXT: return add_to(&opt->ext, optarg, "--ext");
    case OPT_IMPORT: return add_to(&opt->imports, optarg, "--import");
    case OPT_ARCH: return add_to(&opt->archs, optarg, "--arch");
    case OPT_APP: opt->app_cmd = optarg; break;
    case OPT_APP_SCRIPT: opt->app_script = optarg; break;
    case OPT_APP_PROFILE: opt->app_profile = true; break;
    case OPT_APP_TRACE:
        opt->app_trace = optarg;
        opt->app_profile = true;
        break;
    case OPT_TIMEOUT: return seconds(optarg, "--timeout", &opt->timeout_s);
    case OPT_APP_REPEAT:
        opt->app_repeat = (int)strtol(optarg, &end, 10);
        if (*end || opt->app_repeat < 1 || opt->app_repeat > 10000)
            return usage_error("invalid --app-repeat '%s' (1 to 10000)", optarg);
        break;
    case OPT_JOBS:
    case OPT_PROGRESS: return apply_run_option(c, opt);
    case OPT_COLLECTIVE_RANKS:
        opt->collective_ranks = (int)strtol(optarg, &end, 10);
        if (*end || opt->collective_ranks < 1 || opt->collective_ranks > 64)
            return usage_error("invalid --collective-ranks '%s' (1 to 64)", optarg);
        break;
    case OPT_VERSION: printf("stackcheck %s (%s)\n", SC_VERSION, sc_build_info()); return 1;
    case 'h': fputs(usage_text, stdout); return 1;
    default: return apply_cluster_option(c, opt);
    }
    return 0;
}

int sc_parse_run_options(int argc, char **argv, sc_options *opt)
{
    sc_options_init(opt);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    opt->jobs = cpus > 64 ? 64 : cpus > 1 ? (int)cpus : 1;
    opt->argc = argc;
    opt->argv = argv;
    const char *no_color = getenv("NO_COLOR");
    opt->color = isatty(1) && !(no_color && *no_color);
    optind = 1;
    opterr = 0; /* getopt would echo the option raw; usage_error escapes it */
    int c;
    while ((c = getopt_long(argc, argv, ":qvh", run_options, NULL)) != -1) {
        if (c == '?' || c == ':')
            return sc_cli_bad_option(NULL, c, argv);
        int rc = apply_option(c, opt);
        if (rc)
            return rc;
    }
    if (optind < argc && strcmp(argv[optind], "run") == 0)
        optind++;
    if (optind < argc)
        return usage_error("unexpected argument '%s'", argv[optind]);
    if (opt->app_profile && !opt->app_script)
        return usage_error(
            "--app-profile and --app-trace profile a script: give --app-script FILE");
    if (opt->slurm && opt->deadline_s <= 0)
        opt->deadline_s = SC_SLURM_DEADLINE_S; /* under Slurm's 60 s for a health check */
    return 0;
}

/* Says why an output could not be written; returns SC_EXIT_USAGE. */
static int output_failed(const sc_error *err)
{
    sc_print_line(stderr, "stackcheck: ", "%s", err->message);
    return SC_EXIT_USAGE;
}

/* Writes each output asked for to its template's path (sc_output_path). */
static int write_outputs(const cJSON *snapshot, const sc_run_state *rs, const sc_options *opt)
{
    char path[PATH_MAX];
    sc_error err = {0};
    int rc = 0;
    if (opt->json_path && (sc_output_path(opt->json_path, path, sizeof path, &err) < 0 ||
                           sc_snapshot_write(snapshot, path, &err) < 0))
        rc = output_failed(&err);
    if (opt->junit_path && (sc_output_path(opt->junit_path, path, sizeof path, &err) < 0 ||
                            sc_junit_write(rs, path, &err) < 0))
        rc = output_failed(&err);
    if (opt->prometheus_path &&
        (sc_output_path(opt->prometheus_path, path, sizeof path, &err) < 0 ||
         sc_prometheus_write(snapshot, path, &err) < 0))
        rc = output_failed(&err);
    return rc;
}

int sc_cmd_run(int argc, char **argv)
{
    sc_options opt;
    int rc = sc_parse_run_options(argc, argv, &opt);
    if (rc)
        return rc == 1 ? SC_EXIT_OK : rc;
    sc_root root;
    sc_error err = {0};
    if (sc_root_open(&root, opt.sysroot, &err) < 0) {
        sc_print_line(stderr, "stackcheck: ", "%s", err.message);
        return SC_EXIT_USAGE;
    }
    bool json_stdout = opt.json_path && strcmp(opt.json_path, "-") == 0;
    FILE *report = json_stdout ? stderr : stdout;
    const char *no_color = getenv("NO_COLOR");
    opt.color = opt.color && !opt.slurm && isatty(fileno(report)) && !(no_color && *no_color);
    if (opt.deadline_s > 0)
        opt.deadline_ms = sc_now_ms() + opt.deadline_s * 1000.0;
    cJSON *snapshot = sc_snapshot_new(&opt, &root);
    if (!snapshot) {
        fputs("stackcheck: out of memory\n", stderr);
        sc_root_close(&root);
        return SC_EXIT_FAIL;
    }
    /* The one door out: the header passes it here, before it is printed; the run's outcomes as
     * the run ends (what is printed while it runs, from copies through the door). The report,
     * the snapshot and JUnit all come from what went through. */
    sc_redact_json(snapshot);
    sc_live *live = opt.slurm ? NULL : sc_live_new(report, snapshot, &opt, opt.color);
    sc_run_state rs;
    int exit_code = sc_run_probes(sc_probes, &opt, &root, sc_live_observer(live), &rs);
    sc_snapshot_add_run(snapshot, &rs);
    sc_snapshot_add_not_read(snapshot);
    if (live)
        sc_live_finish(live, &rs);
    else if (!opt.slurm) /* --slurm says one line, after it acted */
        sc_report_print(report, snapshot, &rs, opt.color, opt.verbosity);
    fflush(report);
    int out_rc = write_outputs(snapshot, &rs, &opt);
    if (opt.slurm)
        exit_code = sc_slurm_act(snapshot, &opt, exit_code, report);
    cJSON_Delete(snapshot);
    sc_run_state_free(&rs);
    sc_root_close(&root);
    return out_rc ? out_rc : exit_code;
}

/* Prints the probe whose id is text; returns false when there is none. */
static bool explain_probe(const char *text)
{
    for (const sc_probe *const *p = sc_probes; *p; p++)
        if (strcmp((*p)->id, text) == 0) {
            sc_term_printf(stdout, "probe %s: %s layer, %s backend%s\n  %s\n", (*p)->id,
                           sc_layer_name((*p)->layer), sc_backend_name((*p)->backend),
                           (*p)->isolated ? ", runs isolated" : "",
                           (*p)->summary ? (*p)->summary : "");
            sc_term_printf(stdout, "  check: stackcheck -v (docs/probes.md says what it reads)\n");
            return true;
        }
    return false;
}

/* Unquoted words of an error message arrive as several arguments: they are read as one text, cut
 * at size (explain reads only the start of a text anyway). */
static void join_words(char *text, size_t size, int argc, char **argv)
{
    size_t used = 0;
    text[0] = '\0';
    for (int i = 1; i < argc; i++) {
        int n = snprintf(text + used, size - used, "%s%s", i > 1 ? " " : "", argv[i]);
        if (n < 0 || (size_t)n >= size - used)
            break;
        used += (size_t)n;
    }
}

int sc_cmd_explain(int argc, char **argv)
{
    if (argc < 2)
        return usage_error("%s", "explain needs a finding id, a probe id or an error message, "
                                 "e.g. stackcheck explain hip.no-device");
    char text[16384];
    join_words(text, sizeof text, argc, argv);
    if (sc_findings_explain(stdout, text) == 0 || explain_probe(text))
        return SC_EXIT_OK;
    if (sc_explain_text(stdout, text) > 0)
        return SC_EXIT_OK;
    sc_print_line(stderr, "stackcheck: ",
                  "no finding, probe or known error matches '%s'; `stackcheck list` shows the ids",
                  text);
    return SC_EXIT_FAIL;
}

static void print_finding_id(const char *id, const char *severity, void *arg)
{
    (void)arg;
    printf("  %-36s %s\n", id, severity);
}

int sc_cmd_list(int argc, char **argv)
{
    (void)argv;
    if (argc != 1)
        return usage_error("%s", "list takes no arguments");
    puts("Probes (in run order):");
    for (const sc_probe *const *p = sc_probes; *p; p++)
        printf("  %-20s %-10s %-7s %s%s\n", (*p)->id, sc_layer_name((*p)->layer),
               sc_backend_name((*p)->backend), (*p)->summary ? (*p)->summary : "",
               (*p)->isolated ? " [isolated]" : "");
    puts("\nFindings (id, severity):");
    sc_findings_each(print_finding_id, NULL);
    return SC_EXIT_OK;
}

typedef struct {
    const char *name;
    int (*fn)(int argc, char **argv);
} subcommand;

static const subcommand subcommands[] = {
    {"explain", sc_cmd_explain}, {"list", sc_cmd_list},   {"libs", sc_cmd_libs},
    {"diff", sc_cmd_diff},       {"fleet", sc_cmd_fleet}, {"capture", sc_cmd_capture},
};

int sc_main(int argc, char **argv)
{
    if (argc >= 2)
        for (size_t i = 0; i < sizeof subcommands / sizeof subcommands[0]; i++)
            if (strcmp(argv[1], subcommands[i].name) == 0)
                return subcommands[i].fn(argc - 1, argv + 1);
    return sc_cmd_run(argc, argv);
}
