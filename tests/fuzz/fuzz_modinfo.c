/* Fuzz target: a kernel module's .modinfo, as bytes (the key=value scan) and inside any ELF file
 * (the section mode finding .modinfo, then the scan on the span it names, checked against the
 * file's size as sc_modinfo_read checks it); the values found must be printable. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sc_elf.h"
#include "sc_modinfo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void lookup(const char *bytes, size_t len)
{
    static const char *const keys[] = {"vermagic", "name", "version", "depends", ""};
    char v[256];
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
        if (sc_modinfo_get(bytes, len, keys[k], v, sizeof v))
            for (const char *p = v; *p; p++)
                if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
                    __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *copy = malloc(size ? size : 1); /* libelf may adjust a private image in place */
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    lookup((const char *)copy, size);
    sc_elf_info info;
    sc_error err;
    if (sc_elf_parse(copy, size, SC_ELF_MODINFO, &info, &err) == 0) {
        const sc_elf_span *s = &info.modinfo;
        if (s->present && s->offset <= size && s->size <= size - s->offset)
            lookup((const char *)copy + s->offset, (size_t)s->size);
        sc_elf_free(&info);
    }
    free(copy);
    return 0;
}
