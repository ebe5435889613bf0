/* Platform GPUs: a Tegra/Jetson GPU is not on PCI. The driver (nvgpu, or the open nvidia module of
 * JetPack 6 and later) shows it as a platform device (/sys/devices/platform/17000000.ga10b,
 * .../bus@0/17000000.gpu, /sys/devices/gpu.0 on older boards) beside /proc/driver/nvidia and the
 * /dev/nvhost-* nodes; the census counts these so a Jetson is an NVIDIA machine. */
#include <dirent.h>
#include <errno.h>
#include <string.h>

#include "sc_nvidia.h"

static const char *const platform_dirs[] = {"/sys/devices/platform", "/sys/devices/platform/bus@0",
                                            "/sys/devices"};
/* Tegra GPU device names: "gpu" in them, or the GPU's chip after the unit address */
static const char *const chip_suffixes[] = {".gm20b", ".gp10b", ".gv11b", ".ga10b", ".gb10b"};

static bool is_gpu_name(const char *name)
{
    size_t n = strlen(name);
    if (strstr(name, "gpu"))
        return true;
    for (size_t i = 0; i < sizeof chip_suffixes / sizeof chip_suffixes[0]; i++) {
        size_t m = strlen(chip_suffixes[i]);
        if (n > m && strcmp(name + n - m, chip_suffixes[i]) == 0)
            return true;
    }
    return false;
}

/* Entries of dir whose names match (prefix: a name prefix, or NULL for is_gpu_name). */
static int count_entries(const sc_root *root, const char *dir, const char *prefix, sc_error *err)
{
    DIR *d = sc_root_opendir(root, dir);
    if (!d)
        return errno == ENOENT || errno == ENOTDIR
                   ? 0
                   : sc_error_set(err, -errno, "cannot list %s: %s", dir, strerror(errno));
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += prefix ? strncmp(e->d_name, prefix, strlen(prefix)) == 0 : is_gpu_name(e->d_name);
    closedir(d);
    return n;
}

int sc_nvidia_platform_gpus(const sc_root *root, sc_error *err)
{
    int nodes = count_entries(root, "/dev", "nvhost-", err);
    if (nodes < 0)
        return nodes;
    bool driver = nodes > 0 || sc_root_exists(root, "/sys/module/nvgpu") ||
                  sc_root_exists(root, "/proc/driver/nvidia");
    if (!driver)
        return 0; /* a "gpu" platform device of another vendor (Mali, Adreno) is not ours */
    int gpus = 0;
    for (size_t i = 0; i < sizeof platform_dirs / sizeof platform_dirs[0]; i++) {
        int n = count_entries(root, platform_dirs[i], NULL, err);
        if (n < 0)
            return n;
        gpus += n;
    }
    return gpus;
}
