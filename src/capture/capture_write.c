/* Writes the capture: which contents fit the limits (smallest first, so a limit drops the largest
 * files), each file's bytes through the capture's door (src/core/redact_capture.c), the entries in
 * path order, the manifest last, and the tarball through the one output writer. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "capture_internal.h"
#include "sc_host.h"
#include "sc_output.h"
#include "sc_redact.h"
#include "sc_sysroot_capture.h"
#include "sc_version.h"

#define MANIFEST_DIR ".stackcheck"
#define MAX_KEEP_IDS 512

static const char denied_reason[] = "never captured: it may hold secrets";
static const char file_limit_reason[] = "larger than the capture's limit for one file";
static const char total_limit_reason[] = "over the capture's limit for all files";

static int by_size(const void *a, const void *b)
{
    const cap_entry *x = *(cap_entry *const *)a, *y = *(cap_entry *const *)b;
    if (x->st.st_size != y->st.st_size)
        return x->st.st_size < y->st.st_size ? -1 : 1;
    return strcmp(x->path, y->path);
}

static int by_path(const void *a, const void *b)
{
    return strcmp((*(cap_entry *const *)a)->path, (*(cap_entry *const *)b)->path);
}

/* The bytes a content will take: a tail's at most, a procfs file's (size 0) counted at once. */
static unsigned long long planned_size(const cap_entry *e)
{
    unsigned long long size = e->st.st_size > 0 ? (unsigned long long)e->st.st_size : 0;
    return e->tail && size > e->tail ? e->tail : size;
}

/* Decides which contents are left out, smallest first; entries gets every entry (path order). */
static int plan(cap_tree *t, const cap_limits *lim, cap_entry ***entries)
{
    cap_entry **all = calloc(t->count + 1, sizeof *all);
    if (!all)
        return -ENOMEM;
    size_t n = 0;
    for (size_t i = 0; i < t->count; i++)
        if (t->items[i].content)
            all[n++] = &t->items[i];
    qsort(all, n, sizeof *all, by_size);
    unsigned long long total = 0;
    for (size_t i = 0; i < n; i++) {
        char abs[PATH_MAX + 1];
        unsigned long long size = planned_size(all[i]);
        snprintf(abs, sizeof abs, "/%s", all[i]->path);
        if (sc_redact_capture_denied(abs))
            all[i]->omitted = denied_reason;
        else if (size > lim->max_file)
            all[i]->omitted = file_limit_reason;
        else if (size > lim->max_total - total)
            all[i]->omitted = total_limit_reason;
        else
            total += size;
    }
    for (size_t i = 0; i < t->count; i++)
        all[i] = &t->items[i];
    qsort(all, t->count, sizeof *all, by_path);
    *entries = all;
    return 0;
}

/* The ids whose account names a replay needs beyond the system's: ours and the nodes' owners. */
static size_t keep_ids(const cap_tree *t, unsigned *ids)
{
    size_t n = 0;
    ids[n++] = (unsigned)geteuid();
    ids[n++] = (unsigned)getegid();
    gid_t groups[256];
    int ng = getgroups(256, groups);
    for (int i = 0; i < ng && n < MAX_KEEP_IDS; i++)
        ids[n++] = (unsigned)groups[i];
    for (size_t i = 0; i < t->count && n + 2 <= MAX_KEEP_IDS; i++)
        if (t->items[i].kind == CAP_NODE) {
            ids[n++] = (unsigned)t->items[i].st.st_uid;
            ids[n++] = (unsigned)t->items[i].st.st_gid;
        }
    return n;
}

/* Reads a content: the live text's file, or the file in the root (its tail when asked), at most
 * max bytes (*over when it has more). Returns the length or -errno. */
static long read_content(const cap_tree *t, const cap_entry *e, size_t max, char **data, bool *over)
{
    char abs[PATH_MAX + 1];
    struct stat st;
    snprintf(abs, sizeof abs, "/%s", e->path);
    int fd =
        e->live_text ? sc_open_regular(e->live_text, &st) : sc_root_open_file(t->root, abs, &st);
    if (fd < 0)
        return fd;
    if (e->tail && st.st_size > (off_t)e->tail)
        lseek(fd, st.st_size - (off_t)e->tail, SEEK_SET);
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    long n = sc_read_fd(fd, st.st_size > 0 ? (size_t)st.st_size : 0, max + 1, data);
    close(fd);
    *over = n > (long)max;
    return n;
}

typedef struct {
    cap_tree *t;
    const cap_limits *lim;
    sc_tar_writer w;
    cap_stats *stats;
    unsigned ids[MAX_KEEP_IDS];
    size_t nids;
    unsigned long long left; /* of the total limit */
    cJSON *omitted, *nodes;
} writing;

