/* Running a user's program for its output with a deadline: fork and exec without a shell, its own
 * process group, the output read until it exits (then briefly), everything it started killed and
 * reaped afterwards. Shared by the Python locate step and the compilers' version queries. */
#include "sc_spawn.h"

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

/* After it exits: output still in the pipe is read, but not waited for from a child holding it. */
#define DRAIN_GRACE_MS 200.0
#define KILL_WAIT_MS 2000.0

/* Reads what fd has within wait_ms into out (at most max kept); false at end of file or on an
 * error. */
static bool read_some(int fd, sc_buf *out, size_t max, int wait_ms)
{
    char chunk[4096];
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    int n = poll(&pfd, 1, wait_ms);
    if (n <= 0)
        return n == 0 || errno == EINTR;
    ssize_t r = read(fd, chunk, sizeof chunk);
    if (r < 0)
        return errno == EINTR || errno == EAGAIN;
    if (r > 0 && out->len < max)
        sc_buf_append(out, chunk, (size_t)r < max - out->len ? (size_t)r : max - out->len);
    return r > 0;
}

/* Reads the program's stdout until it exits (then for a short grace only) or the deadline
 * passes; a program that closed its stdout is still waited for only until the deadline. True
 * with *status when it exited. */
static bool read_until_exit(pid_t pid, int fd, sc_buf *out, size_t max, double deadline,
                            int *status)
{
    bool exited = false, eof = false;
    double stop = deadline;
    while (!eof && sc_now_ms() < stop) {
        double left = stop - sc_now_ms();
        eof = !read_some(fd, out, max, left < 50 ? (int)left + 1 : 50);
        if (!exited && waitpid(pid, status, WNOHANG) == pid) {
            exited = true;
            if (sc_now_ms() + DRAIN_GRACE_MS < stop)
                stop = sc_now_ms() + DRAIN_GRACE_MS;
        }
    }
    return exited || sc_reap_wait(pid, status, deadline);
}

/* The child half: its own process group, killed when the parent dies, stdout to the pipe, stdin
 * and stderr to /dev/null, then exec. */
static void exec_program(const char *const *argv, int out_fd)
{
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    int devnull = open("/dev/null", O_RDWR);
    if (devnull >= 0) {
        dup2(devnull, 0);
        dup2(devnull, 2);
    }
    dup2(out_fd, 1);
    execvp(argv[0], (char *const *)argv);
    _exit(127);
}

int sc_spawn_capture(const char *const *argv, double timeout_ms, size_t max_output, sc_buf *out,
                     int *status, sc_error *err)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0)
        return sc_error_set(err, -errno, "pipe: %s", strerror(errno));
    sc_reap_subreaper();
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(fds[0]);
        close(fds[1]);
        return sc_error_set(err, -e, "fork: %s", strerror(e));
    }
    if (pid == 0)
        exec_program(argv, fds[1]);
    setpgid(pid, pid); /* also here, so the group exists before any kill */
    close(fds[1]);
    bool exited = read_until_exit(pid, fds[0], out, max_output, sc_now_ms() + timeout_ms, status);
    close(fds[0]);
    if (!exited) {
        kill(-pid, SIGKILL);
        sc_reap_wait(pid, NULL, sc_now_ms() + KILL_WAIT_MS);
    }
    sc_reap_descendants(); /* daemons it started, setsid'd out of its group or not */
    return exited ? 0 : -ETIMEDOUT;
}
