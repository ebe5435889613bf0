/* The glibc floor of the portable build (linked into the release binary only, see
 * cmake/portable.cmake): every glibc symbol the binary needs is bound at the oldest version, so it
 * starts on glibc 2.17 (x86_64: GLIBC_2.2.5, aarch64: GLIBC_2.17, its first release) and newer.
 * Each __wrap_X here replaces X for the whole link (ld --wrap=X), the static archives included. */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/stat.h>

#if defined(__x86_64__)
#define BASE "GLIBC_2.2.5"
#define DLINFO_VERSION "GLIBC_2.3.3" /* dlinfo came in 2.3.3 */
#define FXSTATAT_VERSION "GLIBC_2.4" /* and __fxstatat in 2.4 */
#define STAT_VER 1                   /* _STAT_VER_LINUX: the kernel's struct stat is the user one */
#elif defined(__aarch64__)
#define BASE "GLIBC_2.17"
#define DLINFO_VERSION BASE
#define FXSTATAT_VERSION BASE
#define STAT_VER 0 /* _STAT_VER_KERNEL of the generic ports */
#else
#error "the portable build knows the glibc floor of x86_64 and aarch64 only"
#endif

/* Binds the local name old to glibc's sym at the given version (the oldest the target has). */
#define AT_VERSION(old, sym, version) __asm__(".symver " #old "," #sym "@" version)
#define AT_BASE(old, sym) AT_VERSION(old, sym, BASE)

/* Start-up. glibc 2.34's crt1.o calls __libc_start_main@GLIBC_2.34 with no init function: that
 * libc runs the program's constructors itself. The old entry point runs only the init function it
 * is given (without one, no constructor would run), so it is given one that does what
 * __libc_csu_init did: _init, then the init array. (The loader runs the preinit array; the fini
 * array and _fini are run by the loader at exit, in every version.) */
typedef int (*main_fn)(int, char **, char **);
typedef void (*init_fn)(int, char **, char **);
extern int old_libc_start_main(main_fn main, int argc, char **argv, init_fn init,
                               void (*fini)(void), void (*rtld_fini)(void), void *stack_end);
AT_BASE(old_libc_start_main, __libc_start_main);
extern void _init(void);
extern init_fn __init_array_start[] __attribute__((visibility("hidden")));
extern init_fn __init_array_end[] __attribute__((visibility("hidden")));

static void run_constructors(int argc, char **argv, char **envp)
{
    _init();
    for (init_fn *f = __init_array_start; f < __init_array_end; f++)
        (*f)(argc, argv, envp);
}

int __wrap___libc_start_main(main_fn main, int argc, char **argv, init_fn init, void (*fini)(void),
                             void (*rtld_fini)(void), void *stack_end)
{
    (void)init, (void)fini;
    return old_libc_start_main(main, argc, argv, run_constructors, NULL, rtld_fini, stack_end);
}

/* The dynamic loading interface: GLIBC_2.34 since it moved into libc; the old versions live in
 * libdl.so.2 before 2.34 (linked by name). */
extern void *old_dlopen(const char *file, int mode);
extern void *old_dlsym(void *handle, const char *name);
extern int old_dlclose(void *handle);
extern char *old_dlerror(void);
extern int old_dlinfo(void *handle, int request, void *arg);
extern int old_dladdr(const void *addr, Dl_info *info);
AT_BASE(old_dlopen, dlopen);
AT_BASE(old_dlsym, dlsym);
AT_BASE(old_dlclose, dlclose);
AT_BASE(old_dlerror, dlerror);
AT_VERSION(old_dlinfo, dlinfo, DLINFO_VERSION);
AT_BASE(old_dladdr, dladdr);

void *__wrap_dlopen(const char *file, int mode)
{
    return old_dlopen(file, mode);
}

void *__wrap_dlsym(void *handle, const char *name)
{
    return old_dlsym(handle, name);
}

int __wrap_dlclose(void *handle)
{
    return old_dlclose(handle);
}

char *__wrap_dlerror(void)
{
    return old_dlerror();
}

int __wrap_dlinfo(void *handle, int request, void *arg)
{
    return old_dlinfo(handle, request, arg);
}

int __wrap_dladdr(const void *addr, Dl_info *info)
{
    return old_dladdr(addr, info);
}

/* stat and its kin became functions in glibc 2.33; before, the headers turned them into calls of
 * __xstat and its kin with a structure version. The 64 forms are the same calls on these 64-bit
 * targets (the static archives built with _FILE_OFFSET_BITS=64 call them). */
extern int old_xstat(int ver, const char *path, struct stat *st);
extern int old_lxstat(int ver, const char *path, struct stat *st);
extern int old_fxstat(int ver, int fd, struct stat *st);
extern int old_fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags);
AT_BASE(old_xstat, __xstat);
AT_BASE(old_lxstat, __lxstat);
AT_BASE(old_fxstat, __fxstat);
AT_VERSION(old_fxstatat, __fxstatat, FXSTATAT_VERSION);

int __wrap_stat(const char *path, struct stat *st)
{
    return old_xstat(STAT_VER, path, st);
}

int __wrap_stat64(const char *path, struct stat *st)
{
    return old_xstat(STAT_VER, path, st);
}

int __wrap_lstat(const char *path, struct stat *st)
{
    return old_lxstat(STAT_VER, path, st);
}

int __wrap_lstat64(const char *path, struct stat *st)
{
    return old_lxstat(STAT_VER, path, st);
}

int __wrap_fstat(int fd, struct stat *st)
{
    return old_fxstat(STAT_VER, fd, st);
}

int __wrap_fstat64(int fd, struct stat *st)
{
    return old_fxstat(STAT_VER, fd, st);
}

int __wrap_fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
    return old_fxstatat(STAT_VER, dirfd, path, st, flags);
}

int __wrap_fstatat64(int dirfd, const char *path, struct stat *st, int flags)
{
    return old_fxstatat(STAT_VER, dirfd, path, st, flags);
}

/* _FILE_OFFSET_BITS=64 turns fcntl into fcntl64 (GLIBC_2.28); on a 64-bit target both are the
 * same call. The third argument, when there is one, is an int or a pointer: read as a pointer it
 * is passed on unchanged, as glibc itself does. */
extern int old_fcntl(int fd, int cmd, ...);
AT_BASE(old_fcntl, fcntl);

int __wrap_fcntl64(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    return old_fcntl(fd, cmd, arg);
}
