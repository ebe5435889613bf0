/* ELF parsing from a memory image with libelf: the dynamic section, symbol versions, dynamic
 * symbols and the GPU code sections' spans. Input is untrusted: every count is bounded by the data
 * that holds it, every chain of offsets is bounded in steps, and every string comes from
 * elf_strptr, which checks it lies inside its string table. */
#include "sc_elf.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

/* The sections the parser needs, found in one pass over the section headers. */
typedef struct {
    Elf_Scn *dynamic, *dynsym, *versym, *verneed, *verdef;
    GElf_Shdr dynamic_sh, dynsym_sh, verneed_sh, verdef_sh;
} sections;

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

/* A string from the chunks already read, or NULL. */
static const char *cached_str(const strtab *t, uint64_t off)
{
    for (int i = 0; i < 8; i++) {
        const str_chunk *c = &t->chunks[i];
        if (c->data && off >= c->off && off - c->off < c->size) {
            const char *p = c->data + (off - c->off);
            return memchr(p, '\0', c->size - (off - c->off)) ? p : NULL;
        }
    }
    return NULL;
}

static const char *str_at(strtab *t, uint64_t off)
{
    if (!t->lazy)
        return elf_strptr(t->elf, t->strndx, off);
    if (off >= t->size)
        return NULL;
    const char *p = cached_str(t, off);
    for (uint64_t want = 4096; !p && want <= 65536; want *= 16) {
        uint64_t n = t->size - off < want ? t->size - off : want;
        Elf_Data *d = elf_getdata_rawchunk(t->elf, (int64_t)(t->off + off), n, ELF_T_BYTE);
        if (!d)
            return NULL;
        t->chunks[t->next] = (str_chunk){.off = off, .size = d->d_size, .data = d->d_buf};
        t->next = (t->next + 1) % 8;
        p = cached_str(t, off);
        if (!p && n < want)
            return NULL; /* the table ends without a NUL */
    }
    return p;
}

static void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return p;
    size_t n = *cap ? *cap * 2 : 16;
    while (n < need)
        n *= 2;
    void *q = realloc(p, n * elem);
    if (q)
        *cap = n;
    return q;
}

static void note_offload(Elf *elf, size_t shstrndx, const GElf_Shdr *sh, sc_elf_info *out)
{
    const char *name = elf_strptr(elf, shstrndx, sh->sh_name);
    if (!name || sh->sh_type == SHT_NOBITS)
        return;
    sc_elf_span *span = NULL;
    if (strcmp(name, ".hip_fatbin") == 0)
        span = &out->hip_fatbin;
    else if (strcmp(name, ".nv_fatbin") == 0 || strcmp(name, "__nv_relfatbin") == 0)
        span = &out->nv_fatbin;
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
        if ((what & SC_ELF_OFFLOAD) && have_names)
            note_offload(elf, shstrndx, &sh, out);
    }
}

static int read_dynamic(Elf *elf, Elf_Data *data, strtab *t, sc_elf_info *out)
{
    if (!data)
        return 0;
    size_t cap = 0;
    size_t n = data->d_size / gelf_fsize(elf, ELF_T_DYN, 1, EV_CURRENT);
    for (size_t i = 0; i < n; i++) {
        GElf_Dyn dyn;
        if (!gelf_getdyn(data, (int)i, &dyn) || dyn.d_tag == DT_NULL)
            break;
        const char *str = NULL;
        if (dyn.d_tag == DT_NEEDED || dyn.d_tag == DT_SONAME || dyn.d_tag == DT_RPATH ||
            dyn.d_tag == DT_RUNPATH)
            str = str_at(t, dyn.d_un.d_val);
        if (dyn.d_tag == DT_FLAGS_1)
            out->flags_1 = dyn.d_un.d_val;
        if (!str)
            continue;
        if (dyn.d_tag == DT_SONAME)
            out->soname = str;
        else if (dyn.d_tag == DT_RPATH)
            out->rpath = str;
        else if (dyn.d_tag == DT_RUNPATH)
            out->runpath = str;
        else {
            const char **p = grow(out->needed, &cap, (size_t)out->needed_count + 1, sizeof *p);
            if (!p)
                return -ENOMEM;
            out->needed = p;
            out->needed[out->needed_count++] = str;
        }
    }
    return 0;
}

/* Reads one Verneed entry's auxiliary chain at off into vn. */
static int read_vernaux(strtab *t, Elf_Data *data, size_t off, int cnt, sc_elf_verneed *vn)
{
    size_t limit = data->d_size / sizeof(GElf_Vernaux) + 1;
    if ((size_t)cnt > limit)
        cnt = (int)limit;
    vn->names = calloc((size_t)cnt + 1, sizeof *vn->names);
    vn->other = calloc((size_t)cnt + 1, sizeof *vn->other);
    vn->weak = calloc((size_t)cnt + 1, sizeof *vn->weak);
    if (!vn->names || !vn->other || !vn->weak)
        return -ENOMEM;
    for (int j = 0; j < cnt; j++) {
        GElf_Vernaux aux;
        if (!gelf_getvernaux(data, (int)off, &aux))
            break;
        const char *name = str_at(t, aux.vna_name);
        if (name) {
            vn->names[vn->count] = name;
            vn->other[vn->count] = aux.vna_other;
            vn->weak[vn->count++] = (aux.vna_flags & VER_FLG_WEAK) != 0;
        }
        if (aux.vna_next == 0 || off + aux.vna_next >= data->d_size)
            break;
        off += aux.vna_next;
    }
    return 0;
}

