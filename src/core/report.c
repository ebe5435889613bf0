/* The human report: a header line from the snapshot's header, one block per layer with a line per
 * outcome of the run state, and a verdict that names the first failure with its evidence and hint.
 * Everything printed is escaped. */
#include "sc_report.h"

#include <stdio.h>
#include <string.h>

#include "sc_backend.h"
#include "sc_facts.h"
#include "sc_json.h"
#include "sc_text.h"
#include "sc_util.h"

#define C_RESET "\033[0m"
#define C_RED "\033[31;1m"
#define C_GREEN "\033[32m"
#define C_YELLOW "\033[33m"
#define C_DIM "\033[2m"
#define C_BOLD "\033[1m"

static const char *status_color(sc_status st)
{
    if (st == SC_STATUS_PASS)
        return C_GREEN;
    if (st == SC_STATUS_WARN)
        return C_YELLOW;
    if (st == SC_STATUS_SKIP)
        return C_DIM;
    return C_RED;
}

static void print_status(FILE *out, sc_status st, bool color, int width)
{
    char up[16];
    sc_text_copy(up, sizeof up, sc_status_name(st));
    for (char *p = up; *p; p++)
        *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
    int pad = width - (int)strlen(up);
    fputs(color ? status_color(st) : "", out);
    sc_term_print(out, up, sizeof up);
    fprintf(out, "%*s%s", pad > 0 ? pad : 0, "", color ? C_RESET : "");
}

/* The finding that best explains an outcome's status: first error, else first warning. */
static const cJSON *main_finding(const sc_outcome *o)
{
    const cJSON *f = sc_outcome_first_finding(o, SC_SEV_ERROR);
    return f ? f : sc_outcome_first_finding(o, SC_SEV_WARN);
}

static void print_finding(FILE *out, const cJSON *f, bool color, const char *indent)
{
    sc_finding_view v;
    if (!sc_finding_read(f, &v))
        return;
    fprintf(out, "%s%s", indent, color ? C_BOLD : "");
    sc_term_printf(out, "%.*s", 200, v.id);
    fputs(color ? C_RESET : "", out);
    sc_term_printf(out, ": %.*s\n", 2000, v.message);
    if (v.hint)
        sc_term_printf(out, "%s  hint: %.*s\n", indent, 2000, v.hint);
}

/* The architecture name of a device: the first of its backend's arch facts it has (every
 * backend's, for a backend-neutral probe). */
static const char *device_kind(const cJSON *dev, sc_backend backend)
{
    const sc_backend_desc *own = sc_backend_get(backend);
    for (const sc_backend_desc *const *b = sc_backends; *b; b++) {
        const sc_backend_desc *desc = own ? own : *b;
        for (size_t i = 0; desc->arch_facts && desc->arch_facts[i]; i++)
            if (sc_json_str(dev, desc->arch_facts[i]))
                return sc_json_str(dev, desc->arch_facts[i]);
        if (own)
            break;
    }
    return "?";
}

/* A passing probe's line says what it saw: "8 devices: gfx90a x8". */
static void print_devices_summary(FILE *out, const sc_outcome *o)
{
    const cJSON *devices = sc_json_member(o->facts, SC_FACT_DEVICES);
    int n = cJSON_GetArraySize(devices);
    if (!cJSON_IsArray(devices) || n == 0)
        return;
    sc_backend backend = o->probe->backend;
    fprintf(out, "%d device%s:", n, n == 1 ? "" : "s");
    const cJSON *d, *e;
    int index = 0;
    cJSON_ArrayForEach (d, devices) {
        const char *kind = device_kind(d, backend);
        bool seen = false;
        for (e = devices->child; e != d && !seen; e = e->next)
            seen = strcmp(device_kind(e, backend), kind) == 0;
        if (seen || index++ >= 4)
            continue;
        int same = 0;
        for (e = d; e; e = e->next)
            same += strcmp(device_kind(e, backend), kind) == 0;
        fputc(' ', out);
        sc_term_print(out, kind, 64);
        if (same > 1)
            fprintf(out, " x%d", same);
    }
}

