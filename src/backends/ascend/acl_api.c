/* The ACL entry points runtime.acl binds (required ones fail the bind; optional ones stay NULL)
 * and the error codes it names, with the runtime's own recent error message when it gives one. */
#include "sc_acl.h"

#include "sc_accel.h"

const char *const sc_acl_names[] = {"libascendcl.so", NULL};

const sc_dl_symbol sc_acl_symbols[] = {
    SC_ACCEL_SYMBOL(sc_acl_fns, init, true, "aclInit"),
    SC_ACCEL_SYMBOL(sc_acl_fns, finalize, true, "aclFinalize"),
    SC_ACCEL_SYMBOL(sc_acl_fns, get_version, false, "aclrtGetVersion"),
    SC_ACCEL_SYMBOL(sc_acl_fns, get_cann_version, false, "aclsysGetCANNVersion"),
    SC_ACCEL_SYMBOL(sc_acl_fns, get_device_count, true, "aclrtGetDeviceCount"),
    SC_ACCEL_SYMBOL(sc_acl_fns, set_device, true, "aclrtSetDevice"),
    SC_ACCEL_SYMBOL(sc_acl_fns, reset_device, true, "aclrtResetDevice"),
    SC_ACCEL_SYMBOL(sc_acl_fns, get_soc_name, false, "aclrtGetSocName"),
    SC_ACCEL_SYMBOL(sc_acl_fns, get_mem_info, true, "aclrtGetMemInfo"),
    SC_ACCEL_SYMBOL(sc_acl_fns, mem_malloc, true, "aclrtMalloc"),
    SC_ACCEL_SYMBOL(sc_acl_fns, mem_copy, true, "aclrtMemcpy"),
    SC_ACCEL_SYMBOL(sc_acl_fns, mem_free, true, "aclrtFree"),
    SC_ACCEL_SYMBOL(sc_acl_fns, recent_err_msg, false, "aclGetRecentErrMsg"),
};
const size_t sc_acl_symbol_count = sizeof sc_acl_symbols / sizeof sc_acl_symbols[0];

static const sc_accel_code_name acl_errors[] = {
    {100000, "ACL_ERROR_INVALID_PARAM"},         {100001, "ACL_ERROR_UNINITIALIZE"},
    {100002, "ACL_ERROR_REPEAT_INITIALIZE"},     {107001, "ACL_ERROR_RT_INVALID_DEVICEID"},
    {207004, "ACL_ERROR_RT_NO_DEVICE"},          {507033, "ACL_ERROR_RT_DEV_SETUP_ERROR"},
    {507899, "ACL_ERROR_RT_DRV_INTERNAL_ERROR"}, {507901, "ACL_ERROR_RT_SOCKET_CLOSE"},
};

const char *sc_acl_error_name(int code)
{
    return sc_accel_code_lookup(acl_errors, sizeof acl_errors / sizeof acl_errors[0], code);
}

void sc_acl_describe(const sc_acl_fns *fns, int code, char *buf, size_t size)
{
    const char *text = fns && fns->recent_err_msg ? fns->recent_err_msg() : NULL;
    const char *name = sc_acl_error_name(code);
    sc_accel_describe(buf, size, code, NULL, name ? name : "ACL error", text);
}
