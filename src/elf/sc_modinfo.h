/* A Linux kernel module's .modinfo: the NUL-separated key=value strings modinfo(8) prints
 * (vermagic, name, version, depends...), parsed from a buffer, and read from a module file inside
 * the root through the ELF reader. */
#ifndef SC_MODINFO_H
#define SC_MODINFO_H

#include <stdbool.h>
#include <stddef.h>

#include "sc_sysroot.h"
#include "sc_types.h"

/* Looks up key in len bytes of .modinfo strings ("key=value\0key=value\0", NUL padding allowed,
 * the last string perhaps unterminated) and copies the first value, trailing spaces dropped, into
 * buf. True only for a non-empty value of printable ASCII that fits. */
bool sc_modinfo_get(const char *data, size_t len, const char *key, char *buf, size_t size);

/* Reads key from the .modinfo of the kernel module at path inside root. Returns 0, or a negative
 * errno with err filled: -ENOENT and the like when the file cannot be opened, -ENOEXEC when it is
 * not a relocatable ELF file (a compressed .ko.xz/.ko.zst/.ko.gz included), -ENODATA when it has
 * no .modinfo section or no key= in it. */
int sc_modinfo_read(const sc_root *root, const char *path, const char *key, char *buf, size_t size,
                    sc_error *err);

#endif
