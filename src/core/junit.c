/* JUnit XML for CI dashboards: one test suite per layer, one test case per probe; fail and crash
 * become <failure>, timeout and error <error>, skip <skipped>. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

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

static const char *str(const cJSON *o, const char *k)
{
    return cJSON_GetStringValue(cJSON_GetObjectItem(o, k));
}

static void write_case(FILE *out, const char *layer, const cJSON *p)
{
    const cJSON *ms = cJSON_GetObjectItem(p, "duration_ms");
    fputs("    <testcase classname=\"", out);
    xml_escaped(out, layer);
    fputs("\" name=\"", out);
    xml_escaped(out, str(p, "id"));
    fprintf(out, "\" time=\"%.3f\">", cJSON_IsNumber(ms) ? ms->valuedouble / 1000.0 : 0.0);
    sc_status st = sc_status_parse(str(p, "status"));
    const char *tag = st == SC_STATUS_FAIL || st == SC_STATUS_CRASH      ? "failure"
                      : st == SC_STATUS_TIMEOUT || st == SC_STATUS_ERROR ? "error"
                      : st == SC_STATUS_SKIP                             ? "skipped"
                                                                         : NULL;
    if (tag) {
        fprintf(out, "<%s message=\"", tag);
        xml_escaped(out, str(p, "status"));
        if (str(p, "reason")) {
            fputs(": ", out);
            xml_escaped(out, str(p, "reason"));
        }
        fputs("\">", out);
        const cJSON *f;
        cJSON_ArrayForEach (f, cJSON_GetObjectItem(p, "findings")) {
            xml_escaped(out, str(f, "severity"));
            fputc(' ', out);
            xml_escaped(out, str(f, "id"));
            fputs(": ", out);
            xml_escaped(out, str(f, "message"));
            fputc('\n', out);
        }
        fprintf(out, "</%s>", tag);
    }
    fputs("</testcase>\n", out);
}

int sc_junit_write(const cJSON *snapshot, const char *path, sc_error *err)
{
    char *xml = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&xml, &len); /* built in memory, written by the output writer */
    if (!out)
        return sc_error_set(err, -ENOMEM, "cannot build the JUnit file: out of memory");
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"stackcheck\">\n", out);
    const cJSON *layer, *p;
    cJSON_ArrayForEach (layer, cJSON_GetObjectItem(snapshot, "layers")) {
        int tests = 0, failures = 0, errors = 0, skipped = 0;
        cJSON_ArrayForEach (p, cJSON_GetObjectItem(layer, "probes")) {
            sc_status st = sc_status_parse(str(p, "status"));
            tests++;
            failures += st == SC_STATUS_FAIL || st == SC_STATUS_CRASH;
            errors += st == SC_STATUS_TIMEOUT || st == SC_STATUS_ERROR;
            skipped += st == SC_STATUS_SKIP;
        }
        fputs("  <testsuite name=\"", out);
        xml_escaped(out, str(layer, "name"));
        fprintf(out, "\" tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"%d\">\n", tests,
                failures, errors, skipped);
        cJSON_ArrayForEach (p, cJSON_GetObjectItem(layer, "probes"))
            write_case(out, str(layer, "name"), p);
        fputs("  </testsuite>\n", out);
    }
    fputs("</testsuites>\n", out);
    int rc = fclose(out) == 0 ? sc_output_write(path, xml, len, err)
                              : sc_error_set(err, -ENOMEM, "cannot build the JUnit file");
    free(xml);
    return rc;
}
