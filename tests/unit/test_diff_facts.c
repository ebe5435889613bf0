/* Every fact path `stackcheck diff` reads by name (its known facts and the platforms table's
 * roles from the backend descriptors) exists in some snapshot the current code writes: each
 * fixture root offline, the HIP, CUDA and ACL runtimes live against their stubs, torch as a ROCm
 * build with the torch_npu plug-in (a fake package: neither can exist here) and as Debian's CPU
 * build. Every fixture root is read, so a new backend's fixtures count at once; its runtime's
 * stub joins run_runtimes. A key a probe renames makes this test fail instead of leaving a diff row
 * empty. The platforms of the fresh fixture snapshots name their backends. */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "probes.h"
#include "sc_diff.h"
#include "sc_runner.h"
#include "sc_snapshot.h"

#define SNAPSHOTS_MAX 64

/* ---- the stubs' directory: runtime libraries and a fake torch, made before re-executing ---- */

static const char fake_torch[] =
    "import ctypes, os\n"
    "ctypes.CDLL(os.path.join(os.path.dirname(__file__), 'lib', 'librccl.so.2'))\n"
    "__version__ = '2.3.0+rocm6.0'\n"
    "class version:\n"
    "    hip = '6.0.32830-d62f6a171'\n"
    "    cuda = None\n"
    "    git_version = '0123456789abcdef'\n"
    "class cuda:\n"
    "    is_available = staticmethod(lambda: False)\n"
    "    device_count = staticmethod(lambda: 0)\n"
    "    get_arch_list = staticmethod(lambda: [])\n"
    "class backends:\n"
    "    class cudnn:\n"
    "        version = staticmethod(lambda: 3000000)\n";

/* torch_npu gives torch its npu device module when imported. */
static const char fake_torch_npu[] = "import types, torch\n"
                                     "__version__ = '2.1.0.post8'\n"
                                     "torch.npu = types.SimpleNamespace(is_available=lambda: True,"
                                     " device_count=lambda: 2)\n";

static void must(int rc, const char *what, const char *path)
{
    if (rc != 0) {
        fprintf(stderr, "test_diff_facts: %s %s: %s\n", what, path, strerror(errno));
        exit(1);
    }
}

static void write_text(const char *dir, const char *name, const char *text)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    must(f ? 0 : -1, "cannot write", path);
    fputs(text, f);
    must(fclose(f), "cannot write", path);
}

/* A file of the stub directory under another name: a hard link (the stubs and this directory
 * are both in the build tree), so a process that maps it sees that name. */
static void link_stub(const char *stub, const char *dir, const char *name, bool hard)
{
    char from[4200], to[4200];
    snprintf(from, sizeof from, "%s/lib%s.so", getenv("SC_STUB_DIR"), stub);
    snprintf(to, sizeof to, "%s/%s", dir, name);
    must(hard ? link(from, to) : symlink(from, to), "cannot link", to);
}

static void make_dir(const char *dir, const char *name, char *path, size_t size)
{
    snprintf(path, size, "%s/%s", dir, name);
    must(mkdir(path, 0755), "cannot make", path);
}

/* lib/: libcuda.so.1, the nvrtc names and libascendcl.so as the stubs; site/: torch and
 * torch_npu. */
static void make_stub_dir(const char *dir)
{
    static const struct {
        const char *stub, *name;
    } libs[] = {{"cudastub", "libcuda.so.1"},   {"cudastub", "libnvrtc.so.13"},
                {"cudastub", "libnvrtc.so.12"}, {"cudastub", "libnvrtc.so.11.2"},
                {"cudastub", "libnvrtc.so"},    {"aclstub", "libascendcl.so"}};
    char lib[4200], site[4200], torch[4300], torch_lib[4400], npu[4300];
    make_dir(dir, "lib", lib, sizeof lib);
    for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++)
        link_stub(libs[i].stub, lib, libs[i].name, false);
    make_dir(dir, "site", site, sizeof site);
    make_dir(site, "torch", torch, sizeof torch);
    write_text(torch, "__init__.py", fake_torch);
    make_dir(torch, "lib", torch_lib, sizeof torch_lib);
    link_stub("hipstub", torch_lib, "librccl.so.2", true);
    make_dir(site, "torch_npu", npu, sizeof npu);
    write_text(npu, "__init__.py", fake_torch_npu);
}

