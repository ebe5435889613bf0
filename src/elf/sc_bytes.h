/* Fixed-size integers read from a byte buffer at any alignment, in the host's byte order: the
 * binary formats read here (ld.so.cache, offload bundles, fat binaries) are the host's own. The
 * caller checks the bounds. */
#ifndef SC_BYTES_H
#define SC_BYTES_H

#include <stdint.h>
#include <string.h>

static inline uint16_t sc_rd16(const void *p)
{
    uint16_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline uint32_t sc_rd32(const void *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline uint64_t sc_rd64(const void *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

#endif
