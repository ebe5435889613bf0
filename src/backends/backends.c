/* The backend table: AMD GPUs and Hygon DCUs (HIP, ROCm, DTK), NVIDIA (CUDA), Huawei Ascend (CANN,
 * ACL). Every vendor fact the rest of the code needs is here, once; the public sources of the
 * values are named in docs/adding-a-backend.md. */
#include "sc_backend.h"

#include <stdio.h>
#include <string.h>

#include "sc_census.h"
#include "sc_kfd.h"
#include "sc_nvidia.h"

#define LIST(...) ((const char *const[]){__VA_ARGS__, NULL})
#define PARTS(...) ((const sc_stack_part[]){__VA_ARGS__, {NULL, NULL, NULL, NULL, NULL}})

/* The KFD lists the GPUs amdgpu/hydcu bring up for compute, also where PCI is not visible. */
static const sc_driver_devices kfd_gpus = {"GPU in the KFD topology", sc_kfd_gpu_count};

/* ROCm and DTK roots both carry .info/version; a DTK also ships Hygon's runtime or its own env
 * script names it, which tells the two apart (see sc_roots). */
static const sc_root_marker amd_roots[] = {
    {"dtk", LIST(".info/version"),
     LIST("hip/lib/libgalaxyhip.so.5", "lib/libgalaxyhip.so.5", ".hyhal"), LIST(".info/version"),
     false},
    {"rocm", LIST(".info/version"), LIST("bin/hipcc", "lib/libamdhip64.so", "share/hip/version"),
     LIST(".info/version", "share/hip/version"), false},
    {"rocm", LIST("bin/hipcc", "share/hip/version"), NULL, LIST("share/hip/version"), false},
    {"hyhal", LIST("bin/hy-smi"), NULL, NULL, true},
    {NULL, NULL, NULL, NULL, false},
};

static const sc_backend_desc amd = {
    .id = SC_BACKEND_AMD,
    .name = "amd",
    .label = "AMD GPU / Hygon DCU",
    .vendors = (const sc_backend_vendor[]){{0x1002, "amd", "AMD"},
                                           {0x1d94, "hygon", "Hygon"},
                                           {0, NULL, NULL}},
    .pci_classes = (const unsigned[]){0x03, 0x12, 0x0b40, 0},
    .kernel_modules = LIST("amdgpu", "hydcu", "hycu"),
    .kmsg_drivers = LIST("amdgpu", "kfd", "hydcu", "hycu"),
    .device_nodes = LIST("/dev/kfd", "/dev/dri/renderD*"),
    .env_prefixes = LIST("HIP_", "HSA_", "ROCR_", "ROCM_", "MIOPEN_", "RCCL_", "AMD_", "DTK_",
                         "HYDCU_", "GPU_"),
    .env_names = LIST("ROCM_PATH", "HIP_PATH"),
    .visibility_vars = LIST("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES",
                            "GPU_DEVICE_ORDINAL"),
    .runtime_libraries =
        LIST("libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5",
             "libamdhip64.so.4", "libgalaxyhip.so.5", "libgalaxyhip.so"),
    .stack_libraries =
        LIST("libamdhip64", "libgalaxyhip", "libhiprtc", "libhsa-runtime64", "libhipblas",
             "libhipblaslt", "librocblas", "libMIOpen", "librccl", "libhipsparse", "librocsparse",
             "librocrand", "libhiprand", "libhipfft", "librocfft", "librocsolver", "libhipsolver",
             "libroctracer64", "librocm_smi64", "libamd_comgr", "libhydmi", "librocprofiler64"),
    .driver_libraries = LIST("libhydmi"),
    .root_markers = amd_roots,
    .root_prefixes = LIST("/opt/dtk", "/opt/rocm", "/opt/hyhal"),
    .arch_facts = LIST("gfx_target", "arch", "name"),
    .gpu_code = "amdgcn",
    .torch_build = "hip",
    .finding_prefixes = LIST("amd", "hip"),
    .driver_probe = "driver.amd",
    .runtime_probe = "runtime.hip",
    .collective_library = "librccl",
    .driver_devices = &kfd_gpus,
    .arch_prefix = "gfx",
    .runtime_library_facts = LIST("runtime", "runtime_library"),
    .torch_no_device = "torch.hip-build-no-device",
    .torch_install = "install a ROCm (AMD) or DTK (Hygon DCU) build of torch, e.g. from "
                     "https://download.pytorch.org/whl/rocm6.2, or your vendor's DTK wheel",
    .device_list = "devices",
    .device_name_facts = LIST("name"),
    .device_memory_facts = LIST("vram_bytes", "total_memory_bytes"),
    .driver_facts = PARTS({"driver.amd", "amdgpu", "module.name", "module.version", NULL}),
    .firmware_facts = PARTS({"driver.amd", "fw", NULL, "devices[].fw_version", NULL}),
    .runtime_facts = PARTS({"runtime.hip", "HIP", NULL, "runtime.version", "runtime.root"},
                           {"runtime.hip", "HIP", NULL, NULL, "runtime_library.root"}),
    /* the install the loader picks, else every install found */
    .toolkit_facts =
        PARTS({"runtime.hip", "ROCm", "runtime_library.root_kind",
               "runtime_library.install_version", "runtime_library.root"},
              {"runtime.hip", "ROCm", "installs[].kind", "installs[].version", "installs[].root"}),
    .torch_device_count = "device_count",
    .compilers = LIST("hipcc"),
    .compiler_dirs = LIST("bin"),
    .compiler_homes = LIST("ROCM_HOME", "ROCM_PATH", "HIP_PATH"),
    .extension_homes = LIST("ROCM_HOME", "ROCM_PATH"),
    .env_scripts = LIST("env.sh"),
};

