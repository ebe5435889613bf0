/* ELF reading for the libraries layer: the dynamic section, symbol versions, dynamic symbols and
 * the location of the GPU code sections, read with libelf from a memory image (a buffer or a
 * private mapping), touching only the sections asked for, so a 1.3 GB library costs milliseconds.
 */
#ifndef SC_ELF_H
#define SC_ELF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sc_sysroot.h"
#include "sc_types.h"

/* What to read: the dynamic section is always read. */
/* Without SC_ELF_SYMBOLS and SC_ELF_OFFLOAD the parser works from the program headers and reads
 * only the dynamic segment, its strings and the version tables; otherwise from the sections. */
enum {
    SC_ELF_VERSIONS = 1 << 0, /* verneed and verdef */
    SC_ELF_SYMBOLS = 1 << 1,  /* defined and undefined dynamic symbols */
    SC_ELF_OFFLOAD = 1 << 2,  /* where .hip_fatbin and .nv_fatbin lie */
    SC_ELF_MODINFO = 1 << 3,  /* where a kernel module's .modinfo lies */
};
/* The parts that need the section headers (the others are read lazily). */
#define SC_ELF_SECTION_PARTS (SC_ELF_SYMBOLS | SC_ELF_OFFLOAD | SC_ELF_MODINFO)

/* One DT_VERNEED entry: the versions required from the object named file. */
typedef struct {
    const char *file;   /* vn_file, the provider's soname */
    const char **names; /* vna_name of each requirement */
    uint16_t *other;    /* vna_other: the versym index of each requirement */
    bool *weak;         /* VER_FLG_WEAK: a missing weak version is not an error */
    int count;
} sc_elf_verneed;

/* An undefined, non-weak dynamic symbol and the verneed entry its version comes from. */
typedef struct {
    const char *name;
    int verneed; /* index into verneed[], -1 when unversioned */
} sc_elf_undef;

typedef struct {
    uint64_t offset; /* file offset */
    uint64_t size;
    bool present;
} sc_elf_span;

typedef struct {
    void *elf;         /* the libelf handle (Elf *); strings below point into its data */
    char *strings;     /* lazy mode: the strings, copied out (elf is then NULL) */
    uint8_t elf_class; /* ELFCLASS32 / ELFCLASS64 */
    uint8_t data;      /* ELFDATA2LSB / ELFDATA2MSB */
    uint16_t machine;  /* EM_X86_64 ... */
    uint16_t type;     /* ET_DYN, ET_EXEC ... */
    const char *soname, *rpath, *runpath; /* NULL when absent */
    const char **needed;
    int needed_count;
    uint64_t flags_1; /* DT_FLAGS_1 (DF_1_NODEFLIB is 0x800) */
    sc_elf_verneed *verneed;
    int verneed_count;
    const char **verdef; /* version names defined (not the base entry) */
    int verdef_count;
    const char **defined; /* defined dynamic symbol names */
    size_t defined_count;
    sc_elf_undef *undefined;
    size_t undefined_count;
    sc_elf_span hip_fatbin, nv_fatbin;
    sc_elf_span modinfo; /* SC_ELF_MODINFO: a kernel module's key=value strings */
} sc_elf_info;

/* A file mapped privately (copy-on-write, so libelf may adjust it) and parsed. */
typedef struct {
    void *map;
    size_t size;
    sc_elf_info info;
} sc_elf_file;

/* Parses image[0..size) (which must stay valid and writable until sc_elf_free) for the parts in
 * `what`. Returns 0, or -ENOEXEC (not ELF, truncated, malformed) / -ENOMEM with err filled. */
int sc_elf_parse(void *image, size_t size, unsigned what, sc_elf_info *out, sc_error *err);
/* Like sc_elf_parse (size: the file's size) for the dynamic section and versions only (none of
 * SC_ELF_SECTION_PARTS), reading just the parts needed through fd with pread: the cheap
 * way to walk a dependency tree. fd may be closed afterwards. */
int sc_elf_parse_fd(int fd, uint64_t size, unsigned what, sc_elf_info *out, sc_error *err);
/* Frees what sc_elf_parse allocated; the image stays the caller's. */
void sc_elf_free(sc_elf_info *info);
/* Maps path inside root and parses it. Returns 0 or a negative errno with err filled. */
int sc_elf_open(const sc_root *root, const char *path, unsigned what, sc_elf_file *file,
                sc_error *err);
/* Like sc_elf_open, for a file already open (fd stays the caller's). */
int sc_elf_open_fd(int fd, const char *path, unsigned what, sc_elf_file *file, sc_error *err);
/* Unmaps and frees a file opened by sc_elf_open. */
void sc_elf_close(sc_elf_file *file);
/* A set of symbol names (pointers kept, not copied), for the undefined-symbol check. */
typedef struct {
    const char **slots;
    uint64_t *hashes; /* the hash of each slot's name, so growing never rehashes a string */
    void **values;    /* what sc_symset_put attached to each name */
    size_t cap;       /* a power of two */
    size_t count;
} sc_symset;

/* Adds name; returns 0 or -ENOMEM. */
int sc_symset_add(sc_symset *set, const char *name);
/* Adds name with a value (the first value put for a name stays); returns 0 or -ENOMEM. */
int sc_symset_put(sc_symset *set, const char *name, void *value);
/* The value put for name, or NULL. */
void *sc_symset_get(const sc_symset *set, const char *name);
/* True when name is in the set. */
bool sc_symset_has(const sc_symset *set, const char *name);
/* The hash the set uses for name: callers that look one name up in several sets, or in one set
 * many times, compute it once and use the _hashed forms, which behave like the plain ones. */
uint64_t sc_symset_hash(const char *name);
int sc_symset_put_hashed(sc_symset *set, const char *name, uint64_t hash, void *value);
bool sc_symset_has_hashed(const sc_symset *set, const char *name, uint64_t hash);
void *sc_symset_get_hashed(const sc_symset *set, const char *name, uint64_t hash);
/* Frees the table (not the names). */
void sc_symset_free(sc_symset *set);

/* Reads the ELF identification and header of fd: class, machine. Returns 0, or -ENOEXEC when
 * the file is not ELF, or -errno. Used by the loader model to skip incompatible candidates. */
int sc_elf_ident(int fd, uint8_t *elf_class, uint16_t *machine);

#endif
