/* /etc/ld.so.conf as ldconfig reads it: one directory per line, '#' comments, "include PATTERN..."
 * lines naming more files (a pattern relative to the including file's directory; wildcards in the
 * last name only). The loader never reads it, only the cache ldconfig builds from it; the loader
 * model reads it where a root has no cache (an image before ldconfig ran, a fixture), as what
 * that cache would hold. */
#ifndef SC_LDCONF_H
#define SC_LDCONF_H

#include <stddef.h>

#include "sc_sysroot.h"

#define SC_LDCONF_MAX_DIRS 256 /* directories kept; more are ignored */
#define SC_LDCONF_MAX_DEPTH 4  /* include nesting */
#define SC_LDCONF_MAX_FILES 64 /* files one include pattern takes */

/* What one file's text says, line by line. */
typedef struct {
    void (*dir)(void *arg, const char *dir);         /* an absolute directory, trailing '/' cut */
    void (*include)(void *arg, const char *pattern); /* one pattern of an include line */
    void *arg;
} sc_ldconf_sink;

/* Parses the text of one configuration file into sink's calls. Relative directories (ldconfig
 * warns and the cache cannot use them), "hwcap" lines and lines longer than PATH_MAX are
 * skipped. */
void sc_ldconf_parse(const char *text, const sc_ldconf_sink *sink);

typedef struct {
    char **dirs; /* NULL-terminated, in order, each once */
    size_t count;
} sc_ldconf;

/* Reads /etc/ld.so.conf inside root with its includes into conf. Returns 0, -ENOENT when there
 * is no readable ld.so.conf (conf is then empty), or -ENOMEM. */
int sc_ldconf_load(const sc_root *root, sc_ldconf *conf);
/* Frees what sc_ldconf_load allocated. */
void sc_ldconf_free(sc_ldconf *conf);

#endif
