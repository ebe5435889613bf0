/* Whether a GPU code target serves a device: AMD code objects by processor and xnack/sramecc
 * mode (unspecified runs on either), CUDA by cubin of the same major and not newer minor, or PTX
 * the driver can JIT-compile. */
#include "sc_offload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Splits "gfx90a:sramecc+:xnack-" into its processor length and looks up feature f's sign
 * ('+', '-', or 0 when unspecified). */
static char feature_sign(const char *arch, const char *f)
{
    size_t fl = strlen(f);
    for (const char *p = strchr(arch, ':'); p; p = strchr(p + 1, ':'))
        if (strncmp(p + 1, f, fl) == 0 && (p[1 + fl] == '+' || p[1 + fl] == '-'))
            return p[1 + fl];
    return 0;
}

bool sc_offload_amd_match(const char *code, const char *device)
{
    size_t cl = strcspn(code, ":"), dl = strcspn(device, ":");
    if (cl != dl || strncmp(code, device, cl) != 0)
        return false;
    for (const char *p = strchr(code, ':'); p; p = strchr(p + 1, ':')) {
        size_t fl = strcspn(p + 1, ":");
        if (fl < 2)
            continue;
        char feature[32];
        snprintf(feature, sizeof feature, "%.*s", (int)(fl - 1), p + 1);
        char want = p[fl], have = feature_sign(device, feature);
        if (have && have != want)
            return false;
    }
    return true;
}

/* The number of an "sm_86" / "compute_86" target; -1 when not one. `suffix` gets an arch-specific
 * letter ("sm_90a"). */
static int cuda_number(const char *s, const char *prefix, char *suffix)
{
    size_t pl = strlen(prefix);
    if (strncmp(s, prefix, pl) != 0)
        return -1;
    char *end;
    long v = strtol(s + pl, &end, 10);
    if (end == s + pl || v <= 0 || v > 10000)
        return -1;
    *suffix = *end;
    return (int)v;
}

sc_cuda_match sc_offload_cuda_match(const sc_offload_list *list, const char *device)
{
    char dsuf = 0, suf = 0;
    int dev = cuda_number(device, "sm_", &dsuf);
    if (dev < 0)
        return SC_CUDA_NO_CODE;
    sc_cuda_match best = SC_CUDA_NO_CODE;
    for (int i = 0; i < list->count; i++) {
        int v = cuda_number(list->targets[i], "sm_", &suf);
        if (v > 0 && v / 10 == dev / 10 && (suf ? v == dev : v % 10 <= dev % 10))
            return SC_CUDA_CUBIN;
        v = cuda_number(list->targets[i], "compute_", &suf);
        if (v > 0 && !suf && v <= dev)
            best = SC_CUDA_PTX_ONLY;
    }
    return best;
}
