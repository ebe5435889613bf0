/* The passive HIP inventory: ROCm and DTK installs and their versions, the /opt links, the runtime
 * file the loader would pick, the visibility variables, and the KFD's per-process memory. Every
 * read goes through the sysroot; the version parsers take a buffer so tests and fuzzers drive them.
 */
#include "sc_hip_inventory.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sc_accel.h"
#include "sc_backend.h"
#include "sc_loader.h"
#include "sc_util.h"

#define MAX_OPT_NAMES 64

int sc_hip_parse_version_file(const char *text, char *buf, size_t size)
{
    if (!text)
        return -EINVAL;
    while (*text == ' ' || *text == '\t' || *text == '\r' || *text == '\n')
        text++;
    size_t n = strcspn(text, "\r\n");
    while (n > 0 && (text[n - 1] == ' ' || text[n - 1] == '\t'))
        n--;
    if (n == 0 || n >= size || n > 63 || !isdigit((unsigned char)text[0]))
        return -EINVAL;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)text[i]) && !strchr(".-+_~", text[i]))
            return -EINVAL;
    memcpy(buf, text, n);
    buf[n] = '\0';
    return 0;
}

/* Reads KEY's value as a small decimal number; false when absent or not numeric. */
static bool kv_number(const char *text, const char *key, unsigned long *out)
{
    char value[32];
    uint64_t v;
    if (!sc_kv_lookup(text, key, '=', value, sizeof value) || sc_parse_u64(value, &v) < 0 ||
        v > 99999999)
        return false;
    *out = (unsigned long)v;
    return true;
}

int sc_hip_parse_hip_version_file(const char *text, char *buf, size_t size)
{
    unsigned long major, minor, patch;
    if (!text || !kv_number(text, "HIP_VERSION_MAJOR", &major) ||
        !kv_number(text, "HIP_VERSION_MINOR", &minor))
        return -EINVAL;
    if (kv_number(text, "HIP_VERSION_PATCH", &patch))
        sc_fmt(buf, size, "%lu.%lu.%lu", major, minor, patch);
    else
        sc_fmt(buf, size, "%lu.%lu", major, minor);
    return 0;
}

/* Reads dir/rel (a small text file) into a malloc'd buffer; NULL when unreadable. */
static char *read_small(const sc_root *root, const char *dir, const char *rel)
{
    char path[PATH_MAX + 64];
    char *text = NULL;
    if (!sc_fmt(path, sizeof path, "%s/%s", dir, rel) || sc_root_read(root, path, &text, 4096) < 0)
        return NULL;
    return text;
}

static void read_install_versions(const sc_root *root, sc_hip_install *in)
{
    char *text = read_small(root, in->root, ".info/version");
    if (!text)
        sc_fmt(in->version_error, sizeof in->version_error, "no readable .info/version");
    else if (sc_hip_parse_version_file(text, in->version, sizeof in->version) < 0)
        sc_fmt(in->version_error, sizeof in->version_error, "malformed .info/version");
    free(text);
    static const char *const hip_files[] = {"share/hip/version", "hip/share/hip/version",
                                            "hip/bin/.hipVersion", "bin/.hipVersion"};
    for (size_t i = 0; i < sizeof hip_files / sizeof hip_files[0] && !in->hip_version[0]; i++) {
        text = read_small(root, in->root, hip_files[i]);
        if (text &&
            sc_hip_parse_hip_version_file(text, in->hip_version, sizeof in->hip_version) < 0)
            in->hip_version[0] = '\0';
        free(text);
    }
}

/* HIP_PATH names <root>/hip in ROCm 4/5 and DTK layouts: the install is its parent. */
static void strip_hip_dir(char *real)
{
    size_t n = strlen(real);
    if (n > 4 && strcmp(real + n - 4, "/hip") == 0)
        real[n - 4] = '\0';
}

static sc_hip_install *find_or_add(sc_hip_inventory *inv, sc_roots *roots, const char *real)
{
    for (int i = 0; i < inv->install_count; i++)
        if (strcmp(inv->installs[i].root, real) == 0)
            return &inv->installs[i];
    if (inv->install_count >= SC_HIP_MAX_INSTALLS)
        return NULL;
    sc_hip_install *in = &inv->installs[inv->install_count++];
    memset(in, 0, sizeof *in);
    snprintf(in->root, sizeof in->root, "%s", real);
    sc_install_root ir;
    sc_roots_of_dir(roots, real, &ir);
    in->kind = ir.kind;
    return in;
}

