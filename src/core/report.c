/* The human report: a header line, one block per layer with a line per probe, and a verdict that
 * names the first failure with its evidence and hint. Everything printed is escaped. */
#include "sc_report.h"

#include <stdio.h>
#include <string.h>

#include "sc_app_script.h"
#include "sc_text.h"
#include "sc_util.h"

#define C_RESET "\033[0m"
#define C_RED "\033[31;1m"
#define C_GREEN "\033[32m"
#define C_YELLOW "\033[33m"
#define C_DIM "\033[2m"
#define C_BOLD "\033[1m"

static const char *get_str(const cJSON *obj, const char *key)
{
    return cJSON_GetStringValue(cJSON_GetObjectItem(obj, key));
}

static const char *status_color(const char *status)
{
    sc_status st = sc_status_parse(status);
    if (st == SC_STATUS_PASS)
        return C_GREEN;
    if (st == SC_STATUS_WARN)
        return C_YELLOW;
    if (st == SC_STATUS_SKIP)
        return C_DIM;
    return C_RED;
}

static void print_status(FILE *out, const char *status, bool color, int width)
{
    char up[16];
    sc_text_copy(up, sizeof up, status ? status : "?");
    for (char *p = up; *p; p++)
        *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
    int pad = width - (int)strlen(up);
    fputs(color ? status_color(status) : "", out);
    sc_term_print(out, up, sizeof up);
    fprintf(out, "%*s%s", pad > 0 ? pad : 0, "", color ? C_RESET : "");
}

/* The finding that best explains a probe's status: first error, else first warning. */
static const cJSON *main_finding(const cJSON *probe)
{
    const cJSON *f, *warn = NULL;
    cJSON_ArrayForEach (f, cJSON_GetObjectItem(probe, "findings")) {
        const char *sev = get_str(f, "severity");
        if (sev && strcmp(sev, "error") == 0)
            return f;
        if (!warn && sev && strcmp(sev, "warn") == 0)
            warn = f;
    }
    return warn;
}

static void print_finding(FILE *out, const cJSON *f, bool color, const char *indent)
{
    fprintf(out, "%s%s", indent, color ? C_BOLD : "");
    sc_term_printf(out, "%.*s", 200, get_str(f, "id"));
    fputs(color ? C_RESET : "", out);
    sc_term_printf(out, ": %.*s\n", 2000, get_str(f, "message"));
    if (get_str(f, "hint"))
        sc_term_printf(out, "%s  hint: %.*s\n", indent, 2000, get_str(f, "hint"));
}

