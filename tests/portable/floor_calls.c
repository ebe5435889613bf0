/* The calls the glibc floor wraps, made the way the code and the static archives make them:
 * compiled twice, plainly (stat, fcntl) and with _FILE_OFFSET_BITS=64 (stat64, fcntl64), as
 * FLOOR_CALLS. Each call is checked against another way of learning the same thing. */
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "floor_check.h"

static int stats_agree(const char *path)
{
    struct stat a, b, c, d;
    int fd = open(path, O_RDONLY);
    int ok = fd >= 0 && stat(path, &a) == 0 && lstat(path, &b) == 0 && fstat(fd, &c) == 0 &&
             fstatat(AT_FDCWD, path, &d, 0) == 0;
    ok = ok && S_ISREG(a.st_mode) && a.st_size > 0 && a.st_size == c.st_size &&
         a.st_ino == d.st_ino && b.st_ino == c.st_ino;
    if (fd >= 0) {
        int flags = fcntl(fd, F_GETFD);
        ok = ok && flags >= 0 && fcntl(fd, F_SETFD, flags | FD_CLOEXEC) == 0 &&
             (fcntl(fd, F_GETFD) & FD_CLOEXEC);
        close(fd);
    }
    struct stat missing;
    return ok && stat("/nonexistent/floor-check", &missing) < 0;
}

static int dl_works(void)
{
    void *h = dlopen("libm.so.6", RTLD_NOW);
    if (!h)
        return 0;
    double (*cosine)(double) = (double (*)(double))dlsym(h, "cos");
    struct link_map *map = NULL;
    Dl_info info;
    int ok = cosine && cosine(0.0) == 1.0 && dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 && map &&
             strstr(map->l_name, "libm") && dladdr((void *)cosine, &info) && info.dli_fname &&
             strstr(info.dli_fname, "libm");
    ok = ok && !dlsym(h, "no_such_symbol_anywhere") && dlerror() != NULL;
    ok = dlclose(h) == 0 && ok;
    return ok && !dlopen("libno-such-library.so.9", RTLD_NOW) && dlerror() != NULL;
}

int FLOOR_CALLS(const char *self)
{
    int failed = 0;
    if (!stats_agree(self)) {
        printf("%s: stat, lstat, fstat, fstatat or fcntl answered wrongly\n", STR(FLOOR_CALLS));
        failed++;
    }
    if (!dl_works()) {
        printf("%s: dlopen, dlsym, dlinfo, dladdr, dlerror or dlclose failed\n", STR(FLOOR_CALLS));
        failed++;
    }
    return failed;
}
