/* Fork-and-deadline isolation. The child gets its own process group, dies with the parent, has the
 * crash signals at their defaults, and writes its JSON result on a close-on-exec pipe; the parent
 * reads with poll until the deadline and then kills the whole group. Both are subreapers: the child
 * kills what it started before it exits, the parent what comes back to it when the child dies. */
#include "sc_isolate.h"

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

#include "sc_json.h"
#include "sc_reap.h"
#include "sc_redact.h"
#include "sc_step.h"
#include "sc_sysroot.h"
#include "sc_util.h"

#define RESULT_MAX (64u << 20) /* a result larger than this is an error, not a memory blow-up */
#define KILL_WAIT_MS 5000.0    /* a killed child stuck in the kernel is not waited for longer */

/* The standard signals' names, from a table rather than sigabbrev_np (glibc 2.32), so the
 * portable build runs on glibc 2.17; the numbers come from <signal.h> of the target. */
static const char *signal_abbrev(int sig)
{
    static const struct {
        int sig;
        const char *name;
    } names[] = {
        {SIGHUP, "HUP"},   {SIGINT, "INT"},       {SIGQUIT, "QUIT"}, {SIGILL, "ILL"},
        {SIGTRAP, "TRAP"}, {SIGABRT, "ABRT"},     {SIGBUS, "BUS"},   {SIGFPE, "FPE"},
        {SIGKILL, "KILL"}, {SIGUSR1, "USR1"},     {SIGSEGV, "SEGV"}, {SIGUSR2, "USR2"},
        {SIGPIPE, "PIPE"}, {SIGALRM, "ALRM"},     {SIGTERM, "TERM"}, {SIGSTKFLT, "STKFLT"},
        {SIGCHLD, "CHLD"}, {SIGCONT, "CONT"},     {SIGSTOP, "STOP"}, {SIGTSTP, "TSTP"},
        {SIGTTIN, "TTIN"}, {SIGTTOU, "TTOU"},     {SIGURG, "URG"},   {SIGXCPU, "XCPU"},
        {SIGXFSZ, "XFSZ"}, {SIGVTALRM, "VTALRM"}, {SIGPROF, "PROF"}, {SIGWINCH, "WINCH"},
        {SIGPOLL, "POLL"}, {SIGPWR, "PWR"},       {SIGSYS, "SYS"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].sig == sig)
            return names[i].name;
    return NULL;
}

const char *sc_signal_name(int sig, char *buf, size_t size)
{
    const char *abbrev = signal_abbrev(sig);
    if (abbrev)
        snprintf(buf, size, "SIG%s", abbrev);
    else
        snprintf(buf, size, "signal %d", sig);
    return buf;
}

static void write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

/* The reads a child refused (a FIFO, socket or device where a file was expected) are the run's:
 * they travel with its result under this key and are recorded again in the parent, so the
 * snapshot's not_read names them whichever process met them. */
#define REFUSALS_KEY "sc_not_read"

static void attach_refusals(cJSON *result)
{
    size_t n;
    const sc_root_refusal *r = sc_root_refusals(&n);
    cJSON *list = n && cJSON_IsObject(result) ? cJSON_AddArrayToObject(result, REFUSALS_KEY) : NULL;
    for (size_t i = 0; list && i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "path", r[i].path);
        cJSON_AddStringToObject(o, "type", r[i].type);
        cJSON_AddItemToArray(list, o);
    }
}

static void take_refusals(cJSON *result)
{
    cJSON *list = cJSON_IsObject(result)
                      ? cJSON_DetachItemFromObjectCaseSensitive(result, REFUSALS_KEY)
                      : NULL;
    const cJSON *o;
    cJSON_ArrayForEach (o, list) {
        const char *path = sc_json_str(o, "path");
        if (path)
            sc_root_refusal_note(path, sc_json_str(o, "type"));
    }
    cJSON_Delete(list);
}

/* What the child executes (a Python interpreter) finds its step pipe in the environment. */
static void child_steps(int step_fd)
{
    int fd = fcntl(step_fd, F_DUPFD, 3); /* the copy is not close-on-exec */
    char num[16];
    close(step_fd);
    snprintf(num, sizeof num, "%d", fd);
    if (fd >= 0)
        setenv(SC_STEP_FD_ENV, num, 1);
    else
        unsetenv(SC_STEP_FD_ENV);
    sc_step_to_fd(fd);
}

