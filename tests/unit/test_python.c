/* The Python layer's C side: parsing the interpreter's report, choosing libpython, package
 * metadata, loader error messages, and running code embedded and as a subprocess (in isolated
 * children, so the test process never loads libpython itself). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "sc_isolate.h"
#include "sc_python.h"
#include "sc_sysroot.h"

#define REPORT                                                                                     \
    "{\"executable\": \"/opt/py/bin/python3.12\", \"version\": \"3.12.1\", \"prefix\": "           \
    "\"/home/u/venv\", \"base_prefix\": \"/opt/py\", \"ldlibrary\": \"libpython3.12.a\", "         \
    "\"libdir\": \"/opt/py/lib\", \"instsoname\": \"libpython3.12.a\", \"ldversion\": \"3.12\", "  \
    "\"shared\": false, \"site_dirs\": [\"/home/u/venv/lib/python3.12/site-packages\", "           \
    "\"relative/ignored\", 7]}"

static void test_info_parse(void **state)
{
    (void)state;
    sc_python_info info;
    sc_error err = {0};
    /* Noise before the marker (a chatty sitecustomize) and a fake marker earlier on. */
    const char *text = "hello\nSC-PYINFO:{not json}\n\nSC-PYINFO:" REPORT "\n";
    assert_int_equal(sc_python_info_parse(text, strlen(text), &info, &err), 0);
    assert_string_equal(info.executable, "/opt/py/bin/python3.12");
    assert_string_equal(info.version, "3.12.1");
    assert_string_equal(info.prefix, "/home/u/venv");
    assert_string_equal(info.base_prefix, "/opt/py");
    assert_string_equal(info.ldversion, "3.12");
    assert_false(info.enable_shared);
    assert_int_equal(info.site_count, 1);
    assert_string_equal(info.site_packages[0], "/home/u/venv/lib/python3.12/site-packages");

    static const char relative[] = "SC-PYINFO:{\"executable\": \"python3\", \"version\": "
                                   "\"3\", \"prefix\": \"/usr\"}";
    const char *bad[] = {"", "no marker here", "SC-PYINFO:", "SC-PYINFO:[1,2]", relative};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(sc_python_info_parse(bad[i], strlen(bad[i]), &info, &err), -EINVAL);
        assert_true(strlen(err.message) > 0);
    }
}

static void touch(const char *path)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fclose(f);
}

static void test_find_libpython(void **state)
{
    (void)state;
    char dir[] = "/tmp/sc-test-py-XXXXXX", lib[512], so[600];
    assert_non_null(mkdtemp(dir));
    snprintf(lib, sizeof lib, "%s/lib", dir);
    mkdir(lib, 0755);
    sc_python_info info;
    memset(&info, 0, sizeof info);
    snprintf(info.base_prefix, sizeof info.base_prefix, "%s", dir);
    snprintf(info.ldversion, sizeof info.ldversion, "3.12");
    snprintf(info.instsoname, sizeof info.instsoname, "libpython3.12.a");
    sc_python_find_libpython(&info);
    assert_string_equal(info.libpython, "");
    assert_non_null(strstr(info.no_libpython, "no shared libpython3.12"));
    /* A static build's LDLIBRARY with the shared library installed beside it (conda, Debian). */
    snprintf(so, sizeof so, "%s/libpython3.12.so.1.0", lib);
    touch(so);
    sc_python_find_libpython(&info);
    assert_string_equal(info.libpython, so);
    assert_string_equal(info.no_libpython, "");
    unlink(so);
    rmdir(lib);
    rmdir(dir);
}