/* A Tegra/Jetson GPU is a platform device, not on PCI. */
static const sc_driver_devices tegra_gpus = {"NVIDIA platform GPU (Tegra: /sys/devices/platform)",
                                             sc_nvidia_platform_gpus};

static const sc_root_marker nvidia_roots[] = {
    {"cuda", LIST("bin/nvcc"), LIST("version.json", "version.txt"),
     LIST("version.json", "version.txt"), false},
    {"cuda", LIST("version.json"), LIST("lib64/libcudart.so", "targets"), LIST("version.json"),
     false},
    {"cuda", LIST("version.txt"), LIST("lib64/libcudart.so", "targets"), LIST("version.txt"),
     false},
    /* a toolkit assembled from NVIDIA's wheels or conda packages has no version file */
    {"cuda", LIST("bin/nvcc"), LIST("targets", "lib64/libcudart.so", "lib/libcudart.so"),
     LIST("version.json", "version.txt"), false},
    {NULL, NULL, NULL, NULL, false},
};

static const sc_backend_desc nvidia = {
    .id = SC_BACKEND_NVIDIA,
    .name = "nvidia",
    .label = "NVIDIA GPU",
    .vendors = (const sc_backend_vendor[]){{0x10de, "nvidia", "NVIDIA"}, {0, NULL, NULL}},
    .pci_classes = (const unsigned[]){0x03, 0x12, 0},
    .kernel_modules = LIST("nvidia", "nvidia_uvm", "nvidia_modeset", "nvidia_drm"),
    .kmsg_drivers = LIST("NVRM", "nvidia", "nvidia-modeset", "nvidia-uvm", "nvidia-nvlink"),
    .device_nodes = LIST("/dev/nvidiactl", "/dev/nvidia*", "/dev/nvidia-uvm"),
    .env_prefixes = LIST("CUDA_", "NVIDIA_", "NCCL_", "CUDNN_", "NV_"),
    .env_names = LIST("CUDA_HOME", "CUDA_PATH"),
    /* NVIDIA_VISIBLE_DEVICES is the container runtime's choice at start, not a runtime filter (a
     * CUDA image sets it to "all"); it is kept by the NVIDIA_ prefix */
    .visibility_vars = LIST("CUDA_VISIBLE_DEVICES"),
    .runtime_libraries = LIST("libcuda.so.1"),
    .stack_libraries =
        LIST("libcuda", "libcudart", "libcublas", "libcublasLt", "libcudnn", "libnccl", "libnvrtc",
             "libcufft", "libcurand", "libcusparse", "libcusolver", "libnvidia-ml", "libnvJitLink",
             "libnvToolsExt", "libcupti"),
    .driver_libraries = LIST("libcuda", "libnvidia-ml"),
    .root_markers = nvidia_roots,
    .root_prefixes = LIST("/usr/local/cuda", "/opt/nvidia"),
    .arch_facts = LIST("arch", "model", "name"),
    .gpu_code = "sm",
    .torch_build = "cuda",
    .finding_prefixes = LIST("nvidia", "cuda"),
    .driver_probe = "driver.nvidia",
    .runtime_probe = "runtime.cuda",
    .collective_library = "libnccl",
    .driver_devices = &tegra_gpus,
    .arch_prefix = "sm_",
    .runtime_library_facts = LIST("driver_api", "driver_library"),
    .torch_no_device = "torch.cuda-build-no-device",
    .torch_install = "install a CUDA build of torch matching the driver, e.g. from "
                     "https://download.pytorch.org/whl/cu124",
    .device_list = "devices",
    .device_name_facts = LIST("model", "name"),
    .device_memory_facts = LIST("total_memory_bytes"),
    .driver_facts = PARTS({"driver.nvidia", "nvidia", "module.name", "driver_version", NULL}),
    .firmware_facts = PARTS({"driver.nvidia", "vbios", NULL, "devices[].vbios", NULL}),
    /* the driver API's CUDA version (live), else the libcuda the loader picks */
    .runtime_facts =
        PARTS({"runtime.cuda", "CUDA", NULL, "driver_api.cuda_version", "driver_api.realpath"},
              {"runtime.cuda", "CUDA", NULL, NULL, "driver_library.realpath"}),
    .toolkit_facts =
        PARTS({"runtime.cuda", "CUDA toolkit", NULL, "toolkit_version", "cuda_link"},
              {"runtime.cuda", "CUDA toolkit", NULL, "toolkits[].version", "toolkits[].root"}),
    .torch_device_count = "device_count",
    .compilers = LIST("nvcc"),
    .compiler_dirs = LIST("bin"),
    .compiler_homes = LIST("CUDA_HOME", "CUDA_PATH"),
    .extension_homes = LIST("CUDA_HOME", "CUDA_PATH"),
    .compiled_runtime_libraries =
        LIST("libcudart.so", "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0"),
};

