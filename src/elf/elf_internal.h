/* What the ELF readers share: the string table of the dynamic section in either mode, and the
 * readers of the dynamic section and version tables, which the section mode (elf_read.c) and the
 * lazy mode (elf_lazy.c) both feed. Private to src/elf_*.c; the API is sc_elf.h. */
#ifndef SC_ELF_INTERNAL_H
#define SC_ELF_INTERNAL_H

#include <gelf.h>
#include <libelf.h>

#include "sc_elf.h"

/* Where the strings of the dynamic section live: a section (read with elf_strptr), or, in the
 * lazy mode, a file range read in chunks kept for the next lookups (the strings the dynamic
 * section and the version tables use sit together), so a 5 MB .dynstr costs a page or two. */
typedef struct {
    uint64_t off, size;
    const char *data;
} str_chunk;

typedef struct {
    Elf *elf;
    size_t strndx; /* section mode */
    bool lazy;
    uint64_t off, size; /* lazy mode: file offset and size of DT_STRTAB */
    str_chunk chunks[8];
    int next; /* the chunk slot to reuse next */
} strtab;

/* The NUL-terminated string at off of the table, or NULL when it does not end inside it. */
const char *sc_elf_str_at(strtab *t, uint64_t off);
/* p grown (realloc) to hold need elements of elem bytes, doubling *cap; NULL when out of memory
 * (p is then still valid). */
void *sc_elf_grow(void *p, size_t *cap, size_t need, size_t elem);
/* The readers of the dynamic tables into out: 0 or -ENOMEM; damaged tables end the read early.
 * data NULL: the file has no such table. */
int sc_elf_read_dynamic(Elf *elf, Elf_Data *data, strtab *t, sc_elf_info *out);
int sc_elf_read_verneed(Elf_Data *data, strtab *t, sc_elf_info *out);
int sc_elf_read_verdef(Elf_Data *data, strtab *t, sc_elf_info *out);
/* The lazy mode: the dynamic segment through the program headers, reading only the strings and
 * version tables it points to. 0 or -ENOMEM. */
int sc_elf_parse_lazy(Elf *elf, unsigned what, sc_elf_info *out);

#endif
