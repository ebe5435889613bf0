/* What a capture is made of between the passive run and the tarball: the set of paths the run
 * touched, each as what it is in the captured root, and the calls' answers a replay needs. */
#ifndef SC_CAPTURE_INTERNAL_H
#define SC_CAPTURE_INTERNAL_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "sc_sysroot.h"
#include "sc_tar.h"

typedef enum { CAP_DIR, CAP_FILE, CAP_LINK, CAP_NODE } cap_kind;

typedef struct {
    char *path; /* canonical inside the root: relative, no symlink on the way */
    cap_kind kind;
    bool content;        /* a file whose bytes the run read */
    size_t tail;         /* of those, only the last tail bytes (0: all) */
    char *target;        /* a link's */
    char *live_text;     /* a live source's text (kmsg, uname): its file in the log's directory */
    struct stat st;      /* what it is on the captured machine */
    const char *omitted; /* why its content is left out (decided when writing) */
} cap_entry;

/* The most paths a capture holds (a replay's reader takes SC_TAR_MAX_ENTRIES entries, and the
 * manifest and pax headers need some). */
#define CAP_MAX_ENTRIES (SC_TAR_MAX_ENTRIES / 2 - 16)

typedef struct {
    const sc_root *root;
    const char *logdir;
    cap_entry *items;
    size_t count, cap;
    size_t *slots; /* open addressing over items: index + 1, 0 for an empty slot */
    size_t nslots;
    cJSON *errors; /* [{call, path, error}] */
    cJSON *access; /* [{path, mode, result}] */
    int rc;        /* the first failure: -ENOMEM, or -E2BIG over CAP_MAX_ENTRIES */
} cap_tree;

/* Builds t from the log in logdir of a passive run through root; returns 0 or -errno (-E2BIG
 * when the run touched over CAP_MAX_ENTRIES paths). */
int cap_tree_build(cap_tree *t, const sc_root *root, const char *logdir);
void cap_tree_free(cap_tree *t);

/* How a capture is written, and what it holds in the end. */
typedef struct {
    unsigned long long max_file, max_total; /* content limits, bytes */
    long long created;                      /* the capture's time (seconds since the epoch) */
    const char *created_text;               /* the same, RFC 3339 */
} cap_limits;

typedef struct {
    size_t files, placeholders, dirs, links, nodes, omitted;
    unsigned long long bytes;   /* content held */
    unsigned long long archive; /* the tarball's size */
} cap_stats;

/* Writes t as a capture tarball to out (through the one output writer); returns 0 or -errno with
 * err filled. */
int cap_write(cap_tree *t, const cap_limits *limits, const char *out, cap_stats *stats,
              sc_error *err);

#endif
