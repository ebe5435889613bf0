/* The CUDA driver API (libcuda.so.1) and nvrtc as seen through dlopen: symbol tables for the
 * loader, version decoding, the CUresult names, and the parsers for what a CUDA install writes
 * (version.json, version.txt) and for the driver version in libcuda's file name. No CUDA header is
 * needed: the values are those of cuda.h and nvrtc.h (see the reference notes). */
#ifndef SC_CUDA_H
#define SC_CUDA_H

#include <stdbool.h>
#include <stddef.h>

#include "sc_dl.h"

/* CUresult values the probe tells apart. */
enum {
    SC_CU_SUCCESS = 0,
    SC_CU_ERR_OUT_OF_MEMORY = 2,
    SC_CU_ERR_STUB_LIBRARY = 34,
    SC_CU_ERR_INSUFFICIENT_DRIVER = 35,
    SC_CU_ERR_NO_DEVICE = 100,
    SC_CU_ERR_NO_BINARY_FOR_GPU = 209,
    SC_CU_ERR_UNSUPPORTED_PTX_VERSION = 222,
    SC_CU_ERR_SYSTEM_DRIVER_MISMATCH = 803,
    SC_CU_ERR_COMPAT_NOT_SUPPORTED = 804,
};

/* CUdevice_attribute numbers (stable since CUDA 4). */
enum {
    SC_CU_ATTR_WARP_SIZE = 10,
    SC_CU_ATTR_SM_COUNT = 16,
    SC_CU_ATTR_PCI_BUS = 33,
    SC_CU_ATTR_PCI_DEVICE = 34,
    SC_CU_ATTR_PCI_DOMAIN = 50,
    SC_CU_ATTR_CC_MAJOR = 75,
    SC_CU_ATTR_CC_MINOR = 76,
};

typedef unsigned long long sc_cu_ptr; /* CUdeviceptr on 64-bit hosts */

/* The driver API's entry points, filled by sc_dl_bind from sc_cuda_symbols. */
typedef struct {
    int (*init)(unsigned);
    int (*driver_get_version)(int *);
    int (*device_get_count)(int *);
    int (*device_get)(int *, int);
    int (*device_get_name)(char *, int, int);
    int (*device_get_attribute)(int *, int, int);
    int (*device_total_mem)(size_t *, int);
    int (*primary_ctx_retain)(void **, int);
    int (*ctx_set_current)(void *);
    int (*mem_get_info)(size_t *, size_t *);
    int (*mem_alloc)(sc_cu_ptr *, size_t);
    int (*mem_free)(sc_cu_ptr);
    int (*memcpy_htod)(sc_cu_ptr, const void *, size_t);
    int (*memcpy_dtoh)(void *, sc_cu_ptr, size_t);
    int (*ctx_synchronize)(void);
    int (*module_load_data)(void **, const void *);
    int (*module_get_function)(void **, void *, const char *);
    int (*launch_kernel)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                         unsigned, void *, void **, void **);
    int (*module_unload)(void *);
    int (*get_error_name)(int, const char **);
    int (*get_error_string)(int, const char **);
    int (*device_get_pci_bus_id)(char *, int, int);
} sc_cuda_fns;

/* nvrtc's entry points (libnvrtc.so.<major>). */
typedef struct {
    int (*version)(int *, int *);
    int (*create_program)(void **, const char *, const char *, int, const char *const *,
                          const char *const *);
    int (*compile_program)(void *, int, const char *const *);
    int (*get_program_log_size)(void *, size_t *);
    int (*get_program_log)(void *, char *);
    int (*get_ptx_size)(void *, size_t *);
    int (*get_ptx)(void *, char *);
    int (*get_cubin_size)(void *, size_t *); /* CUDA 11.1+; NULL: load PTX */
    int (*get_cubin)(void *, char *);
    int (*destroy_program)(void **);
    const char *(*get_error_string)(int);
} sc_nvrtc_fns;

extern const sc_dl_symbol sc_cuda_symbols[];
extern const size_t sc_cuda_symbol_count;
extern const sc_dl_symbol sc_nvrtc_symbols[];
extern const size_t sc_nvrtc_symbol_count;
/* nvrtc names to try, newest first, NULL-terminated. */
extern const char *const sc_nvrtc_names[];

/* Decodes a CUDA version (1000*major + 10*minor: 12040) into "12.4"; returns 0, or -EINVAL for a
 * value no driver reports (<= 0 or major above 99). */
int sc_cuda_version_decode(int version, char *buf, size_t size);
/* The CUresult name of code from a built-in table ("CUDA_ERROR_NO_DEVICE"), or NULL. */
const char *sc_cuda_error_name(int code);
/* "CUDA_ERROR_NO_DEVICE (100): no CUDA-capable device is detected", from the driver's own
 * cuGetErrorName/String when it has them (bounded, printable), else the built-in table. */
void sc_cuda_describe(const sc_cuda_fns *fns, int code, char *buf, size_t size);

/* The "cuda" component's version in a toolkit's version.json ({"cuda": {"version": "12.4.1"}});
 * returns 0, or -EINVAL when absent or not a version. */
int sc_cuda_parse_version_json(const char *text, char *buf, size_t size);
/* The version of component part ("cuda_nvcc", "cuda_cudart") in a toolkit's version.json; 0 or
 * -EINVAL. */
int sc_cuda_parse_version_json_part(const char *text, const char *part, char *buf, size_t size);
/* The version `nvcc --version` prints ("Cuda compilation tools, release 13.0, V13.0.88" ->
 * "13.0.88"; "release 8.0" alone -> "8.0"); 0 or -EINVAL. */
int sc_cuda_parse_nvcc_version(const char *text, char *buf, size_t size);
/* The version in a toolkit's version.txt ("CUDA Version 11.2.152"); 0 or -EINVAL. */
int sc_cuda_parse_version_txt(const char *text, char *buf, size_t size);
/* The driver version in a libcuda file name ("/usr/lib/x86_64-linux-gnu/libcuda.so.550.127.05" ->
 * "550.127.05"); returns 0, or -EINVAL when the name carries none (libcuda.so.1). */
int sc_cuda_libcuda_version(const char *path, char *buf, size_t size);
/* Normalises a PCI bus id from cuDeviceGetPCIBusId ("0000:18:00.0", upper or lower case, domain
 * of 4 or 8 digits) into "0000:18:00.0"; 0 or -EINVAL. */
int sc_cuda_pci_normalize(const char *text, char *buf, size_t size);
/* The sm_XY name for a compute capability (9, 0 -> "sm_90"); 0 or -EINVAL when out of range. */
int sc_cuda_sm_name(int major, int minor, char *buf, size_t size);

#endif
