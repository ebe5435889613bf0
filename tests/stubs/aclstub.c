/* A stand-in libascendcl.so for the runtime.acl tests, loaded by soname from a directory put first
 * on LD_LIBRARY_PATH. SC_ACLSTUB_MODE picks its behaviour from the shared vocabulary
 * (stub_mode.h): ok (two Ascend910B2 devices, 64 GiB HBM, host memory behind allocations),
 * no-device (207004), error (aclInit answers ACL_ERROR_RT_DRV_INTERNAL_ERROR), crash, hang (both in
 * aclInit), garbage, permission; and ACL's own: setup-fail (507033 on aclrtSetDevice), in-use
 * (most HBM taken). */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stub_mode.h"

#define STUB_HBM (64ULL << 30)
#define NO_DEVICE 207004
#define DEV_SETUP 507033
#define DRV_INTERNAL 507899

static int current = -1;
static const char *last_error = "";

static const char *const modes[] = {"ok",      "no-device",  "error",      "crash",  "hang",
                                    "garbage", "permission", "setup-fail", "in-use", NULL};

static int mode_is(const char *m)
{
    return stub_mode_is("SC_ACLSTUB_MODE", modes, m);
}

int aclInit(const char *config)
{
    (void)config;
    if (mode_is("crash"))
        raise(SIGSEGV);
    if (mode_is("hang"))
        for (;;)
            pause();
    if (mode_is("error")) {
        last_error = "EE9999: Inner Error!";
        return DRV_INTERNAL;
    }
    return 0;
}

int aclFinalize(void)
{
    return 0;
}

int aclrtGetVersion(int32_t *major, int32_t *minor, int32_t *patch)
{
    *major = mode_is("garbage") ? -3 : 1;
    *minor = 0;
    *patch = 0;
    return 0;
}

typedef struct {
    char version[128];
    char major[64], minor[64], release[64], patch[64];
    char reserved[128];
} cann_version;

int aclsysGetCANNVersion(int package, cann_version *v)
{
    (void)package;
    memset(v, 0, sizeof *v);
    snprintf(v->version, sizeof v->version, "8.0.RC3");
    return 0;
}

int aclrtGetDeviceCount(uint32_t *count)
{
    if (mode_is("no-device")) {
        last_error = "EL0003: The argument is invalid.\n        No NPU device found";
        *count = 0;
        return NO_DEVICE;
    }
    *count = 2;
    return 0;
}

int aclrtSetDevice(int32_t dev)
{
    if (mode_is("setup-fail")) {
        last_error = "EE9999: Inner Error! drvDeviceOpen failed";
        return DEV_SETUP;
    }
    /* permission: the device node cannot be opened, and aclrtSetDevice reports "open device 0
     * failed" with ACL_ERROR_RT_DEV_SETUP_ERROR (Ascend/samples#21) */
    if (mode_is("permission")) {
        last_error = "open device 0 failed, runtime result = 507033";
        return DEV_SETUP;
    }
    if (dev < 0 || dev > 1)
        return 107001;
    current = dev;
    return 0;
}

int aclrtResetDevice(int32_t dev)
{
    (void)dev;
    current = -1;
    return 0;
}

const char *aclrtGetSocName(void)
{
    static char garbage[200]; /* 199 bytes with a control byte: not a name */
    if (current < 0)
        return NULL;
    if (!mode_is("garbage"))
        return "Ascend910B2";
    memset(garbage, 'x', sizeof garbage - 1);
    garbage[3] = '\x01';
    return garbage;
}

int aclrtGetMemInfo(int attr, size_t *free_b, size_t *total_b)
{
    (void)attr;
    if (mode_is("garbage")) {
        *free_b = 2 * (size_t)STUB_HBM;
        *total_b = (size_t)STUB_HBM;
        return 0;
    }
    *total_b = (size_t)STUB_HBM;
    *free_b = mode_is("in-use") ? (size_t)(4ULL << 30) : (size_t)(STUB_HBM - (256ULL << 20));
    return 0;
}

int aclrtMalloc(void **p, size_t size, int policy)
{
    (void)policy;
    *p = malloc(size);
    return *p ? 0 : 207001;
}

int aclrtMemcpy(void *dst, size_t dest_max, const void *src, size_t count, int kind)
{
    if (count > dest_max)
        return 100000;
    memcpy(dst, src, count);
    if (mode_is("garbage") && kind == 2)
        ((unsigned char *)dst)[count / 2] ^= 0xff;
    return 0;
}

int aclrtFree(void *p)
{
    free(p);
    return 0;
}

const char *aclGetRecentErrMsg(void)
{
    return last_error;
}