static void note_omitted(writing *wr, cap_entry *e, const char *why)
{
    char abs[PATH_MAX + 1];
    snprintf(abs, sizeof abs, "/%s", e->path);
    e->omitted = why;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "path", abs);
    cJSON_AddNumberToObject(o, "size", e->st.st_size > 0 ? (double)e->st.st_size : 0);
    cJSON_AddStringToObject(o, "reason", why);
    cJSON_AddItemToArray(wr->omitted, o);
    wr->stats->omitted++;
}

/* Why a capture of a capture leaves out what the capture replayed left out. */
static const char *replayed_omission(const writing *wr, const char *abs)
{
    struct stat st;
    const char *why = NULL;
    int fd = sc_root_lookup(wr->t->root, abs, O_PATH);
    if (fd >= 0 && fstat(fd, &st) == 0)
        why = sc_replay_omitted_reason(wr->t->root, &st);
    if (fd >= 0)
        close(fd);
    return why ? why : "omitted by the capture replayed";
}

/* Reads e's content into *data (*n bytes); returns why it is left out instead, or NULL. */
static const char *content_or_why(writing *wr, cap_entry *e, const char *abs, char **data, long *n)
{
    if (e->omitted)
        return e->omitted;
    size_t max = wr->lim->max_file < wr->left ? wr->lim->max_file : wr->left;
    bool over = false;
    *n = read_content(wr->t, e, max, data, &over);
    if (*n == -SC_EOMITTED)
        return replayed_omission(wr, abs);
    if (*n < 0)
        return "not readable when the capture was written";
    if (over)
        return wr->left < wr->lim->max_file ? total_limit_reason : file_limit_reason;
    return NULL;
}

/* The content of e through the door, or an empty placeholder when it is left out. */
static int add_content(writing *wr, cap_entry *e)
{
    char abs[PATH_MAX + 1], *data = NULL, *clean = NULL;
    snprintf(abs, sizeof abs, "/%s", e->path);
    long n = 0;
    size_t clean_len = 0;
    const char *why = content_or_why(wr, e, abs, &data, &n);
    int door =
        why ? 0 : sc_redact_capture(abs, data, (size_t)n, wr->ids, wr->nids, &clean, &clean_len);
    int rc = door < 0 ? door : 0;
    if (rc == 0 && why)
        note_omitted(wr, e, why);
    if (rc == 0) {
        const char *bytes = why ? "" : door ? clean : data;
        size_t len = why ? 0 : door ? clean_len : (size_t)n;
        rc = sc_tar_add(&wr->w, SC_TAR_FILE, e->path, e->st.st_mode & 0755, NULL, bytes, len);
        wr->left = len < wr->left ? wr->left - len : 0;
        wr->stats->bytes += len;
        wr->stats->files += !why;
    }
    free(data);
    free(clean);
    return rc;
}

static const char *node_type(mode_t mode)
{
    return S_ISCHR(mode)    ? "character device"
           : S_ISBLK(mode)  ? "block device"
           : S_ISFIFO(mode) ? "FIFO"
                            : "socket";
}

/* A device node, FIFO or socket: an empty placeholder, and its metadata in the manifest. */
static int add_node(writing *wr, const cap_entry *e)
{
    char abs[PATH_MAX + 1], mode[8], name[256];
    snprintf(abs, sizeof abs, "/%s", e->path);
    snprintf(mode, sizeof mode, "%04o", (unsigned)(e->st.st_mode & 07777));
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "path", abs);
    cJSON_AddStringToObject(o, "type", node_type(e->st.st_mode));
    cJSON_AddNumberToObject(o, "major", major(e->st.st_rdev));
    cJSON_AddNumberToObject(o, "minor", minor(e->st.st_rdev));
    cJSON_AddStringToObject(o, "mode", mode);
    cJSON_AddNumberToObject(o, "uid", e->st.st_uid);
    cJSON_AddNumberToObject(o, "gid", e->st.st_gid);
    if (sc_user_name(wr->t->root, e->st.st_uid, name, sizeof name))
        cJSON_AddStringToObject(o, "owner", name);
    if (sc_group_name(wr->t->root, e->st.st_gid, name, sizeof name))
        cJSON_AddStringToObject(o, "group", name);
    cJSON_AddItemToArray(wr->nodes, o);
    wr->stats->nodes++;
    return sc_tar_add(&wr->w, SC_TAR_FILE, e->path, 0600, NULL, "", 0);
}

