/* `stackcheck diff A.json B.json [--json FILE] [--rtol R] [--atol A]`: reads two snapshots (size
 * capped, schema checked), compares them, prints the changes as text and optionally writes them as
 * JSON. Exit 0 when nothing that matters differs, 1 when something does, 2 for unreadable input. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sc_cli.h"
#include "sc_diff.h"
#include "sc_redact.h"
#include "sc_snapshot.h"
#include "sc_text.h"

#define TIMINGS_SHOWN 40

static const char diff_usage[] =
    "Usage: stackcheck diff A.json B.json [--json FILE] [--rtol R] [--atol A]\n"
    "Compares two snapshots: OS, kernel, driver, firmware, runtime, installs and torch versions,\n"
    "devices, library roots, findings added and resolved, timings as ratios, and the first module\n"
    "whose numerics differ beyond tolerance (|a-b| > atol + rtol*max(|a|,|b|); defaults 1e-3, "
    "1e-5).\n"
    "Snapshots of different backends (CUDA against ROCm/DTK or CANN) open with a table that sets\n"
    "their devices, driver, firmware, runtime, toolkit, collective library and torch side by "
    "side.\n"
    "  --json FILE   write the comparison as JSON (- for standard output; the text then goes to\n"
    "                standard error)\n"
    "Exit status: 0 nothing that matters differs, 1 something does, 2 usage error or unreadable "
    "input.\n";

static void print_value(FILE *out, const cJSON *v)
{
    if (!v || cJSON_IsNull(v)) {
        fputs("(none)", out);
        return;
    }
    if (cJSON_IsString(v)) {
        sc_term_print(out, v->valuestring, 200);
        return;
    }
    if (cJSON_IsNumber(v)) {
        fprintf(out, "%.6g", v->valuedouble);
        return;
    }
    char *text = cJSON_PrintUnformatted(v);
    sc_term_print(out, text ? text : "?", 200);
    if (text && strlen(text) > 200)
        fputs("...", out);
    free(text);
}

static const char *str(const cJSON *obj, const char *key)
{
    const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(obj, key));
    return s ? s : "?";
}

#define SUMMED_NAMED 4 /* probe ids named in the line that stands for the changes folded */

/* Remembers the probe id of a folded change among the first SUMMED_NAMED distinct ones. */
static void note_summed(const char **named, int *count, const char *id)
{
    for (int i = 0; i < *count; i++)
        if (strcmp(named[i], id) == 0)
            return;
    if (*count < SUMMED_NAMED)
        named[(*count)++] = id;
}

static void print_summed(FILE *out, int folded, const char **named, int count)
{
    fprintf(out, "  (%d more change%s of ", folded, folded == 1 ? "" : "s");
    for (int i = 0; i < count; i++)
        sc_term_printf(out, "%s%.*s", i ? ", " : "", 100, named[i]);
    fputs(count == SUMMED_NAMED ? ", ..." : "", out);
    fputs(": the platforms table sums them up; --json lists each)\n", out);
}

/* The changes, less those of backends only one side runs on when the platforms table stands
 * for them. */
static void print_changes(FILE *out, const cJSON *diff)
{
    const cJSON *c;
    const char *named[SUMMED_NAMED];
    int n = 0, folded = 0, count = 0;
    sc_diff_index summed;
    sc_diff_index_init(&summed, NULL);
    sc_diff_index_summarised(&summed, cJSON_GetObjectItem(diff, "platforms"));
    cJSON_ArrayForEach (c, cJSON_GetObjectItem(diff, "changes")) {
        const char *id = sc_diff_summed_up(&summed, str(c, "what"));
        if (n++ == 0)
            fputs("\nChanged:\n", out);
        if (id) {
            folded++;
            note_summed(named, &count, id);
            continue;
        }
        sc_term_printf(out, "  [%.*s] %.*s: ", 100, str(c, "area"), 300, str(c, "what"));
        print_value(out, cJSON_GetObjectItem(c, "a"));
        fputs(" -> ", out);
        print_value(out, cJSON_GetObjectItem(c, "b"));
        fputc('\n', out);
    }
    if (folded)
        print_summed(out, folded, named, count);
    sc_diff_index_free(&summed);
}

static void print_findings(FILE *out, const cJSON *list, const char *title, char mark)
{
    const cJSON *f;
    int n = 0;
    cJSON_ArrayForEach (f, list) {
        if (n++ == 0)
            fprintf(out, "\n%s:\n", title);
        sc_term_printf(out, "  %c %.*s (%.*s, %.*s): %.*s\n", mark, 100, str(f, "id"), 100,
                       str(f, "severity"), 100, str(f, "probe"), 200, str(f, "message"));
    }
}

