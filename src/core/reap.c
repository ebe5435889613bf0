/* Killing everything a process started: its descendants are found from the parent pids of the live
 * /proc (a process that setsid()s away from its group is still a descendant, and a subreaper gets
 * the orphans of the dead), killed, reaped, and looked for again until none is left. */
#include "sc_reap.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sc_util.h"

#define REAP_BUDGET_MS 2000.0 /* a process in uninterruptible sleep may take this long to die */
#define SEEN_MAX 1024         /* distinct pids remembered for the count */
#define KEPT_MAX 256          /* children running side by side that a cleanup spares */

/* The children this process still waits for (probes running side by side): a cleanup after one
 * of them ended must neither kill nor reap the others, nor what they started. */
static pid_t kept_pids[KEPT_MAX];
static size_t kept_count;

static bool is_kept(pid_t pid)
{
    for (size_t i = 0; i < kept_count; i++)
        if (kept_pids[i] == pid)
            return true;
    return false;
}

void sc_reap_keep(pid_t pid)
{
    if (kept_count < KEPT_MAX && !is_kept(pid))
        kept_pids[kept_count++] = pid;
}

void sc_reap_forget_kept(void)
{
    kept_count = 0;
}

void sc_reap_release(pid_t pid)
{
    for (size_t i = 0; i < kept_count; i++)
        if (kept_pids[i] == pid)
            kept_pids[i] = kept_pids[--kept_count];
}

int sc_reap_subreaper(void)
{
    return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0 ? -errno : 0;
}

bool sc_proc_stat_parse(const char *text, size_t n, char *state, pid_t *ppid, pid_t *pgrp)
{
    const char *close = memrchr(text, ')', n); /* the name is free text; the last ')' ends it */
    char rest[64];
    if (!close)
        return false;
    size_t len = n - (size_t)(close + 1 - text);
    if (len >= sizeof rest)
        len = sizeof rest - 1;
    memcpy(rest, close + 1, len);
    rest[len] = '\0';
    char s;
    int pp, pg;
    if (sscanf(rest, " %c %d %d", &s, &pp, &pg) != 3 || !isalpha((unsigned char)s) || pp < 0 ||
        pg < 0)
        return false;
    *state = s;
    *ppid = pp;
    *pgrp = pg;
    return true;
}

typedef struct {
    pid_t pid, ppid;
    char state;
    bool mine; /* a descendant of the caller */
} proc_entry;

typedef struct {
    proc_entry *v;
    size_t n, cap;
} proc_table;

static bool read_entry(int proc_fd, const char *name, proc_entry *pe)
{
    char path[64], text[512];
    snprintf(path, sizeof path, "%.32s/stat", name);
    int fd = openat(proc_fd, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, text, sizeof text);
    close(fd);
    pid_t pgrp;
    pe->pid = (pid_t)atoi(name);
    pe->mine = false;
    return n > 0 && sc_proc_stat_parse(text, (size_t)n, &pe->state, &pe->ppid, &pgrp);
}

static int by_pid(const void *a, const void *b)
{
    pid_t x = ((const proc_entry *)a)->pid, y = ((const proc_entry *)b)->pid;
    return (x > y) - (x < y);
}

/* The live process table, sorted by pid. This is the machine's own /proc, never a --sysroot's:
 * it is about the processes this run started, not inspected data. A table that could not grow is
 * kept as far as it got; the next round looks again. */
static void scan_procs(proc_table *t)
{
    t->n = 0;
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        if (t->n == t->cap) {
            size_t cap = t->cap ? t->cap * 2 : 512;
            proc_entry *v = realloc(t->v, cap * sizeof *v);
            if (!v)
                break;
            t->v = v;
            t->cap = cap;
        }
        t->n += read_entry(dirfd(d), e->d_name, &t->v[t->n]);
    }
    if (d)
        closedir(d);
    if (t->n)
        qsort(t->v, t->n, sizeof *t->v, by_pid);
}

static bool is_mine(const proc_table *t, pid_t pid)
{
    proc_entry key = {.pid = pid};
    const proc_entry *e = bsearch(&key, t->v, t->n, sizeof *t->v, by_pid);
    return e && e->mine;
}

