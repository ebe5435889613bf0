/* The warm interpreter of a parallel run (probes/torch_host.py): started in an isolated child at
 * the run's first moment, it imports torch once while the lower layers are checked, and the
 * framework probes' Python code then runs in workers forked from it instead of each process
 * importing torch again. A probe asks through a private Unix socket; when there is no warm
 * interpreter for its request, it runs the code itself, exactly as without one. */
#include "sc_python.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sc_isolate.h"
#include "sc_scratch.h"
#include "sc_step.h"
#include "sc_util.h"

#define WARM_LIFETIME_S (7 * 86400.0) /* it is ended when its layer is final, not by a deadline */

extern const char sc_py_torch_host[];

/* In the runner's process, and inherited by every child forked after the start. */
static struct {
    char socket_path[sizeof(((struct sockaddr_un *)0)->sun_path)]; /* "": serves nothing */
    char dir[PATH_MAX];
    sc_isolate_child *child;
    sc_python_info info; /* the interpreter it runs, embedded when info.libpython is set */
    int listen_fd;
} warm = {.listen_fd = -1};

static bool embedded(void)
{
    return warm.info.libpython[0] != '\0';
}

/* Whether a request for info (SC_WARM_* flags) can be served now. */
static bool serves(const sc_python_info *info, int flags)
{
    return warm.socket_path[0] && strcmp(info->executable, warm.info.executable) == 0 &&
           ((flags & SC_WARM_ANY_MODE) || strcmp(info->libpython, warm.info.libpython) == 0);
}

static cJSON *warm_child(void *arg)
{
    (void)arg;
    char fd[16], log[PATH_MAX + 16];
    snprintf(fd, sizeof fd, "%d", warm.listen_fd);
    /* its own output to a file: nobody reads this child's pipe while it serves, and a full pipe
     * would stop it */
    snprintf(log, sizeof log, "%s/host.log", warm.dir);
    int out = open(log, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (out >= 0) {
        dup2(out, STDOUT_FILENO);
        dup2(out, STDERR_FILENO);
        close(out);
    }
    const char *argv[] = {"stackcheck-torch-host", fd, embedded() ? "embedded" : "subprocess",
                          NULL};
    cJSON *result = NULL;
    const char *mode = NULL;
    sc_error err = {0};
    sc_python_run_in(&warm.info, warm.dir, sc_py_torch_host, argv, &result, &mode, &err);
    return result;
}

static void ignore_step(const char *step, void *arg)
{
    (void)step;
    (void)arg;
}

static int listen_at(const char *path)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (!sc_fmt(addr.sun_path, sizeof addr.sun_path, "%s", path))
        return -ENAMETOOLONG;
    /* A path in a private directory, never the abstract namespace, which anyone may connect to.
     * Too long a path (a deep $TMPDIR) leaves the run without a warm interpreter: slower, alike.
     * Not close-on-exec: a subprocess interpreter inherits it through exec. */
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0)
        return -errno;
    if (bind(fd, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(fd, 16) < 0) {
        int e = -errno;
        close(fd);
        return e;
    }
    return fd;
}

int sc_python_warm_start(const sc_python_info *info)
{
    sc_error err = {0};
    if (warm.child)
        return -EALREADY;
    if (info->version[0] < '3')
        return -ENOTSUP; /* the probes' code needs Python 3: framework.torch says so itself */
    int rc = sc_python_workdir(warm.dir, sizeof warm.dir, &err);
    if (rc < 0)
        return rc;
    warm.info = *info;
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/warm.sock", warm.dir);
    warm.listen_fd = listen_at(path);
    rc = warm.listen_fd < 0
             ? warm.listen_fd
             : sc_isolate_start(warm_child, NULL, WARM_LIFETIME_S, ignore_step, NULL, &warm.child);
    if (warm.listen_fd >= 0)
        close(warm.listen_fd);
    warm.listen_fd = -1;
    if (rc < 0) {
        sc_remove_tree(warm.dir);
        warm.child = NULL;
        return rc;
    }
    sc_fmt(warm.socket_path, sizeof warm.socket_path, "%s", path); /* it fit listen_at */
    return 0;
}

bool sc_python_warm_serves(const sc_python_info *info)
{
    return serves(info, SC_WARM_SAME_MODE);
}

void sc_python_warm_stop(bool run_ends)
{
    if (!warm.child)
        return;
    if (!run_ends) { /* no request after this: it stops, and dies while the run goes on */
        sc_isolate_kill(warm.child);
        warm.socket_path[0] = '\0';
        return;
    }
    sc_isolate_report rep;
    sc_isolate_end(warm.child, &rep);
    cJSON_Delete(rep.result);
    warm.child = NULL;
    warm.socket_path[0] = '\0';
    sc_remove_tree(warm.dir); /* its socket, its log, its own code and result files */
}

