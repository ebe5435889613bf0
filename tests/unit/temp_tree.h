/* Test helpers that lay out a scratch file tree (a sysroot of the test's making) under /tmp: files,
 * directories, symlinks, and tiny shared objects and kernel-module-like objects built with cc.
 * Header-only (static functions), for cmocka tests. */
#ifndef SC_TEST_TEMP_TREE_H
#define SC_TEST_TEMP_TREE_H

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sc_sysroot.h"

/* Makes a fresh directory into dir (PATH_MAX bytes); fails the test when it cannot. */
__attribute__((unused)) static void tree_new(char *dir)
{
    snprintf(dir, PATH_MAX, "/tmp/sc-tree-XXXXXX");
    assert_non_null(mkdtemp(dir));
}

/* Runs a shell command made from fmt; fails the test when it does not exit 0. */
__attribute__((format(printf, 1, 2))) __attribute__((unused)) static void tree_sh(const char *fmt,
                                                                                  ...)
{
    char cmd[8 * PATH_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    assert_int_equal(system(cmd), 0);
}

/* Makes the directory rel (and its parents) under root. */
__attribute__((unused)) static void tree_dir(const char *root, const char *rel)
{
    tree_sh("mkdir -p '%s/%s'", root, rel);
}

/* Writes text to the file rel under root, making its directory. */
__attribute__((unused)) static void tree_put(const char *root, const char *rel, const char *text)
{
    char path[2 * PATH_MAX + 2];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    tree_sh("mkdir -p \"$(dirname '%s')\"", path);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Makes rel under root a symlink to target (taken as it is). */
__attribute__((unused)) static void tree_link(const char *root, const char *rel, const char *target)
{
    char path[2 * PATH_MAX + 2];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    tree_sh("mkdir -p \"$(dirname '%s')\" && ln -sfn '%s' '%s'", path, target, path);
}

/* Compiles source (one line of C) with cc flags into rel under root. */
__attribute__((unused)) static void tree_cc(const char *root, const char *rel, const char *source,
                                            const char *flags)
{
    char path[2 * PATH_MAX + 2];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    tree_sh("mkdir -p \"$(dirname '%s')\" && printf '%%s\\n' '%s' | cc %s -x c -o '%s' -", path,
            source, flags, path);
}

/* Builds a tiny shared object with soname at rel under root (cc -shared). */
__attribute__((unused)) static void tree_so(const char *root, const char *rel, const char *soname)
{
    char flags[PATH_MAX];
    snprintf(flags, sizeof flags, "-shared -fPIC -Wl,-soname,%s", soname);
    tree_cc(root, rel, "int sc_tree_f(void){return 0;}", flags);
}

/* Builds a kernel-module-like relocatable object at rel under root (cc -c) whose .modinfo section
 * holds literal, a C string literal's body ("name=x\\0vermagic=5.10.0 SMP "). */
__attribute__((unused)) static void tree_ko(const char *root, const char *rel, const char *literal)
{
    char source[PATH_MAX];
    snprintf(source, sizeof source,
             "static const char m[] __attribute__((section(\".modinfo\"), used)) = \"%s\";",
             literal);
    tree_cc(root, rel, source, "-c");
}

/* Removes the tree. */
__attribute__((unused)) static void tree_free(const char *root)
{
    tree_sh("rm -rf '%s'", root);
}

/* A fresh tree opened as the root of a test group: 0, or -1 when it cannot be opened. */
__attribute__((unused)) static int tree_open(char *dir, sc_root *root)
{
    sc_error err;
    tree_new(dir);
    return sc_root_open(root, dir, &err) == 0 ? 0 : -1;
}

/* Closes and removes what tree_open made. */
__attribute__((unused)) static int tree_close(const char *dir, sc_root *root)
{
    sc_root_close(root);
    tree_free(dir);
    return 0;
}

#endif