static void test_metadata_version(void **state)
{
    (void)state;
    char v[64];
    const char *meta = "Metadata-Version: 2.1\r\nName: torch\r\nVersion:  2.3.0+rocm6.0 \r\n\r\n";
    assert_true(sc_pkg_metadata_version(meta, strlen(meta), v, sizeof v));
    assert_string_equal(v, "2.3.0+rocm6.0");
    const char *body = "Metadata-Version: 2.1\nName: x\n\nVersion: 9.9 (in the description)\n";
    assert_false(sc_pkg_metadata_version(body, strlen(body), v, sizeof v));
    const char *empty = "Name: x\nVersion:\n";
    assert_false(sc_pkg_metadata_version(empty, strlen(empty), v, sizeof v));
    const char *lng = "Version: 0123456789012345678901234567890123456789\n";
    assert_false(sc_pkg_metadata_version(lng, strlen(lng), v, 16));
}

static void test_dist_version(void **state)
{
    (void)state;
    char dir[] = "/tmp/sc-test-site-XXXXXX", path[600], version[64], meta[700];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/Torch_NPU-2.1.0.post3.dist-info", dir);
    mkdir(path, 0755);
    snprintf(meta, sizeof meta, "%s/METADATA", path);
    FILE *f = fopen(meta, "w");
    assert_non_null(f);
    fputs("Metadata-Version: 2.1\nName: torch_npu\nVersion: 2.1.0.post3\n", f);
    fclose(f);
    sc_root root;
    sc_error err;
    assert_int_equal(sc_root_open(&root, NULL, &err), 0);
    assert_int_equal(
        sc_python_dist_version(&root, dir, "torch-npu", version, sizeof version, path, sizeof path),
        0);
    assert_string_equal(version, "2.1.0.post3");
    assert_string_equal(path, meta);
    assert_int_equal(
        sc_python_dist_version(&root, dir, "torch", version, sizeof version, path, sizeof path),
        -ENOENT);
    sc_root_close(&root);
    unlink(meta);
    snprintf(path, sizeof path, "%s/Torch_NPU-2.1.0.post3.dist-info", dir);
    rmdir(path);
    rmdir(dir);
}

static void test_loader_error_parse(void **state)
{
    (void)state;
    char file[256], kind[32], subject[128];
    const char *undef =
        "/x/torch/lib/libtorch_hip.so: undefined symbol: hipGetDevicePropertiesR0600";
    assert_true(sc_loader_error_parse(undef, file, sizeof file, kind, sizeof kind, subject,
                                      sizeof subject));
    assert_string_equal(file, "/x/torch/lib/libtorch_hip.so");
    assert_string_equal(kind, "undefined-symbol");
    assert_string_equal(subject, "hipGetDevicePropertiesR0600");

    const char *ver = "/opt/dtk/lib/libamdhip64.so: version `hip_4.2' not found (required by "
                      "/v/torch/lib/libc10_hip.so)";
    assert_true(
        sc_loader_error_parse(ver, file, sizeof file, kind, sizeof kind, subject, sizeof subject));
    assert_string_equal(file, "/v/torch/lib/libc10_hip.so");
    assert_string_equal(kind, "version-not-found");
    assert_string_equal(subject, "hip_4.2");

    const char *missing = "libamdhip64.so.6: cannot open shared object file: No such file";
    assert_true(sc_loader_error_parse(missing, file, sizeof file, kind, sizeof kind, subject,
                                      sizeof subject));
    assert_string_equal(file, "");
    assert_string_equal(kind, "missing-library");
    assert_string_equal(subject, "libamdhip64.so.6");

    assert_false(sc_loader_error_parse("No module named 'torch'", file, sizeof file, kind,
                                       sizeof kind, subject, sizeof subject));
}

typedef struct {
    const char *python;
    bool subprocess;
} run_job;

/* In the isolated child: locate, run a script that reports sys.argv and sys.prefix. */
static cJSON *run_child(void *arg)
{
    run_job *job = arg;
    sc_python_info info;
    sc_error err = {0};
    if (sc_python_locate(job->python, 0, &info, &err) < 0)
        return NULL;
    if (job->subprocess)
        info.libpython[0] = '\0';
    const char *argv[] = {"probe", "two words", NULL};
    const char *code = "import json, os, sys\n"
                       "with open(os.environ['STACKCHECK_RESULT'], 'w') as f:\n"
                       "    json.dump({'argv': sys.argv, 'prefix': sys.prefix}, f)\n";
    cJSON *result = NULL;
    const char *mode = NULL;
    if (sc_python_run(&info, code, argv, &result, &mode, &err) < 0)
        return NULL;
    cJSON_AddStringToObject(result, "mode", mode);
    cJSON_AddStringToObject(result, "want_prefix", info.prefix);
    return result;
}

