/* A replay answers as the captured machine did: its manifest (written by `stackcheck capture`)
 * names the device nodes, FIFOs and sockets whose empty placeholders stand in the tree, the files
 * whose content was omitted, the errors calls got (EACCES for a user without rights, EPERM on
 * /dev/kmsg) and the answers access(2) gave. Tables are sorted once and searched by bisection. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sc_sysroot_capture.h"
#include "sc_util.h"
#include "sysroot_replay_internal.h"

static const struct {
    int code;
    const char *name;
} errno_names[] = {
    {EPERM, "EPERM"},
    {ENOENT, "ENOENT"},
    {EIO, "EIO"},
    {ENXIO, "ENXIO"},
    {EBADF, "EBADF"},
    {EAGAIN, "EAGAIN"},
    {ENOMEM, "ENOMEM"},
    {EACCES, "EACCES"},
    {EBUSY, "EBUSY"},
    {EEXIST, "EEXIST"},
    {ENODEV, "ENODEV"},
    {ENOTDIR, "ENOTDIR"},
    {EISDIR, "EISDIR"},
    {EINVAL, "EINVAL"},
    {EFBIG, "EFBIG"},
    {ENAMETOOLONG, "ENAMETOOLONG"},
    {ELOOP, "ELOOP"},
    {EOVERFLOW, "EOVERFLOW"},
    {ESTALE, "ESTALE"},
    {EOPNOTSUPP, "EOPNOTSUPP"},
    {ENOSYS, "ENOSYS"},
    {EINTR, "EINTR"},
    {ETIMEDOUT, "ETIMEDOUT"},
    {ENOEXEC, "ENOEXEC"},
    {SC_ENOTREG, "ENOTREG"},
    {SC_EOMITTED, "EOMITTED"},
};

void sc_errno_name(int code, char *buf, size_t size)
{
    code = code < 0 ? -code : code;
    for (size_t i = 0; i < sizeof errno_names / sizeof errno_names[0]; i++)
        if (errno_names[i].code == code) {
            snprintf(buf, size, "%s", errno_names[i].name);
            return;
        }
    snprintf(buf, size, "E%d", code);
}

int sc_errno_parse(const char *name)
{
    for (size_t i = 0; name && i < sizeof errno_names / sizeof errno_names[0]; i++)
        if (strcmp(errno_names[i].name, name) == 0)
            return errno_names[i].code;
    uint64_t v;
    if (name && name[0] == 'E' && sc_parse_u64(name + 1, &v) == 0 && v > 0 && v < 4096)
        return (int)v;
    return 0;
}

int sc_replay_cmp_placeholder(const void *a, const void *b)
{
    const sc_replay_placeholder *x = a, *y = b;
    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    return x->ino < y->ino ? -1 : x->ino > y->ino;
}

int sc_replay_cmp_answer(const void *a, const void *b)
{
    const sc_replay_answer *x = a, *y = b;
    if (x->op != y->op)
        return x->op < y->op ? -1 : 1;
    int c = strcmp(x->path, y->path);
    return c ? c : (x->mode > y->mode) - (x->mode < y->mode);
}

static const sc_replay_placeholder *find_placeholder(const struct sc_replay *r,
                                                     const struct stat *st)
{
    sc_replay_placeholder key = {.dev = st->st_dev, .ino = st->st_ino};
    return r && r->count ? bsearch(&key, r->items, r->count, sizeof key, sc_replay_cmp_placeholder)
                         : NULL;
}

static const sc_replay_answer *find_answer(const struct sc_replay *r, char op, const char *path,
                                           int mode)
{
    sc_replay_answer key = {.op = op, .mode = mode, .path = (char *)path};
    return r && r->answer_count
               ? bsearch(&key, r->answers, r->answer_count, sizeof key, sc_replay_cmp_answer)
               : NULL;
}

int sc_replay_error(const sc_root *root, char op, const char *path)
{
    const sc_replay_answer *a = find_answer(root->replay, op, path, 0);
    return a ? a->code : 0;
}

bool sc_replay_access(const sc_root *root, const char *path, int mode, int *rc)
{
    const sc_replay_answer *a = find_answer(root->replay, SC_REC_ACCESS, path, mode);
    if (a)
        *rc = a->code;
    return a != NULL;
}

int sc_replay_fix_stat(const sc_root *root, struct stat *st)
{
    const sc_replay_placeholder *p = find_placeholder(root->replay, st);
    if (!p)
        return 0;
    st->st_size = p->size;
    if (p->reason)
        return -SC_EOMITTED;
    st->st_mode = p->mode;
    st->st_rdev = p->rdev;
    st->st_uid = p->uid;
    st->st_gid = p->gid;
    return 0;
}

const char *sc_replay_omitted_reason(const sc_root *root, const struct stat *st)
{
    const sc_replay_placeholder *p = find_placeholder(root->replay, st);
    return p ? p->reason : NULL;
}

const cJSON *sc_replay_env(const sc_root *root)
{
    return root->replay ? root->replay->env : NULL;
}

bool sc_root_live(const sc_root *root)
{
    return root->is_host || (root->replay && root->replay->live);
}

void sc_replay_free(sc_root *root)
{
    struct sc_replay *r = root->replay;
    if (!r)
        return;
    for (size_t i = 0; i < r->count; i++)
        free(r->items[i].reason);
    for (size_t i = 0; i < r->answer_count; i++)
        free(r->answers[i].path);
    free(r->items);
    free(r->answers);
    cJSON_Delete(r->env);
    free(r);
    root->replay = NULL;
}
