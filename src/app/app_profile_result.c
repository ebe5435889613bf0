/* The operator profile the helper recorded (facts.profile), judged: operators that ran on the CPU
 * while the step used a device (the profile's own classification and the fallback warnings the
 * frameworks printed), copies and synchronising calls between host and device per step, and
 * compiles during the profiled steps. Reads JSON the interpreter child reported; no I/O. */
#include <stdio.h>
#include <string.h>

#include "sc_app_script.h"
#include "sc_json.h"
#include "sc_util.h"

#define LISTED 4 /* operators or places named in a message; the facts hold the rest */

static const char *str_or(const cJSON *o, const char *key, const char *fallback)
{
    return sc_json_str(o, key) ? sc_json_str(o, key) : fallback;
}

/* "aten::scatter_add_ (2 calls, 1.800 ms on the host), ..." from profile.fallback.ops. */
static int list_fallback_ops(sc_buf *b, const cJSON *ops)
{
    int n = 0;
    const cJSON *op;
    cJSON_ArrayForEach (op, ops) {
        if (n < LISTED)
            sc_buf_printf(b, "%s%s (%.0f of %.0f calls, %.3f ms on the host)", n ? ", " : "",
                          str_or(op, "name", "?"), sc_json_num(op, "host_calls", 0),
                          sc_json_num(op, "count", 0), sc_json_num(op, "host_self_ms", 0));
        n++;
    }
    if (n > LISTED)
        sc_buf_printf(b, " and %d more", n - LISTED);
    return n;
}

/* "torchvision::nms on NPU (2 times)" for the warnings of kind "cpu". */
static int list_fallback_warnings(sc_buf *b, const cJSON *warnings, bool after_ops)
{
    int n = 0;
    const cJSON *w;
    cJSON_ArrayForEach (w, warnings) {
        const char *kind = sc_json_str(w, "kind");
        if (!kind || strcmp(kind, "cpu") != 0)
            continue;
        if (n == 0)
            sc_buf_printf(b, "%sthe framework warned of ", after_ops ? "; " : "");
        if (n < LISTED)
            sc_buf_printf(b, "%s%s on %s (%.0f times)", n ? ", " : "",
                          str_or(w, "operator", "an operator"), str_or(w, "backend", "?"),
                          sc_json_num(w, "count", 1));
        n++;
    }
    return n;
}

static void check_fallback(sc_result *res, const cJSON *profile)
{
    sc_buf b;
    sc_buf_init(&b);
    const char *accel = str_or(profile, "accelerator", NULL);
    int ops =
        accel ? list_fallback_ops(&b, sc_json_member(sc_json_member(profile, "fallback"), "ops"))
              : 0;
    int warned = list_fallback_warnings(&b, sc_json_member(profile, "fallback_warnings"), ops);
    if ((ops || warned) && !b.oom)
        sc_finding(res, "app.cpu-fallback", SC_SEV_WARN,
                   "find a device implementation (a newer framework build, the vendor's fused "
                   "operator, an equivalent expression of supported operators) or keep the data on "
                   "the host for that part; facts.profile.fallback lists each operator with its "
                   "input shapes and callers",
                   "%d operator%s ran on the CPU while the step ran on %s: %s", ops + warned,
                   ops + warned == 1 ? "" : "s", accel ? accel : "a device", b.data);
    sc_buf_free(&b);
}

/* "2 device-to-host copies (132 bytes)" for one direction of profile.traffic.copies. */
static void copies_text(sc_buf *b, const cJSON *copies, const char *dir, const char *label)
{
    const cJSON *c = sc_json_member(copies, dir);
    double per_step = sc_json_num(c, "per_step", 0);
    if (per_step <= 0)
        return;
    sc_buf_printf(b, "%s%g %s cop%s", b->len ? ", " : "", per_step, label,
                  per_step == 1 ? "y" : "ies");
    const cJSON *bytes = sc_json_member(c, "bytes_per_step");
    if (cJSON_IsNumber(bytes))
        sc_buf_printf(b, " (%.0f bytes)", bytes->valuedouble);
}