static void reexec_with_stubs(char **argv)
{
    char dir[4096], lib[4200];
    snprintf(dir, sizeof dir, "%s/tests/difftest-XXXXXX", getenv("SC_BUILD_DIR"));
    must(mkdtemp(dir) ? 0 : -1, "cannot make", dir);
    make_stub_dir(dir);
    snprintf(lib, sizeof lib, "%s/lib", dir);
    setenv("LD_LIBRARY_PATH", lib, 1);
    setenv("SC_DIFFTEST_DIR", dir, 1);
    execv("/proc/self/exe", argv);
    perror("execv");
    exit(1);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* ---- snapshots the current code writes ---- */

/* Runs table into snap's layers and summary, as the binary writes them. */
static void run_into(const sc_probe *const *table, const sc_options *opt, const sc_root *root,
                     cJSON *snap)
{
    sc_run_state rs;
    sc_run_probes(table, opt, root, NULL, &rs);
    sc_snapshot_add_run(snap, &rs);
    sc_run_state_free(&rs);
}

static cJSON *run_offline(const char *fixture)
{
    char dir[4096];
    sc_options opt;
    sc_root root;
    sc_error err = {0};
    snprintf(dir, sizeof dir, "%s/tests/fixtures/%s", getenv("SC_SOURCE_DIR"), fixture);
    sc_options_init(&opt);
    opt.sysroot = dir;
    assert_int_equal(sc_root_open(&root, dir, &err), 0);
    cJSON *snap = sc_snapshot_new(&opt, &root);
    run_into(sc_probes, &opt, &root, snap);
    sc_root_close(&root);
    return snap;
}

/* Stand-ins for driver.nvidia and driver.ascend with two devices each, so that the runtimes
 * see a driver with devices; their facts are removed from the snapshot before it is read. */
static void fake_driver_run(const sc_ctx *ctx, sc_result *res)
{
    (void)ctx;
    static const char *const pci[] = {"0000:18:00.0", "0000:2a:00.0"};
    cJSON *devs = cJSON_AddArrayToObject(res->facts, "devices");
    for (int i = 0; i < 2; i++) {
        cJSON *d = cJSON_CreateObject();
        cJSON_AddStringToObject(d, "pci_address", pci[i]);
        cJSON_AddItemToArray(devs, d);
    }
}

static const sc_probe fake_nvidia = {.id = "driver.nvidia",
                                     .layer = SC_LAYER_DRIVER,
                                     .backend = SC_BACKEND_NVIDIA,
                                     .run = fake_driver_run};
static const sc_probe fake_ascend = {.id = "driver.ascend",
                                     .layer = SC_LAYER_DRIVER,
                                     .backend = SC_BACKEND_ASCEND,
                                     .run = fake_driver_run};

static cJSON *run_live(const sc_probe *const *table, const char *hip_library, bool keep_driver)
{
    sc_options opt;
    sc_options_init(&opt);
    opt.keep_going = true;
    opt.hip_library = hip_library;
    opt.python = "/usr/bin/python3";
    sc_root root = {.dirfd = -1, .is_host = true};
    snprintf(root.path, sizeof root.path, "/");
    cJSON *snap = cJSON_CreateObject();
    run_into(table, &opt, &root, snap);
    cJSON *layer;
    cJSON_ArrayForEach (layer, cJSON_GetObjectItem(snap, "layers")) {
        if (!keep_driver &&
            strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(layer, "name")), "driver") == 0)
            cJSON_DeleteItemFromObject(layer, "probes");
    }
    return snap;
}

