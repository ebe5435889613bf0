/* Running code in the user's Python: embedded by dlopen(RTLD_GLOBAL) of its own libpython in this
 * (isolated) process, so one binary serves every Python 3 version, or as a subprocess of the
 * interpreter when it has no shared libpython. The code answers through the file STACKCHECK_RESULT.
 */
#include "sc_python.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <wchar.h>

#include "sc_scratch.h"
#include "sc_sysroot.h"
#include "sc_util.h"

#define RESULT_MAX (64u << 20)

/* The few calls embedding needs. They exist with these signatures from 3.5 to 3.13; the ones
 * deprecated in 3.11 (program name, argv) are still exported through 3.13, and they are the only
 * way that works on 3.8 too. The program name is what makes sys.prefix and site-packages (a venv's
 * too, through pyvenv.cfg) come out as for the user's interpreter. */
typedef struct {
    wchar_t *(*decode_locale)(const char *, size_t *);
    void (*set_program_name)(const wchar_t *);
    void (*initialize_ex)(int);
    void (*set_argv_ex)(int, wchar_t **, int);
    int (*run_simple_string_flags)(const char *, void *);
} py_api;

static int load_api(const char *libpython, py_api *api, sc_error *err)
{
    void *h = dlopen(libpython, RTLD_NOW | RTLD_GLOBAL);
    if (!h)
        return sc_error_set(err, -ENOEXEC, "dlopen %s: %s", libpython, dlerror());
    static const char *const names[] = {"Py_DecodeLocale", "Py_SetProgramName", "Py_InitializeEx",
                                        "PySys_SetArgvEx", "PyRun_SimpleStringFlags"};
    void *syms[5];
    for (int i = 0; i < 5; i++) {
        dlerror();
        syms[i] = dlsym(h, names[i]);
        if (!syms[i])
            return sc_error_set(err, -ENOSYS, "%s lacks %s", libpython, names[i]);
    }
    /* Object pointers to function pointers: POSIX guarantees this works for dlsym. */
    memcpy(&api->decode_locale, &syms[0], sizeof syms[0]);
    memcpy(&api->set_program_name, &syms[1], sizeof syms[1]);
    memcpy(&api->initialize_ex, &syms[2], sizeof syms[2]);
    memcpy(&api->set_argv_ex, &syms[3], sizeof syms[3]);
    memcpy(&api->run_simple_string_flags, &syms[4], sizeof syms[4]);
    return 0;
}

static int count_args(const char *const *argv)
{
    int n = 0;
    while (argv && argv[n])
        n++;
    return n;
}

static int run_embedded(const sc_python_info *info, const char *code, const char *const *argv,
                        sc_error *err)
{
    py_api api = {0};
    int rc = load_api(info->libpython, &api, err);
    if (rc < 0)
        return rc;
    int argc = count_args(argv);
    wchar_t **wargv = calloc((size_t)argc + 2, sizeof *wargv);
    wchar_t *program = api.decode_locale(info->executable, NULL);
    if (!wargv || !program) {
        free(wargv);
        return sc_error_set(err, -ENOMEM, "out of memory preparing the interpreter");
    }
    /* Never freed: Python keeps pointers to the program name and argv for its lifetime. */
    api.set_program_name(program);
    api.initialize_ex(0); /* 0: leave signal handlers alone, so a crash stays a crash */
    wargv[0] = program;
    for (int i = 0; i < argc; i++)
        if (!(wargv[i] = api.decode_locale(argv[i], NULL)))
            return sc_error_set(err, -ENOMEM, "cannot decode argument %d", i);
    api.set_argv_ex(argc > 0 ? argc : 1, wargv, 0);
    int status = api.run_simple_string_flags(code, NULL);
    api.run_simple_string_flags("import sys\nsys.stdout.flush()\nsys.stderr.flush()\n", NULL);
    if (status != 0)
        return sc_error_set(err, -EIO, "the Python code raised an exception (traceback on stderr)");
    return 0;
}

/* Makes sys.argv equal argv in subprocess mode too: `python -c BOOT FILE argv...`. */
static const char subprocess_boot[] =
    "import sys, __main__\n"
    "_sc_file = sys.argv[1]\n"
    "del sys.argv[:2]\n"
    "with open(_sc_file) as _sc_f:\n"
    "    _sc_code = compile(_sc_f.read(), '<stackcheck>', 'exec')\n"
    "del _sc_file, _sc_f\n"
    "exec(_sc_code, __main__.__dict__)\n";

static int write_file(const char *path, const char *text, sc_error *err)
{
    int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0)
        return sc_error_set(err, -errno, "open %s: %s", path, strerror(errno));
    size_t n = strlen(text), off = 0;
    while (off < n) {
        ssize_t w = write(fd, text + off, n - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            close(fd);
            return sc_error_set(err, -EIO, "write %s failed", path);
        }
        off += (size_t)w;
    }
    close(fd);
    return 0;
}