/* The architecture-like name of a device fact, whichever vendor's key it has. */
static const char *device_kind(const cJSON *dev)
{
    static const char *const keys[] = {"arch", "gfx_target", "soc_name", "model", "name"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (get_str(dev, keys[i]))
            return get_str(dev, keys[i]);
    return "?";
}

/* A passing probe's line says what it saw: "8 devices: gfx90a x8". */
static void print_devices_summary(FILE *out, const cJSON *p)
{
    const cJSON *devices = cJSON_GetObjectItem(cJSON_GetObjectItem(p, "facts"), "devices");
    int n = cJSON_GetArraySize(devices);
    if (!cJSON_IsArray(devices) || n == 0)
        return;
    fprintf(out, "%d device%s:", n, n == 1 ? "" : "s");
    const cJSON *d, *e;
    int index = 0;
    cJSON_ArrayForEach (d, devices) {
        const char *kind = device_kind(d);
        bool seen = false;
        for (e = devices->child; e != d && !seen; e = e->next)
            seen = strcmp(device_kind(e), kind) == 0;
        if (seen || index++ >= 4)
            continue;
        int same = 0;
        for (e = d; e; e = e->next)
            same += strcmp(device_kind(e), kind) == 0;
        fputc(' ', out);
        sc_term_print(out, kind, 64);
        if (same > 1)
            fprintf(out, " x%d", same);
    }
}

static void print_probe(FILE *out, const cJSON *p, bool color, int verbosity)
{
    fputs("  ", out);
    print_status(out, get_str(p, "status"), color, 8);
    fputc(' ', out);
    const char *id = get_str(p, "id") ?: "?";
    sc_term_print(out, id, 100);
    int pad = 20 - (int)strlen(id);
    fprintf(out, "%*s", pad > 1 ? pad : 1, "");
    const cJSON *f = main_finding(p);
    if (f && verbosity < 1)
        sc_term_printf(out, "%.*s: %.*s", 200, get_str(f, "id"), 300, get_str(f, "message"));
    else if (get_str(p, "reason"))
        sc_term_print(out, get_str(p, "reason"), 300);
    else
        print_devices_summary(out, p);
    const cJSON *ms = cJSON_GetObjectItem(p, "duration_ms");
    if (verbosity > 0 && cJSON_IsNumber(ms))
        fprintf(out, " (%.1f ms)", ms->valuedouble);
    fputc('\n', out);
    if (verbosity > 0)
        cJSON_ArrayForEach (f, cJSON_GetObjectItem(p, "findings"))
            print_finding(out, f, color, "           ");
    sc_app_report_detail(out, p, verbosity);
}

static void print_header(FILE *out, const cJSON *snap)
{
    const cJSON *host = cJSON_GetObjectItem(snap, "host");
    sc_term_printf(out, "stackcheck %.*s", 100,
                   get_str(cJSON_GetObjectItem(snap, "tool"), "version") ?: "?");
    const char *os = get_str(cJSON_GetObjectItem(host, "os"), "pretty_name");
    if (os)
        sc_term_printf(out, " | %.*s", 100, os);
    if (get_str(host, "kernel"))
        sc_term_printf(out, " | kernel %.*s", 100, get_str(host, "kernel"));
    const cJSON *container = cJSON_GetObjectItem(host, "container");
    if (cJSON_IsTrue(cJSON_GetObjectItem(container, "detected")))
        sc_term_printf(out, " | container %.*s", 100, get_str(container, "kind") ?: "?");
    if (get_str(snap, "sysroot"))
        sc_term_printf(out, " | sysroot %.*s", 500, get_str(snap, "sysroot"));
    fputs("\n\n", out);
}

static void print_verdict(FILE *out, const cJSON *snap, bool color)
{
    const cJSON *summary = cJSON_GetObjectItem(snap, "summary");
    const char *status = get_str(summary, "status") ?: "?";
    const cJSON *ff = cJSON_GetObjectItem(summary, "first_failure");
    fputs("Verdict: ", out);
    print_status(out, status, color, 0);
    if (!cJSON_IsObject(ff)) {
        fputs(strcmp(status, "warn") == 0 ? ": every layer that ran passed, with warnings\n"
                                          : ": every layer that ran passed\n",
              out);
        return;
    }
    sc_term_printf(out, ": the %.*s layer fails first (%.*s, %.*s)\n  ", 100,
                   get_str(ff, "layer") ?: "?", 100, get_str(ff, "probe") ?: "?", 100,
                   get_str(ff, "status") ?: "?");
    const char *finding = get_str(ff, "finding");
    if (finding)
        sc_term_printf(out, "%.*s: ", 200, finding);
    sc_term_printf(out, "%.*s\n", 2000, get_str(ff, "message") ?: "");
    if (get_str(ff, "hint"))
        sc_term_printf(out, "  hint: %.*s\n", 2000, get_str(ff, "hint"));
    if (finding)
        sc_term_printf(out, "  more: stackcheck explain %.*s\n", 200, finding);
}

void sc_report_print(FILE *out, const cJSON *snapshot, bool color, int verbosity)
{
    if (verbosity >= 0) {
        print_header(out, snapshot);
        const cJSON *layer, *p;
        cJSON_ArrayForEach (layer, cJSON_GetObjectItem(snapshot, "layers")) {
            const char *name = get_str(layer, "name") ?: "?";
            fputs(color ? C_BOLD : "", out);
            sc_term_print(out, name, 100);
            int pad = 10 - (int)strlen(name);
            fprintf(out, "%*s%s ", pad > 0 ? pad : 0, "", color ? C_RESET : "");
            print_status(out, get_str(layer, "status"), color, 0);
            fputc('\n', out);
            cJSON_ArrayForEach (p, cJSON_GetObjectItem(layer, "probes"))
                print_probe(out, p, color, verbosity);
        }
        fputc('\n', out);
    }
    print_verdict(out, snapshot, color);
}
