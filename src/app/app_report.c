/* The app layer's lines in the human report below its probe's line: the top operators of an
 * operator profile, by device time (host time when the step ran on the CPU), and where the step
 * diverged in a training watch. Everything printed is escaped. */
#include "sc_app_script.h"

#include "sc_json.h"
#include "sc_text.h"

#define TOP_LINES 5

static void print_top(FILE *out, const cJSON *profile)
{
    const cJSON *top = sc_json_member(profile, "top");
    const char *by = sc_json_str(profile, "ranked_by");
    bool device = by && by[0] == 'd';
    if (!cJSON_IsArray(top) || cJSON_GetArraySize(top) == 0)
        return;
    const char *accel = sc_json_str(profile, "accelerator");
    sc_term_printf(out, "           top operators by %s time (%.0f steps of '%.*s', %.*s):\n",
                   device ? "device" : "host", sc_json_num(profile, "steps", 1), 100,
                   sc_json_str(profile, "name") ?: "step", 40, accel ? accel : "on the CPU");
    int n = 0;
    const cJSON *op;
    cJSON_ArrayForEach (op, top) {
        if (n++ >= TOP_LINES)
            break;
        sc_term_printf(out, "             %-32.*s %9.3f ms %5.1f%%  %.0f calls\n", 120,
                       sc_json_str(op, "name") ?: "?",
                       sc_json_num(op, device ? "device_self_ms" : "host_self_ms", 0),
                       sc_json_num(op, "share", 0) * 100, sc_json_num(op, "count", 0));
    }
}

void sc_app_report_detail(FILE *out, const cJSON *facts, int verbosity)
{
    if (verbosity < 0)
        return;
    print_top(out, sc_json_member(facts, "profile"));
}
