/* The HIP runtime's ABI as data: symbol tables for the dlopen loader, HIP_VERSION decoding, the
 * hipError_t names, attribute numbering per release, and the properties struct read at fixed
 * offsets. Nothing here calls the runtime except sc_hip_describe. */
#include "sc_hip_api.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sc_accel.h"
#include "sc_pci.h"
#include "sc_util.h"

#define SYM(field, req, ...) SC_ACCEL_SYMBOL(sc_hip_fns, field, req, __VA_ARGS__)
#define RTC(field, req, ...) SC_ACCEL_SYMBOL(sc_hiprtc_fns, field, req, __VA_ARGS__)

/* The identity calls come first: when a later required symbol is missing, sc_dl_bind has already
 * filled these, so a too-old runtime still reports its version and error names. */
const sc_dl_symbol sc_hip_symbols[] = {
    SYM(runtime_get_version, true, "hipRuntimeGetVersion"),
    SYM(get_error_name, false, "hipGetErrorName"),
    SYM(get_error_string, false, "hipGetErrorString"),
    SYM(driver_get_version, false, "hipDriverGetVersion"),
    SYM(init, true, "hipInit"),
    SYM(get_device_count, true, "hipGetDeviceCount"),
    SYM(device_get_attribute, true, "hipDeviceGetAttribute"),
    SYM(device_total_mem, true, "hipDeviceTotalMem"),
    SYM(set_device, true, "hipSetDevice"),
    SYM(mem_get_info, true, "hipMemGetInfo"),
    SYM(malloc_, true, "hipMalloc"),
    SYM(free_, true, "hipFree"),
    SYM(memcpy_, true, "hipMemcpy"),
    SYM(device_synchronize, true, "hipDeviceSynchronize"),
    SYM(module_load_data, true, "hipModuleLoadData"),
    SYM(module_get_function, true, "hipModuleGetFunction"),
    SYM(module_launch_kernel, true, "hipModuleLaunchKernel"),
    SYM(module_unload, true, "hipModuleUnload"),
    SYM(device_get_name, false, "hipDeviceGetName"),
    SYM(device_get_pci_bus_id, false, "hipDeviceGetPCIBusId"),
    SYM(get_device_properties, false, "hipGetDeviceProperties"),
    SYM(get_device_properties_r0600, false, "hipGetDevicePropertiesR0600"),
};
const size_t sc_hip_symbol_count = sizeof sc_hip_symbols / sizeof sc_hip_symbols[0];

const sc_dl_symbol sc_hiprtc_symbols[] = {
    RTC(create_program, true, "hiprtcCreateProgram"),
    RTC(compile_program, true, "hiprtcCompileProgram"),
    RTC(get_program_log_size, true, "hiprtcGetProgramLogSize"),
    RTC(get_program_log, true, "hiprtcGetProgramLog"),
    RTC(get_code_size, true, "hiprtcGetCodeSize"),
    RTC(get_code, true, "hiprtcGetCode"),
    RTC(destroy_program, true, "hiprtcDestroyProgram"),
    RTC(get_error_string, false, "hiprtcGetErrorString"),
};
const size_t sc_hiprtc_symbol_count = sizeof sc_hiprtc_symbols / sizeof sc_hiprtc_symbols[0];

int sc_hip_version_decode(long version, char *buf, size_t size)
{
    if (version <= 0 || version / 10000000 > 99)
        return -EINVAL;
    sc_fmt(buf, size, "%ld.%ld.%ld", version / 10000000, version / 100000 % 100, version % 100000);
    return 0;
}

static const sc_accel_code_name error_names[] = {
    {0, "hipSuccess"},
    {1, "hipErrorInvalidValue"},
    {2, "hipErrorOutOfMemory"},
    {3, "hipErrorNotInitialized"},
    {35, "hipErrorInsufficientDriver"},
    {98, "hipErrorInvalidDeviceFunction"},
    {100, "hipErrorNoDevice"},
    {101, "hipErrorInvalidDevice"},
    {200, "hipErrorInvalidImage"},
    {201, "hipErrorInvalidContext"},
    {209, "hipErrorNoBinaryForGpu"},
    {218, "hipErrorInvalidKernelFile"},
    {303, "hipErrorSharedObjectInitFailed"},
    {400, "hipErrorInvalidHandle"},
    {500, "hipErrorNotFound"},
    {600, "hipErrorNotReady"},
    {700, "hipErrorIllegalAddress"},
    {701, "hipErrorLaunchOutOfResources"},
    {719, "hipErrorLaunchFailure"},
    {801, "hipErrorNotSupported"},
    {999, "hipErrorUnknown"},
    {1052, "hipErrorRuntimeMemory"},
    {1053, "hipErrorRuntimeOther"},
};

const char *sc_hip_error_name(int code)
{
    return sc_accel_code_lookup(error_names, sizeof error_names / sizeof error_names[0], code);
}

