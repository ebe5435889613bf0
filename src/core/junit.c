/* JUnit XML for CI dashboards, from the ended run state: one test suite per layer, one test case
 * per probe; fail and crash become <failure>, timeout and error <error>, skip <skipped>. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sc_output.h"
#include "sc_report.h"

static void xml_escaped(FILE *out, const char *s)
{
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '&': fputs("&amp;", out); break;
        case '"': fputs("&quot;", out); break;
        default:
            if (c < 0x20 && c != '\n' && c != '\t')
                fprintf(out, "\\x%02x", c); /* not representable in XML 1.0 */
            else
                fputc(c, out);
        }
    }
}

/* The JUnit element of a status: fail and crash <failure>, timeout and error <error>, skip
 * <skipped>; NULL for pass and warn. */
static const char *junit_tag(sc_status st)
{
    return st == SC_STATUS_FAIL || st == SC_STATUS_CRASH      ? "failure"
           : st == SC_STATUS_TIMEOUT || st == SC_STATUS_ERROR ? "error"
           : st == SC_STATUS_SKIP                             ? "skipped"
                                                              : NULL;
}

static void write_case(FILE *out, const char *layer, const sc_outcome *o)
{
    fputs("    <testcase classname=\"", out);
    xml_escaped(out, layer);
    fputs("\" name=\"", out);
    xml_escaped(out, o->probe->id);
    fprintf(out, "\" time=\"%.3f\">", o->duration_ms / 1000.0);
    const char *tag = junit_tag(o->status);
    if (tag) {
        fprintf(out, "<%s message=\"", tag);
        xml_escaped(out, sc_status_name(o->status));
        if (o->reason) {
            fputs(": ", out);
            xml_escaped(out, o->reason);
        }
        fputs("\">", out);
        const cJSON *f;
        sc_finding_view v;
        cJSON_ArrayForEach (f, o->findings) {
            if (!sc_finding_read(f, &v))
                continue;
            xml_escaped(out, sc_severity_name(v.severity));
            fputc(' ', out);
            xml_escaped(out, v.id);
            fputs(": ", out);
            xml_escaped(out, v.message);
            fputc('\n', out);
        }
        fprintf(out, "</%s>", tag);
    }
    fputs("</testcase>\n", out);
}

static void write_suite(FILE *out, const sc_run_state *rs, sc_layer layer)
{
    int tests = 0, failures = 0, errors = 0, skipped = 0;
    for (size_t k = 0; k < rs->count; k++) {
        const sc_outcome *o = sc_run_state_at(rs, k);
        if (o->probe->layer != layer || o->phase != SC_OUTCOME_FINAL)
            continue;
        const char *tag = junit_tag(o->status);
        tests++;
        failures += tag && strcmp(tag, "failure") == 0;
        errors += tag && strcmp(tag, "error") == 0;
        skipped += tag && strcmp(tag, "skipped") == 0;
    }
    fputs("  <testsuite name=\"", out);
    xml_escaped(out, sc_layer_name(layer));
    fprintf(out, "\" tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"%d\">\n", tests, failures,
            errors, skipped);
    for (size_t k = 0; k < rs->count; k++) {
        const sc_outcome *o = sc_run_state_at(rs, k);
        if (o->probe->layer == layer && o->phase == SC_OUTCOME_FINAL)
            write_case(out, sc_layer_name(layer), o);
    }
    fputs("  </testsuite>\n", out);
}

int sc_junit_write(const sc_run_state *rs, const char *path, sc_error *err)
{
    char *xml = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&xml, &len); /* built in memory, written by the output writer */
    if (!out)
        return sc_error_set(err, -ENOMEM, "cannot build the JUnit file: out of memory");
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"stackcheck\">\n", out);
    for (int l = 0; l < SC_LAYER_COUNT; l++)
        write_suite(out, rs, (sc_layer)l);
    fputs("</testsuites>\n", out);
    int rc = fclose(out) == 0 ? sc_output_write(path, xml, len, err)
                              : sc_error_set(err, -ENOMEM, "cannot build the JUnit file");
    free(xml);
    return rc;
}