/* Adds the install that path reaches (a directory), recording how it was reached. */
static void add_install(sc_roots *roots, sc_hip_inventory *inv, const char *path, const char *via,
                        bool is_hip_path)
{
    const sc_root *root = sc_roots_root(roots);
    char real[PATH_MAX];
    struct stat st;
    if (sc_root_realpath(root, path, real, sizeof real) < 0 ||
        sc_root_stat(root, real, &st, true) < 0 || !S_ISDIR(st.st_mode))
        return;
    if (is_hip_path)
        strip_hip_dir(real);
    bool fresh = true;
    for (int i = 0; i < inv->install_count; i++)
        fresh = fresh && strcmp(inv->installs[i].root, real) != 0;
    sc_hip_install *in = find_or_add(inv, roots, real);
    if (!in)
        return;
    if (fresh)
        read_install_versions(root, in);
    if (in->via_count < SC_HIP_MAX_VIA)
        snprintf(in->via[in->via_count++], sizeof in->via[0], "%s", via);
}

static bool is_install_name(const char *name)
{
    return strcmp(name, "rocm") == 0 || strcmp(name, "dtk") == 0 || strcmp(name, "hyhal") == 0 ||
           sc_starts_with(name, "rocm-") || sc_starts_with(name, "dtk-");
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_installs(const void *a, const void *b)
{
    return strcmp(((const sc_hip_install *)a)->root, ((const sc_hip_install *)b)->root);
}

/* Records where a symlinked /opt entry points. */
static void note_link(const sc_root *root, sc_hip_inventory *inv, const char *path)
{
    struct stat st;
    if (inv->link_count >= 8 || sc_root_stat(root, path, &st, false) < 0 || !S_ISLNK(st.st_mode))
        return;
    sc_hip_link *l = &inv->links[inv->link_count++];
    snprintf(l->name, sizeof l->name, "%s", path);
    if (sc_root_realpath(root, path, l->target, sizeof l->target) < 0)
        l->target[0] = '\0';
}

/* The /opt entries that look like installs, sorted so the order does not depend on readdir. */
static int opt_install_names(const sc_root *root, char **names, int max)
{
    DIR *d = sc_root_opendir(root, "/opt");
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max)
        if (is_install_name(e->d_name) && (names[n] = strdup(e->d_name)))
            n++;
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], cmp_names);
    return n;
}

void sc_hip_inventory_installs(const sc_root *root, const sc_hip_env *env, sc_hip_inventory *inv)
{
    char *names[MAX_OPT_NAMES];
    sc_roots *roots = sc_roots_new(root);
    if (!roots)
        return;
    int n = opt_install_names(root, names, MAX_OPT_NAMES);
    for (int i = 0; i < n; i++) {
        char path[PATH_MAX];
        sc_fmt(path, sizeof path, "/opt/%s", names[i]);
        note_link(root, inv, path);
        add_install(roots, inv, path, path, false);
        free(names[i]);
    }
    char via[512];
    if (env && env->rocm_path && env->rocm_path[0] == '/') {
        sc_fmt(via, sizeof via, "ROCM_PATH=%s", env->rocm_path);
        add_install(roots, inv, env->rocm_path, via, false);
    }
    if (env && env->hip_path && env->hip_path[0] == '/') {
        sc_fmt(via, sizeof via, "HIP_PATH=%s", env->hip_path);
        add_install(roots, inv, env->hip_path, via, true);
    }
    sc_roots_free(roots);
    qsort(inv->installs, (size_t)inv->install_count, sizeof inv->installs[0], cmp_installs);
}

const sc_hip_install *sc_hip_inventory_install_of(const sc_hip_inventory *inv, const char *path)
{
    for (int i = 0; i < inv->install_count; i++) {
        size_t n = strlen(inv->installs[i].root);
        if (strncmp(path, inv->installs[i].root, n) == 0 && path[n] == '/')
            return &inv->installs[i];
    }
    return NULL;
}

bool sc_hip_inventory_has_dtk(const sc_hip_inventory *inv)
{
    for (int i = 0; i < inv->install_count; i++)
        if (inv->installs[i].kind == SC_ROOT_DTK)
            return true;
    return false;
}

/* The descriptor's runtime names, Hygon's own (libgalaxyhip) first when prefer_dtk, each group in
 * the descriptor's order; into names (max entries with the NULL). */
static void runtime_names(bool prefer_dtk, const char **names, size_t max)
{
    const char *const *all = sc_backend_get(SC_BACKEND_AMD)->runtime_libraries;
    size_t n = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; all[i] && n + 1 < max; i++)
            if (sc_starts_with(all[i], "libgalaxyhip") == (prefer_dtk == (pass == 0)))
                names[n++] = all[i];
    names[n] = NULL;
}

