/* The replay's tables, shared by the file that answers from them (sysroot_replay.c) and the one
 * that reads them from a capture's manifest (sysroot_replay_load.c). */
#ifndef SC_SYSROOT_REPLAY_INTERNAL_H
#define SC_SYSROOT_REPLAY_INTERNAL_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <sys/types.h>

/* An empty regular file that stands for what the captured machine had: a device node, FIFO or
 * socket (mode, rdev, owner), or a file whose content was omitted (reason). */
typedef struct {
    dev_t dev; /* the placeholder's, in the replayed tree */
    ino_t ino;
    mode_t mode; /* type and permissions of the captured object (0 for an omitted file) */
    dev_t rdev;
    uid_t uid;
    gid_t gid;
    off_t size;
    char *reason; /* an omitted file's */
} sc_replay_placeholder;

/* What a call on a path got on the captured machine: an error, or an access(2) answer. */
typedef struct {
    char op;
    int mode; /* access only */
    int code; /* 0 or negative */
    char *path;
} sc_replay_answer;

struct sc_replay {
    bool live; /* a capture of a live system */
    sc_replay_placeholder *items;
    size_t count;
    sc_replay_answer *answers; /* errors and access answers */
    size_t answer_count;
    cJSON *env;
};

/* The orders the tables are sorted in: by (dev, ino), and by (op, path, mode). */
int sc_replay_cmp_placeholder(const void *a, const void *b);
int sc_replay_cmp_answer(const void *a, const void *b);

#endif