static void child_main(sc_isolated_fn fn, void *arg, const int fds[3], pid_t parent)
{
    static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTERM, SIGPIPE};
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(127);
    sc_reap_subreaper();   /* daemons the foreign code starts stay ours, setsid() or not */
    sc_reap_forget_kept(); /* the siblings it was forked beside are the parent's */
    for (size_t i = 0; i < sizeof crash_signals / sizeof crash_signals[0]; i++)
        signal(crash_signals[i], SIG_DFL);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) {
        dup2(devnull, 0);
        close(devnull);
    }
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    close(fds[1]);
    child_steps(fds[2]);
    cJSON *result = fn(arg);
    attach_refusals(result);
    char *text = result ? cJSON_PrintUnformatted(result) : NULL;
    sc_reap_descendants();
    fflush(stdout);
    fflush(stderr);
    if (text)
        write_all(fds[0], text, strlen(text));
    _exit(text ? 0 : 3);
}

/* The child's output window is larger than the tail that is kept: the window is redacted first
 * and cut after, so a cut never separates a secret from its name. */
#define RAW_TAIL_MAX (4 * sizeof(((sc_isolate_report *)0)->output_tail))

typedef struct {
    int result_fd, output_fd, step_fd;
    sc_buf result;
    char raw_tail[RAW_TAIL_MAX];
    size_t raw_len;
    bool raw_cut; /* the window lost its beginning */
    bool result_eof, too_big;
    char step[SC_STEP_MAX + 1]; /* the step line read so far */
    size_t step_len;
    bool step_cut; /* the rest of an overlong step line is dropped */
} reader;

struct sc_isolate_child {
    pid_t pid;
    double start, deadline, timeout_s;
    double exited_ms; /* when its exit was seen: its duration ends there, not when it is ended */
    reader r;
    int wstatus;
    bool exited;
    sc_isolate_step_fn on_step; /* NULL: steps are passed on with sc_step_text */
    void *step_arg;
};

/* Keeps the last bytes of the child's output in the raw window. */
static void tail_append(reader *r, const char *p, size_t n)
{
    size_t cap = sizeof r->raw_tail;
    if (n >= cap) {
        memcpy(r->raw_tail, p + n - cap, cap);
        r->raw_cut |= n > cap || r->raw_len > 0;
        r->raw_len = cap;
        return;
    }
    if (r->raw_len + n > cap) {
        size_t drop = r->raw_len + n - cap;
        memmove(r->raw_tail, r->raw_tail + drop, r->raw_len - drop);
        r->raw_len -= drop;
        r->raw_cut = true;
    }
    memcpy(r->raw_tail + r->raw_len, p, n);
    r->raw_len += n;
}

