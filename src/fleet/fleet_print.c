/* The fleet's answer as text, printed from its JSON after the one door out, every outside string
 * escaped for a terminal: the majority's stack, each other group with what differs, the failed
 * nodes by cause, the outliers, the files skipped, and the verdict. */
#include <stdio.h>
#include <string.h>

#include "sc_diff.h"
#include "sc_fleet.h"
#include "sc_json.h"
#include "sc_text.h"

#define TEXTS_SHOWN 4 /* texts of one role on a line */
#define LISTED 20     /* groups, causes, outliers, files listed; the JSON has them all */

static const char *str(const cJSON *o, const char *key)
{
    const char *s = sc_json_str(o, key);
    return s ? s : "?";
}

static long num(const cJSON *o, const char *key)
{
    return (long)cJSON_GetNumberValue(sc_diff_get(o, key));
}

/* "a, b, c" of a list of strings, or "(none)". */
static void print_texts(FILE *out, const cJSON *texts)
{
    const cJSON *t;
    int n = 0;
    cJSON_ArrayForEach (t, texts) {
        if (n == TEXTS_SHOWN) {
            fprintf(out, ", ...");
            break;
        }
        sc_term_printf(out, "%s%.*s", n++ ? ", " : "", 200,
                       cJSON_GetStringValue(t) ? cJSON_GetStringValue(t) : "?");
    }
    if (n == 0)
        fputs("(none)", out);
}

static void print_names(FILE *out, const cJSON *names)
{
    fputs(" (", out);
    print_texts(out, names);
    fputs(")", out);
}

static void print_stack(FILE *out, const cJSON *stack)
{
    const cJSON *role;
    cJSON_ArrayForEach (role, stack) {
        if (cJSON_GetArraySize(role) == 0)
            continue;
        fprintf(out, "  %-11s ", role->string ? role->string : "?"); /* our role names */
        print_texts(out, role);
        fputc('\n', out);
    }
}

static void print_groups(FILE *out, const cJSON *groups)
{
    const cJSON *g, *d;
    int i = 0;
    cJSON_ArrayForEach (g, groups) {
        long n = num(g, "nodes");
        if (i++ == 0) {
            fprintf(out, "\nMajority stack: %ld node%s", n, n == 1 ? "" : "s");
            print_names(out, sc_diff_get(g, "names"));
            fputc('\n', out);
            print_stack(out, sc_diff_get(g, "stack"));
            continue;
        }
        if (i > LISTED + 1) {
            fprintf(out, "  ... %d more groups in the JSON output\n",
                    cJSON_GetArraySize(groups) - LISTED - 1);
            break;
        }
        fprintf(out, "\nGroup %d: %ld node%s", i, n, n == 1 ? "" : "s");
        print_names(out, sc_diff_get(g, "names"));
        fputs(", differs from the majority in:\n", out);
        cJSON_ArrayForEach (d, sc_diff_get(g, "differs")) {
            fprintf(out, "  %-11s ", str(d, "role")); /* one of our role names */
            print_texts(out, sc_diff_get(d, "majority"));
            fputs(" -> ", out);
            print_texts(out, sc_diff_get(d, "group"));
            fputc('\n', out);
        }
    }
}

static void print_failures(FILE *out, const cJSON *result)
{
    const cJSON *c;
    int i = 0;
    if (num(result, "failed") == 0)
        return;
    fprintf(out, "\nFailed: %ld node%s, by first failing layer and finding\n",
            num(result, "failed"), num(result, "failed") == 1 ? "" : "s");
    cJSON_ArrayForEach (c, sc_diff_get(result, "failures")) {
        if (i++ == LISTED)
            break;
        if (sc_json_str(c, "finding"))
            sc_term_printf(out, "  %.*s %.*s: ", 40, str(c, "layer"), 100, str(c, "finding"));
        else
            sc_term_printf(out, "  %.*s %.*s %.*s: ", 40, str(c, "layer"), 100, str(c, "probe"), 20,
                           str(c, "status"));
        fprintf(out, "%ld node%s", num(c, "nodes"), num(c, "nodes") == 1 ? "" : "s");
        print_names(out, sc_diff_get(c, "names"));
        fputc('\n', out);
    }
}

static void print_outliers(FILE *out, const cJSON *list, bool complete)
{
    const cJSON *o;
    int i = 0;
    cJSON_ArrayForEach (o, list) {
        if (i++ == 0)
            fputs("\nOutliers among nodes of one stack:\n", out);
        if (i > LISTED) {
            fprintf(out, "  ... %d more in the JSON output\n", cJSON_GetArraySize(list) - LISTED);
            break;
        }
        sc_term_printf(out, "  %.*s %.*s: ", 100, str(o, "node"), 100, str(o, "fact"));
        fprintf(out, "%.6g %s (median %.6g): ", cJSON_GetNumberValue(sc_diff_get(o, "value")),
                str(o, "unit"), cJSON_GetNumberValue(sc_diff_get(o, "median")));
        sc_term_printf(out, "%.*s\n", 100, str(o, "why"));
    }
    if (!complete)
        fprintf(out, "  (the %d largest values of a fact are kept per stack: there may be more)\n",
                SC_FLEET_EXTREMES);
}

static void print_skipped(FILE *out, const cJSON *skipped)
{
    const cJSON *f;
    int i = 0;
    if (num(skipped, "count") == 0)
        return;
    fprintf(out, "\nSkipped: %ld file%s\n", num(skipped, "count"),
            num(skipped, "count") == 1 ? "" : "s");
    cJSON_ArrayForEach (f, sc_diff_get(skipped, "files")) {
        if (i++ == LISTED)
            break;
        sc_term_printf(out, "  %.*s\n", 400, str(f, "reason")); /* it names the file */
    }
}

static void print_verdict(FILE *out, const cJSON *result)
{
    long groups = num(result, "groups_count"), failed = num(result, "failed");
    int outliers = cJSON_GetArraySize(sc_diff_get(result, "outliers"));
    if (num(result, "nodes") == 0)
        fputs("\nVerdict: no snapshot could be read\n", out);
    else if (num(result, "exit_code") == 0)
        fputs("\nVerdict: every node healthy, one stack\n", out);
    else
        fprintf(out, "\nVerdict: %ld failed, %ld stack%s, %d outlier%s\n", failed, groups,
                groups == 1 ? "" : "s", outliers, outliers == 1 ? "" : "s");
}

void sc_fleet_print(FILE *out, const cJSON *result)
{
    fprintf(out, "stackcheck fleet: %ld node%s from %ld file%s (%ld skipped)\n",
            num(result, "nodes"), num(result, "nodes") == 1 ? "" : "s", num(result, "files"),
            num(result, "files") == 1 ? "" : "s", num(sc_diff_get(result, "skipped"), "count"));
    print_groups(out, sc_diff_get(result, "groups"));
    if (num(result, "ungrouped") > 0)
        fprintf(out, "\n%ld healthy nodes with yet other stacks are counted, not grouped\n",
                num(result, "ungrouped"));
    print_failures(out, result);
    print_outliers(out, sc_diff_get(result, "outliers"),
                   !cJSON_IsFalse(sc_diff_get(result, "outliers_complete")));
    print_skipped(out, sc_diff_get(result, "skipped"));
    print_verdict(out, result);
}
