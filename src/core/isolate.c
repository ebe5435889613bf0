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
#include "sc_sysroot.h"
#include "sc_util.h"

#define RESULT_MAX (64u << 20) /* a result larger than this is an error, not a memory blow-up */
#define KILL_WAIT_MS 5000.0    /* a killed child stuck in the kernel is not waited for longer */

const char *sc_signal_name(int sig, char *buf, size_t size)
{
    const char *abbrev = sigabbrev_np(sig);
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

static void child_main(sc_isolated_fn fn, void *arg, int result_fd, int output_fd, pid_t parent)
{
    static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTERM, SIGPIPE};
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(127);
    sc_reap_subreaper(); /* daemons the foreign code starts stay ours, setsid() or not */
    for (size_t i = 0; i < sizeof crash_signals / sizeof crash_signals[0]; i++)
        signal(crash_signals[i], SIG_DFL);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) {
        dup2(devnull, 0);
        close(devnull);
    }
    dup2(output_fd, 1);
    dup2(output_fd, 2);
    close(output_fd);
    cJSON *result = fn(arg);
    attach_refusals(result);
    char *text = result ? cJSON_PrintUnformatted(result) : NULL;
    sc_reap_descendants();
    fflush(stdout);
    fflush(stderr);
    if (text)
        write_all(result_fd, text, strlen(text));
    _exit(text ? 0 : 3);
}

/* The child's output window is larger than the tail that is kept: the window is redacted first
 * and cut after, so a cut never separates a secret from its name. */
#define RAW_TAIL_MAX (4 * sizeof(((sc_isolate_report *)0)->output_tail))

typedef struct {
    int result_fd, output_fd;
    sc_buf result;
    char raw_tail[RAW_TAIL_MAX];
    size_t raw_len;
    bool raw_cut; /* the window lost its beginning */
    bool result_eof, too_big;
} reader;

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

/* One poll round; returns false when there is nothing left to wait for on the pipes. */
static void read_round(reader *r, int timeout_ms)
{
    struct pollfd pfd[2] = {{.fd = r->result_eof ? -1 : r->result_fd, .events = POLLIN},
                            {.fd = r->output_fd, .events = POLLIN}};
    if (poll(pfd, 2, timeout_ms) <= 0)
        return;
    char chunk[65536];
    if (pfd[0].revents) {
        ssize_t n = read(r->result_fd, chunk, sizeof chunk);
        if (n <= 0 && !(n < 0 && errno == EINTR))
            r->result_eof = true;
        else if (n > 0 && r->result.len + (size_t)n <= RESULT_MAX)
            sc_buf_append(&r->result, chunk, (size_t)n);
        else if (n > 0)
            r->too_big = true;
    }
    if (pfd[1].revents) {
        ssize_t n = read(r->output_fd, chunk, sizeof chunk);
        if (n > 0)
            tail_append(r, chunk, (size_t)n);
        else if (n == 0 || errno != EINTR) {
            close(r->output_fd);
            r->output_fd = -1;
        }
    }
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

int sc_isolate_run(sc_isolated_fn fn, void *arg, double timeout_s, sc_isolate_report *rep)
{
    memset(rep, 0, sizeof *rep);
    rep->exit_code = -1;
    double start = sc_now_ms(), deadline = start + timeout_s * 1000.0;
    int res_pipe[2], out_pipe[2];
    if (pipe2(res_pipe, O_CLOEXEC) < 0)
        return -errno;
    if (pipe2(out_pipe, O_CLOEXEC) < 0) {
        int e = errno;
        close(res_pipe[0]);
        close(res_pipe[1]);
        return -e;
    }
    fflush(NULL);
    sc_reap_subreaper(); /* what the child leaves when it dies comes here, not to init */
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(res_pipe[0]);
        close(res_pipe[1]);
        close(out_pipe[0]);
        close(out_pipe[1]);
        return -e;
    }
    if (pid == 0) {
        close(res_pipe[0]);
        close(out_pipe[0]);
        child_main(fn, arg, res_pipe[1], out_pipe[1], parent);
    }
    setpgid(pid, pid); /* also here, so the group exists before any kill */
    close(res_pipe[1]);
    close(out_pipe[1]);
    reader r = {.result_fd = res_pipe[0], .output_fd = out_pipe[0]};
    sc_buf_init(&r.result);
    int wstatus = 0;
    bool exited = false;
    while (!exited) {
        double left = deadline - sc_now_ms();
        if (left <= 0)
            break;
        int slice = r.result_eof ? 10 : 100; /* wake now and then: a grandchild may hold the pipe */
        read_round(&r, left < slice ? (int)left + 1 : slice);
        exited = waitpid(pid, &wstatus, WNOHANG) == pid;
        if (r.too_big && !exited)
            kill(-pid, SIGKILL);
    }
    kill(-pid, SIGKILL); /* the child and anything it left behind in its group */
    bool reaped = exited || sc_reap_wait(pid, &wstatus, sc_now_ms() + KILL_WAIT_MS);
    sc_reap_descendants(); /* also what left the group: setsid'd or double-forked daemons */
    if (!exited) {
        rep->outcome = SC_ISOLATE_TIMEOUT;
        snprintf(rep->detail, sizeof rep->detail, "no result within %.1f s; %s", timeout_s,
                 reaped ? "it and everything it started were killed"
                        : "killed, but it did not end (stuck in the kernel?)");
    } else {
        while (!r.result_eof && !r.too_big && sc_now_ms() < deadline)
            read_round(&r, 10);
        finish(rep, &r, wstatus);
    }
    /* Drain what the child wrote last, without waiting for grandchildren that still hold it. */
    for (int i = 0; i < 64 && r.output_fd >= 0; i++) {
        struct pollfd p = {.fd = r.output_fd, .events = POLLIN};
        if (poll(&p, 1, 0) <= 0)
            break;
        read_round(&r, 0);
    }
    if (r.output_fd >= 0)
        close(r.output_fd);
    finish_tail(rep, &r);
    close(r.result_fd);
    sc_buf_free(&r.result);
    rep->duration_ms = sc_now_ms() - start;
    return 0;
}