static void print_probe(FILE *out, const sc_outcome *o, bool color, int verbosity)
{
    fputs("  ", out);
    print_status(out, o->status, color, 8);
    fputc(' ', out);
    const char *id = o->probe->id;
    sc_term_print(out, id, 100);
    int pad = 20 - (int)strlen(id);
    fprintf(out, "%*s", pad > 1 ? pad : 1, "");
    const cJSON *f = main_finding(o);
    sc_finding_view v;
    if (f && verbosity < 1 && sc_finding_read(f, &v))
        sc_term_printf(out, "%.*s: %.*s", 200, v.id, 300, v.message);
    else if (o->reason)
        sc_term_print(out, o->reason, 300);
    else
        print_devices_summary(out, o);
    if (verbosity > 0)
        fprintf(out, " (%.1f ms)", o->duration_ms);
    fputc('\n', out);
    if (verbosity > 0)
        cJSON_ArrayForEach (f, o->findings)
            print_finding(out, f, color, "           ");
}

static void print_header(FILE *out, const cJSON *snap)
{
    const cJSON *host = sc_json_member(snap, "host");
    sc_term_printf(out, "stackcheck %.*s", 100,
                   sc_json_str(sc_json_member(snap, "tool"), "version") ?: "?");
    const char *os = sc_json_str(sc_json_member(host, "os"), "pretty_name");
    if (os)
        sc_term_printf(out, " | %.*s", 100, os);
    if (sc_json_str(host, "kernel"))
        sc_term_printf(out, " | kernel %.*s", 100, sc_json_str(host, "kernel"));
    const cJSON *container = sc_json_member(host, "container");
    if (cJSON_IsTrue(sc_json_member(container, "detected")))
        sc_term_printf(out, " | container %.*s", 100, sc_json_str(container, "kind") ?: "?");
    if (sc_json_str(snap, "sysroot"))
        sc_term_printf(out, " | sysroot %.*s", 500, sc_json_str(snap, "sysroot"));
    fputs("\n\n", out);
}

static void print_verdict(FILE *out, const sc_run_summary *s, bool color)
{
    const sc_outcome *ff = s->first_failure;
    fputs("Verdict: ", out);
    print_status(out, s->status, color, 0);
    if (!ff) {
        fputs(s->status == SC_STATUS_WARN ? ": every layer that ran passed, with warnings\n"
                                          : ": every layer that ran passed\n",
              out);
        return;
    }
    sc_term_printf(out, ": the %.*s layer fails first (%.*s, %.*s)\n  ", 100,
                   sc_layer_name(ff->probe->layer), 100, ff->probe->id, 100,
                   sc_status_name(ff->status));
    sc_finding_view v;
    bool err = s->first_error && sc_finding_read(s->first_error, &v);
    if (err)
        sc_term_printf(out, "%.*s: ", 200, v.id);
    sc_term_printf(out, "%.*s\n", 2000, (err ? v.message : ff->reason) ?: "");
    if (err && v.hint)
        sc_term_printf(out, "  hint: %.*s\n", 2000, v.hint);
    if (err)
        sc_term_printf(out, "  more: stackcheck explain %.*s\n", 200, v.id);
}

void sc_report_print(FILE *out, const cJSON *header, const sc_run_state *rs, bool color,
                     int verbosity)
{
    if (verbosity >= 0) {
        print_header(out, header);
        for (int l = 0; l < SC_LAYER_COUNT; l++) {
            const char *name = sc_layer_name((sc_layer)l);
            fputs(color ? C_BOLD : "", out);
            sc_term_print(out, name, 100);
            int pad = 10 - (int)strlen(name);
            fprintf(out, "%*s%s ", pad > 0 ? pad : 0, "", color ? C_RESET : "");
            print_status(out, rs->layer_status[l], color, 0);
            fputc('\n', out);
            for (size_t k = 0; k < rs->count; k++) {
                const sc_outcome *o = sc_run_state_at(rs, k);
                if (o->probe->layer == (sc_layer)l && o->phase == SC_OUTCOME_FINAL)
                    print_probe(out, o, color, verbosity);
            }
        }
        fputc('\n', out);
    }
    print_verdict(out, &rs->summary, color);
}