static cJSON *run_runtimes(void)
{
    char hip[4200];
    const sc_probe *table[] = {&fake_nvidia,
                               &fake_ascend,
                               &sc_probe_runtime_hip,
                               &sc_probe_runtime_cuda,
                               &sc_probe_runtime_acl,
                               &sc_probe_libraries_hip,
                               NULL};
    snprintf(hip, sizeof hip, "%s/libhipstub.so", getenv("SC_STUB_DIR"));
    setenv("SC_HIPSTUB_MODE", "ok", 1);
    setenv("SC_CUDASTUB_MODE", "ok", 1);
    setenv("SC_ACLSTUB_MODE", "ok", 1);
    return run_live(table, hip, false);
}

/* framework.torch and libraries.torch on Debian's torch, or (site given) on the fake one. */
static cJSON *run_torch(const char *site)
{
    const sc_probe *table[] = {&sc_probe_libraries_torch, &sc_probe_framework_torch, NULL};
    if (site)
        setenv("PYTHONPATH", site, 1);
    else
        unsetenv("PYTHONPATH");
    cJSON *snap = run_live(table, NULL, true);
    unsetenv("PYTHONPATH");
    return snap;
}

typedef struct {
    cJSON *snaps[SNAPSHOTS_MAX];
    char *names[SNAPSHOTS_MAX]; /* the fixture root of each offline snapshot, else NULL */
    size_t count;
} snapshots;

static snapshots all;

/* Every fixture root under tests/fixtures (each a directory but diff-golden's snapshots), so a
 * new backend's fixtures are read as soon as they exist. */
static void add_fixture_snapshots(snapshots *s)
{
    char dir[4096];
    struct dirent **names;
    snprintf(dir, sizeof dir, "%s/tests/fixtures", getenv("SC_SOURCE_DIR"));
    int n = scandir(dir, &names, NULL, alphasort);
    assert_true(n > 0);
    for (int i = 0; i < n; i++) {
        const char *name = names[i]->d_name;
        char path[4400];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, name);
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode) && name[0] != '.' &&
            strcmp(name, "diff-golden") != 0 && s->count < SNAPSHOTS_MAX - 3) {
            s->names[s->count] = strdup(name);
            s->snaps[s->count++] = run_offline(name);
        }
        free(names[i]);
    }
    free(names);
}

static int make_snapshots(void **state)
{
    char site[4200];
    (void)state;
    add_fixture_snapshots(&all);
    all.snaps[all.count++] = run_runtimes();
    /* Debian's torch first: where torch is is found once a process */
    all.snaps[all.count++] = run_torch(NULL);
    snprintf(site, sizeof site, "%s/site", getenv("SC_DIFFTEST_DIR"));
    all.snaps[all.count++] = run_torch(site);
    return 0;
}

static int free_snapshots(void **state)
{
    (void)state;
    for (size_t i = 0; i < all.count; i++) {
        cJSON_Delete(all.snaps[i]);
        free(all.names[i]);
    }
    return 0;
}

/* ---- the check ---- */

static void nothing(const cJSON *v, void *arg)
{
    (void)v, (void)arg;
}

static const cJSON *facts_of(const cJSON *snap, const char *probe)
{
    const cJSON *layer, *p;
    if (strcmp(probe, "host") == 0)
        return cJSON_GetObjectItem(snap, "host");
    cJSON_ArrayForEach (layer, cJSON_GetObjectItem(snap, "layers"))
        cJSON_ArrayForEach (p, cJSON_GetObjectItem(layer, "probes"))
            if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(p, "id")), probe) == 0)
                return cJSON_GetObjectItem(p, "facts");
    return NULL;
}

static bool resolves(const snapshots *s, const sc_diff_fact *f)
{
    for (size_t i = 0; i < s->count; i++) {
        if (sc_diff_path_each(facts_of(s->snaps[i], f->probe), f->path, nothing, NULL) ||
            (f->alt_probe &&
             sc_diff_path_each(facts_of(s->snaps[i], f->alt_probe), f->path, nothing, NULL)))
            return true;
    }
    return false;
}

