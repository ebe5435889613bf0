/* A backend is data: one descriptor per accelerator stack says how its hardware, kernel driver,
 * device nodes, environment, runtime library and install roots are recognised, and how its devices
 * name their architecture. Whatever used to switch on the vendor reads the table instead
 * (src/backends/backends.c); adding a backend is a descriptor, its probe files, its stub, its
 * fixtures and its rows in the conformance table (docs/adding-a-backend.md). */
#ifndef SC_BACKEND_H
#define SC_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#include "sc_sysroot.h"
#include "sc_types.h"

/* A PCI vendor whose accelerators belong to a backend. */
typedef struct {
    unsigned id;       /* 0x1002 */
    const char *name;  /* "amd": the snapshot's vendor spelling */
    const char *label; /* "AMD": for people */
} sc_backend_vendor;

/* Devices a backend's kernel driver reports where PCI may not show them (the KFD topology's GPU
 * nodes, /dev/davinci<N>; platform GPUs later): the device census counts them beside PCI. */
typedef struct {
    const char *what; /* "GPU in the KFD topology": what "no X" means in a message */
    /* How many there are under root (0: none, or the source is absent); a negative errno with err
     * filled when the source exists but cannot be read. */
    int (*count)(const sc_root *root, sc_error *err);
} sc_driver_devices;

/* What marks a directory as an install root of a backend: every path in `all` exists under it
 * (files or directories, relative), and at least one of `any` when `any` is given. */
typedef struct {
    const char *kind;                 /* root kind, as the snapshot spells it: "rocm", "dtk" */
    const char *const *all;           /* NULL-terminated; NULL: nothing required */
    const char *const *any;           /* NULL-terminated; NULL: no alternative required */
    const char *const *version_files; /* relative paths holding its version, first found wins */
    /* An install the stack's own roots use beside them (the user-space driver: hyhal, the Ascend
     * driver): one on the node with any DTK or CANN is normal, so it is never one of the two
     * roots of libs.mixed-roots. */
    bool outside_stack;
} sc_root_marker;

/* A part of a backend's stack as `stackcheck diff` finds it in a snapshot (src/diff/diff_roles.c):
 * paths in the facts of one probe, '.' between keys ('/' where a dotted path would read like a
 * finding id: "acl/realpath"). "[]" after a key reads every item of the list
 * there ("installs[].version"); the paths of one entry that go through the same list read the
 * same item. NULL: not given. */
typedef struct {
    const char *probe;   /* "runtime.hip"; NULL ends a list */
    const char *label;   /* its name when no name fact is found: "HIP", "nvidia" */
    const char *name;    /* path of a fact naming it: "module.name", "installs[].kind" */
    const char *version; /* path of its version */
    const char *where;   /* path of where it lives: its install root or library file */
} sc_stack_part;

