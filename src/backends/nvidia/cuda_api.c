/* The CUDA driver API and nvrtc tables for the loader, CUresult names, version decoding and the
 * small parsers for what a CUDA install and libcuda's file name say. Values follow cuda.h and
 * nvrtc.h; strings the libraries return are copied bounded and printable. */
#include "sc_cuda.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sc_accel.h"
#include "sc_util.h"

#define SYM(field, req, ...) SC_ACCEL_SYMBOL(sc_cuda_fns, field, req, __VA_ARGS__)
#define RTC(field, req, ...) SC_ACCEL_SYMBOL(sc_nvrtc_fns, field, req, __VA_ARGS__)

const sc_dl_symbol sc_cuda_symbols[] = {
    SYM(init, true, "cuInit"),
    SYM(driver_get_version, true, "cuDriverGetVersion"),
    SYM(device_get_count, true, "cuDeviceGetCount"),
    SYM(device_get, true, "cuDeviceGet"),
    SYM(device_get_name, true, "cuDeviceGetName"),
    SYM(device_get_attribute, true, "cuDeviceGetAttribute"),
    SYM(device_total_mem, true, "cuDeviceTotalMem_v2", "cuDeviceTotalMem"),
    SYM(primary_ctx_retain, true, "cuDevicePrimaryCtxRetain"),
    SYM(ctx_set_current, true, "cuCtxSetCurrent"),
    SYM(mem_get_info, true, "cuMemGetInfo_v2", "cuMemGetInfo"),
    SYM(mem_alloc, true, "cuMemAlloc_v2", "cuMemAlloc"),
    SYM(mem_free, true, "cuMemFree_v2", "cuMemFree"),
    SYM(memcpy_htod, true, "cuMemcpyHtoD_v2", "cuMemcpyHtoD"),
    SYM(memcpy_dtoh, true, "cuMemcpyDtoH_v2", "cuMemcpyDtoH"),
    SYM(ctx_synchronize, true, "cuCtxSynchronize"),
    SYM(module_load_data, true, "cuModuleLoadData"),
    SYM(module_get_function, true, "cuModuleGetFunction"),
    SYM(launch_kernel, true, "cuLaunchKernel"),
    SYM(module_unload, true, "cuModuleUnload"),
    SYM(get_error_name, false, "cuGetErrorName"),
    SYM(get_error_string, false, "cuGetErrorString"),
    SYM(device_get_pci_bus_id, false, "cuDeviceGetPCIBusId"),
};
const size_t sc_cuda_symbol_count = sizeof sc_cuda_symbols / sizeof sc_cuda_symbols[0];

const sc_dl_symbol sc_nvrtc_symbols[] = {
    RTC(version, true, "nvrtcVersion"),
    RTC(create_program, true, "nvrtcCreateProgram"),
    RTC(compile_program, true, "nvrtcCompileProgram"),
    RTC(get_program_log_size, true, "nvrtcGetProgramLogSize"),
    RTC(get_program_log, true, "nvrtcGetProgramLog"),
    RTC(get_ptx_size, true, "nvrtcGetPTXSize"),
    RTC(get_ptx, true, "nvrtcGetPTX"),
    RTC(get_cubin_size, false, "nvrtcGetCUBINSize"),
    RTC(get_cubin, false, "nvrtcGetCUBIN"),
    RTC(destroy_program, true, "nvrtcDestroyProgram"),
    RTC(get_error_string, false, "nvrtcGetErrorString"),
};
const size_t sc_nvrtc_symbol_count = sizeof sc_nvrtc_symbols / sizeof sc_nvrtc_symbols[0];

const char *const sc_nvrtc_names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2",
                                      "libnvrtc.so", NULL};

int sc_cuda_version_decode(int version, char *buf, size_t size)
{
    if (version <= 0 || version / 1000 > 99)
        return -EINVAL;
    sc_fmt(buf, size, "%d.%d", version / 1000, (version % 1000) / 10);
    return 0;
}