void sc_hip_describe(const sc_hip_fns *fns, int code, char *buf, size_t size)
{
    const char *known = sc_hip_error_name(code);
    const char *name = fns && fns->get_error_name ? fns->get_error_name(code) : NULL;
    const char *text = fns && fns->get_error_string ? fns->get_error_string(code) : NULL;
    sc_accel_describe(buf, size, code, name, known ? known : "hipError?", text);
}

static const sc_hip_attr_ids attrs_rocm5 = {63, 87, 67, 68, 69};
static const sc_hip_attr_ids attrs_rocm4 = {14, 9, 21, 22, -1};

const sc_hip_attr_ids *sc_hip_attr_ids_for(long hip_version)
{
    return (hip_version > 0 && hip_version < 50000000) ? &attrs_rocm4 : &attrs_rocm5;
}

typedef struct {
    size_t size, name, total_mem, warp, cus, domain, bus, device, arch;
} props_layout;

/* x86-64 offsets of hipDeviceProp_t: R0000 (ROCm 4.x..5.x, and plain hipGetDeviceProperties in
 * 6.x/7.x) and R0600 (hipGetDevicePropertiesR0600). */
static const props_layout layout_r0000 = {792, 0, 256, 276, 336, 364, 368, 372, 396};
static const props_layout layout_r0600 = {1472, 0, 288, 308, 388, 592, 584, 588, 1160};

static int read_i32(const unsigned char *buf, size_t off)
{
    int32_t v;
    memcpy(&v, buf + off, sizeof v);
    return v;
}

int sc_hip_props_read(const unsigned char *buf, size_t size, bool r0600, sc_hip_props *out)
{
    const props_layout *l = r0600 ? &layout_r0600 : &layout_r0000;
    if (size < l->size)
        return -EINVAL;
    memset(out, 0, sizeof *out);
    sc_accel_copy_text(out->name, sizeof out->name, (const char *)buf + l->name, 255, "");
    sc_accel_copy_text(out->arch, sizeof out->arch, (const char *)buf + l->arch, 255, "");
    out->name_unterminated = strnlen((const char *)buf + l->name, 256) == 256;
    out->arch_unterminated = strnlen((const char *)buf + l->arch, 256) == 256;
    uint64_t mem;
    memcpy(&mem, buf + l->total_mem, sizeof mem);
    out->total_mem = mem;
    out->warp_size = read_i32(buf, l->warp);
    out->compute_units = read_i32(buf, l->cus);
    out->pci_domain = read_i32(buf, l->domain);
    out->pci_bus = read_i32(buf, l->bus);
    out->pci_device = read_i32(buf, l->device);
    return 0;
}

/* Parses one ":feature+" part of a target id into *slot. */
static int parse_feature(const char *p, size_t n, sc_hip_arch *out)
{
    if (n < 2 || (p[n - 1] != '+' && p[n - 1] != '-'))
        return -EINVAL;
    char *slot;
    if (n - 1 == 7 && strncmp(p, "sramecc", 7) == 0)
        slot = &out->sramecc;
    else if (n - 1 == 5 && strncmp(p, "xnack", 5) == 0)
        slot = &out->xnack;
    else
        return -EINVAL;
    if (*slot)
        return -EINVAL; /* a feature given twice */
    *slot = p[n - 1];
    return 0;
}

int sc_hip_arch_parse(const char *text, sc_hip_arch *out)
{
    memset(out, 0, sizeof *out);
    if (!text || strncmp(text, "gfx", 3) != 0)
        return -EINVAL;
    size_t n = strcspn(text, ":");
    if (n < 4 || n >= sizeof out->processor)
        return -EINVAL;
    for (size_t i = 3; i < n; i++)
        if (!isxdigit((unsigned char)text[i]) || isupper((unsigned char)text[i]))
            return -EINVAL;
    memcpy(out->processor, text, n);
    for (const char *p = text + n; *p == ':';) {
        size_t len = strcspn(p + 1, ":");
        if (parse_feature(p + 1, len, out) < 0)
            return -EINVAL;
        p += 1 + len;
        if (*p && *p != ':')
            return -EINVAL;
    }
    return 0;
}

void sc_hip_pci_format(char *buf, size_t size, int domain, int bus, int device, int function)
{
    sc_pci_addr a = {(unsigned)domain & 0xffff, (unsigned)bus & 0xff, (unsigned)device & 0x1f,
                     (unsigned)function & 0x7};
    sc_pci_format_address(&a, buf, size);
}

int sc_hip_pci_normalize(const char *text, char *buf, size_t size)
{
    unsigned domain, bus, device, function;
    char tail;
    if (!text || sscanf(text, "%4x:%2x:%2x.%1x%c", &domain, &bus, &device, &function, &tail) != 4)
        return -EINVAL;
    if (bus > 0xff || device > 0x1f || function > 7)
        return -EINVAL;
    sc_hip_pci_format(buf, size, (int)domain, (int)bus, (int)device, (int)function);
    return 0;
}