static const sc_root_marker ascend_roots[] = {
    {"cann", LIST("ascend_toolkit_install.info"), NULL, LIST("ascend_toolkit_install.info"), false},
    {"cann", LIST("version.cfg"), LIST("runtime", "compiler", "lib64"), LIST("version.cfg"), false},
    {"cann", LIST("runtime/version.info"), NULL, LIST("runtime/version.info"), false},
    /* the driver's directory (/usr/local/Ascend/driver) kept the kind "cann" of the 0.1 path
     * rules; it is the driver, not a second toolkit */
    {"cann", LIST("version.info", "lib64"), NULL, LIST("version.info"), true},
    {NULL, NULL, NULL, NULL, false},
};

static int davinci_nodes(const sc_root *root, sc_error *err);
/* The Ascend driver creates /dev/davinci<N> per NPU it brought up. */
static const sc_driver_devices davinci = {"/dev/davinci<N> node", davinci_nodes};

static const sc_backend_desc ascend = {
    .id = SC_BACKEND_ASCEND,
    .name = "ascend",
    .label = "Huawei Ascend NPU",
    .vendors = (const sc_backend_vendor[]){{0x19e5, "huawei", "Huawei"}, {0, NULL, NULL}},
    .pci_classes = (const unsigned[]){0x12, 0},
    .kernel_modules = LIST("drv_davinci_intf_host", "drv_devdrv_host", "drv_devmm_host",
                           "drv_hdc_host", "drv_pcie_host", "drv_davinci_intf", "drv_devdrv",
                           "drv_devmm", "drv_hdc", "ascend_queue"),
    .kmsg_drivers = LIST("davinci", "ascend", "devdrv", "devmm", "hdcdrv", "hisi_hdc"),
    .device_nodes =
        LIST("/dev/davinci*", "/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc"),
    .env_prefixes = LIST("ASCEND_", "CANN_", "ACL_", "HCCL_", "NPU_"),
    .env_names = NULL,
    .visibility_vars = LIST("ASCEND_RT_VISIBLE_DEVICES", "ASCEND_VISIBLE_DEVICES"),
    .runtime_libraries = LIST("libascendcl.so"),
    .stack_libraries =
        LIST("libascendcl", "libhccl", "libge_runner", "libruntime", "libacl_op_compiler",
             "libopapi", "libgraph", "libregister", "libascend_hal", "libtorch_npu"),
    .driver_libraries = LIST("libascend_hal"),
    .root_markers = ascend_roots,
    .root_prefixes = LIST("/usr/local/Ascend/"),
    .arch_facts = LIST("soc_name", "model"),
    .gpu_code = NULL,
    .torch_build = NULL,
    .finding_prefixes = LIST("ascend", "acl"),
    .driver_probe = "driver.ascend",
    .runtime_probe = "runtime.acl",
    .collective_library = "libhccl",
    .driver_devices = &davinci,
    .arch_prefix = NULL,
    .runtime_library_facts = LIST("acl", "library"),
    .torch_no_device = NULL,
    .torch_install = NULL,
    .device_list = "devices",
    .device_name_facts = LIST("model"),
    .device_memory_facts = LIST("memory.total_bytes"),
    .driver_facts = PARTS({"driver.ascend", "npu-driver", NULL, "driver.version", NULL}),
    .firmware_facts = PARTS({"driver.ascend", "firmware", NULL, "firmware.version", NULL}),
    .runtime_facts = PARTS({"runtime.acl", "ACL", NULL, "acl/interface_version", "acl/realpath"},
                           {"runtime.acl", "ACL", NULL, NULL, "library.realpath"}),
    /* the CANN version the runtime reports (live), else the toolkit its latest link names */
    .toolkit_facts = PARTS({"runtime.acl", "CANN", NULL, "acl/cann_version", "toolkit.path"},
                           {"runtime.acl", "CANN", NULL, "toolkit.version", "toolkit.path"},
                           {"runtime.acl", "CANN", NULL, "toolkits[].version", "toolkits[].path"}),
    .torch_plugin = "torch_npu",
    .torch_device_count = "npu_device_count",
    /* ccec (TBE's compiler) and bisheng (Ascend C's) in compiler/ccec_compiler/bin, atc (the
     * model converter) in bin, compiler/bin or the older atc/bin */
    .compilers = LIST("ccec", "bisheng", "atc"),
    .compiler_dirs = LIST("bin", "compiler/ccec_compiler/bin", "compiler/bin", "atc/bin"),
    .compiler_homes = LIST("ASCEND_TOOLKIT_HOME", "ASCEND_HOME_PATH"),
    /* CANN 8.5's cann[-X.Y.Z]/set_env.sh; a toolkit version's own bin/setenv.bash; before 8.5,
     * ascend-toolkit/set_env.sh, which sets up whatever ascend-toolkit/latest names */
    .env_scripts = LIST("set_env.sh", "bin/setenv.bash", "../set_env.sh"),
};