static void check_run(bool subprocess)
{
    if (access("/usr/bin/python3", X_OK) != 0)
        skip();
    run_job job = {"/usr/bin/python3", subprocess};
    sc_isolate_report rep;
    assert_int_equal(sc_isolate_run(run_child, &job, 60, &rep), 0);
    assert_int_equal(rep.outcome, SC_ISOLATE_OK);
    cJSON *r = rep.result;
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(r, "mode")),
                        subprocess ? "subprocess" : "embedded");
    cJSON *argv = cJSON_GetObjectItem(r, "argv");
    assert_int_equal(cJSON_GetArraySize(argv), 2);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetArrayItem(argv, 0)), "probe");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetArrayItem(argv, 1)), "two words");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(r, "prefix")),
                        cJSON_GetStringValue(cJSON_GetObjectItem(r, "want_prefix")));
    cJSON_Delete(r);
}

static void test_run_embedded(void **state)
{
    (void)state;
    check_run(false);
}

static void test_run_subprocess(void **state)
{
    (void)state;
    check_run(true);
}

/* In the isolated child: a "libpython" without the embedding calls fails cleanly (-ENOSYS), and
 * the same work directory then serves the subprocess fallback, as framework.torch does. */
static cJSON *fallback_child(void *arg)
{
    (void)arg;
    sc_python_info info;
    sc_error err = {0};
    char dir[4096];
    if (sc_python_locate("/usr/bin/python3", 0, &info, &err) < 0 ||
        sc_python_workdir(dir, sizeof dir, &err) < 0)
        return NULL;
    snprintf(info.libpython, sizeof info.libpython, "%s", "libz.so.1");
    const char *argv[] = {"probe", NULL};
    const char *code = "import os\nopen(os.environ['STACKCHECK_RESULT'], 'w').write('[1]')\n";
    cJSON *result = NULL, *out = cJSON_CreateObject();
    const char *mode = NULL;
    int rc = sc_python_run_in(&info, dir, code, argv, &result, &mode, &err);
    cJSON_AddNumberToObject(out, "embedded_rc", rc);
    cJSON_AddStringToObject(out, "embedded_error", err.message);
    info.libpython[0] = '\0';
    rc = sc_python_run_in(&info, dir, code, argv, &result, &mode, &err);
    cJSON_AddNumberToObject(out, "subprocess_rc", rc);
    cJSON_AddStringToObject(out, "mode", mode);
    if (result)
        cJSON_AddItemToObject(out, "result", result);
    sc_python_workdir_remove(dir);
    cJSON_AddBoolToObject(out, "removed", access(dir, F_OK) != 0);
    return out;
}

static void test_embed_fallback(void **state)
{
    (void)state;
    if (access("/usr/bin/python3", X_OK) != 0)
        skip();
    sc_isolate_report rep;
    assert_int_equal(sc_isolate_run(fallback_child, NULL, 60, &rep), 0);
    assert_int_equal(rep.outcome, SC_ISOLATE_OK);
    cJSON *r = rep.result;
    assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItem(r, "embedded_rc")), -ENOSYS);
    assert_non_null(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(r, "embedded_error")),
                           "lacks Py_DecodeLocale"));
    assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItem(r, "subprocess_rc")), 0);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(r, "mode")), "subprocess");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(r, "result")), 1);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r, "removed")));
    cJSON_Delete(r);
}

static void test_locate_missing(void **state)
{
    (void)state;
    sc_python_info info;
    sc_error err = {0};
    assert_int_equal(sc_python_locate("/nonexistent/python3", 0, &info, &err), -ENOENT);
    assert_non_null(strstr(err.message, "/nonexistent/python3"));
}

