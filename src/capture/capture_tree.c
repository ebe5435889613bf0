/* Builds the set of what a passive run touched from the sysroot layer's log. Each logged path is
 * walked again in the captured root component by component, so every symlink on its way is kept
 * as a symlink and every directory as a directory, and the object it ends at is kept as what it
 * is: a file (with its content when the run read it), a directory (with every entry's name and
 * type when the run listed it), a symlink, or a device node, FIFO or socket (metadata only). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture_internal.h"
#include "sc_sysroot_capture.h"
#include "sc_util.h"

static uint64_t hash_path(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int grow_slots(cap_tree *t)
{
    size_t n = t->nslots ? t->nslots * 2 : 1024;
    size_t *slots = calloc(n, sizeof *slots);
    if (!slots)
        return -ENOMEM;
    for (size_t i = 0; i < t->count; i++) {
        size_t s = hash_path(t->items[i].path) & (n - 1);
        while (slots[s])
            s = (s + 1) & (n - 1);
        slots[s] = i + 1;
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = n;
    return 0;
}

/* The slot of path: its entry's, or the empty one where it would go. */
static size_t *slot_of(const cap_tree *t, const char *path)
{
    size_t s = hash_path(path) & (t->nslots - 1);
    while (t->slots[s] && strcmp(t->items[t->slots[s] - 1].path, path) != 0)
        s = (s + 1) & (t->nslots - 1);
    return &t->slots[s];
}

/* The entry of path, added as kind when new (*added tells); NULL for the root and on failure. */
static cap_entry *cap_add(cap_tree *t, const char *path, cap_kind kind, bool *added)
{
    *added = false;
    if (!path[0] || t->rc < 0)
        return NULL;
    if ((t->count + 1) * 2 > t->nslots && (t->rc = grow_slots(t)) < 0)
        return NULL;
    size_t *slot = slot_of(t, path);
    if (*slot)
        return &t->items[*slot - 1];
    if (t->count >= CAP_MAX_ENTRIES) {
        t->rc = -E2BIG;
        return NULL;
    }
    if (t->count == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 1024;
        cap_entry *items = realloc(t->items, cap * sizeof *items);
        if (!items) {
            t->rc = -ENOMEM;
            return NULL;
        }
        t->items = items;
        t->cap = cap;
    }
    cap_entry *e = &t->items[t->count];
    memset(e, 0, sizeof *e);
    e->kind = kind;
    e->path = strdup(path);
    if (!e->path) {
        t->rc = -ENOMEM;
        return NULL;
    }
    *slot = ++t->count;
    *added = true;
    return e;
}

static cap_kind kind_of(mode_t mode)
{
    return S_ISDIR(mode) ? CAP_DIR : S_ISREG(mode) ? CAP_FILE : S_ISLNK(mode) ? CAP_LINK : CAP_NODE;
}

/* Adds the object name under dirfd (name "" for dirfd itself) at canonical path canon, as it is
 * on the captured machine (a capture root's placeholders stand for what they were). */
static cap_entry *note_at(cap_tree *t, int dirfd, const char *name, const char *canon)
{
    struct stat st;
    int flags = AT_SYMLINK_NOFOLLOW | (name[0] ? 0 : AT_EMPTY_PATH);
    if (fstatat(dirfd, name, &st, flags) < 0)
        return NULL;
    sc_replay_fix_stat(t->root, &st);
    bool added;
    cap_entry *e = cap_add(t, canon, kind_of(st.st_mode), &added);
    if (!e || !added)
        return e;
    e->st = st;
    if (e->kind == CAP_LINK) {
        char target[PATH_MAX];
        ssize_t n = readlinkat(dirfd, name, target, sizeof target - 1);
        target[n > 0 ? n : 0] = '\0';
        e->target = strdup(n > 0 ? target : ".");
        t->rc = e->target ? t->rc : -ENOMEM;
    }
    return e;
}

static void on_dir(void *arg, const char *canon)
{
    cap_tree *t = arg;
    note_at(t, t->root->dirfd, canon, canon);
}

static void on_link(void *arg, const char *canon, const char *target)
{
    (void)target; /* read again by note_at, from the link itself */
    cap_tree *t = arg;
    note_at(t, t->root->dirfd, canon, canon);
}

/* Walks path as the run did; returns the object's fd (flags) with its entry in *e, or -errno. */
static int walk(cap_tree *t, const char *path, int flags, bool follow, cap_entry **e, char *canon)
{
    sc_walk_visitor v = {on_dir, on_link, t};
    int fd = sc_root_walk(t->root, path, flags, follow, &v, canon);
    *e = fd >= 0 ? note_at(t, fd, "", canon) : NULL;
    return fd;
}

static void note_content(cap_entry *e, size_t tail)
{
    if (!e || e->kind != CAP_FILE)
        return;
    if (!e->content)
        e->tail = tail;
    else if (tail == 0 || e->tail < tail)
        e->tail = e->tail == 0 ? 0 : tail;
    e->content = true;
}

static void walk_only(cap_tree *t, const char *path, bool follow, bool content, size_t tail)
{
    char canon[PATH_MAX];
    cap_entry *e;
    int fd = walk(t, path, O_PATH, follow, &e, canon);
    if (fd >= 0)
        close(fd);
    if (content)
        note_content(e, tail);
}

