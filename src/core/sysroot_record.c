/* The log a capture keeps of the calls a passive run makes through its root. Records are appended
 * with one write(2) each to a file opened O_APPEND, so the isolated children a probe forks (which
 * inherit the descriptor) add theirs to the same log; a live source's text goes to a file of its
 * own, named by the writer's pid and a counter. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sc_sysroot_capture.h"
#include "sc_util.h"

#define LOG_NAME "calls.log"

struct sc_root_log {
    int fd;              /* the log, O_APPEND */
    int dirfd;           /* the capture's private directory */
    unsigned next_text;  /* the number of the next live text this process writes */
    pid_t counter_owner; /* a forked child starts its own count (its pid names its files) */
};

/* The fixed part of a record on disk; the path's bytes follow. */
typedef struct {
    char op;
    int32_t rc, arg, pid;
    uint32_t len;
} rec_head;

int sc_root_log_start(sc_root *root, const char *dir, sc_error *err)
{
    struct sc_root_log *log = calloc(1, sizeof *log);
    if (!log)
        return sc_error_set(err, -ENOMEM, "out of memory");
    log->dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    log->fd = log->dirfd < 0 ? -1
                             : openat(log->dirfd, LOG_NAME,
                                      O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600);
    if (log->fd < 0) {
        int e = errno;
        if (log->dirfd >= 0)
            close(log->dirfd);
        free(log);
        return sc_error_set(err, -e, "cannot start the capture's log in %s: %s", dir, strerror(e));
    }
    log->counter_owner = getpid();
    root->log = log;
    return 0;
}

void sc_root_log_stop(sc_root *root)
{
    if (!root->log)
        return;
    close(root->log->fd);
    close(root->log->dirfd);
    free(root->log);
    root->log = NULL;
}

static void append(const struct sc_root_log *log, char op, const char *path, int arg, int rc)
{
    size_t len = strnlen(path, PATH_MAX - 1);
    char buf[sizeof(rec_head) + PATH_MAX];
    rec_head h;
    memset(&h, 0, sizeof h); /* no uninitialised padding on disk */
    h = (rec_head){op, rc, arg, (int32_t)getpid(), (uint32_t)len};
    memcpy(buf, &h, sizeof h);
    memcpy(buf + sizeof h, path, len);
    (void)!write(log->fd, buf, sizeof h + len); /* a lost record costs the replay one answer */
}

void sc_root_log_note(const sc_root *root, char op, const char *path, int arg, int rc)
{
    if (root->log)
        append(root->log, op, path, arg, rc);
}

void sc_root_log_text_path(const char *dir, const sc_rec *rec, char *buf, size_t size)
{
    snprintf(buf, size, "%s/live-%d-%d", dir, rec->pid, rec->arg);
}

/* Writes text to a new file of the log's directory; returns its number or -1. */
static int write_text(struct sc_root_log *log, const char *text, size_t len)
{
    if (log->counter_owner != getpid()) {
        log->counter_owner = getpid();
        log->next_text = 0;
    }
    char name[64];
    int number = (int)log->next_text++;
    snprintf(name, sizeof name, "live-%d-%d", (int)getpid(), number);
    int fd = openat(log->dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    bool ok = true;
    for (size_t done = 0; ok && done < len;) {
        ssize_t n = write(fd, text + done, len - done);
        ok = n > 0 || (n < 0 && errno == EINTR);
        done += n > 0 ? (size_t)n : 0;
    }
    close(fd);
    return ok ? number : -1;
}

void sc_root_note_live(const sc_root *root, const char *path, const char *text, size_t len,
                       int code)
{
    if (!root->log)
        return;
    int number = code < 0 ? -1 : write_text(root->log, text ? text : "", text ? len : 0);
    if (code >= 0 && number < 0)
        code = -EIO;
    append(root->log, SC_REC_LIVE, path, number, code < 0 ? code : 0);
}

/* Reads one record at the log's offset; 1 when one was read, 0 at the end, -errno. */
static int read_record(FILE *f, sc_rec *rec)
{
    rec_head h;
    size_t n = fread(&h, 1, sizeof h, f);
    if (n == 0)
        return 0;
    if (n != sizeof h || h.len >= sizeof rec->path || fread(rec->path, 1, h.len, f) != h.len)
        return -EINVAL;
    rec->path[h.len] = '\0';
    rec->op = h.op;
    rec->rc = h.rc;
    rec->arg = h.arg;
    rec->pid = h.pid;
    return 1;
}

int sc_root_log_each(const char *dir, int (*fn)(void *arg, const sc_rec *rec), void *arg)
{
    char path[PATH_MAX];
    if (!sc_fmt(path, sizeof path, "%s/%s", dir, LOG_NAME))
        return -ENAMETOOLONG;
    FILE *f = fopen(path, "rbe");
    if (!f)
        return -errno;
    sc_rec *rec = malloc(sizeof *rec);
    int rc = rec ? 0 : -ENOMEM;
    while (rc == 0) {
        int got = read_record(f, rec);
        if (got <= 0) {
            rc = got;
            break;
        }
        rc = fn(arg, rec);
    }
    free(rec);
    fclose(f);
    return rc;
}