static void print_numerics(FILE *out, const cJSON *list)
{
    const cJSON *n;
    int count = 0;
    cJSON_ArrayForEach (n, list) {
        if (count++ == 0)
            fputs("\nNumerics:\n", out);
        const cJSON *first = cJSON_GetObjectItem(n, "first_divergent");
        sc_term_printf(out, "  %.*s '%.*s", 100, str(n, "probe"), 100, str(n, "name"));
        if (cJSON_IsObject(first)) {
            sc_term_printf(out,
                           "': first module whose statistics differ: '%.*s' (%.*s), %.*s: ", 200,
                           str(first, "module"), 100, str(first, "type"), 100, str(first, "stat"));
            print_value(out, cJSON_GetObjectItem(first, "a"));
            fputs(" -> ", out);
            print_value(out, cJSON_GetObjectItem(first, "b"));
            fprintf(out, " (call %d; %d modules agree before it)",
                    (int)cJSON_GetNumberValue(cJSON_GetObjectItem(first, "index")) + 1,
                    (int)cJSON_GetNumberValue(cJSON_GetObjectItem(n, "compared")));
        } else {
            fprintf(out, "': all %d modules agree",
                    (int)cJSON_GetNumberValue(cJSON_GetObjectItem(n, "compared")));
        }
        fprintf(
            out, " (rtol %g, atol %g)%s\n", cJSON_GetNumberValue(cJSON_GetObjectItem(n, "rtol")),
            cJSON_GetNumberValue(cJSON_GetObjectItem(n, "atol")),
            cJSON_IsTrue(cJSON_GetObjectItem(n, "input_differs")) ? "; the inputs differ too" : "");
    }
}

static void print_training(FILE *out, const cJSON *t)
{
    if (!cJSON_IsObject(t))
        return;
    const cJSON *first = cJSON_GetObjectItem(t, "first_divergent");
    fputs("\nTraining watch:\n", out);
    if (!cJSON_IsObject(first)) {
        fprintf(out, "  all %d steps agree\n",
                (int)cJSON_GetNumberValue(cJSON_GetObjectItem(t, "steps_agree")));
        return;
    }
    sc_term_printf(out, "  first divergent step %d: %.*s",
                   (int)cJSON_GetNumberValue(cJSON_GetObjectItem(first, "step")), 100,
                   str(first, "what"));
    if (cJSON_IsString(cJSON_GetObjectItem(first, "module")))
        sc_term_printf(out, " of module '%.*s'", 200, str(first, "module"));
    fputs(": ", out);
    print_value(out, cJSON_GetObjectItem(first, "a"));
    fputs(" -> ", out);
    print_value(out, cJSON_GetObjectItem(first, "b"));
    fprintf(out, " (%d steps agree before it)\n",
            (int)cJSON_GetNumberValue(cJSON_GetObjectItem(t, "steps_agree")));
}

static void print_profile(FILE *out, const cJSON *p)
{
    if (!cJSON_IsObject(p))
        return;
    fputs("\nOperator profile:\n", out);
    const cJSON *op;
    cJSON_ArrayForEach (op, cJSON_GetObjectItem(p, "moved_to_cpu"))
        sc_term_printf(out, "  moved to the CPU in b: %.*s\n", 200, cJSON_GetStringValue(op));
    int n = 0;
    cJSON_ArrayForEach (op, cJSON_GetObjectItem(p, "biggest_ratios")) {
        if (n++ == 5)
            break;
        sc_term_printf(out, "  %.*s", 200, str(op, "op"));
        fprintf(out, ": %.3f ms -> %.3f ms per step (x%.2f)\n",
                cJSON_GetNumberValue(cJSON_GetObjectItem(op, "a_ms_per_step")),
                cJSON_GetNumberValue(cJSON_GetObjectItem(op, "b_ms_per_step")),
                cJSON_GetNumberValue(cJSON_GetObjectItem(op, "ratio")));
    }
}

static void print_timings(FILE *out, const cJSON *list)
{
    const cJSON *t;
    int shown = 0, total = cJSON_GetArraySize(list);
    cJSON_ArrayForEach (t, list) {
        double a = cJSON_GetNumberValue(cJSON_GetObjectItem(t, "a_ms"));
        double b = cJSON_GetNumberValue(cJSON_GetObjectItem(t, "b_ms"));
        const cJSON *ratio = cJSON_GetObjectItem(t, "ratio");
        if (shown == TIMINGS_SHOWN)
            break;
        if (shown++ == 0)
            fputs("\nTimings (b/a):\n", out);
        sc_term_printf(out, "  %.*s %.*s", 100, str(t, "probe"), 200, str(t, "what"));
        fprintf(out, ": %.1f ms -> %.1f ms", a, b);
        if (cJSON_IsNumber(ratio))
            fprintf(out, " (x%.2f)", ratio->valuedouble);
        fputc('\n', out);
    }
    if (total > shown && shown == TIMINGS_SHOWN)
        fprintf(out, "  ... %d more in the JSON output\n", total - shown);
}