/* Marks the descendants of self: children first, then their children, until nothing changes. */
static void mark_descendants(proc_table *t, pid_t self)
{
    bool changed = true;
    for (size_t pass = 0; changed && pass < t->n; pass++) {
        changed = false;
        for (size_t i = 0; i < t->n; i++) {
            proc_entry *e = &t->v[i];
            if (!e->mine && e->pid != self && !is_kept(e->pid) &&
                (e->ppid == self || is_mine(t, e->ppid)))
                e->mine = changed = true;
        }
    }
}

typedef struct {
    pid_t pids[SEEN_MAX];
    int count; /* distinct pids signalled (saturates at SEEN_MAX remembered) */
} pid_set;

static void remember(pid_set *s, pid_t pid)
{
    int kept = s->count < SEEN_MAX ? s->count : SEEN_MAX;
    for (int i = 0; i < kept; i++)
        if (s->pids[i] == pid)
            return;
    if (s->count < SEEN_MAX)
        s->pids[s->count] = pid;
    s->count++;
}

/* One pass: SIGKILL to every descendant; returns how many were alive. Zombies get it too: a
 * thread-group leader that called pthread_exit() shows as a zombie while its other threads run. */
static int kill_round(proc_table *t, pid_t self, pid_set *seen)
{
    int alive = 0;
    scan_procs(t);
    mark_descendants(t, self);
    for (size_t i = 0; i < t->n; i++) {
        const proc_entry *e = &t->v[i];
        if (!e->mine || kill(e->pid, SIGKILL) < 0 || e->state == 'Z' || e->state == 'X' ||
            e->state == 'x')
            continue;
        alive++;
        remember(seen, e->pid);
    }
    return alive;
}

/* With kept children waitpid(-1) could take one of their statuses: the others are found in /proc
 * and reaped one by one. True while any of them is left. */
static bool reap_unkept_children(void)
{
    proc_table t = {0};
    pid_t self = getpid();
    bool left = false;
    scan_procs(&t);
    for (size_t i = 0; i < t.n; i++)
        if (t.v[i].ppid == self && !is_kept(t.v[i].pid))
            left |= waitpid(t.v[i].pid, NULL, WNOHANG) == 0;
    free(t.v);
    return left;
}

/* Reaps the children that have ended; true while any is left. Without a child there is no
 * descendant either: a subreaper's descendants all hang from one of its children. */
static bool reap_children(void)
{
    if (kept_count > 0)
        return reap_unkept_children();
    pid_t r;
    while ((r = waitpid(-1, NULL, WNOHANG)) > 0)
        ;
    return r == 0 || (r < 0 && errno == EINTR);
}

int sc_reap_descendants(void)
{
    pid_set seen = {.count = 0};
    proc_table t = {0};
    pid_t self = getpid();
    double give_up = sc_now_ms() + REAP_BUDGET_MS;
    int pause_ms = 1;
    /* The common case, nothing left, costs one waitpid; /proc is read only when there is more. */
    while (reap_children()) {
        int alive = kill_round(&t, self, &seen);
        if (alive == 0 || sc_now_ms() >= give_up)
            break;
        poll(NULL, 0, pause_ms); /* let SIGKILL land; orphans come back to us meanwhile */
        pause_ms = pause_ms < 16 ? pause_ms * 2 : 20;
    }
    reap_children();
    free(t.v);
    return seen.count;
}

bool sc_reap_wait(pid_t pid, int *status, double deadline_ms)
{
    int pause_ms = 1;
    for (;;) {
        pid_t r = waitpid(pid, status, WNOHANG);
        if (r == pid)
            return true;
        if (r < 0 && errno != EINTR)
            return false;
        double left = deadline_ms - sc_now_ms();
        if (left <= 0)
            return false;
        poll(NULL, 0, left < pause_ms ? (int)left + 1 : pause_ms);
        pause_ms = pause_ms < 32 ? pause_ms * 2 : 50;
    }
}
