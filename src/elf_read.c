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

static int read_dynamic(Elf *elf, const sections *s, sc_elf_info *out)
{
    if (!s->dynamic)
        return 0;
    Elf_Data *data = elf_getdata(s->dynamic, NULL);
    if (!data)
        return 0;
    size_t strndx = s->dynamic_sh.sh_link, cap = 0;
    size_t n = data->d_size / gelf_fsize(elf, ELF_T_DYN, 1, EV_CURRENT);
    for (size_t i = 0; i < n; i++) {
        GElf_Dyn dyn;
        if (!gelf_getdyn(data, (int)i, &dyn) || dyn.d_tag == DT_NULL)
            break;
        const char *str = NULL;
        if (dyn.d_tag == DT_NEEDED || dyn.d_tag == DT_SONAME || dyn.d_tag == DT_RPATH ||
            dyn.d_tag == DT_RUNPATH)
            str = elf_strptr(elf, strndx, dyn.d_un.d_val);
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
static int read_vernaux(Elf *elf, Elf_Data *data, size_t strndx, size_t off, int cnt,
                        sc_elf_verneed *vn)
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
        const char *name = elf_strptr(elf, strndx, aux.vna_name);
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

static int read_verneed(Elf *elf, const sections *s, sc_elf_info *out)
{
    Elf_Data *data = s->verneed ? elf_getdata(s->verneed, NULL) : NULL;
    if (!data || data->d_size == 0)
        return 0;
    size_t strndx = s->verneed_sh.sh_link, off = 0;
    size_t max = data->d_size / sizeof(GElf_Verneed) + 1;
    out->verneed = calloc(max, sizeof *out->verneed);
    if (!out->verneed)
        return -ENOMEM;
    for (size_t i = 0; i < max; i++) {
        GElf_Verneed vn;
        if (!gelf_getverneed(data, (int)off, &vn))
            break;
        const char *file = elf_strptr(elf, strndx, vn.vn_file);
        if (file && vn.vn_aux && off + vn.vn_aux < data->d_size) {
            sc_elf_verneed *e = &out->verneed[out->verneed_count++];
            e->file = file;
            if (read_vernaux(elf, data, strndx, off + vn.vn_aux, vn.vn_cnt, e) < 0)
                return -ENOMEM;
        }
        if (vn.vn_next == 0 || off + vn.vn_next >= data->d_size)
            break;
        off += vn.vn_next;
    }
    return 0;
}

static int read_verdef(Elf *elf, const sections *s, sc_elf_info *out)
{
    Elf_Data *data = s->verdef ? elf_getdata(s->verdef, NULL) : NULL;
    if (!data || data->d_size == 0)
        return 0;
    size_t strndx = s->verdef_sh.sh_link, off = 0;
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
            const char *name = elf_strptr(elf, strndx, aux.vda_name);
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

static int read_header(Elf *elf, sc_elf_info *out, sc_error *err)
{
    GElf_Ehdr eh;
    if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh))
        return sc_error_set(err, -ENOEXEC, "not an ELF file");
    out->elf_class = eh.e_ident[EI_CLASS];
    out->data = eh.e_ident[EI_DATA];
    out->machine = eh.e_machine;
    out->type = eh.e_type;
    return 0;
}

/* Reads what is asked from a libelf handle, which out takes over. */
static int parse_elf(Elf *elf, unsigned what, sc_elf_info *out, sc_error *err)
{
    out->elf = elf;
    int rc = read_header(elf, out, err);
    if (rc < 0)
        goto out;
    sections s;
    memset(&s, 0, sizeof s);
    find_sections(elf, what, &s, out);
    rc = read_dynamic(elf, &s, out);
    if (rc == 0 && (what & (SC_ELF_VERSIONS | SC_ELF_SYMBOLS)))
        rc = read_verneed(elf, &s, out);
    if (rc == 0 && (what & SC_ELF_VERSIONS))
        rc = read_verdef(elf, &s, out);
    if (rc == 0 && (what & SC_ELF_SYMBOLS))
        rc = read_symbols(elf, &s, out);
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
    return parse_elf(elf, what, out, err);
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
    memset(info, 0, sizeof *info);
}
