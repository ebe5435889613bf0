/* The dynamic section and the symbol-version tables (verneed, verdef) of an ELF file, read through
 * a string table that is either a section or, in the lazy mode, file chunks read on demand. Input
 * is untrusted: every count is bounded by the data that holds it, every chain of offsets is
 * bounded in steps, and every string must end inside its table. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "elf_internal.h"

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

const char *sc_elf_str_at(strtab *t, uint64_t off)
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

void *sc_elf_grow(void *p, size_t *cap, size_t need, size_t elem)
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

int sc_elf_read_dynamic(Elf *elf, Elf_Data *data, strtab *t, sc_elf_info *out)
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
            str = sc_elf_str_at(t, dyn.d_un.d_val);
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
            const char **p =
                sc_elf_grow(out->needed, &cap, (size_t)out->needed_count + 1, sizeof *p);
            if (!p)
                return -ENOMEM;
            out->needed = p;
            out->needed[out->needed_count++] = str;
        }
    }
    return 0;
}

/* Follows a version chain's link to the next entry: false at the chain's end or when the link
 * leaves the section (a damaged chain ends there rather than looping or reading past it). */
static bool chain_next(size_t *off, size_t next, size_t size)
{
    if (next == 0 || *off + next >= size)
        return false;
    *off += next;
    return true;
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
        const char *name = sc_elf_str_at(t, aux.vna_name);
        if (name) {
            vn->names[vn->count] = name;
            vn->other[vn->count] = aux.vna_other;
            vn->weak[vn->count++] = (aux.vna_flags & VER_FLG_WEAK) != 0;
        }
        if (!chain_next(&off, aux.vna_next, data->d_size))
            break;
    }
    return 0;
}

int sc_elf_read_verneed(Elf_Data *data, strtab *t, sc_elf_info *out)
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
        const char *file = sc_elf_str_at(t, vn.vn_file);
        if (file && vn.vn_aux && off + vn.vn_aux < data->d_size) {
            sc_elf_verneed *e = &out->verneed[out->verneed_count++];
            e->file = file;
            if (read_vernaux(t, data, off + vn.vn_aux, vn.vn_cnt, e) < 0)
                return -ENOMEM;
        }
        if (!chain_next(&off, vn.vn_next, data->d_size))
            break;
    }
    return 0;
}

int sc_elf_read_verdef(Elf_Data *data, strtab *t, sc_elf_info *out)
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
            const char *name = sc_elf_str_at(t, aux.vda_name);
            if (name)
                out->verdef[out->verdef_count++] = name;
        }
        if (!chain_next(&off, vd.vd_next, data->d_size))
            break;
    }
    return 0;
}
