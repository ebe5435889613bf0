/* The slice of Huawei's ACL (libascendcl.so, CANN's runtime) that runtime.acl uses, bound through
 * sc_dl by table: the entry points with their real signatures (REFERENCE section 6, from the acl
 * headers Ascend/pytorch vendors), the error codes stackcheck names, and their description. */
#ifndef SC_ACL_H
#define SC_ACL_H

#include <stddef.h>
#include <stdint.h>

#include "sc_dl.h"

#define SC_ACL_SUCCESS 0
#define SC_ACL_ERR_REPEAT_INITIALIZE 100002
#define SC_ACL_ERR_RT_NO_DEVICE 207004
#define SC_ACL_ERR_RT_DEV_SETUP 507033

#define SC_ACL_HBM_MEM 1    /* aclrtMemAttr ACL_HBM_MEM */
#define SC_ACL_MEMCPY_H2D 1 /* aclrtMemcpyKind */
#define SC_ACL_MEMCPY_D2H 2
#define SC_ACL_MEM_MALLOC_HUGE_FIRST 0
#define SC_ACL_PKG_CANN 0 /* aclCANNPackageName ACL_PKG_NAME_CANN */

/* aclCANNPackageVersion */
typedef struct {
    char version[128];
    char major[64], minor[64], release[64], patch[64];
    char reserved[128];
} sc_acl_cann_version;

typedef struct {
    int (*init)(const char *config_path);
    int (*finalize)(void);
    int (*get_version)(int32_t *major, int32_t *minor, int32_t *patch); /* optional */
    int (*get_cann_version)(int package, sc_acl_cann_version *v);       /* optional */
    int (*get_device_count)(uint32_t *count);
    int (*set_device)(int32_t dev);
    int (*reset_device)(int32_t dev);
    const char *(*get_soc_name)(void); /* optional */
    int (*get_mem_info)(int attr, size_t *free_b, size_t *total_b);
    int (*mem_malloc)(void **p, size_t size, int policy);
    int (*mem_copy)(void *dst, size_t dest_max, const void *src, size_t count, int kind);
    int (*mem_free)(void *p);
    const char *(*recent_err_msg)(void); /* optional */
} sc_acl_fns;

extern const char *const sc_acl_names[]; /* {"libascendcl.so", NULL} */
extern const sc_dl_symbol sc_acl_symbols[];
extern const size_t sc_acl_symbol_count;

/* "ACL_ERROR_RT_NO_DEVICE" for a known code, else NULL. */
const char *sc_acl_error_name(int code);
/* "NAME (code): recent error message" (the message from aclGetRecentErrMsg when fns has it, bounded
 * and printable); fns may be NULL. */
void sc_acl_describe(const sc_acl_fns *fns, int code, char *buf, size_t size);

#endif
