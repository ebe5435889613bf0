/* Reading what a build left behind: torch.utils.cpp_extension's build.ninja (the compiler, the
 * torch and Python include directories and the library directories it built with), the CPython
 * tag of an extension's file name and the Python of a default-cache folder. Parsers of buffers,
 * so the fuzz target drives them. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sc_extcache.h"
#include "sc_python.h"
#include "sc_util.h"

#define MAX_TOKEN 4096

/* The next whitespace-separated token of [*p, end) with ninja's $-escapes ("$ ", "$:", "$$")
 * undone, into buf (cut at size); false at the end. */
static bool next_token(const char **p, const char *end, char *buf, size_t size)
{
    const char *s = *p;
    size_t n = 0;
    while (s < end && (*s == ' ' || *s == '\t'))
        s++;
    if (s >= end)
        return false;
    while (s < end && *s != ' ' && *s != '\t') {
        char c = *s++;
        if (c == '$' && s < end && (*s == ' ' || *s == ':' || *s == '$'))
            c = *s++;
        if (n + 1 < size)
            buf[n++] = c;
    }
    buf[n] = '\0';
    *p = s;
    return true;
}

/* A directory named by an include flag: ".../torch/include" gives torch's directory,
 * ".../include/python3.11" the Python. */
static void take_include(const char *dir, sc_ext_build *out)
{
    static const char torch_inc[] = "/torch/include";
    size_t n = strlen(dir);
    char ld[16];
    const char *base = strrchr(dir, '/');
    if (!out->torch_dir[0] && n > sizeof torch_inc - 1 &&
        strcmp(dir + n - (sizeof torch_inc - 1), torch_inc) == 0)
        snprintf(out->torch_dir, sizeof out->torch_dir, "%.*s", (int)(n - 8), dir);
    else if (!out->python[0] && base &&
             sc_python_name_version(base + 1, out->python, sizeof out->python, ld, sizeof ld))
        snprintf(out->python_include, sizeof out->python_include, "%s", dir);
}

/* The flags of one assignment's value: -isystem DIR, -IDIR, -I DIR, -LDIR, -L DIR. */
static void take_flags(const char *value, const char *end, sc_ext_build *out)
{
    char tok[MAX_TOKEN], arg[MAX_TOKEN];
    while (next_token(&value, end, tok, sizeof tok)) {
        bool inc = strcmp(tok, "-isystem") == 0 || strcmp(tok, "-I") == 0;
        bool lib = strcmp(tok, "-L") == 0;
        if ((inc || lib) && !next_token(&value, end, arg, sizeof arg))
            return;
        if (!inc && !lib && (sc_starts_with(tok, "-I") || sc_starts_with(tok, "-L"))) {
            snprintf(arg, sizeof arg, "%s", tok + 2);
            inc = tok[1] == 'I';
            lib = tok[1] == 'L';
        }
        if (inc && arg[0] == '/')
            take_include(arg, out);
        else if (lib && arg[0] == '/' && out->lib_dir_count < SC_EXTCACHE_LIB_DIRS)
            snprintf(out->lib_dirs[out->lib_dir_count++], sizeof out->lib_dirs[0], "%s", arg);
    }
}

/* One top-level line "name = value"; true when it is one of the assignments read. */
static bool take_line(const char *line, const char *end, sc_ext_build *out)
{
    static const char *const flags[] = {"cflags", "cuda_cflags", "ldflags"};
    size_t name = 0;
    while (line + name < end && (isalnum((unsigned char)line[name]) || line[name] == '_'))
        name++;
    const char *eq = line + name;
    while (eq < end && *eq == ' ')
        eq++;
    if (name == 0 || eq >= end || *eq != '=')
        return false;
    const char *value = eq + 1;
    char tok[MAX_TOKEN];
    if (name == 4 && strncmp(line, "nvcc", 4) == 0) {
        if (next_token(&value, end, tok, sizeof tok) && tok[0] == '/')
            snprintf(out->compiler, sizeof out->compiler, "%s", tok);
        return true;
    }
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        if (strlen(flags[i]) == name && strncmp(line, flags[i], name) == 0) {
            take_flags(value, end, out);
            return true;
        }
    return false;
}

int sc_ext_build_parse(const char *text, size_t len, sc_ext_build *out)
{
    memset(out, 0, sizeof *out);
    bool any = false;
    for (const char *p = text, *end = text + len; p && p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *line_end = nl ? nl : end;
        if (*p != ' ' && *p != '\t' && *p != '#')
            any = take_line(p, line_end, out) || any;
        p = nl ? nl + 1 : NULL;
    }
    return any ? 0 : -EINVAL;
}

bool sc_ext_python_tag(const char *name, char *buf, size_t size)
{
    const char *base = strrchr(name, '/');
    const char *tag = strstr(base ? base + 1 : name, ".cpython-");
    if (!tag)
        return false;
    tag += strlen(".cpython-");
    size_t digits = strspn(tag, "0123456789");
    size_t flags = strspn(tag + digits, "dmt");
    if (digits < 2 || digits > 4 || flags > 3 ||
        (tag[digits + flags] != '-' && tag[digits + flags] != '.'))
        return false;
    return sc_fmt(buf, size, "%.*s", (int)(digits + flags), tag);
}

bool sc_ext_folder_parse(const char *name, char *py, size_t py_size, char *tag, size_t tag_size)
{
    if (strncmp(name, "py", 2) != 0)
        return false;
    const char *v = name + 2;
    size_t digits = strspn(v, "0123456789");
    size_t flags = strspn(v + digits, "dmt");
    const char *rest = v + digits + flags;
    if (digits < 2 || digits > 4 || *rest != '_' || !rest[1] || strchr(rest + 1, '/'))
        return false;
    return sc_fmt(py, py_size, "%.*s", (int)(digits + flags), v) &&
           sc_fmt(tag, tag_size, "%s", rest + 1);
}