static const sc_accel_code_name error_names[] = {
    {0, "CUDA_SUCCESS"},
    {1, "CUDA_ERROR_INVALID_VALUE"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY"},
    {3, "CUDA_ERROR_NOT_INITIALIZED"},
    {4, "CUDA_ERROR_DEINITIALIZED"},
    {34, "CUDA_ERROR_STUB_LIBRARY"},
    {35, "CUDA_ERROR_INSUFFICIENT_DRIVER"},
    {46, "CUDA_ERROR_DEVICE_UNAVAILABLE"},
    {100, "CUDA_ERROR_NO_DEVICE"},
    {101, "CUDA_ERROR_INVALID_DEVICE"},
    {200, "CUDA_ERROR_INVALID_IMAGE"},
    {201, "CUDA_ERROR_INVALID_CONTEXT"},
    {209, "CUDA_ERROR_NO_BINARY_FOR_GPU"},
    {218, "CUDA_ERROR_INVALID_PTX"},
    {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"},
    {400, "CUDA_ERROR_INVALID_HANDLE"},
    {500, "CUDA_ERROR_NOT_FOUND"},
    {700, "CUDA_ERROR_ILLEGAL_ADDRESS"},
    {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"},
    {719, "CUDA_ERROR_LAUNCH_FAILED"},
    {801, "CUDA_ERROR_NOT_SUPPORTED"},
    {802, "CUDA_ERROR_SYSTEM_NOT_READY"},
    {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"},
    {804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"},
    {999, "CUDA_ERROR_UNKNOWN"},
};

const char *sc_cuda_error_name(int code)
{
    return sc_accel_code_lookup(error_names, sizeof error_names / sizeof error_names[0], code);
}

void sc_cuda_describe(const sc_cuda_fns *fns, int code, char *buf, size_t size)
{
    const char *rn = NULL, *rs = NULL;
    if (fns && fns->get_error_name && fns->get_error_name(code, &rn) != 0)
        rn = NULL;
    if (fns && fns->get_error_string && fns->get_error_string(code, &rs) != 0)
        rs = NULL;
    const char *known = sc_cuda_error_name(code);
    sc_accel_describe(buf, size, code, rn, known ? known : "CUDA_ERROR_?", rs);
}

/* True when s is digits and dots, starting and ending with a digit, shorter than 32. */
static bool looks_like_version(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= 32 || !isdigit((unsigned char)s[0]) || !isdigit((unsigned char)s[n - 1]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)s[i]) && s[i] != '.')
            return false;
    return true;
}

static int copy_version(const char *v, char *buf, size_t size)
{
    if (!v || !looks_like_version(v) || strlen(v) >= size)
        return -EINVAL;
    memcpy(buf, v, strlen(v) + 1);
    return 0;
}

int sc_cuda_parse_version_json(const char *text, char *buf, size_t size)
{
    return sc_cuda_parse_version_json_part(text, "cuda", buf, size);
}

int sc_cuda_parse_version_json_part(const char *text, const char *part, char *buf, size_t size)
{
    cJSON *root = text ? cJSON_Parse(text) : NULL;
    const cJSON *cuda = cJSON_GetObjectItemCaseSensitive(root, part);
    int rc = copy_version(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cuda, "version")),
                          buf, size);
    cJSON_Delete(root);
    return rc;
}

/* copy_version of the n characters at p (a version token of at most 31). */
static int copy_version_token(const char *p, size_t n, char *buf, size_t size)
{
    char v[32];
    if (n == 0 || n >= sizeof v)
        return -EINVAL;
    memcpy(v, p, n);
    v[n] = '\0';
    return copy_version(v, buf, size);
}

int sc_cuda_parse_version_txt(const char *text, char *buf, size_t size)
{
    static const char prefix[] = "CUDA Version ";
    if (!text || strncmp(text, prefix, sizeof prefix - 1) != 0)
        return -EINVAL;
    const char *p = text + sizeof prefix - 1;
    return copy_version_token(p, strcspn(p, " \t\r\n"), buf, size);
}

int sc_cuda_parse_nvcc_version(const char *text, char *buf, size_t size)
{
    const char *rel = text ? strstr(text, "release ") : NULL;
    if (!rel)
        return -EINVAL;
    const char *full = strstr(rel, ", V"); /* "release 13.0, V13.0.88": the full version */
    const char *p = full && !memchr(rel, '\n', (size_t)(full - rel)) ? full + 3 : rel + 8;
    return copy_version_token(p, strspn(p, "0123456789."), buf, size);
}

int sc_cuda_libcuda_version(const char *path, char *buf, size_t size)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    static const char prefix[] = "libcuda.so.";
    if (strncmp(base, prefix, sizeof prefix - 1) != 0)
        return -EINVAL;
    const char *v = base + sizeof prefix - 1;
    if (!strchr(v, '.')) /* "libcuda.so.1": the soname, no driver version */
        return -EINVAL;
    return copy_version(v, buf, size);
}

int sc_cuda_pci_normalize(const char *text, char *buf, size_t size)
{
    unsigned dom, bus, dev, fn;
    char tail;
    if (!text || strnlen(text, 64) >= 64 ||
        sscanf(text, "%8x:%2x:%2x.%1x%c", &dom, &bus, &dev, &fn, &tail) != 4 || dom > 0xffff ||
        dev > 31 || fn > 7)
        return -EINVAL;
    sc_fmt(buf, size, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
    return 0;
}

int sc_cuda_sm_name(int major, int minor, char *buf, size_t size)
{
    if (major < 1 || major > 20 || minor < 0 || minor > 9)
        return -EINVAL;
    sc_fmt(buf, size, "sm_%d%d", major, minor);
    return 0;
}
