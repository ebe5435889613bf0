/* The loader of the target system, as far as the search for a library depends on it: where the
 * distribution's glibc looks by default (Debian/Ubuntu multiarch, RHEL-family lib64, plain lib),
 * what $LIB and $PLATFORM expand to, and which hardware-capability subdirectories it searches in
 * each directory (glibc-hwcaps from glibc 2.33, the legacy tls/platform/hwcap ones before 2.37).
 * Derived from the root inspected (where its libc.so.6 lies, which glibc that is) and the class
 * and machine of the objects loaded, never from the machine stackcheck was built on. */
#ifndef SC_LDTARGET_H
#define SC_LDTARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sc_sysroot.h"

#define SC_LD_MAX_SUBDIRS 12 /* 3 glibc-hwcaps levels and 7 legacy combinations, with room */

typedef struct {
    uint8_t elf_class;               /* ELFCLASS64 ... */
    uint16_t machine;                /* EM_X86_64, EM_AARCH64 ... */
    const char *layout;              /* "multiarch", "lib64" or "lib" */
    const char *const *default_dirs; /* the loader's built-in directories, NULL-terminated */
    const char *lib;                 /* what $LIB expands to: "lib/x86_64-linux-gnu", "lib64" */
    const char *platform;            /* what $PLATFORM expands to: "x86_64", "aarch64" */
    int glibc_minor;                 /* the root's glibc is 2.<glibc_minor>; -1 when unknown */
    bool cpu_known; /* the target runs on a CPU like this one (same machine): its levels count */
    /* The subdirectories searched in each directory before the directory itself, best first;
     * the first hwcaps_count are glibc-hwcaps ones ("glibc-hwcaps/x86-64-v3"), then the legacy
     * ones ("tls/x86_64/x86_64" ... "x86_64"). */
    char subdirs[SC_LD_MAX_SUBDIRS][40];
    int subdir_count, hwcaps_count;
} sc_ld_target;

/* The target for objects of this class and machine under root. A class of 0 means the root's own
 * (the class and machine of its /bin/sh, else this build's). */
void sc_ld_target_detect(const sc_root *root, uint8_t elf_class, uint16_t machine, sc_ld_target *t);
/* The target of this build's machine with Debian's multiarch layout and no subdirectories: the
 * model used where nothing is known about the target. */
const sc_ld_target *sc_ld_target_default(void);
/* Fills t's subdirectories from its machine, glibc version, platform and (when cpu_known) this
 * CPU: exposed so tests can pin a glibc version. */
void sc_ld_target_subdirs(sc_ld_target *t);
/* "multiarch, $LIB=lib/x86_64-linux-gnu, $PLATFORM=x86_64, glibc 2.36, glibc-hwcaps x86-64-v3
 * x86-64-v2, legacy tls x86_64": one line for the evidence. */
void sc_ld_target_describe(const sc_ld_target *t, char *buf, size_t size);

/* What this CPU supports, for the subdirectories of a target on the same machine. */
typedef struct {
    int x86_level; /* 1 to 4: the highest x86-64-vN level it meets; 0 on other machines */
    bool haswell;  /* an Intel CPU with AVX2 and its companions: glibc 2.26-2.36 say "haswell" */
    bool atomics;  /* aarch64 with LSE atomics (HWCAP_ATOMICS) */
} sc_ld_cpu;

/* This CPU, asked once. */
const sc_ld_cpu *sc_ld_cpu_this(void);

#endif