/* Where they were made: the host calls with their places, else the operators. */
static void callers_text(sc_buf *b, const cJSON *traffic)
{
    int n = 0;
    const cJSON *c;
    cJSON_ArrayForEach (c, sc_json_member(traffic, "host_calls")) {
        if (n++ < LISTED)
            sc_buf_printf(b, "%s%s at %s", n > 1 ? ", " : "; made by ", str_or(c, "call", "?"),
                          str_or(c, "where", "?"));
    }
    cJSON_ArrayForEach (c, sc_json_member(sc_json_member(traffic, "syncs"), "callers")) {
        if (n++ < LISTED)
            sc_buf_printf(b, "%s%s", n > 1 ? ", " : "; made by ", str_or(c, "op", "?"));
    }
}

static void check_traffic(sc_result *res, const cJSON *profile)
{
    const cJSON *traffic = sc_json_member(profile, "traffic");
    const cJSON *copies = sc_json_member(traffic, "copies");
    double syncs = sc_json_num(sc_json_member(traffic, "syncs"), "per_step", 0);
    sc_buf b;
    sc_buf_init(&b);
    copies_text(&b, copies, "device_to_host", "device-to-host");
    copies_text(&b, copies, "unknown", "host-device");
    if (syncs > 0)
        sc_buf_printf(&b, "%s%g synchronising call%s", b.len ? ", " : "", syncs,
                      syncs == 1 ? "" : "s");
    if (b.len && !b.oom) {
        bool measured = cJSON_IsTrue(sc_json_member(traffic, "measured"));
        copies_text(&b, copies, "host_to_device", "host-to-device");
        callers_text(&b, traffic);
        sc_finding(res, "app.host-device-traffic", measured ? SC_SEV_WARN : SC_SEV_INFO,
                   "keep values on the device inside the step: no .item(), .cpu(), .tolist() or "
                   "boolean-mask indexing there; log every N steps; facts.profile.traffic has "
                   "the counts, bytes and places",
                   "per step of '%s': %s%s", str_or(profile, "name", "step"), b.data,
                   measured ? ""
                            : " (the step ran on the CPU: what a device run would copy and "
                              "wait for)");
    }
    sc_buf_free(&b);
}

static void shapes_text(sc_buf *b, const cJSON *recompiles)
{
    const cJSON *s;
    int n = 0;
    cJSON_ArrayForEach (s, sc_json_member(sc_json_member(recompiles, "log"), "shape_changes")) {
        if (n++ < LISTED)
            sc_buf_printf(b, "%s%s dimension %.0f: %.0f -> %.0f",
                          n > 1 ? ", " : "; shapes: ", str_or(s, "tensor", "?"),
                          sc_json_num(s, "index", 0), sc_json_num(s, "expected", 0),
                          sc_json_num(s, "actual", 0));
    }
    cJSON_ArrayForEach (
        s, sc_json_member(sc_json_member(recompiles, "device_compiles"), "triggered_by")) {
        if (n++ < LISTED)
            sc_buf_printf(b, "%s%s", n > 1 ? ", " : "; compiled for ", str_or(s, "op", "?"));
    }
}

static void check_recompiles(sc_result *res, const cJSON *profile)
{
    const cJSON *rc = sc_json_member(profile, "recompiles");
    double dynamo = sc_json_num(rc, "recompiles", 0);
    double device = sc_json_num(sc_json_member(rc, "device_compiles"), "count", 0);
    if (dynamo <= 0 && device <= 0)
        return;
    sc_buf b;
    sc_buf_init(&b);
    if (dynamo > 0)
        sc_buf_printf(&b, "torch.compile compiled %.0f more frame%s", dynamo,
                      dynamo == 1 ? "" : "s");
    if (device > 0)
        sc_buf_printf(&b, "%sthe device runtime compiled %.0f operator%s", b.len ? "; " : "",
                      device, device == 1 ? "" : "s");
    shapes_text(&b, rc);
    if (!b.oom)
        sc_finding(res, "app.recompiles", SC_SEV_WARN,
                   "make the shapes static (pad to fixed buckets), mark dynamic dimensions "
                   "(torch._dynamo.mark_dynamic), or on Ascend use the binary operators "
                   "(torch.npu.set_compile_mode(jit_compile=False))",
                   "during the %.0f profiled step%s after the warm-up, %s",
                   sc_json_num(profile, "steps", 1),
                   sc_json_num(profile, "steps", 1) == 1 ? "" : "s", b.data);
    sc_buf_free(&b);
}

void sc_app_check_profile(sc_result *res, cJSON *profile)
{
    if (!cJSON_IsTrue(sc_json_member(profile, "available")))
        return; /* the reason is in the facts */
    check_fallback(res, profile);
    check_traffic(res, profile);
    check_recompiles(res, profile);
}
