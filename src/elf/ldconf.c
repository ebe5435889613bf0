/* /etc/ld.so.conf and its includes, as ldconfig reads them (elf/ldconfig.c: parse_conf,
 * parse_conf_include), read through the root. The text parser takes a buffer so the fuzz target
 * and the tests drive it. */
#include "sc_ldconf.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sc_util.h"

#define MAX_CONF_BYTES 65536

/* Each whitespace-separated pattern of an include line. */
static void include_patterns(char *rest, const sc_ldconf_sink *sink)
{
    char *save = NULL;
    for (char *p = strtok_r(rest, " \t", &save); p; p = strtok_r(NULL, " \t", &save))
        sink->include(sink->arg, p);
}

static void parse_line(char *line, const sc_ldconf_sink *sink)
{
    line[strcspn(line, "#")] = '\0';
    while (isspace((unsigned char)*line))
        line++;
    sc_rstrip(line);
    if (strncmp(line, "include", 7) == 0 && (line[7] == ' ' || line[7] == '\t')) {
        include_patterns(line + 8, sink);
        return;
    }
    if (line[0] != '/')
        return; /* empty, "hwcap ...", or a relative directory the cache cannot use */
    size_t n = strlen(line);
    while (n > 1 && line[n - 1] == '/')
        line[--n] = '\0';
    sink->dir(sink->arg, line);
}

void sc_ldconf_parse(const char *text, const sc_ldconf_sink *sink)
{
    char line[PATH_MAX];
    for (const char *p = text; p && *p;) {
        size_t n = strcspn(p, "\n");
        if (n < sizeof line) {
            memcpy(line, p, n);
            line[n] = '\0';
            parse_line(line, sink);
        }
        p += n + (p[n] == '\n');
    }
}

/* The state of one load: the directories so far and where the file being read lives. */
typedef struct {
    const sc_root *root;
    sc_ldconf *conf;
    const char *file; /* the file being parsed, for relative patterns */
    int depth;
    bool oom;
} loading;

static void add_dir(void *arg, const char *dir)
{
    loading *l = arg;
    sc_ldconf *c = l->conf;
    for (size_t i = 0; i < c->count; i++)
        if (strcmp(c->dirs[i], dir) == 0)
            return;
    if (c->count == SC_LDCONF_MAX_DIRS || l->oom)
        return;
    char *copy = strdup(dir);
    if (!copy) {
        l->oom = true;
        return;
    }
    c->dirs[c->count++] = copy;
}

static void load_file(loading *l, const char *path);

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in dir matching the last part of a pattern, sorted as glob(3) sorts them. */
static int matching_names(const sc_root *root, const char *dir, const char *glob, char **names)
{
    DIR *d = sc_root_opendir(root, dir[0] ? dir : "/");
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) && n < SC_LDCONF_MAX_FILES)
        if (fnmatch(glob, e->d_name, FNM_PERIOD) == 0 && strcmp(e->d_name, ".") != 0 &&
            strcmp(e->d_name, "..") != 0 && (names[n] = strdup(e->d_name)) != NULL)
            n++;
    if (d)
        closedir(d);
    qsort(names, (size_t)n, sizeof names[0], cmp_names);
    return n;
}

/* Loads every file a pattern matches; a relative pattern is taken from the including file's
 * directory. */
static void add_include(void *arg, const char *pattern)
{
    loading *l = arg;
    char full[PATH_MAX], dir[PATH_MAX], file[PATH_MAX];
    char *names[SC_LDCONF_MAX_FILES];
    if (pattern[0] != '/') {
        sc_path_dirname(l->file, dir, sizeof dir);
        if (!sc_fmt(full, sizeof full, "%s/%s", dir, pattern))
            return;
    } else if (!sc_fmt(full, sizeof full, "%s", pattern)) {
        return;
    }
    const char *glob = sc_path_dirname(full, dir, sizeof dir);
    if (strpbrk(dir, "*?["))
        return; /* wildcards in a directory name: not followed */
    int n = matching_names(l->root, dir, glob, names);
    for (int i = 0; i < n; i++) {
        if (sc_fmt(file, sizeof file, "%s/%s", strcmp(dir, "/") ? dir : "", names[i]))
            load_file(l, file);
        free(names[i]);
    }
}

static void load_file(loading *l, const char *path)
{
    char *text = NULL;
    if (l->depth > SC_LDCONF_MAX_DEPTH || sc_root_read(l->root, path, &text, MAX_CONF_BYTES) < 0)
        return;
    const char *outer = l->file;
    l->file = path;
    l->depth++;
    sc_ldconf_parse(text, &(sc_ldconf_sink){add_dir, add_include, l});
    l->depth--;
    l->file = outer;
    free(text);
}

int sc_ldconf_load(const sc_root *root, sc_ldconf *conf)
{
    memset(conf, 0, sizeof *conf);
    conf->dirs = calloc(SC_LDCONF_MAX_DIRS + 1, sizeof *conf->dirs);
    if (!conf->dirs)
        return -ENOMEM;
    if (!sc_root_exists(root, "/etc/ld.so.conf"))
        return -ENOENT;
    loading l = {.root = root, .conf = conf, .file = "/etc/ld.so.conf"};
    load_file(&l, "/etc/ld.so.conf");
    if (l.oom) {
        sc_ldconf_free(conf);
        return -ENOMEM;
    }
    return 0;
}

void sc_ldconf_free(sc_ldconf *conf)
{
    for (size_t i = 0; conf->dirs && i < conf->count; i++)
        free(conf->dirs[i]);
    free(conf->dirs);
    memset(conf, 0, sizeof *conf);
}