static int read_verneed(Elf_Data *data, strtab *t, sc_elf_info *out)
{
    if (!data || data->d_size == 0)
        return 0;
    size_t off = 0;
    size_t max = data->d_size / sizeof(GElf_Verneed) + 1;
    out->verneed = calloc(max, sizeof *out->verneed);
    if (!out->verneed)
        return -ENOMEM;
    for (size_t i = 0; i < max; i++) {
        GElf_Verneed vn;
        if (!gelf_getverneed(data, (int)off, &vn))
            break;
        const char *file = str_at(t, vn.vn_file);
        if (file && vn.vn_aux && off + vn.vn_aux < data->d_size) {
            sc_elf_verneed *e = &out->verneed[out->verneed_count++];
            e->file = file;
            if (read_vernaux(t, data, off + vn.vn_aux, vn.vn_cnt, e) < 0)
                return -ENOMEM;
        }
        if (vn.vn_next == 0 || off + vn.vn_next >= data->d_size)
            break;
        off += vn.vn_next;
    }
    return 0;
}

static int read_verdef(Elf_Data *data, strtab *t, sc_elf_info *out)
{
    if (!data || data->d_size == 0)
        return 0;
    size_t off = 0;
    size_t max = data->d_size / sizeof(GElf_Verdef) + 1;
    out->verdef = calloc(max, sizeof *out->verdef);
    if (!out->verdef)
        return -ENOMEM;
    for (size_t i = 0; i < max; i++) {
        GElf_Verdef vd;
        GElf_Verdaux aux;
        if (!gelf_getverdef(data, (int)off, &vd))
            break;
        /* the base entry names the file itself, not a version */
        if (!(vd.vd_flags & VER_FLG_BASE) && vd.vd_aux && off + vd.vd_aux < data->d_size &&
            gelf_getverdaux(data, (int)(off + vd.vd_aux), &aux)) {
            const char *name = str_at(t, aux.vda_name);
            if (name)
                out->verdef[out->verdef_count++] = name;
        }
        if (vd.vd_next == 0 || off + vd.vd_next >= data->d_size)
            break;
        off += vd.vd_next;
    }
    return 0;
}

/* The verneed entry whose requirement carries versym index idx, or -1. */
static int verneed_of(const sc_elf_info *info, uint16_t idx)
{
    if (idx < 2)
        return -1;
    for (int i = 0; i < info->verneed_count; i++)
        for (int j = 0; j < info->verneed[i].count; j++)
            if (info->verneed[i].other[j] == idx)
                return i;
    return -1;
}

static int add_symbol(sc_elf_info *out, const GElf_Sym *sym, const char *name, Elf_Data *vs,
                      size_t i, size_t *dcap, size_t *ucap)
{
    if (sym->st_shndx != SHN_UNDEF) {
        const char **p = grow(out->defined, dcap, out->defined_count + 1, sizeof *p);
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
    sc_elf_undef *u = grow(out->undefined, ucap, out->undefined_count + 1, sizeof *u);
    if (!u)
        return -ENOMEM;
    out->undefined = u;
    out->undefined[out->undefined_count].name = name;
    out->undefined[out->undefined_count++].verneed = verneed_of(out, (uint16_t)(ver & 0x7fff));
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
    for (size_t i = 1; i < n && i < INT32_MAX; i++) {
        GElf_Sym sym;
        if (!gelf_getsym(data, (int)i, &sym) || sym.st_name == 0)
            continue;
        int type = GELF_ST_TYPE(sym.st_info);
        if (type == STT_SECTION || type == STT_FILE)
            continue;
        const char *name = elf_strptr(elf, s->dynsym_sh.sh_link, sym.st_name);
        if (name && *name && add_symbol(out, &sym, name, vs, i, &dcap, &ucap) < 0)
            return -ENOMEM;
    }
    return 0;
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
    int rc = read_dynamic(elf, s.dynamic ? elf_getdata(s.dynamic, NULL) : NULL, &dyn, out);
    if (rc == 0 && (what & (SC_ELF_VERSIONS | SC_ELF_SYMBOLS)))
        rc = read_verneed(s.verneed ? elf_getdata(s.verneed, NULL) : NULL, &vn, out);
    if (rc == 0 && (what & SC_ELF_VERSIONS))
        rc = read_verdef(s.verdef ? elf_getdata(s.verdef, NULL) : NULL, &vd, out);
    if (rc == 0 && (what & SC_ELF_SYMBOLS))
        rc = read_symbols(elf, &s, out);
    return rc;
}

/* The program headers the lazy mode needs: PT_DYNAMIC and the PT_LOADs that map addresses. */
typedef struct {
    GElf_Phdr load[64];
    int loads;
    GElf_Phdr dynamic;
    bool have_dynamic;
} segments;

static void find_segments(Elf *elf, segments *sg)
{
    size_t n = 0;
    if (elf_getphdrnum(elf, &n) != 0)
        return;
    for (size_t i = 0; i < n && i < 65536; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(elf, (int)i, &ph))
            break;
        if (ph.p_type == PT_LOAD && sg->loads < 64)
            sg->load[sg->loads++] = ph;
        else if (ph.p_type == PT_DYNAMIC && !sg->have_dynamic) {
            sg->dynamic = ph;
            sg->have_dynamic = true;
        }
    }
}