static void test_static_parsers(void **state)
{
    (void)state;
    char v[32], ld[16];
    const char *ph = "/* x */\n#define PY_MINOR_VERSION 12\n#define PY_VERSION      \"3.12.4\"\n";
    assert_true(sc_python_patchlevel_version(ph, strlen(ph), v, sizeof v));
    assert_string_equal(v, "3.12.4");
    assert_false(sc_python_patchlevel_version("#define PY_VERSION 3", 20, v, sizeof v));
    assert_false(sc_python_patchlevel_version("#define PY_VERSION \"3.1", 23, v, sizeof v));
    const char *cfg =
        "home = /opt/py/bin\nInclude-System-Site-Packages=false\r\nversion = 3.12.4\n";
    assert_true(sc_pyvenv_value(cfg, strlen(cfg), "include-system-site-packages", v, sizeof v));
    assert_string_equal(v, "false");
    assert_true(sc_pyvenv_value(cfg, strlen(cfg), "home", v, sizeof v));
    assert_string_equal(v, "/opt/py/bin");
    assert_false(sc_pyvenv_value(cfg, strlen(cfg), "version_info", v, sizeof v));
    assert_true(sc_python_name_version("python3.13t", v, sizeof v, ld, sizeof ld));
    assert_string_equal(v, "3.13");
    assert_string_equal(ld, "3.13t");
    assert_false(sc_python_name_version("python3", v, sizeof v, ld, sizeof ld));
    assert_false(sc_python_name_version("python3.11-config", v, sizeof v, ld, sizeof ld));
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A prefix with an ELF interpreter (a copy of /bin/true: it is never run), a venv on it that
 * hides the system site directory, and a script wrapper. */
static void make_layout(const char *t)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "set -e; cd %s; mkdir -p p/bin p/lib/python3.12/site-packages p/include/python3.12 "
             "v/bin v/lib/python3.12/site-packages; cp /bin/true p/bin/python3.12; "
             "ln -s python3.12 p/bin/python3; touch p/lib/python3.12/os.py; "
             "ln -s %s/p/bin/python3 v/bin/python; printf '#!/bin/sh\\nexec true\\n' > wrap; "
             "chmod +x wrap",
             t, t);
    assert_int_equal(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s/p/include/python3.12/patchlevel.h", t);
    write_file(cmd, "#define PY_VERSION \"3.12.4\"\n");
    snprintf(cmd, sizeof cmd, "%s/v/pyvenv.cfg", t);
    write_file(cmd, "home = /x/bin\ninclude-system-site-packages = false\nversion = 3.12.4\n");
}

static void test_locate_static(void **state)
{
    (void)state;
    char t[] = "/tmp/sc-pystatic-XXXXXX", path[4200], want[4200];
    assert_non_null(mkdtemp(t));
    make_layout(t);
    unsetenv("PYTHONPATH");
    setenv("PYTHONNOUSERSITE", "1", 1);
    sc_root root;
    sc_error err = {0};
    assert_int_equal(sc_root_open(&root, NULL, &err), 0);
    sc_python_info info;
    snprintf(path, sizeof path, "%s/p/bin/python3", t);
    assert_int_equal(sc_python_locate_static(&root, path, &info, &err), 0);
    assert_string_equal(info.located, "static");
    assert_string_equal(info.executable, path);
    assert_string_equal(info.version, "3.12.4");
    assert_string_equal(info.version_from, "patchlevel.h");
    snprintf(want, sizeof want, "%s/p", t);
    assert_string_equal(info.prefix, want);
    assert_int_equal(info.site_count, 1);
    snprintf(want, sizeof want, "%s/p/lib/python3.12/site-packages", t);
    assert_string_equal(info.site_packages[0], want);
    assert_false(info.enable_shared); /* /bin/true needs no libpython */

    snprintf(path, sizeof path, "%s/v/bin/python", t);
    assert_int_equal(sc_python_locate_static(&root, path, &info, &err), 0);
    snprintf(want, sizeof want, "%s/v", t);
    assert_string_equal(info.prefix, want);
    snprintf(want, sizeof want, "%s/p", t);
    assert_string_equal(info.base_prefix, want);
    assert_int_equal(info.site_count, 1); /* include-system-site-packages = false */
    snprintf(want, sizeof want, "%s/v/lib/python3.12/site-packages", t);
    assert_string_equal(info.site_packages[0], want);

    snprintf(path, sizeof path, "%s/wrap", t);
    assert_int_equal(sc_python_locate_static(&root, path, &info, &err), -ENOEXEC);
    assert_non_null(strstr(err.message, "a script wrapper: "));
    snprintf(path, sizeof path, "%s/p/lib/python3.12/os.py", t);
    assert_int_equal(sc_python_locate_static(&root, path, &info, &err), -ENOEXEC);
    sc_root_close(&root);
    snprintf(path, sizeof path, "rm -rf %s", t);
    assert_int_equal(system(path), 0);
}

