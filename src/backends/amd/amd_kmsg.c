/* What the amdgpu, amdkfd and hydcu drivers' kernel-log lines mean: the drivers' own message
 * strings (amdgpu_device.c, amdgpu_psp.c, amdgpu_mes.c, kfd_device.c; hydcu is an amdgpu fork and
 * prints the same), in the order they are tried; the first row whose words are on a line wins. */
#include "sc_kmsg.h"

#define ROW SC_KMSG_ROW

/* "[drm:psp_..." and "[drm] VRAM is lost" carry no driver name but only amdgpu prints them */
static const char *const amd_drivers[] = {
    "amdgpu", "kfd", "hydcu", "hycu", "[drm:psp", "[drm] VRAM is lost", NULL};

static const sc_kmsg_pattern amd_rows[] = {
    /* printed on healthy machines: never a problem on their own */
    ROW("Trusted Memory Zone", NULL, NULL, INFO, FAULT, NULL),
    ROW("Failed to load psp firmware", NULL, "psp-firmware-load-failed", ERROR, FIRMWARE,
        "the PSP (security processor) firmware could not be loaded, so the GPU cannot start"),
    ROW("PSP firmware loading failed", NULL, "psp-firmware-load-failed", ERROR, FIRMWARE,
        "the PSP refused or could not load the firmware, so the GPU cannot start"),
    ROW("Direct firmware load for", "failed", "firmware-load-failed", ERROR, FIRMWARE,
        "a firmware file the driver needs is missing from /lib/firmware"),
    ROW("failed to load firmware", NULL, "firmware-load-failed", ERROR, FIRMWARE,
        "a firmware file the driver needs could not be loaded"),
    ROW("fail to request/validate", NULL, "firmware-load-failed", ERROR, FIRMWARE,
        "a firmware file is missing or does not validate"),
    ROW("PSP create ring failed", NULL, "psp-ring-failed", ERROR, INIT,
        "the PSP did not answer when its ring was created: firmware that does not fit the "
        "driver, or a faulty GPU or link"),
    ROW("atombios stuck", NULL, "vbios-hang", ERROR, INIT,
        "the GPU's VBIOS tables hung while the driver initialised the GPU"),
    ROW("Fatal error during GPU init", NULL, "init-failed", ERROR, INIT,
        "the driver gave up initialising the GPU"),
    ROW("amdgpu_device_ip_init failed", NULL, "init-failed", ERROR, INIT,
        "an IP block of the GPU failed to initialise"),
    ROW("probe of", "failed with error", "probe-failed", ERROR, INIT,
        "the kernel's probe of the device failed: the driver does not drive it"),
    ROW("is missing in supported", NULL, "kfd-unsupported-device", ERROR, UNSUPPORTED,
        "the KFD does not know this device id: no compute (ROCm/HIP) on it"),
    ROW("kgd2kfd_probe failed", NULL, "kfd-unsupported-device", ERROR, UNSUPPORTED,
        "the KFD refused the device: no compute (ROCm/HIP) on it"),
    ROW("skipped device", NULL, "device-skipped", WARN, UNSUPPORTED,
        "the KFD skipped the device (e.g. the PCIe path rejects atomics)"),
    ROW("GPU reset", "failed", "gpu-reset-failed", ERROR, HARDWARE,
        "a GPU reset failed: the GPU is unusable until the node is rebooted or the GPU "
        "replaced"),
    ROW("GPU Recovery Failed", NULL, "gpu-reset-failed", ERROR, HARDWARE,
        "the GPU could not be recovered after a hang"),
    ROW("VRAM is lost", NULL, "vram-lost", WARN, RESET,
        "a GPU reset lost the contents of VRAM: every process on the GPU lost its work"),
    ROW("MODE1 reset", NULL, "gpu-reset", WARN, RESET, "the whole GPU was reset (MODE1)"),
    ROW("MODE2 reset", NULL, "gpu-reset", WARN, RESET, "the GPU's compute part was reset (MODE2)"),
    ROW("BACO", "reset", "gpu-reset", WARN, RESET, "the GPU was reset through BACO"),
    ROW("GPU reset", NULL, "gpu-reset", WARN, RESET, "the GPU was reset after a hang"),
    ROW("GPU recovery", NULL, "gpu-reset", WARN, RESET, "the GPU was recovered after a hang"),
    ROW("PCI CONFIG reset", NULL, "gpu-reset", WARN, RESET, "the GPU was reset through PCI"),
    ROW("MES failed to respond", NULL, "mes-timeout", WARN, HANG,
        "the micro engine scheduler (MES) firmware stopped answering: a hung queue"),
    ROW("ring ", "timeout", "ring-timeout", WARN, HANG,
        "a job on a GPU ring did not finish in time: a hung kernel, firmware or GPU"),
    ROW("page fault", NULL, "page-fault", WARN, FAULT, "a GPU job touched memory it does not own"),
    ROW("not supported", NULL, "not-supported", WARN, UNSUPPORTED,
        "the driver reports a feature this platform does not support"),
    {NULL, NULL, NULL, SC_SEV_INFO, SC_KMSG_FAULT, NULL},
};

const sc_kmsg_table sc_amd_kmsg_table = {amd_drivers, amd_rows, NULL};
