/* The lazy mode of the ELF reader, for the dependency walk: from the program headers to the
 * dynamic segment, then only the strings and version tables it points to, each read as a raw
 * chunk, so a large library costs a few pages rather than its section tables. */
#include <stdint.h>
#include <string.h>

#include "elf_internal.h"

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
int sc_elf_parse_lazy(Elf *elf, unsigned what, sc_elf_info *out)
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
    int rc = sc_elf_read_dynamic(elf, dyn, &t, out);
    /* bounds from the entry counts: a verneed entry is 16 bytes plus 16 per version (rarely more
     * than 60), a verdef entry 20 plus 8 per name (1 or 2) */
    if (rc == 0 && (what & SC_ELF_VERSIONS) && addr[2])
        rc = sc_elf_read_verneed(
            chunk_at(elf, &sg, addr[2], version_bound(addr[4], 1024), ELF_T_VNEED), &t, out);
    if (rc == 0 && (what & SC_ELF_VERSIONS) && addr[3])
        rc = sc_elf_read_verdef(
            chunk_at(elf, &sg, addr[3], version_bound(addr[5], 128), ELF_T_VDEF), &t, out);
    return rc;
}
