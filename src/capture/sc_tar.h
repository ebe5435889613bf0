/* The tar format of a capture: POSIX ustar with pax extended headers for long names, compressed
 * with gzip (zlib). The writer builds an archive in memory; the reader parses a stream entry by
 * entry, checking every field and bounding entries, sizes and names, and hands on only files,
 * directories and symbolic links with clean relative paths. */
#ifndef SC_TAR_H
#define SC_TAR_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

#include "sc_types.h"
#include "sc_util.h"

#define SC_TAR_BLOCK 512
/* What a reader accepts at most (a capture's writer stays below: see sc_capture.h). */
#define SC_TAR_MAX_ENTRIES 100000
#define SC_TAR_MAX_ENTRY_SIZE (1ull << 30)
#define SC_TAR_MAX_TOTAL (2ull << 30)
#define SC_TAR_MAX_PAX (64u << 10)
#define SC_TAR_MAX_DEPTH 128

typedef enum { SC_TAR_FILE, SC_TAR_DIR, SC_TAR_LINK } sc_tar_type;

typedef struct {
    sc_tar_type type;
    char path[PATH_MAX];   /* relative, no "." or ".." component, no leading or double slash */
    char target[PATH_MAX]; /* a symbolic link's, as it is */
    unsigned mode;         /* permission bits (07777) */
    uint64_t size;         /* a file's bytes */
} sc_tar_entry;

/* The writer: an archive built in memory, gzip-compressed at level (1-9). */
typedef struct {
    z_stream z;
    sc_buf out;
    bool failed;
    long long mtime; /* every entry's */
} sc_tar_writer;

/* Starts an archive; returns 0 or -ENOMEM. */
int sc_tar_writer_init(sc_tar_writer *w, int level, long long mtime);
/* Adds one entry (a file's data is data[0..size), a link's target is target); path is relative.
 * Returns 0 or a negative errno (-ENAMETOOLONG, -ENOMEM). */
int sc_tar_add(sc_tar_writer *w, sc_tar_type type, const char *path, unsigned mode,
               const char *target, const void *data, size_t size);
/* Ends the archive and hands its bytes to *out (the caller frees out->data); 0 or -ENOMEM. */
int sc_tar_finish(sc_tar_writer *w, sc_buf *out);
/* Frees what the writer holds (after sc_tar_finish too). */
void sc_tar_writer_free(sc_tar_writer *w);

/* Where a reader's bytes come from: fills buf with up to n bytes, returns how many (0 at the end)
 * or -errno. */
typedef long (*sc_tar_source)(void *arg, void *buf, size_t n);

/* A source over bytes in memory (tests, fuzzing): pass sc_tar_mem_read and a sc_tar_mem. */
typedef struct {
    const void *data;
    size_t size, pos;
} sc_tar_mem;
long sc_tar_mem_read(void *mem, void *buf, size_t n);

typedef struct sc_tar_reader sc_tar_reader;
/* Starts reading from src (gzip-compressed or not, told by its first bytes); NULL without memory.
 */
sc_tar_reader *sc_tar_reader_new(sc_tar_source src, void *arg);
/* The next entry into e: 1, 0 at the end of the archive, or a negative errno with err saying
 * what is wrong (an entry of another type, an unsafe name, a size over the bounds, a bad
 * checksum, too many entries, a truncated archive). A file's data must be read (or is skipped)
 * before the next call. */
int sc_tar_next(sc_tar_reader *r, sc_tar_entry *e, sc_error *err);
/* Reads up to n bytes of the current file's data; returns how many (0 at its end) or -errno. */
long sc_tar_read(sc_tar_reader *r, void *buf, size_t n);
void sc_tar_reader_free(sc_tar_reader *r);

/* Cleans an archive's name into out (PATH_MAX bytes): "" for the archive's root ("./"). Returns
 * 0, or -EINVAL for an absolute name, a ".." component or a name too deep, -ENAMETOOLONG. */
int sc_tar_clean_path(const char *name, char *out);

#endif
