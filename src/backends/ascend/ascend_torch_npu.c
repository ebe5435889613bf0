/* torch, torch_npu and CANN as a triple. torch_npu's package version is the torch version it is
 * built for, then ".postN" or "rcN"; each torch_npu release names the CANN it was made with. The
 * table is transcribed from torch_npu's version table (Ascend/pytorch README and COMPATIBILITY.md,
 * "TorchNPU 版本配套表") and Ascend's deployer's version_match.json. */
#include <stdio.h>
#include <string.h>

#include "sc_ascend_ops.h"
#include "sc_util.h"

static const struct {
    const char *torch_npu;
    const char *cann;
} releases[] = {
    {"2.12.0", "9.1.0"},        {"2.11.0", "9.1.0"},          {"2.10.0.post4", "9.1.0"},
    {"2.9.0.post6", "9.1.0"},   {"2.7.1.post8", "9.1.0"},     {"2.10.0", "9.0.0"},
    {"2.9.0.post2", "9.0.0"},   {"2.8.0.post4", "9.0.0"},     {"2.7.1.post4", "9.0.0"},
    {"2.9.0", "8.5.0"},         {"2.8.0.post2", "8.5.0"},     {"2.7.1.post2", "8.5.0"},
    {"2.6.0.post5", "8.5.0"},   {"2.8.0", "8.3.RC1"},         {"2.7.1", "8.3.RC1"},
    {"2.6.0.post3", "8.3.RC1"}, {"2.1.0.post17", "8.3.RC1"},  {"2.6.0", "8.2.RC1"},
    {"2.5.1.post1", "8.2.RC1"}, {"2.1.0.post13", "8.2.RC1"},  {"2.5.1", "8.1.RC1"},
    {"2.4.0.post4", "8.1.RC1"}, {"2.3.1.post6", "8.1.RC1"},   {"2.1.0.post12", "8.1.RC1"},
    {"2.2.0.post2", "8.0.RC2"}, {"1.11.0.post14", "8.0.RC2"},
};

bool sc_torch_npu_torch_version(const char *npu, char *out, size_t size)
{
    int dots = 0;
    size_t n = 0;
    for (; npu && npu[n]; n++) {
        if (npu[n] == '.' && ++dots == 3)
            break;
        if (npu[n] != '.' && (npu[n] < '0' || npu[n] > '9'))
            break; /* "rc2", "+cpu" */
    }
    return dots >= 2 && n > 0 && sc_fmt(out, size, "%.*s", (int)n, npu);
}

const char *sc_torch_npu_cann(const char *npu)
{
    for (size_t i = 0; npu && i < sizeof releases / sizeof releases[0]; i++)
        if (strcmp(releases[i].torch_npu, npu) == 0)
            return releases[i].cann;
    return NULL;
}

/* torch's release without a local part: "2.1.0+cpu" and "2.1.0a0+git" give "2.1.0". */
static void torch_release(const char *torch, char *out, size_t size)
{
    size_t n = strspn(torch, "0123456789.");
    sc_fmt(out, size, "%.*s", (int)n, torch);
}

/* "8.0.RC2" is met by an installed "8.0.RC2" or "8.0.RC2.alpha003", not by "8.0.RC3". */
static bool cann_matches(const char *installed, const char *wanted)
{
    size_t n = strlen(wanted);
    return strncmp(installed, wanted, n) == 0 && (installed[n] == '\0' || installed[n] == '.');
}

void sc_ascend_check_triple(sc_result *res, const char *torch, const char *npu, const char *cann)
{
    cJSON *t = cJSON_AddObjectToObject(res->facts, "triple");
    sc_fact_str(t, "torch", torch, "torch's version was not read (framework.torch)");
    sc_fact_str(t, "torch_npu", npu, "torch_npu is not installed for this Python");
    sc_fact_str(t, "cann", cann, "no CANN toolkit version (driver.ascend)");
    char built_for[32] = "", have[32] = "";
    if (!npu || !sc_torch_npu_torch_version(npu, built_for, sizeof built_for))
        return;
    cJSON_AddStringToObject(t, "torch_npu_for_torch", built_for);
    const char *want_cann = sc_torch_npu_cann(npu);
    sc_fact_str(t, "cann_paired", want_cann, "this torch_npu is not in stackcheck's release table");
    if (torch)
        torch_release(torch, have, sizeof have);
    if (torch && strcmp(have, built_for) != 0)
        sc_finding(res, "ascend.torch-npu-mismatch", SC_SEV_ERROR,
                   "install the torch_npu release made for this torch (pip install "
                   "torch-npu==<torch version>[.postN]), or the torch it was made for",
                   "torch_npu %s is built for torch %s, but torch %s is installed", npu, built_for,
                   torch);
    if (cann && want_cann && !cann_matches(cann, want_cann))
        sc_finding(res, "ascend.torch-npu-cann-mismatch", SC_SEV_WARN,
                   "install the CANN toolkit this torch_npu release names, or the torch_npu "
                   "release made for the installed CANN (torch_npu's version table)",
                   "torch_npu %s is released for CANN %s, but CANN %s is installed", npu, want_cann,
                   cann);
}
