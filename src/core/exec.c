/* A program run as a child with a deadline: no shell, its own process group, killed with us, its
 * output read with poll until it exits (then only for a short grace: something it left may hold
 * the pipe open forever) or the deadline passes. What it started is killed afterwards. */
#include "sc_exec.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sc_reap.h"

#define DRAIN_GRACE_MS                                                                             \
    200.0 /* after it exits: output still in the pipe, not a child holding it                      \
           */
#define KILL_WAIT_MS 2000.0

/* Reads what fd has within wait_ms into out (bounded); false at end of file or on an error. */
static bool read_some(int fd, sc_buf *out, int wait_ms)
{
    char chunk[4096];
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    int n = poll(&pfd, 1, wait_ms);
    if (n <= 0)
        return n == 0 || errno == EINTR;
    ssize_t r = read(fd, chunk, sizeof chunk);
    if (r < 0)
        return errno == EINTR || errno == EAGAIN;
    if (r > 0 && out->len < SC_EXEC_OUTPUT_MAX)
        sc_buf_append(out, chunk, (size_t)r);
    return r > 0;
}

/* Reads the child's output until it exits (and a grace after) or the deadline passes; a child that
 * closed its output is still waited for only until the deadline. True with *status when it
 * exited. */
static bool read_until_exit(pid_t pid, int fd, sc_buf *out, double deadline, int *status)
{
    bool exited = false, eof = false;
    double stop = deadline;
    while (!eof && sc_now_ms() < stop) {
        double left = stop - sc_now_ms();
        eof = !read_some(fd, out, left < 50 ? (int)left + 1 : 50);
        if (!exited && waitpid(pid, status, WNOHANG) == pid) {
            exited = true;
            if (sc_now_ms() + DRAIN_GRACE_MS < stop)
                stop = sc_now_ms() + DRAIN_GRACE_MS;
        }
    }
    return exited || sc_reap_wait(pid, status, deadline);
}

/* The child half: its own process group, killed when the parent dies, stdin from /dev/null. */
static void exec_child(const char *const argv[], int out_fd, bool with_stderr)
{
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    int devnull = open("/dev/null", O_RDWR);
    if (devnull >= 0) {
        dup2(devnull, 0);
        dup2(devnull, 2);
    }
    dup2(out_fd, 1);
    if (with_stderr)
        dup2(out_fd, 2);
    signal(SIGPIPE, SIG_DFL);
    execvp(argv[0], (char *const *)argv);
    _exit(127);
}

int sc_exec_capture(const char *const argv[], double timeout_ms, bool with_stderr, sc_buf *out,
                    int *status, sc_error *err)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0)
        return sc_error_set(err, -errno, "pipe: %s", strerror(errno));
    sc_reap_subreaper();
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(fds[0]);
        close(fds[1]);
        return sc_error_set(err, -e, "fork: %s", strerror(e));
    }
    if (pid == 0)
        exec_child(argv, fds[1], with_stderr);
    setpgid(pid, pid); /* also here, so the group exists before any kill */
    close(fds[1]);
    *status = 0;
    bool exited = read_until_exit(pid, fds[0], out, sc_now_ms() + timeout_ms, status);
    close(fds[0]);
    if (!exited) {
        kill(-pid, SIGKILL);
        sc_reap_wait(pid, NULL, sc_now_ms() + KILL_WAIT_MS);
    }
    sc_reap_descendants(); /* daemons it started, setsid'd out of its group or not */
    if (!exited)
        return sc_error_set(err, -ETIMEDOUT,
                            "%s did not finish within %.1f s; it and everything it started were "
                            "killed",
                            argv[0], timeout_ms / 1000);
    return 0;
}