typedef struct {
    const snapshots *s;
    char missing[4096];
    int checked;
} check_job;

static void check_fact(const sc_diff_fact *f, void *arg)
{
    check_job *job = arg;
    size_t n = strlen(job->missing);
    job->checked++;
    if (!resolves(job->s, f))
        snprintf(job->missing + n, sizeof job->missing - n, "\n  %s%s%s %s", f->probe,
                 f->alt_probe ? " or " : "", f->alt_probe ? f->alt_probe : "", f->path);
}

static void test_every_fact_exists(void **state)
{
    (void)state;
    check_job job = {&all, "", 0};
    sc_diff_each_fact(check_fact, &job);
    assert_true(job.checked > 60);
    if (job.missing[0])
        fail_msg("facts the diff reads that no snapshot has:%s", job.missing);
}

/* The check fails when a probe renames a key: driver.amd's module object renamed. */
static void test_renamed_key_is_found(void **state)
{
    (void)state;
    snapshots renamed = {.count = 0};
    for (size_t i = 0; i < all.count; i++) {
        renamed.snaps[renamed.count] = cJSON_Duplicate(all.snaps[i], true);
        cJSON *facts = (cJSON *)facts_of(renamed.snaps[renamed.count++], "driver.amd");
        cJSON *module = cJSON_DetachItemFromObject(facts, "module");
        if (module)
            cJSON_AddItemToObject(facts, "kernel_module", module);
    }
    sc_diff_fact f = {"driver.amd", NULL, "module.version"};
    assert_true(resolves(&all, &f));
    assert_false(resolves(&renamed, &f));
    for (size_t i = 0; i < renamed.count; i++)
        cJSON_Delete(renamed.snaps[i]);
}

/* ---- the platforms of the fresh fixture snapshots ---- */

static const char *backends_of(cJSON *snap, char *buf, size_t size)
{
    bool oom = false;
    sc_diff_side side;
    sc_diff_side_init(&side, snap, &oom);
    cJSON *p = sc_diff_platform(&side, &oom), *b;
    size_t n = 0;
    buf[0] = '\0';
    cJSON_ArrayForEach (b, cJSON_GetObjectItem(p, "backends"))
        n += (size_t)snprintf(buf + n, size - n, "%s%s/%s", n ? " " : "",
                              cJSON_GetStringValue(cJSON_GetObjectItem(b, "name")),
                              cJSON_GetStringValue(cJSON_GetObjectItem(b, "evidence")));
    cJSON_Delete(p);
    sc_diff_side_free(&side);
    assert_false(oom);
    return buf;
}

static void test_fixture_backends(void **state)
{
    (void)state;
    static const struct {
        const char *fixture, *backends;
    } want[] = {{"nvidia-h200", "nvidia/devices"},
                {"hygon-dcu", "amd/devices"},
                {"mi250x-8gcd", "amd/devices"},
                {"ascend-910b", "ascend/devices"},
                {"plain-server", ""},
                {"rocm-multi", "amd/installed"}};
    char buf[256];
    for (size_t w = 0; w < sizeof want / sizeof want[0]; w++) {
        size_t i = 0;
        while (i < all.count && !(all.names[i] && strcmp(all.names[i], want[w].fixture) == 0))
            i++;
        assert_true(i < all.count);
        assert_string_equal(backends_of(all.snaps[i], buf, sizeof buf), want[w].backends);
    }
}

int main(int argc, char **argv)
{
    (void)argc;
    if (!getenv("SC_DIFFTEST_DIR"))
        reexec_with_stubs(argv);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_fact_exists),
        cmocka_unit_test(test_renamed_key_is_found),
        cmocka_unit_test(test_fixture_backends),
    };
    int rc = cmocka_run_group_tests(tests, make_snapshots, free_snapshots);
    nftw(getenv("SC_DIFFTEST_DIR"), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    return rc;
}
