/* ELF parsing with libelf, from a memory image or a file: the header checks, the section mode
 * (dynamic symbols, the spans of the GPU code sections and of a module's .modinfo, beside the
 * tables elf_tables.c reads) and the choice between it and the lazy mode of elf_lazy.c. Input is
 * untrusted: every count is bounded by the data that holds it, and every string must end inside its
 * table. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "elf_internal.h"

/* The sections the parser needs, found in one pass over the section headers. */
typedef struct {
    Elf_Scn *dynamic, *dynsym, *versym, *verneed, *verdef;
    GElf_Shdr dynamic_sh, dynsym_sh, verneed_sh, verdef_sh;
} sections;

/* The span of the named section this parse wants (GPU code, a module's .modinfo), or NULL. */
static sc_elf_span *wanted_span(const char *name, unsigned what, sc_elf_info *out)
{
    if ((what & SC_ELF_OFFLOAD) && strcmp(name, ".hip_fatbin") == 0)
        return &out->hip_fatbin;
    if ((what & SC_ELF_OFFLOAD) &&
        (strcmp(name, ".nv_fatbin") == 0 || strcmp(name, "__nv_relfatbin") == 0))
        return &out->nv_fatbin;
    if ((what & SC_ELF_MODINFO) && strcmp(name, ".modinfo") == 0)
        return &out->modinfo;
    return NULL;
}

static void note_span(Elf *elf, size_t shstrndx, const GElf_Shdr *sh, unsigned what,
                      sc_elf_info *out)
{
    const char *name = elf_strptr(elf, shstrndx, sh->sh_name);
    if (!name || sh->sh_type == SHT_NOBITS)
        return;
    sc_elf_span *span = wanted_span(name, what, out);
    if (span && !span->present) {
        span->offset = sh->sh_offset;
        span->size = sh->sh_size;
        span->present = true;
    }
}

static void keep(Elf_Scn **slot, GElf_Shdr *slot_sh, Elf_Scn *scn, const GElf_Shdr *sh)
{
    if (*slot)
        return;
    *slot = scn;
    if (slot_sh)
        *slot_sh = *sh;
}

static void find_sections(Elf *elf, unsigned what, sections *s, sc_elf_info *out)
{
    size_t shstrndx = 0;
    bool have_names = elf_getshdrstrndx(elf, &shstrndx) == 0;
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            continue;
        /* the first section of each kind is the one the dynamic loader's tags point to */
        switch (sh.sh_type) {
        case SHT_DYNAMIC: keep(&s->dynamic, &s->dynamic_sh, scn, &sh); break;
        case SHT_DYNSYM: keep(&s->dynsym, &s->dynsym_sh, scn, &sh); break;
        case SHT_GNU_versym: keep(&s->versym, NULL, scn, &sh); break;
        case SHT_GNU_verneed: keep(&s->verneed, &s->verneed_sh, scn, &sh); break;
        case SHT_GNU_verdef: keep(&s->verdef, &s->verdef_sh, scn, &sh); break;
        default: break;
        }
        if ((what & (SC_ELF_OFFLOAD | SC_ELF_MODINFO)) && have_names)
            note_span(elf, shstrndx, &sh, what, out);
    }
}

#define VERSYM_INDEXES 0x8000 /* a versym index has 15 bits */

/* For each versym index, the first verneed entry whose requirement carries it, or -1: built once
 * per file, so a file of many symbols and many requirements is not read pairwise. */
static int *verneed_by_index(const sc_elf_info *info)
{
    if (info->verneed_count == 0)
        return NULL;
    int *by_index = malloc(VERSYM_INDEXES * sizeof *by_index);
    if (!by_index)
        return NULL;
    for (int k = 0; k < VERSYM_INDEXES; k++)
        by_index[k] = -1;
    for (int i = info->verneed_count - 1; i >= 0; i--) /* backwards: the first entry wins */
        for (int j = 0; j < info->verneed[i].count; j++)
            by_index[info->verneed[i].other[j] & 0x7fff] = i;
    return by_index;
}

/* The verneed entry whose requirement carries versym index idx, or -1. */
static int verneed_of(const int *by_index, uint16_t idx)
{
    return idx < 2 || !by_index ? -1 : by_index[idx & 0x7fff];
}

