/* Fuzz target for the capture archive reader (a tarball from anywhere, replayed with --sysroot):
 * gzip or plain tar, ustar/GNU headers, pax and GNU long names. Every entry it hands on must have
 * a clean relative name; the bytes inflated per input are capped so a compression bomb costs the
 * cap, not the reader's own (larger) bounds. */
#include <stdint.h>
#include <string.h>

#include "sc_tar.h"

#define FUZZ_MAX_BYTES (8u << 20)

/* The reader's promise about names: relative, no "." or ".." component, no empty one. */
static void check_name(const char *path)
{
    if (path[0] == '/' || strstr(path, "//") || strcmp(path, "..") == 0 ||
        strncmp(path, "../", 3) == 0 || strstr(path, "/../") ||
        (strlen(path) >= 3 && strcmp(path + strlen(path) - 3, "/..") == 0))
        __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sc_tar_mem m = {data, size, 0};
    sc_tar_reader *r = sc_tar_reader_new(sc_tar_mem_read, &m);
    static sc_tar_entry e;
    sc_error err = {0};
    char buf[65536];
    size_t total = 0;
    while (r && total < FUZZ_MAX_BYTES && sc_tar_next(r, &e, &err) == 1) {
        check_name(e.path);
        if (e.type != SC_TAR_FILE && e.size != 0)
            __builtin_trap();
        long n;
        while (total < FUZZ_MAX_BYTES && (n = sc_tar_read(r, buf, sizeof buf)) > 0)
            total += (size_t)n;
    }
    sc_tar_reader_free(r);
    return 0;
}