/* A listed directory: every entry's name, with what it is. */
static void list_dir(cap_tree *t, const char *path)
{
    char canon[PATH_MAX], child[PATH_MAX];
    cap_entry *e;
    int fd = walk(t, path, O_RDONLY | O_DIRECTORY, true, &e, canon);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    struct dirent *de;
    while (t->rc == 0 && (de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if (sc_fmt(child, sizeof child, "%s%s%s", canon, canon[0] ? "/" : "", de->d_name))
            note_at(t, dirfd(d), de->d_name, child);
    }
    closedir(d);
}

/* Errors a replay's tree gives by itself need no record. */
static bool tree_answers(int code)
{
    static const int own[] = {ENOENT, ENOTDIR,    ELOOP,      ENAMETOOLONG,
                              EISDIR, SC_ENOTREG, SC_EOMITTED};
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        if (-code == own[i])
            return true;
    return false;
}

static void note_error(cap_tree *t, const char *call, const sc_rec *rec)
{
    if (rec->rc >= 0 || tree_answers(rec->rc))
        return;
    char name[32];
    sc_errno_name(rec->rc, name, sizeof name);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "call", call);
    cJSON_AddStringToObject(o, "path", rec->path);
    cJSON_AddStringToObject(o, "error", name);
    if (!o || !cJSON_AddItemToArray(t->errors, o))
        t->rc = -ENOMEM;
}

static void note_access(cap_tree *t, const sc_rec *rec)
{
    char name[32] = "ok";
    if (rec->rc < 0)
        sc_errno_name(rec->rc, name, sizeof name);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "path", rec->path);
    cJSON_AddNumberToObject(o, "mode", rec->arg & 7);
    cJSON_AddStringToObject(o, "result", name);
    if (!o || !cJSON_AddItemToArray(t->access, o))
        t->rc = -ENOMEM;
}

/* The directories of a clean path that no walk found (a live text where the root has none). */
static void add_parents(cap_tree *t, const char *canon)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", canon);
    for (char *slash = strchr(dir, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        bool added;
        cap_entry *e = cap_add(t, dir, CAP_DIR, &added);
        if (e && added)
            e->st.st_mode = S_IFDIR | 0755;
        *slash = '/';
    }
}

/* A live source's text becomes the file a replay reads at its path, whatever was there. */
static void live_text(cap_tree *t, const sc_rec *rec)
{
    char dir[PATH_MAX], at[PATH_MAX], clean[PATH_MAX], text[PATH_MAX];
    const char *base = sc_path_dirname(rec->path, dir, sizeof dir);
    cap_entry *d;
    int fd = walk(t, dir, O_PATH, true, &d, at);
    if (fd >= 0)
        close(fd);
    bool placed =
        fd >= 0 && d && d->kind == CAP_DIR && sc_fmt(clean, sizeof clean, "%s/%s", at, base);
    if (!placed && sc_tar_clean_path(rec->path + (rec->path[0] == '/'), clean) < 0)
        return;
    add_parents(t, clean);
    sc_root_log_text_path(t->logdir, rec, text, sizeof text);
    bool added;
    cap_entry *e = cap_add(t, clean, CAP_FILE, &added);
    struct stat st;
    if (!e || stat(text, &st) < 0)
        return;
    free(e->target);
    free(e->live_text);
    *e = (cap_entry){.path = e->path, .kind = CAP_FILE, .content = true, .st = st};
    e->st.st_mode = S_IFREG | 0444;
    e->live_text = strdup(text);
    t->rc = e->live_text ? t->rc : -ENOMEM;
}

static int on_record(void *arg, const sc_rec *rec)
{
    cap_tree *t = arg;
    switch (rec->op) {
    case SC_REC_READ:
    case SC_REC_TAIL:
        walk_only(t, rec->path, true, true, rec->op == SC_REC_TAIL ? (size_t)rec->arg : 0);
        note_error(t, "read", rec);
        break;
    case SC_REC_LOOKUP:
        walk_only(t, rec->path, true, false, 0);
        note_error(t, "lookup", rec);
        break;
    case SC_REC_LSTAT:
        walk_only(t, rec->path, false, false, 0);
        note_error(t, "lstat", rec);
        break;
    case SC_REC_LIST:
        list_dir(t, rec->path);
        note_error(t, "list", rec);
        break;
    case SC_REC_ACCESS:
        walk_only(t, rec->path, true, false, 0);
        note_access(t, rec);
        break;
    case SC_REC_LIVE:
        if (rec->rc < 0) {
            walk_only(t, rec->path, true, false, 0);
            note_error(t, "read", rec);
        } else {
            live_text(t, rec);
        }
        break;
    default: break;
    }
    return t->rc;
}

/* The log's path made absolute: a relative path read on the host is the working directory's. */
static int on_record_abs(void *arg, const sc_rec *rec)
{
    cap_tree *t = arg;
    char cwd[PATH_MAX];
    if (rec->path[0] == '/' || !t->root->is_host || !getcwd(cwd, sizeof cwd))
        return on_record(arg, rec);
    sc_rec *abs = malloc(sizeof *abs);
    if (!abs)
        return t->rc = -ENOMEM;
    *abs = *rec;
    int rc = sc_fmt(abs->path, sizeof abs->path, "%s/%s", cwd, rec->path) ? on_record(arg, abs) : 0;
    free(abs);
    return rc;
}

int cap_tree_build(cap_tree *t, const sc_root *root, const char *logdir)
{
    memset(t, 0, sizeof *t);
    t->root = root;
    t->logdir = logdir;
    t->errors = cJSON_CreateArray();
    t->access = cJSON_CreateArray();
    if (!t->errors || !t->access)
        return -ENOMEM;
    int rc = sc_root_log_each(logdir, on_record_abs, t);
    return rc < 0 ? rc : t->rc;
}

void cap_tree_free(cap_tree *t)
{
    for (size_t i = 0; i < t->count; i++) {
        free(t->items[i].path);
        free(t->items[i].target);
        free(t->items[i].live_text);
    }
    free(t->items);
    free(t->slots);
    cJSON_Delete(t->errors);
    cJSON_Delete(t->access);
    memset(t, 0, sizeof *t);
}
