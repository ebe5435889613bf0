/* ELF files on disk: for the dependency walk, pread of just the dynamic segment and its strings;
 * for symbols and GPU code, a private, copy-on-write mapping handed to the buffer parser (the
 * kernel pages in only what libelf touches, where reading would copy whole tables); and a
 * header-only check of class and machine for the loader model, which skips candidates of another
 * architecture as ld.so does. */
#include "sc_elf.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int sc_elf_ident(int fd, uint8_t *elf_class, uint16_t *machine)
{
    unsigned char h[20];
    ssize_t n = pread(fd, h, sizeof h, 0);
    if (n < 0)
        return -errno;
    if (n < (ssize_t)sizeof h || memcmp(h, ELFMAG, SELFMAG) != 0)
        return -ENOEXEC;
    *elf_class = h[EI_CLASS];
    uint16_t m =
        (uint16_t)(h[EI_DATA] == ELFDATA2MSB ? (h[18] << 8) | h[19] : (h[19] << 8) | h[18]);
    *machine = m;
    return 0;
}

int sc_elf_open(const sc_root *root, const char *path, unsigned what, sc_elf_file *file,
                sc_error *err)
{
    memset(file, 0, sizeof *file);
    int fd = sc_root_open_file(root, path, NULL);
    if (fd < 0)
        return sc_error_set(err, fd, "cannot open %s: %s", path, sc_root_strerror(fd));
    int rc = sc_elf_open_fd(fd, path, what, file, err);
    close(fd);
    return rc;
}

int sc_elf_open_fd(int fd, const char *path, unsigned what, sc_elf_file *file, sc_error *err)
{
    memset(file, 0, sizeof *file);
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
        return sc_error_set(err, -ENOEXEC, "%s is not a regular file", path);
    if (st.st_size < EI_NIDENT)
        return sc_error_set(err, -ENOEXEC, "%s is not an ELF file (%lld bytes)", path,
                            (long long)st.st_size);
    if (!(what & SC_ELF_SECTION_PARTS)) {
        int rc = sc_elf_parse_fd(fd, (uint64_t)st.st_size, what, &file->info, err);
        if (rc == -ENOEXEC)
            sc_error_set(err, rc, "%s is not a valid ELF file", path);
        return rc;
    }
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    int e = errno;
    if (map == MAP_FAILED)
        return sc_error_set(err, -e, "cannot map %s: %s", path, strerror(e));
    int rc = sc_elf_parse(map, (size_t)st.st_size, what, &file->info, err);
    if (rc < 0) {
        munmap(map, (size_t)st.st_size);
        if (rc == -ENOEXEC)
            sc_error_set(err, rc, "%s is not a valid ELF file", path);
        return rc;
    }
    file->map = map;
    file->size = (size_t)st.st_size;
    return 0;
}

void sc_elf_close(sc_elf_file *file)
{
    sc_elf_free(&file->info);
    if (file->map)
        munmap(file->map, file->size);
    memset(file, 0, sizeof *file);
}
