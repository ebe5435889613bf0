/* The app layer's lines in the human report below its probe's line: the top operators of an
 * operator profile, by device time (host time when the step ran on the CPU). Every name printed
 * is escaped for the terminal. */
#include "sc_app_script.h"

#include <string.h>

#include "sc_json.h"
#include "sc_text.h"

#define TOP_LINES 5

/* One operator: its name (escaped, padded to a column), self time, share, calls. */
static void print_op(FILE *out, const cJSON *op, bool device)
{
    const char *name = sc_json_str(op, "name") ? sc_json_str(op, "name") : "?";
    fputs("             ", out);
    sc_term_print(out, name, 120);
    size_t len = strlen(name);
    fprintf(out, "%*s %9.3f ms %5.1f%%  %.0f calls\n", len < 32 ? (int)(32 - len) : 0, "",
            sc_json_num(op, device ? "device_self_ms" : "host_self_ms", 0),
            sc_json_num(op, "share", 0) * 100, sc_json_num(op, "count", 0));
}

static void print_top(FILE *out, const cJSON *profile)
{
    const cJSON *top = sc_json_member(profile, "top");
    const char *by = sc_json_str(profile, "ranked_by");
    bool device = by && by[0] == 'd';
    if (!cJSON_IsArray(top) || cJSON_GetArraySize(top) == 0)
        return;
    const char *accel = sc_json_str(profile, "accelerator");
    fprintf(out, "           top operators by %s time (%.0f steps of '", device ? "device" : "host",
            sc_json_num(profile, "steps", 1));
    sc_term_print(out, sc_json_str(profile, "name") ? sc_json_str(profile, "name") : "step", 100);
    fputs("', ", out);
    sc_term_print(out, accel ? accel : "on the CPU", 40);
    fputs("):\n", out);
    int n = 0;
    const cJSON *op;
    cJSON_ArrayForEach (op, top) {
        if (n++ >= TOP_LINES)
            break;
        print_op(out, op, device);
    }
}

void sc_app_report_detail(FILE *out, const cJSON *facts, int verbosity)
{
    if (verbosity < 0)
        return;
    print_top(out, sc_json_member(facts, "profile"));
}