const char *const *sc_hip_runtime_names(bool prefer_dtk)
{
    static const char *upstream_first[16], *dtk_first[16];
    if (!upstream_first[0]) {
        runtime_names(false, upstream_first, 16);
        runtime_names(true, dtk_first, 16);
    }
    return prefer_dtk ? dtk_first : upstream_first;
}

bool sc_hip_loader_find(const sc_root *root, const char *ld_library_path, const char *name,
                        sc_hip_pick *pick)
{
    const char *const names[] = {name, NULL};
    sc_loader l;
    pick->found = false;
    if (sc_loader_open(&l, root, ld_library_path) < 0)
        return false;
    bool found = sc_loader_find_first(&l, names, pick);
    sc_loader_close(&l);
    return found;
}

void sc_hip_inventory_pick(const sc_root *root, const char *ld_library_path, sc_hip_inventory *inv)
{
    sc_loader l;
    inv->pick.found = false;
    if (sc_loader_open(&l, root, ld_library_path) == 0) {
        sc_loader_find_first(&l, sc_hip_runtime_names(sc_hip_inventory_has_dtk(inv)), &inv->pick);
        sc_loader_close(&l);
    }
}

/* The HIP install a library directory belongs to (symlinks resolved, by what the install holds);
 * false for a directory of no AMD stack install. */
static bool hip_root_of_lib_dir(sc_roots *roots, const char *dir, sc_install_root *ir)
{
    sc_roots_of_dir(roots, dir, ir);
    return ir->stack == sc_backend_get(SC_BACKEND_AMD);
}

int sc_hip_path_roots(const sc_root *root, const char *ld_library_path, char *buf, size_t size)
{
    char seen[8][PATH_MAX];
    int count = 0;
    sc_roots *roots = sc_roots_new(root);
    sc_buf out;
    buf[0] = '\0';
    if (!roots)
        return 0;
    sc_buf_init(&out);
    for (const char *p = ld_library_path; p && *p && count < 8;) {
        size_t n = strcspn(p, ":");
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%.*s", (int)(n < sizeof dir ? n : sizeof dir - 1), p);
        p += n + (p[n] == ':');
        sc_install_root ir;
        if (dir[0] != '/' || !hip_root_of_lib_dir(roots, dir, &ir))
            continue;
        bool dup = false;
        for (int i = 0; i < count; i++)
            dup = dup || strcmp(seen[i], ir.path) == 0;
        if (dup)
            continue;
        snprintf(seen[count++], sizeof seen[0], "%s", ir.path);
        sc_buf_printf(&out, "%s%s (%s)", out.len ? ", " : "", ir.path, dir);
    }
    snprintf(buf, size, "%s", out.data ? out.data : "");
    sc_buf_free(&out);
    sc_roots_free(roots);
    return count;
}

int sc_hip_visibility_vars(char *(*env)(const char *), char *buf, size_t size)
{
    return sc_accel_visibility_vars(env, sc_backend_get(SC_BACKEND_AMD)->visibility_vars, false,
                                    buf, size);
}

/* Reads one process's vram_<gpu_id>; false when absent or zero. */
static bool read_vram(const sc_root *root, const char *pid, unsigned long long gpu_id,
                      sc_hip_vram_user *u)
{
    char path[PATH_MAX], line[64];
    uint64_t bytes;
    if (!sc_fmt(path, sizeof path, "/sys/class/kfd/kfd/proc/%s/vram_%llu", pid, gpu_id) ||
        sc_root_read_line(root, path, line, sizeof line) < 0 || sc_parse_u64(line, &bytes) < 0 ||
        bytes == 0)
        return false;
    u->pid = atoi(pid);
    u->vram_bytes = bytes;
    sc_fmt(path, sizeof path, "/proc/%s/comm", pid);
    if (sc_root_read_line(root, path, line, sizeof line) < 0)
        snprintf(line, sizeof line, "?");
    sc_fmt(u->comm, sizeof u->comm, "%s", line);
    return true;
}

int sc_hip_kfd_vram_users(const sc_root *root, unsigned long long gpu_id, int skip_pid,
                          sc_hip_vram_user *users, int max)
{
    DIR *d = sc_root_opendir(root, "/sys/class/kfd/kfd/proc");
    if (!d)
        return -errno;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        if (!isdigit((unsigned char)e->d_name[0]) || atoi(e->d_name) == skip_pid)
            continue;
        if (read_vram(root, e->d_name, gpu_id, &users[n]))
            n++;
    }
    closedir(d);
    return n;
}
