/* Fuzz target: /etc/ld.so.cache images (new, legacy, legacy with the new table) and lookups. */
#include <stdint.h>
#include <string.h>

#include "sc_ldcache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sc_ldcache c;
    sc_error err;
    if (sc_ldcache_parse((const char *)data, size, &c, &err) == 0) {
        sc_ldcache_lookup(&c, "libc.so.6", 0x0303);
        for (size_t i = 0; i < c.count && i < 8; i++)
            sc_ldcache_lookup(&c, c.entries[i].key, c.entries[i].flags);
        sc_ldcache_free(&c);
    }
    return 0;
}
