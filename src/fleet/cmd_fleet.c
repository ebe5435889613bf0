/* `stackcheck fleet [--json FILE] [--factor F] SNAPSHOT...|DIR...`: reads every node's snapshot,
 * prints one answer for the cluster and optionally writes it as JSON. Exit 0 every node healthy
 * and alike, 1 a node failed or differs, 2 usage error or nothing readable. */
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sc_cli.h"
#include "sc_fleet.h"
#include "sc_output.h"
#include "sc_redact.h"
#include "sc_snapshot.h"

static const char fleet_usage[] =
    "Usage: stackcheck fleet [--json FILE] [--factor F] SNAPSHOT...|DIR...\n"
    "Reads many nodes' snapshots (a directory: its *.json files) and answers for the cluster:\n"
    "the stacks by fingerprint (devices, driver, firmware, runtime, toolkit, collective library,\n"
    "torch build, library roots), the majority and what every other group differs in; the\n"
    "failed nodes by first failing layer and finding; outliers among nodes of one stack (fewer\n"
    "devices than the majority, memory in use far from the median, timings beyond F x the\n"
    "median, default 3). Unreadable, truncated or foreign files are named and skipped.\n"
    "  --json FILE   write the answer as JSON (- for standard output; the text then goes to\n"
    "                standard error); %h, %j and %t expand as in run\n"
    "  --factor F    how many times its stack's median a timing may take (> 1)\n"
    "Exit status: 0 every node healthy and alike, 1 a node failed or differs, 2 usage error or\n"
    "nothing readable.\n";

static int parse_args(int argc, char **argv, double *factor, const char **json_path)
{
    static const struct option longopts[] = {{"json", required_argument, NULL, 'j'},
                                             {"factor", required_argument, NULL, 'f'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    int c;
    char *end;
    optind = 1;
    opterr = 0; /* sc_cli_bad_option says it, escaped */
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        if (c == 'j') {
            *json_path = optarg;
        } else if (c == 'f') {
            *factor = strtod(optarg, &end);
            if (*end || end == optarg || !isfinite(*factor) || *factor <= 1) {
                sc_print_line(stderr, "stackcheck fleet: ", "invalid --factor '%s' (> 1)", optarg);
                return SC_EXIT_USAGE;
            }
        } else if (c == 'h') {
            fputs(fleet_usage, stdout);
            return 1;
        } else {
            return sc_cli_bad_option("fleet", c, argv);
        }
    }
    if (optind >= argc) {
        fputs("stackcheck fleet: no snapshot or directory given\n", stderr);
        fputs(fleet_usage, stderr);
        return SC_EXIT_USAGE;
    }
    return 0;
}

/* Prints and writes the answer; returns its exit code. */
static int answer(cJSON *result, const char *json_path)
{
    char path[PATH_MAX];
    sc_error err = {0};
    sc_redact_json(result); /* the one door out: the snapshots may hold anything */
    sc_fleet_print(json_path && strcmp(json_path, "-") == 0 ? stderr : stdout, result);
    if (json_path && (sc_output_path(json_path, path, sizeof path, &err) < 0 ||
                      sc_snapshot_write(result, path, &err) < 0)) {
        sc_print_line(stderr, "stackcheck fleet: ", "%s", err.message);
        return SC_EXIT_USAGE;
    }
    return (int)cJSON_GetNumberValue(cJSON_GetObjectItem(result, "exit_code"));
}

int sc_cmd_fleet(int argc, char **argv)
{
    double factor = SC_FLEET_DEFAULT_FACTOR;
    const char *json_path = NULL;
    int rc = parse_args(argc, argv, &factor, &json_path);
    if (rc != 0)
        return rc == 1 ? SC_EXIT_OK : rc;
    sc_fleet fleet;
    sc_fleet_init(&fleet, factor);
    for (int i = optind; i < argc; i++)
        sc_fleet_add_path(&fleet, argv[i]);
    cJSON *result = sc_fleet_result(&fleet);
    if (!result) {
        fputs("stackcheck fleet: out of memory\n", stderr);
        rc = SC_EXIT_USAGE;
    } else {
        rc = answer(result, json_path);
    }
    cJSON_Delete(result);
    sc_fleet_free(&fleet);
    return rc;
}
