/* The training watch and the scaling the helper recorded, judged: the first step and module that
 * produced NaN or Inf over N training steps (forward or backward), and all devices together doing
 * far less than their number times one device's work. Reads JSON the interpreter child reported;
 * no I/O. */
#include <stdio.h>
#include <string.h>

#include "sc_app_script.h"
#include "sc_json.h"

#define MIN_EFFICIENCY 0.7 /* below this, the seed's "8 devices far below 8x" */

/* The loss of the last step before step, as text ("0.4213", or "not finite"). */
static void last_good_loss(const cJSON *steps, double step, char *buf, size_t size)
{
    snprintf(buf, size, "none before it");
    const cJSON *s;
    cJSON_ArrayForEach (s, steps) {
        const cJSON *loss = sc_json_member(s, "loss");
        if (sc_json_num(s, "step", 0) < step && cJSON_IsNumber(loss))
            snprintf(buf, size, "%.6g at step %.0f", loss->valuedouble, sc_json_num(s, "step", 0));
    }
}

void sc_app_check_train(sc_result *res, cJSON *watch)
{
    const cJSON *first = sc_json_member(watch, "first_nonfinite");
    if (!cJSON_IsObject(first))
        return;
    double step = sc_json_num(first, "step", 0);
    const char *phase = sc_json_str(first, "phase") ? sc_json_str(first, "phase") : "?";
    const char *type = sc_json_str(first, "type");
    char loss[96], counts[64] = "";
    last_good_loss(sc_json_member(watch, "steps"), step, loss, sizeof loss);
    if (cJSON_IsNumber(sc_json_member(first, "nan")))
        snprintf(counts, sizeof counts, ": %.0f NaN, %.0f Inf", sc_json_num(first, "nan", 0),
                 sc_json_num(first, "inf", 0));
    sc_finding(
        res, "app.nonfinite-after-steps", SC_SEV_ERROR,
        "inspect that module at that step: its inputs, weights and gradients "
        "(facts.train_watch.steps has every step's loss, gradient norms and non-finite "
        "modules); lower the learning rate, add gradient clipping, or compute it in float32; "
        "compare with a machine where it trains: stackcheck diff",
        "step %.0f of '%s' is the first to produce non-finite values, in the %s of module "
        "'%s'%s%s%s%s; the last finite loss: %s",
        step, sc_json_str(watch, "name") ? sc_json_str(watch, "name") : "train", phase,
        sc_json_str(first, "module") ? sc_json_str(first, "module") : "?", type ? " (" : "",
        type ? type : "", type ? ")" : "", counts, loss);
}

void sc_app_check_scaling(sc_result *res, cJSON *scaling)
{
    double world = sc_json_num(scaling, "world", 1);
    const cJSON *eff = sc_json_member(scaling, "efficiency");
    if (world < 2 || !cJSON_IsNumber(eff) || eff->valuedouble >= MIN_EFFICIENCY)
        return;
    sc_finding(
        res, "app.poor-scaling", SC_SEV_WARN,
        "time the collectives (framework.collective times an all-reduce on these devices); "
        "check the devices' links and placement (nvidia-smi topo -m, rocm-smi --showtopo, "
        "npu-smi info -t topo), and what the devices share (host threads, data loading)",
        "%.0f devices together did %.2fx the work of one (%.0f%% of %.0fx): %.3f ms per step "
        "on one device, %.3f ms per step on all",
        world, sc_json_num(scaling, "speedup", 0), eff->valuedouble * 100, world,
        sc_json_num(scaling, "one_device_ms_per_step", 0),
        sc_json_num(scaling, "all_devices_ms_per_step", 0));
}
