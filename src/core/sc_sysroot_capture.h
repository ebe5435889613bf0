/* The sysroot layer's side of a capture: the log of every call a passive run makes through a root
 * (kept across forks: isolated children append to the same file), the component walk that names
 * each symlink it follows, and the tables a replay answers from (the capture's manifest).
 * Internal to the sysroot layer and src/capture. */
#ifndef SC_SYSROOT_CAPTURE_H
#define SC_SYSROOT_CAPTURE_H

#include <cjson/cJSON.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "sc_sysroot.h"
#include "sc_types.h"

/* The calls the log records, one letter each; a replay answers an error by the same letter. */
enum {
    SC_REC_READ = 'R',   /* sc_root_open_file and the reads built on it */
    SC_REC_TAIL = 'T',   /* sc_root_open_tail; arg: the tail's bytes (at most INT_MAX) */
    SC_REC_LOOKUP = 'L', /* sc_root_openat, sc_root_stat (following), exists, realpath */
    SC_REC_LSTAT = 'N',  /* sc_root_stat (not following), sc_root_readlink: the last component */
    SC_REC_LIST = 'D',   /* sc_root_opendir: the directory and every entry's name and type */
    SC_REC_ACCESS = 'A', /* sc_root_access; arg: the mode asked */
    SC_REC_LIVE = 'B',   /* sc_root_note_live; arg: the number of its text file, -1 for an error */
};

/* One record of the log. */
typedef struct {
    char op;
    int rc;  /* what the call returned: 0 or -errno */
    int arg; /* see the letters above */
    int pid; /* who made the call (a live text's file is named by it) */
    char path[PATH_MAX];
} sc_rec;

/* Starts a log in the directory dir (private, made by the caller) and attaches it to root;
 * returns 0 or -errno with err filled. */
int sc_root_log_start(sc_root *root, const char *dir, sc_error *err);
/* Detaches and frees root's log (its files stay in dir). */
void sc_root_log_stop(sc_root *root);
/* Reads the log in dir record by record: calls fn for each (stops when fn returns non-zero);
 * returns 0, fn's value, or -errno. */
int sc_root_log_each(const char *dir, int (*fn)(void *arg, const sc_rec *rec), void *arg);
/* The file in dir that holds the text of live record rec, into buf. */
void sc_root_log_text_path(const char *dir, const sc_rec *rec, char *buf, size_t size);
/* Appends rec to root's log (no-op without one). */
void sc_root_log_note(const sc_root *root, char op, const char *path, int arg, int rc);

/* sc_root_openat without the log or a replay's answers: the layer's own lookups. */
int sc_root_lookup(const sc_root *root, const char *path, int flags);

/* What a component walk tells its visitor: each directory it enters and each symlink it follows,
 * by their canonical paths inside the root ("" is the root, no leading slash). */
typedef struct {
    void (*on_dir)(void *arg, const char *canon);
    void (*on_link)(void *arg, const char *canon, const char *target);
    void *arg;
} sc_walk_visitor;
/* Resolves path inside root by a component walk (".." and absolute symlinks stay inside), telling
 * v what it passes; canon gets the canonical path of what the result names (PATH_MAX bytes).
 * Returns an fd opened with flags (O_PATH: the object itself) or -errno. */
int sc_root_walk(const sc_root *root, const char *path, int flags, bool follow,
                 const sc_walk_visitor *v, char *canon);

/* The manifest's file inside a capture root. */
#define SC_CAPTURE_MANIFEST "/.stackcheck/capture.json"
#define SC_CAPTURE_FORMAT "stackcheck-capture/1"
/* The largest manifest a replay reads, and the most entries of each table. */
#define SC_CAPTURE_MANIFEST_MAX (64u << 20)
#define SC_CAPTURE_TABLE_MAX 200000

/* Builds root's replay tables from a manifest's text (len bytes): nodes and omitted files are
 * found by their placeholders in the root. Returns 0, or -EINVAL with err saying what is wrong. */
int sc_replay_parse(sc_root *root, const char *text, size_t len, sc_error *err);
/* Loads root's manifest when it has one (0 without one); sets the captured environment. */
int sc_replay_load(sc_root *root, sc_error *err);
/* Frees root's replay tables. */
void sc_replay_free(sc_root *root);
/* The error the captured machine gave call op on path (0 when none is recorded). */
int sc_replay_error(const sc_root *root, char op, const char *path);
/* The answer the captured machine gave access(path, mode): 0 or -errno in *rc; false when none
 * is recorded. */
bool sc_replay_access(const sc_root *root, const char *path, int mode, int *rc);
/* Makes st (of an object inside the root) say what the captured machine's object was: a device
 * node, FIFO or socket for its placeholder. Returns -SC_EOMITTED for the placeholder of an
 * omitted file, else 0. */
int sc_replay_fix_stat(const sc_root *root, struct stat *st);
/* Why the capture omitted the file whose placeholder st describes, or NULL. */
const char *sc_replay_omitted_reason(const sc_root *root, const struct stat *st);
/* The captured environment (an object of names and values), or NULL. */
const cJSON *sc_replay_env(const sc_root *root);

/* Errno names for the manifest ("EACCES"), the codes of this layer too ("ENOTREG", "EOMITTED");
 * an unknown code is "E" and its number. sc_errno_parse returns the code (positive) or 0. */
void sc_errno_name(int code, char *buf, size_t size);
int sc_errno_parse(const char *name);

#endif