void sc_diff_print(FILE *out, const cJSON *diff, const char *a_label, const char *b_label)
{
    const cJSON *findings = cJSON_GetObjectItem(diff, "findings");
    sc_term_printf(out, "stackcheck diff\n  a: %.*s (%.*s)\n  b: %.*s (%.*s)\n", 300, a_label, 100,
                   str(cJSON_GetObjectItem(diff, "a"), "created"), 300, b_label, 100,
                   str(cJSON_GetObjectItem(diff, "b"), "created"));
    sc_diff_print_platforms(out, cJSON_GetObjectItem(diff, "platforms"));
    print_changes(out, diff);
    print_findings(out, cJSON_GetObjectItem(findings, "added"), "Findings added in b", '+');
    print_findings(out, cJSON_GetObjectItem(findings, "resolved"), "Findings resolved in b", '-');
    print_numerics(out, cJSON_GetObjectItem(diff, "numerics"));
    print_training(out, cJSON_GetObjectItem(diff, "training"));
    print_profile(out, cJSON_GetObjectItem(diff, "profile"));
    print_timings(out, cJSON_GetObjectItem(diff, "timings"));
    int matters = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(diff, "changes_that_matter"));
    if (matters > 0)
        fprintf(out, "\nVerdict: %d change%s that matter%s\n", matters, matters == 1 ? "" : "s",
                matters == 1 ? "s" : "");
    else
        fputs("\nVerdict: no change that matters\n", out);
}

static int parse_tolerance(const char *text, double *out, const char *name)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end || !isfinite(v) || v < 0) {
        sc_print_line(stderr, "stackcheck diff: ", "invalid %s '%s' (a number >= 0)", name, text);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_args(int argc, char **argv, sc_diff_options *opt, const char **json_path)
{
    static const struct option longopts[] = {{"json", required_argument, NULL, 'j'},
                                             {"rtol", required_argument, NULL, 'r'},
                                             {"atol", required_argument, NULL, 'a'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    int c;
    optind = 1;
    opterr = 0; /* sc_cli_bad_option says it, escaped */
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        if (c == 'j')
            *json_path = optarg;
        else if (c == 'r' && parse_tolerance(optarg, &opt->rtol, "--rtol") < 0)
            return SC_EXIT_USAGE;
        else if (c == 'a' && parse_tolerance(optarg, &opt->atol, "--atol") < 0)
            return SC_EXIT_USAGE;
        else if (c == 'h') {
            fputs(diff_usage, stdout);
            return 1;
        } else if (c == '?' || c == ':')
            return sc_cli_bad_option("diff", c, argv);
    }
    if (argc - optind != 2) {
        fputs("stackcheck diff: two snapshot files are needed\n", stderr);
        fputs(diff_usage, stderr);
        return SC_EXIT_USAGE;
    }
    return 0;
}

static cJSON *load(const char *path, sc_error *err)
{
    cJSON *json = sc_json_read_file(path, SC_DIFF_MAX_INPUT, err);
    if (json && sc_diff_check_snapshot(json, path, err) < 0) {
        cJSON_Delete(json);
        return NULL;
    }
    return json;
}

static int report(cJSON *diff, const char *a, const char *b, const char *json_path)
{
    sc_error err = {0};
    sc_redact_json(diff); /* the one door out: both snapshots may hold anything */
    sc_diff_print(json_path && strcmp(json_path, "-") == 0 ? stderr : stdout, diff, a, b);
    if (json_path && sc_snapshot_write(diff, json_path, &err) < 0) {
        sc_print_line(stderr, "stackcheck diff: ", "%s", err.message);
        return SC_EXIT_USAGE;
    }
    return cJSON_IsTrue(cJSON_GetObjectItem(diff, "differs")) ? SC_EXIT_FAIL : SC_EXIT_OK;
}

int sc_cmd_diff(int argc, char **argv)
{
    sc_diff_options opt;
    const char *json_path = NULL;
    sc_diff_options_init(&opt);
    int rc = parse_args(argc, argv, &opt, &json_path);
    if (rc != 0)
        return rc == 1 ? SC_EXIT_OK : rc;
    const char *pa = argv[optind], *pb = argv[optind + 1];
    sc_error err = {0};
    cJSON *a = load(pa, &err), *b = a ? load(pb, &err) : NULL, *diff = NULL;
    if (!a || !b) {
        sc_print_line(stderr, "stackcheck diff: ", "%s", err.message);
        rc = SC_EXIT_USAGE;
    } else if (!(diff = sc_diff_snapshots(a, b, &opt))) {
        fputs("stackcheck diff: out of memory\n", stderr);
        rc = SC_EXIT_USAGE;
    } else {
        rc = report(diff, pa, pb, json_path);
    }
    cJSON_Delete(diff);
    cJSON_Delete(a);
    cJSON_Delete(b);
    return rc;
}