static int davinci_nodes(const sc_root *root, sc_error *err)
{
    return sc_census_numbered_nodes(root, ascend.device_nodes, err);
}

const sc_backend_desc *const sc_backends[] = {&amd, &nvidia, &ascend, NULL};

const sc_backend_desc *sc_backend_get(sc_backend id)
{
    for (const sc_backend_desc *const *b = sc_backends; *b; b++)
        if ((*b)->id == id)
            return *b;
    return NULL;
}

const sc_backend_desc *sc_backend_by_name(const char *name)
{
    for (const sc_backend_desc *const *b = sc_backends; name && *b; b++)
        if (strcmp((*b)->name, name) == 0)
            return *b;
    return NULL;
}

const sc_backend_desc *sc_backend_by_pci_vendor(unsigned vendor, const char **vendor_name)
{
    for (const sc_backend_desc *const *b = sc_backends; *b; b++)
        for (const sc_backend_vendor *v = (*b)->vendors; v->id; v++)
            if (v->id == vendor) {
                if (vendor_name)
                    *vendor_name = v->name;
                return *b;
            }
    return NULL;
}

const sc_backend_desc *sc_backend_by_finding(const char *finding_id)
{
    const char *dot = finding_id ? strchr(finding_id, '.') : NULL;
    for (const sc_backend_desc *const *b = sc_backends; dot && *b; b++)
        for (const char *const *p = (*b)->finding_prefixes; p && *p; p++)
            if (strlen(*p) == (size_t)(dot - finding_id) &&
                strncmp(*p, finding_id, (size_t)(dot - finding_id)) == 0)
                return *b;
    return NULL;
}

bool sc_backend_class_matches(const sc_backend_desc *desc, unsigned class_code)
{
    unsigned base = (class_code >> 16) & 0xff, base_sub = (class_code >> 8) & 0xffff;
    for (const unsigned *c = desc->pci_classes; c && *c; c++)
        if (*c <= 0xff ? *c == base : *c == base_sub)
            return true;
    return false;
}

const sc_backend_desc *sc_backend_of_pci(unsigned vendor, unsigned class_code)
{
    const sc_backend_desc *desc = sc_backend_by_pci_vendor(vendor, NULL);
    return desc && sc_backend_class_matches(desc, class_code) ? desc : NULL;
}

const char *sc_backend_vendor_label(unsigned vendor)
{
    for (const sc_backend_desc *const *b = sc_backends; *b; b++)
        for (const sc_backend_vendor *v = (*b)->vendors; v->id; v++)
            if (v->id == vendor)
                return v->label;
    return NULL;
}

char *sc_backend_vendor_labels(const sc_backend_desc *desc, const char *sep, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (const sc_backend_vendor *v = desc->vendors; v->id && len < size; v++)
        len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? sep : "",
                                v->label ? v->label : v->name);
    return buf;
}

bool sc_backend_list_has(const char *const *list, const char *s)
{
    for (; list && s && *list; list++)
        if (strcmp(*list, s) == 0)
            return true;
    return false;
}

bool sc_backend_is_runtime_name(const sc_backend_desc *desc, const char *name)
{
    for (const char *const *r = desc->runtime_libraries; name && r && *r; r++) {
        const char *so = strstr(*r, ".so");
        size_t stem = so ? (size_t)(so - *r) + 3 : strlen(*r);
        if (strncmp(name, *r, stem) == 0)
            return true;
    }
    return false;
}