/* The request line: what to run, where its result goes, whose interpreter and mode it wants. */
static char *request_text(const sc_python_info *info, int flags, const char *code_path,
                          const char *res_path, const char *const *argv, bool step)
{
    cJSON *req = cJSON_CreateObject();
    cJSON *args = cJSON_AddArrayToObject(req, "argv");
    const char *mode = flags & SC_WARM_ANY_MODE ? "any"
                       : info->libpython[0]     ? "embedded"
                                                : "subprocess";
    cJSON_AddStringToObject(req, "mode", mode);
    cJSON_AddBoolToObject(req, "first", (flags & SC_WARM_FIRST) != 0);
    cJSON_AddStringToObject(req, "code_file", code_path);
    cJSON_AddStringToObject(req, "result", res_path);
    cJSON_AddBoolToObject(req, "step", step);
    for (int i = 0; argv && argv[i]; i++)
        cJSON_AddItemToArray(args, cJSON_CreateString(argv[i]));
    char *text = cJSON_PrintUnformatted(req);
    cJSON_Delete(req);
    return text;
}

/* Sends text and a newline with this process's stdout, stderr and step pipe attached. */
static int send_request(int sock, const char *text, int step_fd)
{
    int fds[3] = {STDOUT_FILENO, STDERR_FILENO, step_fd};
    size_t nfds = step_fd >= 0 ? 3 : 2;
    char control[CMSG_SPACE(sizeof fds)];
    memset(control, 0, sizeof control);
    struct iovec iov[2] = {{(void *)text, strlen(text)}, {(void *)"\n", 1}};
    struct msghdr msg = {.msg_iov = iov,
                         .msg_iovlen = 2,
                         .msg_control = control,
                         .msg_controllen = CMSG_SPACE(nfds * sizeof(int))};
    struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(nfds * sizeof(int));
    memcpy(CMSG_DATA(cm), fds, nfds * sizeof(int));
    ssize_t sent;
    while ((sent = sendmsg(sock, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR)
        ;
    return sent == (ssize_t)(strlen(text) + 1) ? 0 : -EIO; /* a line this short goes whole */
}

/* One answer line into line (without the newline); false at the end of the stream. */
static bool read_line(int sock, char *line, size_t size)
{
    size_t n = 0;
    for (;;) {
        char c;
        ssize_t r = read(sock, &c, 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        if (c == '\n' || n + 1 >= size) {
            line[n] = '\0';
            return true;
        }
        line[n++] = c;
    }
}

static int connect_warm(void)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    sc_fmt(addr.sun_path, sizeof addr.sun_path, "%s", warm.socket_path);
    int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (sock < 0)
        return -errno;
    if (connect(sock, (struct sockaddr *)&addr, sizeof addr) < 0) {
        int e = -errno;
        close(sock);
        return e;
    }
    return sock;
}

/* The worker's wait status as sc_python_run_in reports a run of that mode. */
static int worker_status(const sc_python_info *info, int status, sc_error *err)
{
    if (WIFSIGNALED(status)) /* the same outcome as a crash in this process */
        raise(WTERMSIG(status));
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    if (embedded())
        return sc_error_set(err, -EIO, "the Python code raised an exception (traceback on stderr)");
    return sc_error_set(err, -EIO, "%s exited with status %d", info->executable,
                        WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

int sc_python_warm_run(const sc_python_info *info, int flags, const char *code_path,
                       const char *res_path, const char *const *argv, sc_error *err)
{
    if (!serves(info, flags))
        return -EAGAIN;
    const char *step = getenv(SC_STEP_FD_ENV);
    char *text = request_text(info, flags, code_path, res_path, argv, step != NULL);
    int sock = text ? connect_warm() : -ENOMEM;
    char line[128];
    bool started = sock >= 0 && send_request(sock, text, step ? atoi(step) : -1) == 0 &&
                   read_line(sock, line, sizeof line) && strncmp(line, "started ", 8) == 0;
    free(text);
    if (!started) { /* no answer, refused, or gone before it forked: run it here */
        if (sock >= 0)
            close(sock);
        return -EAGAIN;
    }
    /* "done CODE" from the worker, or "status WAITSTATUS" from the host when it died first */
    bool ended = read_line(sock, line, sizeof line);
    close(sock);
    if (ended && strncmp(line, "done ", 5) == 0)
        return worker_status(info, W_EXITCODE(atoi(line + 5) & 0xff, 0), err);
    if (!ended || strncmp(line, "status ", 7) != 0)
        return sc_error_set(err, -EIO, "the warm interpreter went away while the code ran");
    return worker_status(info, atoi(line + 7), err);
}