static int add_entry(writing *wr, cap_entry *e)
{
    if (strcmp(e->path, MANIFEST_DIR) == 0 || strncmp(e->path, MANIFEST_DIR "/", 12) == 0)
        return 0; /* a capture of a capture: its manifest is written anew */
    switch (e->kind) {
    case CAP_DIR:
        wr->stats->dirs++;
        return sc_tar_add(&wr->w, SC_TAR_DIR, e->path, e->st.st_mode & 0755, NULL, NULL, 0);
    case CAP_LINK:
        wr->stats->links++;
        return sc_tar_add(&wr->w, SC_TAR_LINK, e->path, 0777, e->target, NULL, 0);
    case CAP_NODE: return add_node(wr, e);
    case CAP_FILE:
        if (e->content)
            return add_content(wr, e);
        wr->stats->placeholders++;
        return sc_tar_add(&wr->w, SC_TAR_FILE, e->path, e->st.st_mode & 0755, NULL, "", 0);
    }
    return 0;
}

/* The manifest: what a replay answers from (see sc_sysroot_capture.h and docs/probes.md). */
static char *manifest_text(writing *wr)
{
    extern char **environ;
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "format", SC_CAPTURE_FORMAT);
    cJSON *tool = cJSON_AddObjectToObject(m, "tool");
    cJSON_AddStringToObject(tool, "name", "stackcheck");
    cJSON_AddStringToObject(tool, "version", SC_VERSION);
    cJSON_AddStringToObject(m, "created", wr->lim->created_text);
    cJSON_AddStringToObject(m, "root", sc_root_live(wr->t->root) ? "live" : "sysroot");
    cJSON *limits = cJSON_AddObjectToObject(m, "limits");
    cJSON_AddNumberToObject(limits, "max_file_size", (double)wr->lim->max_file);
    cJSON_AddNumberToObject(limits, "max_size", (double)wr->lim->max_total);
    cJSON_AddItemToObject(m, "env", sc_env_capture_replayed(environ));
    cJSON_AddItemReferenceToObject(m, "nodes", wr->nodes);
    cJSON_AddItemReferenceToObject(m, "omitted", wr->omitted);
    cJSON_AddItemReferenceToObject(m, "errors", wr->t->errors);
    cJSON_AddItemReferenceToObject(m, "access", wr->t->access);
    char *text = cJSON_Print(m);
    cJSON_Delete(m);
    return text;
}

static int add_manifest(writing *wr)
{
    char *text = manifest_text(wr);
    if (!text)
        return -ENOMEM;
    int rc = sc_tar_add(&wr->w, SC_TAR_DIR, MANIFEST_DIR, 0755, NULL, NULL, 0);
    if (rc == 0)
        rc = sc_tar_add(&wr->w, SC_TAR_FILE, MANIFEST_DIR "/capture.json", 0644, NULL, text,
                        strlen(text));
    free(text);
    return rc;
}

static int write_all_entries(writing *wr, cap_entry **entries, sc_buf *archive)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < wr->t->count; i++)
        rc = add_entry(wr, entries[i]);
    if (rc == 0)
        rc = add_manifest(wr);
    return rc == 0 ? sc_tar_finish(&wr->w, archive) : rc;
}

int cap_write(cap_tree *t, const cap_limits *lim, const char *out, cap_stats *stats, sc_error *err)
{
    memset(stats, 0, sizeof *stats);
    writing *wr = calloc(1, sizeof *wr);
    cap_entry **entries = NULL;
    if (!wr || plan(t, lim, &entries) < 0 || sc_tar_writer_init(&wr->w, 6, lim->created) < 0) {
        if (wr)
            sc_tar_writer_free(&wr->w);
        free(wr);
        free(entries);
        return sc_error_set(err, -ENOMEM, "out of memory");
    }
    wr->t = t;
    wr->lim = lim;
    wr->stats = stats;
    wr->left = lim->max_total;
    wr->nids = keep_ids(t, wr->ids);
    wr->omitted = cJSON_CreateArray();
    wr->nodes = cJSON_CreateArray();
    sc_buf archive;
    sc_buf_init(&archive);
    int rc = wr->omitted && wr->nodes ? write_all_entries(wr, entries, &archive) : -ENOMEM;
    if (rc < 0)
        sc_error_set(err, rc, "cannot build the capture: %s", strerror(-rc));
    else
        rc = sc_output_write(out, archive.data, archive.len, err);
    stats->archive = archive.len;
    sc_buf_free(&archive);
    sc_tar_writer_free(&wr->w);
    cJSON_Delete(wr->omitted);
    cJSON_Delete(wr->nodes);
    free(entries);
    free(wr);
    return rc;
}
