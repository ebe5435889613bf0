/* Fuzz target for the snapshot reader and `stackcheck diff`: the input is parsed as a snapshot (up
 * to a NUL byte; what follows it is a second snapshot, else a fixed valid one), checked, and the
 * two are compared both ways and with themselves, and printed. Also the stage-marker parser, which
 * reads the app's output, gets the same bytes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sc_app.h"
#include "sc_diff.h"

static const char baseline[] =
    "{\"schema\":\"stackcheck/snapshot/v1\",\"created\":\"t\",\"host\":{\"kernel\":\"6.1\","
    "\"os\":{\"pretty_name\":\"x\"}},\"layers\":[{\"name\":\"runtime\",\"probes\":[{\"id\":"
    "\"runtime.hip\",\"status\":\"pass\",\"duration_ms\":3,\"facts\":{\"runtime\":{\"version\":"
    "\"5.2\"},\"devices\":[{\"pci_address\":\"0000:01:00.0\",\"arch\":\"gfx90a\"}]},\"findings\":"
    "[]}]},{\"name\":\"app\",\"probes\":[{\"id\":\"app.script\",\"status\":\"pass\",\"facts\":"
    "{\"numerics\":{\"modules\":[{\"module\":\"a\",\"mean\":1,\"shape\":[2]}]}},\"findings\":[]}]}]"
    "}";

static void compare(const cJSON *a, const cJSON *b, FILE *sink)
{
    sc_diff_options opt;
    sc_diff_options_init(&opt);
    cJSON *d = sc_diff_snapshots(a, b, &opt);
    if (!d)
        return;
    if (sink)
        sc_diff_print(sink, d, "a", "b");
    char *text = cJSON_PrintUnformatted(d);
    if (!text || !cJSON_IsObject(d))
        __builtin_trap();
    free(text);
    cJSON_Delete(d);
}

static void fuzz_markers(const uint8_t *data, size_t size)
{
    sc_app_parse *p = malloc(sizeof *p);
    if (!p)
        return;
    sc_app_parse_init(p, 0);
    size_t half = size / 2;
    sc_app_parse_feed(p, SC_APP_STDOUT, (const char *)data, half, 1);
    sc_app_parse_feed(p, SC_APP_STDERR, (const char *)data, size < 64 ? size : 64, 2);
    sc_app_parse_feed(p, SC_APP_STDOUT, (const char *)data + half, size - half, 3);
    sc_app_parse_finish(p, 4);
    if (p->stage_count < 1 || p->stage_count > SC_APP_STAGE_MAX)
        __builtin_trap();
    cJSON *j = sc_app_stages_json(p, false);
    cJSON_Delete(j);
    free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *sink;
    if (!sink)
        sink = fopen("/dev/null", "w");
    const uint8_t *nul = memchr(data, 0, size);
    size_t first = nul ? (size_t)(nul - data) : size;
    cJSON *a = cJSON_ParseWithLength((const char *)data, first);
    cJSON *b = nul ? cJSON_ParseWithLength((const char *)nul + 1, size - first - 1)
                   : cJSON_Parse(baseline);
    sc_error err;
    bool a_ok = a && sc_diff_check_snapshot(a, "a", &err) == 0;
    bool b_ok = b && sc_diff_check_snapshot(b, "b", &err) == 0;
    if (a_ok) {
        compare(a, a, sink);
        if (b_ok) {
            compare(a, b, sink);
            compare(b, a, NULL);
        }
    }
    cJSON_Delete(a);
    cJSON_Delete(b);
    fuzz_markers(data, size);
    return 0;
}