static int run_subprocess(const sc_python_info *info, const char *code, const char *const *argv,
                          const char *code_file, sc_error *err)
{
    int rc = write_file(code_file, code, err);
    if (rc < 0)
        return rc;
    int argc = count_args(argv);
    const char **args = calloc((size_t)argc + 5, sizeof *args);
    if (!args)
        return sc_error_set(err, -ENOMEM, "out of memory");
    args[0] = info->executable;
    args[1] = "-c";
    args[2] = subprocess_boot;
    args[3] = code_file;
    for (int i = 0; i < argc; i++)
        args[4 + i] = argv[i];
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        execv(info->executable, (char *const *)args);
        _exit(127);
    }
    free(args);
    if (pid < 0)
        return sc_error_set(err, -errno, "fork: %s", strerror(errno));
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (WIFSIGNALED(status)) /* the same outcome as a crash in embedded mode */
        raise(WTERMSIG(status));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return sc_error_set(err, -EIO, "%s exited with status %d", info->executable,
                            WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 0;
}

/* The result file lives in a private directory, but the user's code runs with it: it is opened as
 * a regular file only and read without blocking, so a FIFO put in its place cannot hang the run. */
static int read_result(const char *path, cJSON **result, sc_error *err)
{
    struct stat st;
    int fd = sc_open_regular(path, &st);
    if (fd < 0)
        return sc_error_set(err, fd, "open %s: %s", path, strerror(-fd));
    char *data = NULL;
    long len = sc_read_fd(fd, (size_t)st.st_size, RESULT_MAX, &data);
    close(fd);
    int rc = 0;
    if (len < 0)
        rc = sc_error_set(err, (int)len, "read %s: %s", path, strerror((int)-len));
    else if ((size_t)len >= RESULT_MAX)
        rc = sc_error_set(err, -E2BIG, "the Python result is too large");
    else if (len == 0)
        rc = sc_error_set(err, -ENODATA, "the Python code wrote no result");
    else if (!(*result = cJSON_ParseWithLength(data, (size_t)len)))
        rc = sc_error_set(err, -EINVAL, "the Python result is not valid JSON");
    free(data);
    return rc;
}

int sc_python_workdir(char *dir, size_t size, sc_error *err)
{
    /* in the run's private directory when there is one: removed with it, whatever happens */
    return sc_private_dir(sc_scratch_dir(), "stackcheck-py", dir, size, err);
}

void sc_python_workdir_remove(const char *dir)
{
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/result.json", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/code.py", dir);
    unlink(path);
    rmdir(dir);
}

static int create_empty(const char *path, sc_error *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600); /* private dir */
    if (fd < 0)
        return sc_error_set(err, -errno, "create %s: %s", path, strerror(errno));
    close(fd);
    return 0;
}

#define WARM_NONE (-1)

/* Through the warm interpreter when there is one for the request (-EAGAIN when not). */
static int run_warm(const sc_python_info *info, int use, const char *code, const char *const *argv,
                    const char *code_path, const char *res_path, sc_error *err)
{
    if (use == WARM_NONE)
        return -EAGAIN;
    int rc = create_empty(code_path, err);
    if (rc == 0)
        rc = write_file(code_path, code, err);
    return rc < 0 ? -EAGAIN /* run it here, which needs no code file when embedded */
                  : sc_python_warm_run(info, use, code_path, res_path, argv, err);
}

static int run_in(const sc_python_info *info, const char *workdir, const char *code,
                  const char *const *argv, int use, cJSON **result, const char **mode,
                  sc_error *err)
{
    char res_path[PATH_MAX + 16], code_path[PATH_MAX + 16];
    *result = NULL;
    *mode = info->libpython[0] ? "embedded" : "subprocess";
    snprintf(res_path, sizeof res_path, "%s/result.json", workdir);
    snprintf(code_path, sizeof code_path, "%s/code.py", workdir);
    int rc = create_empty(res_path, err);
    if (rc == 0 && setenv("STACKCHECK_RESULT", res_path, 1) < 0)
        rc = sc_error_set(err, -errno, "setenv: %s", strerror(errno));
    int warm_rc = rc == 0 ? run_warm(info, use, code, argv, code_path, res_path, err) : -EAGAIN;
    if (warm_rc != -EAGAIN)
        rc = warm_rc;
    else if (rc == 0 && info->libpython[0])
        rc = run_embedded(info, code, argv, err);
    else if (rc == 0 && (rc = create_empty(code_path, err)) == 0)
        rc = run_subprocess(info, code, argv, code_path, err);
    /* A result written before an exception still counts: it usually says what went wrong. */
    sc_error read_err;
    int rrc = read_result(res_path, result, &read_err);
    if (rrc < 0 && rc == 0) {
        rc = rrc;
        if (err)
            *err = read_err;
    }
    return rrc == 0 ? 0 : rc;
}

int sc_python_run_in(const sc_python_info *info, const char *workdir, const char *code,
                     const char *const *argv, cJSON **result, const char **mode, sc_error *err)
{
    return run_in(info, workdir, code, argv, WARM_NONE, result, mode, err);
}

int sc_python_run_warm(const sc_python_info *info, const char *workdir, const char *code,
                       const char *const *argv, int flags, cJSON **result, const char **mode,
                       sc_error *err)
{
    return run_in(info, workdir, code, argv, flags, result, mode, err);
}

int sc_python_run(const sc_python_info *info, const char *code, const char *const *argv,
                  cJSON **result, const char **mode, sc_error *err)
{
    char dir[PATH_MAX];
    *result = NULL;
    *mode = info->libpython[0] ? "embedded" : "subprocess";
    int rc = sc_python_workdir(dir, sizeof dir, err);
    if (rc < 0)
        return rc;
    rc = sc_python_run_in(info, dir, code, argv, result, mode, err);
    sc_python_workdir_remove(dir);
    return rc;
}
