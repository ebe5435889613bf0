/* A stand-in for an old HIP runtime (HIP 3.5): it answers the version and init calls but lacks
 * hipDeviceGetAttribute and the module API, so runtime.hip must report hip.runtime-too-old. */
int hipRuntimeGetVersion(int *v)
{
    *v = 30520214;
    return 0;
}

int hipInit(unsigned flags)
{
    (void)flags;
    return 0;
}

int hipGetDeviceCount(int *n)
{
    *n = 1;
    return 0;
}

const char *hipGetErrorName(int e)
{
    return e ? "hipErrorUnknown" : "hipSuccess";
}
