/* A kernel module's .modinfo strings: found through the ELF reader's section mode (the file is
 * mapped, only the section headers and the one section are touched) and searched with a bounded
 * scan, so a damaged or hostile module costs one pass over its section. */
#include "sc_modinfo.h"

#include <elf.h>
#include <errno.h>
#include <string.h>

#include "sc_elf.h"
#include "sc_util.h"

bool sc_modinfo_get(const char *data, size_t len, const char *key, char *buf, size_t size)
{
    size_t klen = strlen(key);
    const char *end = data + len;
    for (const char *p = data; p < end;) {
        size_t n = strnlen(p, (size_t)(end - p));
        if (n > klen && memcmp(p, key, klen) == 0 && p[klen] == '=') {
            const char *v = p + klen + 1;
            size_t vlen = n - klen - 1;
            while (vlen && v[vlen - 1] == ' ')
                vlen--;
            if (vlen == 0 || vlen >= size)
                return false;
            for (size_t i = 0; i < vlen; i++)
                if (v[i] < 0x20 || v[i] > 0x7e)
                    return false;
            memcpy(buf, v, vlen);
            buf[vlen] = '\0';
            return true;
        }
        if (n == (size_t)(end - p))
            break; /* the last string ran to the end */
        p += n + 1;
    }
    return false;
}

static bool compressed_name(const char *path)
{
    return sc_ends_with(path, ".xz") || sc_ends_with(path, ".zst") || sc_ends_with(path, ".gz");
}

int sc_modinfo_read(const sc_root *root, const char *path, const char *key, char *buf, size_t size,
                    sc_error *err)
{
    if (compressed_name(path))
        return sc_error_set(err, -ENOEXEC, "%s is compressed (not read)", path);
    sc_elf_file f;
    int rc = sc_elf_open(root, path, SC_ELF_MODINFO, &f, err);
    if (rc < 0)
        return rc;
    const sc_elf_span *s = &f.info.modinfo;
    if (f.info.type != ET_REL)
        rc = sc_error_set(err, -ENOEXEC, "%s is not a kernel module (ELF type %u, not relocatable)",
                          path, (unsigned)f.info.type);
    else if (!s->present || s->offset > f.size || s->size > f.size - s->offset)
        rc = sc_error_set(err, -ENODATA, "%s has no readable .modinfo section", path);
    else if (!sc_modinfo_get((const char *)f.map + s->offset, (size_t)s->size, key, buf, size))
        rc = sc_error_set(err, -ENODATA, "no %s= in the .modinfo of %s", key, path);
    sc_elf_close(&f);
    return rc;
}