/* A pyenv shim resolves to the interpreter pyenv would pick: PYENV_VERSION, then a
 * .python-version in the working directory or a parent, then PYENV_ROOT/version. */
static void test_locate_pyenv_shim(void **state)
{
    (void)state;
    char t[] = "/tmp/sc-pyenv-XXXXXX", cmd[4400], shim[4200], want[4200], old_cwd[4096];
    assert_non_null(mkdtemp(t));
    make_layout(t);
    snprintf(
        cmd, sizeof cmd,
        "set -e; cd %s; mkdir -p pyenv/shims pyenv/versions work/sub; "
        "printf '#!/usr/bin/env bash\\nexec pyenv exec python3 \"$@\"\\n' > pyenv/shims/python3; "
        "chmod +x pyenv/shims/python3; ln -s %s/p pyenv/versions/3.12.4; "
        "printf '# global\\n3.12.4\\n' > pyenv/version",
        t, t);
    assert_int_equal(system(cmd), 0);
    assert_non_null(getcwd(old_cwd, sizeof old_cwd));
    snprintf(cmd, sizeof cmd, "%s/work/sub", t);
    assert_int_equal(chdir(cmd), 0);
    unsetenv("PYENV_VERSION");
    sc_root root;
    sc_error err = {0};
    assert_int_equal(sc_root_open(&root, NULL, &err), 0);
    sc_python_info info;
    snprintf(shim, sizeof shim, "%s/pyenv/shims/python3", t);
    assert_int_equal(sc_python_locate_static(&root, shim, &info, &err), 0);
    snprintf(want, sizeof want, "%s/pyenv/versions/3.12.4/bin/python3", t);
    assert_string_equal(info.executable, want);
    assert_string_equal(info.located, "static");
    assert_string_equal(info.version, "3.12.4");
    setenv("PYENV_VERSION", "system", 1); /* the system Python: not pyenv's to answer */
    assert_int_equal(sc_python_locate_static(&root, shim, &info, &err), -ENOEXEC);
    unsetenv("PYENV_VERSION");
    snprintf(cmd, sizeof cmd, "%s/work/.python-version", t); /* a parent's file wins */
    write_file(cmd, "3.99.0\n");
    assert_int_equal(sc_python_locate_static(&root, shim, &info, &err), -ENOEXEC);
    assert_int_equal(chdir(old_cwd), 0);
    sc_root_close(&root);
    snprintf(cmd, sizeof cmd, "rm -rf %s", t);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_info_parse),         cmocka_unit_test(test_find_libpython),
        cmocka_unit_test(test_metadata_version),   cmocka_unit_test(test_dist_version),
        cmocka_unit_test(test_loader_error_parse), cmocka_unit_test(test_run_embedded),
        cmocka_unit_test(test_run_subprocess),     cmocka_unit_test(test_locate_missing),
        cmocka_unit_test(test_embed_fallback),     cmocka_unit_test(test_static_parsers),
        cmocka_unit_test(test_locate_static),      cmocka_unit_test(test_locate_pyenv_shim),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
