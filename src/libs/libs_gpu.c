/* The GPU code of the inspected file (HIP offload bundles, CUDA fat binaries) against the target
 * devices: a device without code fails at the first kernel launch. A listing cut by its budgets
 * is said so, and then no device is said to lack code. */
#include <stdio.h>
#include <string.h>

#include "libs_internal.h"
#include "sc_offload.h"

static void read_offload(const sc_elf_file *f, sc_offload_list *list, const char **format)
{
    const sc_elf_span *h = &f->info.hip_fatbin, *nv = &f->info.nv_fatbin;
    const uint8_t *base = f->map;
    *format = NULL;
    if (h->present && h->offset <= f->size && h->size <= f->size - h->offset) {
        sc_offload_parse_hip(base + h->offset, (size_t)h->size, list);
        *format = list->compressed ? "clang-offload-bundle-compressed" : "clang-offload-bundle";
    } else if (h->present) {
        snprintf(list->problem, sizeof list->problem, ".hip_fatbin lies past the end of the file");
    }
    if (nv->present && nv->offset <= f->size && nv->size <= f->size - nv->offset) {
        sc_offload_parse_nv(base + nv->offset, (size_t)nv->size, list);
        *format = *format ? "clang-offload-bundle+nv-fatbin" : "nv-fatbin";
    } else if (nv->present) {
        snprintf(list->problem, sizeof list->problem, ".nv_fatbin lies past the end of the file");
    }
}

static void targets_text(const sc_offload_list *list, char *buf, size_t size)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < list->count && o < size; i++)
        o += (size_t)snprintf(buf + o, size - o, "%s%s", i ? ", " : "", list->targets[i]);
}

static void check_amd_device(analysis *a, const node *f, const sc_offload_list *list,
                             const char *dev)
{
    bool any_amd = false;
    for (int i = 0; i < list->count; i++) {
        if (sc_offload_amd_match(list->targets[i], dev))
            return;
        any_amd |= sc_starts_with(list->targets[i], "gfx");
    }
    if (!any_amd)
        return;
    char have[2048];
    targets_text(list, have, sizeof have);
    sc_finding(
        &a->res, "libs.no-code-for-device", SC_SEV_ERROR,
        "rebuild for this architecture (--offload-arch / PYTORCH_ROCM_ARCH), or install a build "
        "that includes it; a code object with xnack/sramecc unspecified runs on either mode",
        "%s has no GPU code for %s (code objects: %s); the first kernel launch fails with "
        "hipErrorNoBinaryForGpu",
        f->path, dev, have);
}

static void check_cuda_device(analysis *a, const node *f, const sc_offload_list *list,
                              const char *dev)
{
    bool any_cuda = false;
    for (int i = 0; i < list->count; i++)
        any_cuda |=
            sc_starts_with(list->targets[i], "sm_") || sc_starts_with(list->targets[i], "compute_");
    if (!any_cuda)
        return;
    char have[2048];
    targets_text(list, have, sizeof have);
    sc_cuda_match m = sc_offload_cuda_match(list, dev);
    if (m == SC_CUDA_NO_CODE)
        sc_finding(&a->res, "libs.no-code-for-device", SC_SEV_ERROR,
                   "rebuild with -gencode for this compute capability, or install a build that "
                   "includes it",
                   "%s has no GPU code for %s (cubins and PTX: %s); kernels fail with "
                   "no kernel image / CUDA_ERROR_NO_BINARY_FOR_GPU",
                   f->path, dev, have);
    else if (m == SC_CUDA_PTX_ONLY)
        sc_finding(
            &a->res, "libs.ptx-jit-only", SC_SEV_WARN,
            "add a cubin for this architecture (-gencode arch=compute_XY,code=sm_XY) to avoid "
            "JIT compilation at start-up, which is slow and needs a new enough driver",
            "%s has no cubin for %s, only PTX the driver must JIT-compile (%s)", f->path, dev,
            have);
}

static void report_budget(analysis *a, const node *f, const sc_offload_list *list)
{
    sc_finding(&a->res, "libs.offload-budget", SC_SEV_WARN,
               "a real file has far fewer bundles: check that the file is what it claims to be; "
               "its GPU targets are not known in full, so no device was checked against them",
               "%s: reading its GPU code stopped when the budget of %s ran out (%d bundles, %llu "
               "entry-table rows, %llu bytes decompressed); targets listed so far: %d",
               f->path, list->budget, list->bundles, (unsigned long long)list->rows,
               (unsigned long long)list->inflated, list->count);
}

cJSON *sc_libs_check_offload(analysis *a)
{
    const node *f = a->nodes[0];
    sc_offload_list list;
    memset(&list, 0, sizeof list);
    const char *format;
    read_offload(f->file, &list, &format);
    cJSON *off = cJSON_CreateObject();
    cJSON *targets = cJSON_AddArrayToObject(off, "targets");
    if (format)
        cJSON_AddStringToObject(off, "format", format);
    else
        cJSON_AddNullToObject(off, "format");
    cJSON_AddNumberToObject(off, "bundles", list.bundles);
    for (int i = 0; i < list.count; i++)
        cJSON_AddItemToArray(targets, cJSON_CreateString(list.targets[i]));
    if (list.budget) /* null: read to its end */
        cJSON_AddStringToObject(off, "budget", list.budget);
    else
        cJSON_AddNullToObject(off, "budget");
    if (list.problem[0])
        sc_finding(&a->res, "libs.malformed-offload", SC_SEV_WARN,
                   "the file may be truncated or damaged: reinstall it",
                   "%s: %s; targets listed so far: %d", f->path, list.problem, list.count);
    if (list.budget)
        report_budget(a, f, &list);
    for (int i = 0; i < a->cfg->arch_count && list.count && !list.budget; i++) {
        const char *dev = a->cfg->archs[i];
        if (sc_starts_with(dev, "gfx"))
            check_amd_device(a, f, &list, dev);
        else if (sc_starts_with(dev, "sm_"))
            check_cuda_device(a, f, &list, dev);
    }
    sc_offload_list_free(&list);
    return off;
}