static int add_symbol(sc_elf_info *out, const GElf_Sym *sym, const char *name, Elf_Data *vs,
                      const int *by_index, size_t i, size_t *dcap, size_t *ucap)
{
    if (sym->st_shndx != SHN_UNDEF) {
        const char **p = sc_elf_grow(out->defined, dcap, out->defined_count + 1, sizeof *p);
        if (!p)
            return -ENOMEM;
        out->defined = p;
        out->defined[out->defined_count++] = name;
        return 0;
    }
    if (GELF_ST_BIND(sym->st_info) != STB_GLOBAL)
        return 0; /* weak references may stay unresolved */
    GElf_Versym ver = 0;
    if (vs && !gelf_getversym(vs, (int)i, &ver))
        ver = 0;
    sc_elf_undef *u = sc_elf_grow(out->undefined, ucap, out->undefined_count + 1, sizeof *u);
    if (!u)
        return -ENOMEM;
    out->undefined = u;
    out->undefined[out->undefined_count].name = name;
    out->undefined[out->undefined_count++].verneed = verneed_of(by_index, (uint16_t)(ver & 0x7fff));
    return 0;
}

static int read_symbols(Elf *elf, const sections *s, sc_elf_info *out)
{
    Elf_Data *data = s->dynsym ? elf_getdata(s->dynsym, NULL) : NULL;
    if (!data)
        return 0;
    Elf_Data *vs = s->versym ? elf_getdata(s->versym, NULL) : NULL;
    size_t n = data->d_size / gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
    size_t dcap = 0, ucap = 0;
    int *by_index = verneed_by_index(out);
    if (out->verneed_count && !by_index)
        return -ENOMEM;
    int rc = 0;
    for (size_t i = 1; i < n && i < INT32_MAX && rc == 0; i++) {
        GElf_Sym sym;
        if (!gelf_getsym(data, (int)i, &sym) || sym.st_name == 0)
            continue;
        int type = GELF_ST_TYPE(sym.st_info);
        if (type == STT_SECTION || type == STT_FILE)
            continue;
        const char *name = elf_strptr(elf, s->dynsym_sh.sh_link, sym.st_name);
        if (name && *name)
            rc = add_symbol(out, &sym, name, vs, by_index, i, &dcap, &ucap);
    }
    free(by_index);
    return rc;
}

/* True when count entries of entsize bytes at off lie inside a file of size bytes. */
static bool table_fits(uint64_t off, uint64_t count, uint64_t entsize, uint64_t size)
{
    return count == 0 || (off <= size && entsize && count <= (size - off) / entsize);
}

/* Reads the ELF header; a file whose header tables lie past its end is truncated, and the
 * loader refuses it, so it is refused here rather than read as a file without dependencies. */
static int read_header(Elf *elf, uint64_t size, sc_elf_info *out, sc_error *err)
{
    GElf_Ehdr eh;
    if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh))
        return sc_error_set(err, -ENOEXEC, "not an ELF file");
    if (!table_fits(eh.e_phoff, eh.e_phnum, eh.e_phentsize, size) ||
        !table_fits(eh.e_shoff, eh.e_shnum, eh.e_shentsize, size))
        return sc_error_set(err, -ENOEXEC, "truncated ELF file (%llu bytes)",
                            (unsigned long long)size);
    out->elf_class = eh.e_ident[EI_CLASS];
    out->data = eh.e_ident[EI_DATA];
    out->machine = eh.e_machine;
    out->type = eh.e_type;
    return 0;
}

/* The section mode: section headers lead to the data, strings through elf_strptr. */
static int parse_sections(Elf *elf, unsigned what, sc_elf_info *out)
{
    sections s;
    memset(&s, 0, sizeof s);
    find_sections(elf, what, &s, out);
    strtab dyn = {.elf = elf, .strndx = s.dynamic_sh.sh_link};
    strtab vn = {.elf = elf, .strndx = s.verneed_sh.sh_link};
    strtab vd = {.elf = elf, .strndx = s.verdef_sh.sh_link};
    int rc = sc_elf_read_dynamic(elf, s.dynamic ? elf_getdata(s.dynamic, NULL) : NULL, &dyn, out);
    if (rc == 0 && (what & (SC_ELF_VERSIONS | SC_ELF_SYMBOLS)))
        rc = sc_elf_read_verneed(s.verneed ? elf_getdata(s.verneed, NULL) : NULL, &vn, out);
    if (rc == 0 && (what & SC_ELF_VERSIONS))
        rc = sc_elf_read_verdef(s.verdef ? elf_getdata(s.verdef, NULL) : NULL, &vd, out);
    if (rc == 0 && (what & SC_ELF_SYMBOLS))
        rc = read_symbols(elf, &s, out);
    return rc;
}