typedef struct {
    sc_backend id;
    const char *name;                 /* "amd": the snapshot's probe "backend" value; stable */
    const char *label;                /* "AMD GPU / Hygon DCU": for people */
    const sc_backend_vendor *vendors; /* PCI vendors; an entry with id 0 ends the list */
    /* PCI classes its accelerators use, 0-terminated: a base class alone (0x03: any display
     * controller) or base and subclass (0x0b40: co-processor). */
    const unsigned *pci_classes;
    const char *const *kernel_modules;    /* /sys/module names, the main one first */
    const char *const *kmsg_drivers;      /* words that mark its kernel-log lines */
    const char *const *device_nodes;      /* device node paths; a trailing '*' is a number */
    const char *const *env_prefixes;      /* environment prefixes the snapshot keeps */
    const char *const *env_names;         /* whole environment names the snapshot keeps */
    const char *const *visibility_vars;   /* variables that hide or reorder its devices */
    const char *const *runtime_libraries; /* the runtime's sonames, preferred first */
    const char *const *stack_libraries;   /* soname stems of its stack: "libamdhip64", "librccl" */
    /* Stems of stack_libraries the kernel driver's user-space part ships ("libcuda"): installed
     * with the driver, beside any toolkit, so never one of libs.mixed-roots' two roots. */
    const char *const *driver_libraries;
    const sc_root_marker *root_markers; /* how its install roots look; kind NULL ends */
    /* Path prefixes used only when no marker matches: "/opt/dtk" names roots /opt/dtk and
     * /opt/dtk-24.04; a trailing '/' names a directory of roots ("/usr/local/Ascend/": each
     * directory in it is one). The kind is the prefix's last name when it is one of the marker
     * kinds ("dtk"), else the first marker's. */
    const char *const *root_prefixes;
    const char *const *arch_facts; /* device facts naming its architecture, first found wins */
    const char *gpu_code;          /* how its GPU code names a target: "amdgcn", "sm", NULL */
    const char *torch_build;       /* torch.version field of a build for it: "hip", "cuda" */
    const char *const *finding_prefixes; /* its finding ids start "PREFIX.": "amd", "hip" */
    const char *driver_probe;            /* "driver.amd" */
    const char *runtime_probe;           /* "runtime.hip" */
    const char *collective_library;      /* "librccl", "libnccl", "libhccl" */
    /* Devices its driver reports beside PCI; NULL when PCI tells all. */
    const sc_driver_devices *driver_devices;
    /* How its device architectures are spelled ("gfx" for gfx90a, "sm_" for sm_90): the arch facts
     * whose value starts so name GPU code targets the libraries layer checks; NULL: none. */
    const char *arch_prefix;
    /* The runtime probe's fact objects ({path, realpath, ...}) naming its library, the one it
     * loaded first, then the one the loader would pick. */
    const char *const *runtime_library_facts;
    const char *torch_no_device; /* finding: a torch build for it that sees no device */
    const char *torch_install;   /* what to install: "a ROCm (AMD) or DTK ... build of torch" */
    /* What `stackcheck diff` sets beside another backend's; each list of parts is tried in order
     * and the first part found wins. */
    const char *device_list;                /* key of the device list in the driver and runtime
                                               probes' facts: "devices" */
    const char *const *device_name_facts;   /* device keys naming the product ("model", "name");
                                               the rest of arch_facts names the architecture */
    const char *const *device_memory_facts; /* device paths of its memory in bytes */
    const sc_stack_part *driver_facts;      /* kernel driver and its version */
    const sc_stack_part *firmware_facts;    /* firmware (VBIOS, MEC, NPU firmware) versions */
    const sc_stack_part *runtime_facts;     /* runtime library: its version and root or file */
    const sc_stack_part *toolkit_facts;     /* ROCm/DTK, CUDA toolkit, CANN: version and root */
    const char *torch_plugin;       /* Python module giving torch its devices: "torch_npu" */
    const char *torch_device_count; /* framework.torch key of the devices torch sees */
} sc_backend_desc;

/* Every backend, in probe order; NULL-terminated. */
extern const sc_backend_desc *const sc_backends[];

/* The descriptor of id; NULL for SC_BACKEND_NONE or an unknown id. */
const sc_backend_desc *sc_backend_get(sc_backend id);
/* The descriptor named name ("amd"); NULL when none. */
const sc_backend_desc *sc_backend_by_name(const char *name);
/* The descriptor owning PCI vendor id vendor; NULL when none. *vendor_name (when not NULL) gets
 * the vendor's spelling ("hygon"). */
const sc_backend_desc *sc_backend_by_pci_vendor(unsigned vendor, const char **vendor_name);
/* The descriptor whose finding prefix starts finding_id ("hip.no-device" -> amd); NULL when none.
 */
const sc_backend_desc *sc_backend_by_finding(const char *finding_id);
/* True when class_code (24 bits) is one of desc's accelerator classes. */
bool sc_backend_class_matches(const sc_backend_desc *desc, unsigned class_code);
/* The backend of a PCI function: its vendor's backend when its class is one of that backend's
 * accelerator classes, else NULL. */
const sc_backend_desc *sc_backend_of_pci(unsigned vendor, unsigned class_code);
/* The people's name of PCI vendor id ("NVIDIA"), or NULL when no backend owns it. */
const char *sc_backend_vendor_label(unsigned vendor);
/* Its PCI vendors' labels joined by sep into buf ("AMD or Hygon"); returns buf. */
char *sc_backend_vendor_labels(const sc_backend_desc *desc, const char *sep, char *buf,
                               size_t size);
/* True when s is in the NULL-terminated list (NULL list: false). */
bool sc_backend_list_has(const char *const *list, const char *s);

#endif
