/* Runs the app's shell command with a deadline: output streamed into the stage parser, the
 * command's whole process tree killed at the deadline, and whatever it leaves behind (background
 * children, children holding its output open) killed once it exits, so the caller never waits on
 * them. */
#include "sc_app.h"

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

#include "sc_reap.h"
#include "sc_util.h"

#define DRAIN_GRACE_MS 200.0 /* after the command exits, output already written is still read */

static void exec_child(const char *cmd, int out_fd, int err_fd, bool own_group)
{
    if (own_group)
        setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) {
        dup2(devnull, 0);
        close(devnull);
    }
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    static const int reset[] = {SIGPIPE, SIGINT, SIGQUIT, SIGTERM, SIGCHLD, SIGHUP};
    for (size_t i = 0; i < sizeof reset / sizeof reset[0]; i++)
        signal(reset[i], SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
    _exit(127);
}

typedef struct {
    int fd[2]; /* stdout, stderr read ends; -1 once closed */
    sc_app_parse *parse;
} pump;

/* Reads what is there on the open pipes (a bounded amount per call), waiting at most wait_ms. */
static void pump_round(pump *pm, int wait_ms)
{
    struct pollfd pfd[2] = {{.fd = pm->fd[0], .events = POLLIN},
                            {.fd = pm->fd[1], .events = POLLIN}};
    if (pm->fd[0] < 0 && pm->fd[1] < 0) {
        poll(NULL, 0, wait_ms);
        return;
    }
    if (poll(pfd, 2, wait_ms) <= 0)
        return;
    char chunk[65536];
    for (int s = 0; s < 2; s++) {
        for (int i = 0; i < 16 && pfd[s].revents && pm->fd[s] >= 0; i++) {
            ssize_t n = read(pm->fd[s], chunk, sizeof chunk);
            if (n > 0) {
                sc_app_parse_feed(pm->parse, s == 0 ? SC_APP_STDOUT : SC_APP_STDERR, chunk,
                                  (size_t)n, sc_now_ms());
                continue;
            }
            if (n < 0 && (errno == EAGAIN || errno == EINTR))
                break;
            close(pm->fd[s]);
            pm->fd[s] = -1;
        }
    }
}

/* Pumps output until the command exits (and its output is drained, or a grace period passes)
 * or the deadline passes; returns true when it exited, with its wait status. */
static bool wait_for_exit(pid_t pid, pump *pm, double deadline_ms, int *wstatus, double *end_ms)
{
    bool exited = false;
    double drain_until = 0;
    for (;;) {
        double now = sc_now_ms();
        if (!exited && now >= deadline_ms)
            break;
        if (exited && ((pm->fd[0] < 0 && pm->fd[1] < 0) || now >= drain_until))
            break;
        double limit = exited ? drain_until : deadline_ms;
        int wait_ms = limit - now < 50 ? (int)(limit - now) + 1 : 50;
        pump_round(pm, wait_ms);
        if (!exited && waitpid(pid, wstatus, WNOHANG) == pid) {
            exited = true;
            *end_ms = sc_now_ms();
            drain_until = *end_ms + DRAIN_GRACE_MS;
            if (drain_until > deadline_ms)
                drain_until = deadline_ms;
        }
    }
    if (!exited)
        *end_ms = sc_now_ms();
    return exited;
}

static void fill_outcome(sc_app_outcome *out, bool exited, int wstatus)
{
    out->timed_out = !exited;
    if (exited && WIFEXITED(wstatus))
        out->exit_code = WEXITSTATUS(wstatus);
    else if (exited && WIFSIGNALED(wstatus))
        out->signal = WTERMSIG(wstatus);
}

static int open_pipes(int out_pipe[2], int err_pipe[2])
{
    if (pipe2(out_pipe, O_CLOEXEC) < 0)
        return -errno;
    if (pipe2(err_pipe, O_CLOEXEC) < 0) {
        int e = errno;
        close(out_pipe[0]);
        close(out_pipe[1]);
        return -e;
    }
    return 0;
}

/* Forks the child that runs cmd with its output on the pipes' write ends (in its own process
 * group when own_group); the parent keeps the read ends, non-blocking, so one pump serves both.
 * The child's pid, or a negative errno with every pipe closed. */
static pid_t spawn(const char *cmd, int op[2], int ep[2], bool own_group)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0)
        exec_child(cmd, op[1], ep[1], own_group);
    int fork_errno = errno;
    close(op[1]);
    close(ep[1]);
    if (pid < 0) {
        close(op[0]);
        close(ep[0]);
        return -fork_errno;
    }
    if (own_group)
        setpgid(pid, pid);
    fcntl(op[0], F_SETFL, O_NONBLOCK);
    fcntl(ep[0], F_SETFL, O_NONBLOCK);
    return pid;
}

int sc_app_exec(const char *cmd, double deadline_ms, bool in_my_group, sc_app_parse *parse,
                sc_app_outcome *out, sc_error *err)
{
    memset(out, 0, sizeof *out);
    out->exit_code = -1;
    int op[2], ep[2], rc = open_pipes(op, ep);
    if (rc < 0)
        return sc_error_set(err, rc, "cannot create pipes: %s", strerror(-rc));
    bool own_group = !in_my_group || getpgrp() != getpid();
    sc_reap_subreaper(); /* what the app orphans comes back to us to be killed */
    double start = sc_now_ms();
    pid_t pid = spawn(cmd, op, ep, own_group);
    if (pid < 0)
        return sc_error_set(err, (int)pid, "cannot fork: %s", strerror((int)-pid));
    pid_t pgid = own_group ? pid : getpgrp();
    pump pm = {{op[0], ep[0]}, parse};
    int wstatus = 0;
    double end_ms = start;
    bool exited = wait_for_exit(pid, &pm, deadline_ms, &wstatus, &end_ms);
    if (pgid != getpgrp())
        kill(-pgid, SIGKILL); /* the app's own group at once, before any of it is reaped */
    /* Every process of the app is a descendant of ours, whatever group or session it moved to;
     * the command itself too when it is still running at the deadline. */
    out->strays_killed = sc_reap_descendants();
    if (!exited)
        sc_reap_wait(pid, NULL, sc_now_ms() + 1000); /* usually reaped already; ECHILD then */
    for (int s = 0; s < 2; s++)
        if (pm.fd[s] >= 0)
            close(pm.fd[s]);
    sc_app_parse_finish(parse, end_ms);
    fill_outcome(out, exited, wstatus);
    out->duration_ms = end_ms - start;
    return 0;
}