/* Calls fn on the address of every string pointer of out (lazy mode: no symbols). */
static void each_string(sc_elf_info *out, void (*fn)(const char **, void *), void *arg)
{
    fn(&out->soname, arg);
    fn(&out->rpath, arg);
    fn(&out->runpath, arg);
    for (int i = 0; i < out->needed_count; i++)
        fn(&out->needed[i], arg);
    for (int i = 0; i < out->verdef_count; i++)
        fn(&out->verdef[i], arg);
    for (int i = 0; i < out->verneed_count; i++) {
        fn(&out->verneed[i].file, arg);
        for (int j = 0; j < out->verneed[i].count; j++)
            fn(&out->verneed[i].names[j], arg);
    }
}

static void measure(const char **s, void *arg)
{
    if (*s)
        *(size_t *)arg += strlen(*s) + 1;
}

static void copy_out(const char **s, void *arg)
{
    char **at = arg;
    if (!*s)
        return;
    size_t n = strlen(*s) + 1;
    memcpy(*at, *s, n);
    *s = *at;
    *at += n;
}

/* Copies the strings out of libelf's buffers and ends the handle, so a tree of 300 files keeps
 * kilobytes, not the chunks read for each. */
static int detach(sc_elf_info *out)
{
    size_t total = 1;
    each_string(out, measure, &total);
    out->strings = malloc(total);
    if (!out->strings)
        return -ENOMEM;
    char *at = out->strings;
    each_string(out, copy_out, &at);
    elf_end(out->elf);
    out->elf = NULL;
    return 0;
}

/* Reads what is asked from a libelf handle, which out takes over. */
static int parse_elf(Elf *elf, uint64_t size, unsigned what, sc_elf_info *out, sc_error *err)
{
    out->elf = elf;
    int rc = read_header(elf, size, out, err);
    if (rc < 0)
        goto out;
    bool lazy = !(what & SC_ELF_SECTION_PARTS);
    rc = lazy ? sc_elf_parse_lazy(elf, what, out) : parse_sections(elf, what, out);
    if (rc == 0 && lazy)
        rc = detach(out);
    if (rc < 0)
        sc_error_set(err, rc, "out of memory reading the ELF file");
out:
    if (rc < 0)
        sc_elf_free(out);
    return rc;
}

int sc_elf_parse(void *image, size_t size, unsigned what, sc_elf_info *out, sc_error *err)
{
    memset(out, 0, sizeof *out);
    elf_version(EV_CURRENT);
    if (size < EI_NIDENT || memcmp(image, ELFMAG, SELFMAG) != 0)
        return sc_error_set(err, -ENOEXEC, "not an ELF file");
    Elf *elf = elf_memory(image, size);
    if (!elf)
        return sc_error_set(err, -ENOEXEC, "malformed ELF: %s", elf_errmsg(-1));
    return parse_elf(elf, size, what, out, err);
}

int sc_elf_parse_fd(int fd, uint64_t size, unsigned what, sc_elf_info *out, sc_error *err)
{
    memset(out, 0, sizeof *out);
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    if (!elf)
        return sc_error_set(err, -ENOEXEC, "malformed ELF: %s", elf_errmsg(-1));
    int rc = parse_elf(elf, size, what, out, err);
    if (rc == 0)
        elf_cntl(elf, ELF_C_FDDONE); /* everything needed is read; the caller may close fd */
    return rc;
}

void sc_elf_free(sc_elf_info *info)
{
    for (int i = 0; i < info->verneed_count; i++) {
        free(info->verneed[i].names);
        free(info->verneed[i].other);
        free(info->verneed[i].weak);
    }
    free(info->verneed);
    free(info->verdef);
    free(info->needed);
    free(info->defined);
    free(info->undefined);
    if (info->elf)
        elf_end(info->elf);
    free(info->strings);
    memset(info, 0, sizeof *info);
}
