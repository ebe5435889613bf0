/* A backend is data: one descriptor per accelerator stack says how its hardware, kernel driver,
 * device nodes, environment, runtime library and install roots are recognised, and how its devices
 * name their architecture. Whatever used to switch on the vendor reads the table instead
 * (src/backends/backends.c); adding a backend is a descriptor, its probe files, its stub, its
 * fixtures and its rows in the conformance table (docs/adding-a-backend.md). */
#ifndef SC_BACKEND_H
#define SC_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#include "sc_types.h"

/* A PCI vendor whose accelerators belong to a backend. */
typedef struct {
    unsigned id;      /* 0x1002 */
    const char *name; /* "amd": the snapshot's vendor spelling */
} sc_backend_vendor;

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
/* True when s is in the NULL-terminated list (NULL list: false). */
bool sc_backend_list_has(const char *const *list, const char *s);

#endif