/* The file offset of address v, or UINT64_MAX when no PT_LOAD maps it from the file. */
static uint64_t offset_of(const segments *sg, uint64_t v)
{
    for (int i = 0; i < sg->loads; i++) {
        const GElf_Phdr *p = &sg->load[i];
        if (v >= p->p_vaddr && v - p->p_vaddr < p->p_filesz)
            return p->p_offset + (v - p->p_vaddr);
    }
    return UINT64_MAX;
}

/* A raw chunk of the file at address v, at most max bytes (bounded by the file), or NULL. */
static Elf_Data *chunk_at(Elf *elf, const segments *sg, uint64_t v, uint64_t max, Elf_Type type)
{
    uint64_t off = offset_of(sg, v), size = 0;
    if (off == UINT64_MAX)
        return NULL;
    for (int i = 0; i < sg->loads; i++) /* within the segment that maps it */
        if (v >= sg->load[i].p_vaddr && v - sg->load[i].p_vaddr < sg->load[i].p_filesz)
            size = sg->load[i].p_filesz - (v - sg->load[i].p_vaddr);
    if (size > max)
        size = max;
    return size ? elf_getdata_rawchunk(elf, (int64_t)off, size, type) : NULL;
}

/* Bytes to read for a version table of n entries of at most per bytes each (with their
 * auxiliaries): 1 MiB when the count is missing or absurd. */
static uint64_t version_bound(uint64_t n, uint64_t per)
{
    return (n == 0 || n > 2048) ? 1 << 20 : n * per + 1024;
}

/* The lazy mode: program headers, the dynamic segment and only the strings and version tables
 * it points to, each read as a raw chunk (pread when libelf has no mapping). */
static int parse_lazy(Elf *elf, unsigned what, sc_elf_info *out)
{
    segments sg;
    memset(&sg, 0, sizeof sg);
    find_segments(elf, &sg);
    if (!sg.have_dynamic || sg.dynamic.p_filesz == 0)
        return 0;
    Elf_Data *dyn =
        elf_getdata_rawchunk(elf, (int64_t)sg.dynamic.p_offset, sg.dynamic.p_filesz, ELF_T_DYN);
    /* DT_STRTAB, DT_STRSZ, DT_VERNEED, DT_VERDEF, DT_VERNEEDNUM, DT_VERDEFNUM */
    uint64_t addr[6] = {0, 0, 0, 0, 0, 0};
    GElf_Dyn d;
    static const int64_t tags[6] = {DT_STRTAB, DT_STRSZ,      DT_VERNEED,
                                    DT_VERDEF, DT_VERNEEDNUM, DT_VERDEFNUM};
    for (int i = 0; dyn && gelf_getdyn(dyn, i, &d) && d.d_tag != DT_NULL; i++)
        for (int k = 0; k < 6; k++)
            if (d.d_tag == tags[k])
                addr[k] = d.d_un.d_val;
    strtab t = {.elf = elf, .lazy = true, .off = offset_of(&sg, addr[0]), .size = addr[1]};
    if (t.off == UINT64_MAX)
        t.size = 0;
    int rc = read_dynamic(elf, dyn, &t, out);
    /* bounds from the entry counts: a verneed entry is 16 bytes plus 16 per version (rarely more
     * than 60), a verdef entry 20 plus 8 per name (1 or 2) */
    if (rc == 0 && (what & SC_ELF_VERSIONS) && addr[2])
        rc = read_verneed(chunk_at(elf, &sg, addr[2], version_bound(addr[4], 1024), ELF_T_VNEED),
                          &t, out);
    if (rc == 0 && (what & SC_ELF_VERSIONS) && addr[3])
        rc = read_verdef(chunk_at(elf, &sg, addr[3], version_bound(addr[5], 128), ELF_T_VDEF), &t,
                         out);
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
    bool lazy = !(what & (SC_ELF_SYMBOLS | SC_ELF_OFFLOAD));
    rc = lazy ? parse_lazy(elf, what, out) : parse_sections(elf, what, out);
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
