/* The HIP runtime as seen through dlopen: the symbol tables for the loader, HIP_VERSION decoding,
 * error names, attribute numbering per runtime version, and reading the device-properties struct
 * from a zeroed buffer at known offsets. No HIP header is needed: every value here is checked
 * against the ROCm 4.x..7.x headers (see the reference notes). */
#ifndef SC_HIP_API_H
#define SC_HIP_API_H

#include <stdbool.h>
#include <stddef.h>

#include "sc_dl.h"

/* hipError_t values the probe tells apart. */
enum {
    SC_HIP_SUCCESS = 0,
    SC_HIP_ERR_INVALID_VALUE = 1,
    SC_HIP_ERR_OUT_OF_MEMORY = 2,
    SC_HIP_ERR_INSUFFICIENT_DRIVER = 35,
    SC_HIP_ERR_NO_DEVICE = 100,
    SC_HIP_ERR_INVALID_DEVICE = 101,
    SC_HIP_ERR_NO_BINARY_FOR_GPU = 209,
    SC_HIP_ERR_RUNTIME_MEMORY = 1052, /* hipErrorRuntimeMemory: out of memory inside the runtime */
};

/* hipMemcpyKind */
enum { SC_HIP_MEMCPY_H2D = 1, SC_HIP_MEMCPY_D2H = 2 };

/* The runtime's entry points, filled by sc_dl_bind from sc_hip_symbols. */
typedef struct {
    int (*runtime_get_version)(int *);
    const char *(*get_error_name)(int);
    const char *(*get_error_string)(int);
    int (*driver_get_version)(int *);
    int (*init)(unsigned);
    int (*get_device_count)(int *);
    int (*device_get_attribute)(int *, int, int);
    int (*device_total_mem)(size_t *, int);
    int (*set_device)(int);
    int (*mem_get_info)(size_t *, size_t *);
    int (*malloc_)(void **, size_t);
    int (*free_)(void *);
    int (*memcpy_)(void *, const void *, size_t, int);
    int (*device_synchronize)(void);
    int (*module_load_data)(void **, const void *);
    int (*module_get_function)(void **, void *, const char *);
    int (*module_launch_kernel)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                unsigned, void *, void **, void **);
    int (*module_unload)(void *);
    int (*device_get_name)(char *, int, int);
    int (*device_get_pci_bus_id)(char *, int, int);
    int (*get_device_properties)(void *, int);       /* plain name: the R0000 layout */
    int (*get_device_properties_r0600)(void *, int); /* ROCm 6+: the R0600 layout */
} sc_hip_fns;

/* hiprtc's entry points (inside libamdhip64 in ROCm 5, libhiprtc in later releases). */
typedef struct {
    int (*create_program)(void **, const char *, const char *, int, const char **, const char **);
    int (*compile_program)(void *, int, const char **);
    int (*get_program_log_size)(void *, size_t *);
    int (*get_program_log)(void *, char *);
    int (*get_code_size)(void *, size_t *);
    int (*get_code)(void *, char *);
    int (*destroy_program)(void **);
    const char *(*get_error_string)(int);
} sc_hiprtc_fns;

extern const sc_dl_symbol sc_hip_symbols[];
extern const size_t sc_hip_symbol_count;
extern const sc_dl_symbol sc_hiprtc_symbols[];
extern const size_t sc_hiprtc_symbol_count;

/* Decodes HIP_VERSION (major*10000000 + minor*100000 + patch) into "5.2.21153"; returns 0, or
 * -EINVAL for a negative or absurd value (major above 99). */
int sc_hip_version_decode(long version, char *buf, size_t size);

/* The hipError_t name of code from a built-in table ("hipErrorNoDevice"), or NULL. */
const char *sc_hip_error_name(int code);
/* "hipErrorNoDevice (100): no ROCm-capable device is detected" from the runtime's own
 * hipGetErrorName/String when it has them, else the built-in table. */
void sc_hip_describe(const sc_hip_fns *fns, int code, char *buf, size_t size);

/* hipDeviceAttribute_t numbers, which changed between ROCm 4.x and 5.0. */
typedef struct {
    int compute_units; /* MultiprocessorCount */
    int warp_size;
    int pci_bus;
    int pci_device;
    int pci_domain; /* -1: this numbering has none */
} sc_hip_attr_ids;
/* The attribute numbering of a runtime of this HIP_VERSION (unknown or <= 0: the 5.0+ numbering).
 */
const sc_hip_attr_ids *sc_hip_attr_ids_for(long hip_version);

/* What the probe reads of hipDeviceProp_t. Strings are always terminated and printable. */
typedef struct {
    char name[256];
    char arch[256]; /* gcnArchName */
    unsigned long long total_mem;
    int warp_size;
    int compute_units;
    int pci_domain, pci_bus, pci_device;
    bool name_unterminated; /* no NUL within the field: the runtime wrote garbage */
    bool arch_unterminated;
} sc_hip_props;

/* The smallest buffer to hand hipGetDeviceProperties: larger than any layout seen (1472 bytes),
 * so a runtime with a bigger struct than we know still writes inside it. */
#define SC_HIP_PROPS_BUF 8192
/* Reads the fields at the R0000 (r0600 false) or R0600 offsets of buf[0..size); returns 0, or
 * -EINVAL when size is too small for the layout. */
int sc_hip_props_read(const unsigned char *buf, size_t size, bool r0600, sc_hip_props *out);

/* A parsed AMD target id: "gfx90a:sramecc+:xnack-" -> processor gfx90a, sramecc '+', xnack '-'. */
typedef struct {
    char processor[32];
    char sramecc; /* '+', '-', or 0 when unspecified */
    char xnack;
} sc_hip_arch;
/* Parses a target id; returns 0, or -EINVAL when it is not gfxN[:feature(+|-)]... */
int sc_hip_arch_parse(const char *text, sc_hip_arch *out);

/* Formats a PCI address "0000:c1:00.0" (lower case) from its parts. */
void sc_hip_pci_format(char *buf, size_t size, int domain, int bus, int device, int function);
/* Normalises a PCI address the runtime returned ("0000:C1:00.0") into lower case; returns 0, or
 * -EINVAL when it does not look like dddd:bb:dd.f. */
int sc_hip_pci_normalize(const char *text, char *buf, size_t size);

#endif
