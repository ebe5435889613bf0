/* The ustar header block, shared by the archive's writer and reader. */
#ifndef SC_TAR_INTERNAL_H
#define SC_TAR_INTERNAL_H

#include "sc_tar.h"

/* The fields of a ustar header (POSIX.1-2001); GNU tar's "ustar  " magic uses prefix otherwise. */
typedef struct {
    char name[100], mode[8], uid[8], gid[8], size[12], mtime[12], chksum[8], typeflag;
    char linkname[100], magic[6], version[2], uname[32], gname[32], devmajor[8], devminor[8];
    char prefix[155], pad[12];
} sc_ustar_header;

_Static_assert(sizeof(sc_ustar_header) == SC_TAR_BLOCK, "a ustar header is one block");

/* The header's checksum: the sum of its bytes with the checksum field taken as spaces (signed
 * or not, as old writers differ). */
unsigned sc_ustar_checksum(const sc_ustar_header *h, bool as_signed);

#endif