/* The kept tail: the window redacted, then its end cut to fit on a character boundary. */
static void finish_tail(sc_isolate_report *rep, const reader *r)
{
    char *tail = sc_redact_tail(r->raw_tail, r->raw_len, r->raw_cut, sizeof rep->output_tail - 1);
    snprintf(rep->output_tail, sizeof rep->output_tail, "%s", tail ? tail : "");
    free(tail);
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

static void take_result(reader *r)
{
    char chunk[65536];
    ssize_t n = read(r->result_fd, chunk, sizeof chunk);
    if (n <= 0 && !(n < 0 && errno == EINTR))
        r->result_eof = true;
    else if (n > 0 && r->result.len + (size_t)n <= RESULT_MAX)
        sc_buf_append(&r->result, chunk, (size_t)n);
    else if (n > 0)
        r->too_big = true;
}

static void take_output(reader *r)
{
    char chunk[65536];
    ssize_t n = read(r->output_fd, chunk, sizeof chunk);
    if (n > 0)
        tail_append(r, chunk, (size_t)n);
    else if (n == 0 || errno != EINTR)
        close_fd(&r->output_fd);
}

/* Step lines from the child: each complete line is passed on as the child's current step. */
static void take_steps(sc_isolate_child *c)
{
    reader *r = &c->r;
    char chunk[4096];
    ssize_t n = read(r->step_fd, chunk, sizeof chunk);
    if (n <= 0 && !(n < 0 && errno == EINTR))
        close_fd(&r->step_fd);
    for (ssize_t i = 0; i < n; i++) {
        if (chunk[i] != '\n') {
            if (r->step_len < SC_STEP_MAX && !r->step_cut)
                r->step[r->step_len++] = chunk[i];
            else
                r->step_cut = true;
            continue;
        }
        r->step[r->step_len] = '\0';
        if (c->on_step)
            c->on_step(r->step, c->step_arg);
        else
            sc_step_text(r->step);
        r->step_len = 0;
        r->step_cut = false;
    }
}

/* The child's pipes to watch, in pfd[0..3). */
static void watch_fds(const sc_isolate_child *c, struct pollfd pfd[3])
{
    pfd[0] = (struct pollfd){.fd = c->r.result_eof ? -1 : c->r.result_fd, .events = POLLIN};
    pfd[1] = (struct pollfd){.fd = c->r.output_fd, .events = POLLIN};
    pfd[2] = (struct pollfd){.fd = c->r.step_fd, .events = POLLIN};
}

static void take_events(sc_isolate_child *c, const struct pollfd pfd[3])
{
    if (pfd[0].fd >= 0 && pfd[0].revents)
        take_result(&c->r);
    if (pfd[1].fd >= 0 && pfd[1].revents)
        take_output(&c->r);
    if (pfd[2].fd >= 0 && pfd[2].revents)
        take_steps(c);
}

static void finish(sc_isolate_report *rep, reader *r, int wstatus)
{
    if (WIFSIGNALED(wstatus)) {
        char name[32];
        rep->outcome = SC_ISOLATE_CRASH;
        rep->signal = WTERMSIG(wstatus);
        snprintf(rep->detail, sizeof rep->detail, "killed by %s",
                 sc_signal_name(rep->signal, name, sizeof name));
        return;
    }
    rep->exit_code = WEXITSTATUS(wstatus);
    if (r->too_big || r->result.oom) {
        rep->outcome = SC_ISOLATE_ERROR;
        snprintf(rep->detail, sizeof rep->detail, "result larger than %u bytes", RESULT_MAX);
        return;
    }
    rep->result = r->result.data ? cJSON_ParseWithLength(r->result.data, r->result.len) : NULL;
    if (rep->result) {
        take_refusals(rep->result);
        rep->outcome = SC_ISOLATE_OK;
        return;
    }
    rep->outcome = SC_ISOLATE_ERROR;
    snprintf(rep->detail, sizeof rep->detail, "%s (exit status %d)",
             r->result.len ? "the child sent a malformed result" : "the child sent no result",
             rep->exit_code);
}

static int make_pipes(int parent_fds[3], int child_fds[3])
{
    for (int i = 0; i < 3; i++) {
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0) {
            int e = errno;
            for (int k = 0; k < i; k++) {
                close(parent_fds[k]);
                close(child_fds[k]);
            }
            return -e;
        }
        parent_fds[i] = p[0];
        child_fds[i] = p[1];
    }
    return 0;
}

int sc_isolate_start(sc_isolated_fn fn, void *arg, double timeout_s, sc_isolate_step_fn on_step,
                     void *step_arg, sc_isolate_child **out)
{
    sc_isolate_child *c = calloc(1, sizeof *c);
    int mine[3], theirs[3]; /* result, output, steps */
    int rc = c ? make_pipes(mine, theirs) : -ENOMEM;
    if (rc < 0) {
        free(c);
        return rc;
    }
    fflush(NULL);
    sc_reap_subreaper(); /* what the child leaves when it dies comes here, not to init */
    pid_t parent = getpid();
    c->start = sc_now_ms();
    c->pid = fork();
    if (c->pid == 0) {
        for (int i = 0; i < 3; i++)
            close(mine[i]);
        child_main(fn, arg, theirs, parent);
    }
    rc = c->pid < 0 ? -errno : 0;
    for (int i = 0; i < 3; i++) {
        close(theirs[i]);
        if (rc < 0)
            close(mine[i]);
    }
    if (rc < 0) {
        free(c);
        return rc;
    }
    setpgid(c->pid, c->pid); /* also here, so the group exists before any kill */
    sc_reap_keep(c->pid);    /* a cleanup after another child must spare this one */
    c->timeout_s = timeout_s;
    c->deadline = c->start + timeout_s * 1000.0;
    c->r = (reader){.result_fd = mine[0], .output_fd = mine[1], .step_fd = mine[2]};
    sc_buf_init(&c->r.result);
    c->on_step = on_step;
    c->step_arg = step_arg;
    *out = c;
    return 0;
}

