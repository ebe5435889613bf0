/* `stackcheck capture OUT.tar.gz`: runs the passive probes (no runtime initialised, nothing
 * imported) on the live system or a --sysroot with the sysroot layer's log on, then writes what
 * they touched into a redacted tarball that `--sysroot OUT.tar.gz` replays. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "capture_internal.h"
#include "sc_capture.h"
#include "sc_cli.h"
#include "sc_probe.h"
#include "sc_redact.h"
#include "sc_runner.h"
#include "sc_scratch.h"
#include "sc_snapshot.h"
#include "sc_sysroot_capture.h"
#include "sc_util.h"

static const char capture_usage[] =
    "Usage: stackcheck capture [OPTIONS] OUT.tar.gz\n"
    "\n"
    "Runs the passive probes and writes every file they read (through the sysroot layer), the\n"
    "directories they listed, the symbolic links on the way and the device nodes' metadata into\n"
    "a redacted tarball. `stackcheck --sysroot OUT.tar.gz` (or its unpacked directory) replays "
    "it.\n"
    "\n"
    "Options:\n"
    "  --sysroot DIR          capture a root file system (or a capture) instead of this system\n"
    "  --json FILE            also write the passive run's snapshot to FILE\n"
    "  --max-file-size BYTES  leave out the content of a larger file (default 64 MiB)\n"
    "  --max-size BYTES       the most content in all (default 512 MiB; the largest go first)\n"
    "  -q, --quiet            print nothing but errors\n"
    "  -h, --help             print this help and exit\n";

enum { OPT_SYSROOT = 256, OPT_JSON, OPT_MAX_FILE, OPT_MAX_SIZE };

static const struct option capture_options[] = {
    {"sysroot", required_argument, NULL, OPT_SYSROOT},
    {"json", required_argument, NULL, OPT_JSON},
    {"max-file-size", required_argument, NULL, OPT_MAX_FILE},
    {"max-size", required_argument, NULL, OPT_MAX_SIZE},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

typedef struct {
    sc_options run;
    const char *out;
    cap_limits limits;
} capture_args;

static int capture_usage_error(const char *what, const char *arg)
{
    sc_print_line(stderr, "stackcheck capture: ", "%s%s%s", what, arg ? " " : "", arg ? arg : "");
    fputs("Try 'stackcheck capture --help'.\n", stderr);
    return SC_EXIT_USAGE;
}

/* A byte count within [1, max]; false when text is not one. */
static bool parse_bytes(const char *text, unsigned long long max, unsigned long long *out)
{
    uint64_t v;
    if (sc_parse_u64(text, &v) < 0 || v == 0 || v > max)
        return false;
    *out = v;
    return true;
}

static int apply_capture_option(int c, capture_args *a)
{
    switch (c) {
    case OPT_SYSROOT: a->run.sysroot = optarg; return 0;
    case OPT_JSON: a->run.json_path = optarg; return 0;
    case 'q': a->run.verbosity = -1; return 0;
    case 'h': fputs(capture_usage, stdout); return 1;
    case OPT_MAX_FILE:
        return parse_bytes(optarg, SC_CAPTURE_FILE_MAX, &a->limits.max_file)
                   ? 0
                   : capture_usage_error("invalid --max-file-size (bytes, at most 1 GiB):", optarg);
    case OPT_MAX_SIZE:
        return parse_bytes(optarg, SC_CAPTURE_TOTAL_MAX, &a->limits.max_total)
                   ? 0
                   : capture_usage_error("invalid --max-size (bytes, at most 2 GiB):", optarg);
    default: return SC_EXIT_USAGE;
    }
}

