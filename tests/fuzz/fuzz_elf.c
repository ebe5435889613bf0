/* Fuzz target: the ELF reader on any bytes, in both modes (sections: dynamic section, versions,
 * symbols, GPU code spans, then the offload readers on those spans; lazy: program headers and
 * the dynamic segment only). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sc_elf.h"
#include "sc_offload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* libelf may adjust a private image in place, as with the real files' private mappings */
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    sc_elf_info info;
    sc_error err;
    if (sc_elf_parse(copy, size, SC_ELF_VERSIONS | SC_ELF_SYMBOLS | SC_ELF_OFFLOAD, &info, &err) ==
        0) {
        const sc_elf_span *spans[] = {&info.hip_fatbin, &info.nv_fatbin};
        for (int i = 0; i < 2; i++) {
            const sc_elf_span *s = spans[i];
            if (!s->present || s->offset > size || s->size > size - s->offset)
                continue;
            sc_offload_list l;
            memset(&l, 0, sizeof l);
            if (i == 0)
                sc_offload_parse_hip(copy + s->offset, (size_t)s->size, &l);
            else
                sc_offload_parse_nv(copy + s->offset, (size_t)s->size, &l);
            sc_offload_list_free(&l);
        }
        sc_elf_free(&info);
    }
    /* the lazy mode: program headers, dynamic segment, strings and version tables only */
    memcpy(copy, data, size);
    if (sc_elf_parse(copy, size, SC_ELF_VERSIONS, &info, &err) == 0)
        sc_elf_free(&info);
    free(copy);
    return 0;
}