bool sc_isolate_done(const sc_isolate_child *c)
{
    return sc_now_ms() >= c->deadline || (c->exited && (c->r.result_eof || c->r.too_big));
}

void sc_isolate_wait(sc_isolate_child *const *children, size_t n, int wait_ms)
{
    struct pollfd pfd[3 * SC_ISOLATE_WAIT_MAX];
    size_t m = n < SC_ISOLATE_WAIT_MAX ? n : SC_ISOLATE_WAIT_MAX;
    double now = sc_now_ms();
    for (size_t i = 0; i < m; i++) {
        const sc_isolate_child *c = children[i];
        watch_fds(c, &pfd[3 * i]);
        double left = c->deadline - now;
        if (c->r.result_eof && !c->exited && wait_ms > 10)
            wait_ms = 10; /* a grandchild may hold the pipe: look for the exit often */
        if (left < wait_ms)
            wait_ms = left > 0 ? (int)left + 1 : 0;
    }
    if (poll(pfd, 3 * m, wait_ms) > 0)
        for (size_t i = 0; i < m; i++)
            take_events(children[i], &pfd[3 * i]);
    for (size_t i = 0; i < m; i++) {
        sc_isolate_child *c = children[i];
        if (!c->exited && waitpid(c->pid, &c->wstatus, WNOHANG) == c->pid) {
            c->exited = true;
            c->exited_ms = sc_now_ms();
        }
        if (c->r.too_big && !c->exited)
            kill(-c->pid, SIGKILL);
    }
}

/* Reads what the child wrote last, without waiting for grandchildren that still hold a pipe. */
static void drain(sc_isolate_child *c)
{
    for (int i = 0; i < 64 && (c->r.output_fd >= 0 || c->r.step_fd >= 0); i++) {
        struct pollfd pfd[3];
        watch_fds(c, pfd);
        pfd[0].fd = -1;
        if (poll(pfd, 3, 0) <= 0)
            break;
        take_events(c, pfd);
    }
}

void sc_isolate_kill(sc_isolate_child *c)
{
    if (!c->exited)
        kill(-c->pid, SIGKILL);
}

void sc_isolate_end(sc_isolate_child *c, sc_isolate_report *rep)
{
    memset(rep, 0, sizeof *rep);
    rep->exit_code = -1;
    kill(-c->pid, SIGKILL); /* the child and anything it left behind in its group */
    bool reaped = c->exited || sc_reap_wait(c->pid, &c->wstatus, sc_now_ms() + KILL_WAIT_MS);
    sc_reap_release(c->pid);
    sc_reap_descendants(); /* also what left the group: setsid'd or double-forked daemons */
    if (!c->exited) {
        rep->outcome = SC_ISOLATE_TIMEOUT;
        snprintf(rep->detail, sizeof rep->detail, "no result within %.1f s; %s", c->timeout_s,
                 reaped ? "it and everything it started were killed"
                        : "killed, but it did not end (stuck in the kernel?)");
    } else {
        while (!c->r.result_eof && !c->r.too_big && sc_now_ms() < c->deadline)
            sc_isolate_wait(&c, 1, 10);
        finish(rep, &c->r, c->wstatus);
    }
    drain(c);
    finish_tail(rep, &c->r);
    close_fd(&c->r.output_fd);
    close_fd(&c->r.step_fd);
    close_fd(&c->r.result_fd);
    sc_buf_free(&c->r.result);
    rep->duration_ms = (c->exited && c->exited_ms > 0 ? c->exited_ms : sc_now_ms()) - c->start;
    free(c);
}

int sc_isolate_run(sc_isolated_fn fn, void *arg, double timeout_s, sc_isolate_report *rep)
{
    memset(rep, 0, sizeof *rep);
    rep->exit_code = -1;
    sc_isolate_child *c;
    int rc = sc_isolate_start(fn, arg, timeout_s, NULL, NULL, &c);
    if (rc < 0)
        return rc;
    while (!sc_isolate_done(c)) {
        sc_isolate_wait(&c, 1, 100); /* wake now and then: a grandchild may hold the pipe */
        sc_step_tick();
    }
    sc_isolate_end(c, rep);
    return 0;
}