/* Returns 0, 1 for --help (printed) or SC_EXIT_USAGE. */
static int parse_capture_args(int argc, char **argv, capture_args *a)
{
    sc_options_init(&a->run);
    a->run.argc = argc;
    a->run.argv = argv;
    a->run.passive = true;
    a->limits.max_file = SC_CAPTURE_FILE_DEFAULT;
    a->limits.max_total = SC_CAPTURE_TOTAL_DEFAULT;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":qh", capture_options, NULL)) != -1) {
        if (c == '?' || c == ':')
            return sc_cli_bad_option("capture", c, argv);
        int rc = apply_capture_option(c, a);
        if (rc)
            return rc;
    }
    if (optind != argc - 1)
        return capture_usage_error("needs one output file, e.g. stackcheck capture host.tar.gz",
                                   NULL);
    a->out = argv[optind];
    return 0;
}

/* The passive run with the log on; its snapshot goes to --json when asked. */
static int passive_run(const capture_args *a, sc_root *root, sc_error *err)
{
    cJSON *snapshot = sc_snapshot_new(&a->run, root);
    if (!snapshot)
        return sc_error_set(err, -ENOMEM, "out of memory");
    sc_run_state rs;
    sc_run_probes(sc_probes, &a->run, root, NULL, &rs);
    sc_redact_json(snapshot);
    sc_snapshot_add_run(snapshot, &rs);
    sc_snapshot_add_not_read(snapshot);
    int rc = a->run.json_path ? sc_snapshot_write(snapshot, a->run.json_path, err) : 0;
    cJSON_Delete(snapshot);
    sc_run_state_free(&rs);
    return rc;
}

static void say_written(const capture_args *a, const cap_stats *s, double ms)
{
    if (a->run.verbosity < 0)
        return;
    sc_print_line(stdout, "stackcheck: ",
                  "captured %zu files (%llu bytes), %zu directories, %zu symbolic links, %zu "
                  "device nodes, %zu left out, into %s (%llu bytes, %.1f s)",
                  s->files, s->bytes, s->dirs, s->links, s->nodes, s->omitted, a->out, s->archive,
                  ms / 1000.0);
}

/* Builds the capture from the log in logdir and writes it. */
static int write_capture(const capture_args *a, const sc_root *root, const char *logdir,
                         double started, sc_error *err)
{
    cap_tree t;
    int rc = cap_tree_build(&t, root, logdir);
    if (rc < 0) {
        cap_tree_free(&t);
        return sc_error_set(err, rc, "cannot gather what the run read: %s",
                            rc == -E2BIG ? "too many paths" : strerror(-rc));
    }
    char created[32];
    sc_utc_now(created, sizeof created);
    cap_limits lim = a->limits;
    lim.created = (long long)time(NULL);
    lim.created_text = created;
    cap_stats stats;
    rc = cap_write(&t, &lim, a->out, &stats, err);
    cap_tree_free(&t);
    if (rc == 0)
        say_written(a, &stats, sc_now_ms() - started);
    return rc;
}

static int capture_in(const capture_args *a, sc_root *root, const char *logdir, sc_error *err)
{
    double started = sc_now_ms();
    int rc = sc_root_log_start(root, logdir, err);
    if (rc == 0)
        rc = passive_run(a, root, err);
    sc_root_log_stop(root);
    return rc == 0 ? write_capture(a, root, logdir, started, err) : rc;
}

int sc_cmd_capture(int argc, char **argv)
{
    capture_args a;
    int rc = parse_capture_args(argc, argv, &a);
    if (rc)
        return rc == 1 ? SC_EXIT_OK : rc;
    sc_root root;
    sc_error err = {0};
    char logdir[PATH_MAX] = "";
    if (sc_root_open(&root, a.run.sysroot, &err) < 0) {
        sc_print_line(stderr, "stackcheck capture: ", "%s", err.message);
        return SC_EXIT_USAGE;
    }
    rc = sc_private_dir(NULL, "stackcheck-capture", logdir, sizeof logdir, &err);
    if (rc == 0)
        rc = capture_in(&a, &root, logdir, &err);
    if (logdir[0])
        sc_remove_tree(logdir);
    sc_root_close(&root);
    if (rc < 0)
        sc_print_line(stderr, "stackcheck capture: ", "%s", err.message);
    return rc < 0 ? SC_EXIT_USAGE : SC_EXIT_OK;
}
