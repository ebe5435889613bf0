/* The undefined-symbol check of a dependency tree: names some object needs that none defines, with
 * a hint when they differ from a definition only by the C++11 string ABI. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "libs_internal.h"

#define MAX_UNDEF_FINDINGS 10

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

/* libstdc++'s __cxa_demangle, a C-callable function; NULL when libstdc++ is not there. */
static demangle_fn demangler(void)
{
    static bool tried;
    static demangle_fn fn;
    if (!tried) {
        tried = true;
        void *h = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
        if (h)
            *(void **)&fn = dlsym(h, "__cxa_demangle");
    }
    return fn;
}

static void cut_all(char *s, const char *what, const char *with)
{
    size_t wl = strlen(what), nl = strlen(with);
    for (char *p = strstr(s, what); p; p = strstr(p + nl, what)) {
        memmove(p + nl, p + wl, strlen(p + wl) + 1);
        memcpy(p, with, nl);
    }
}

/* The demangled name with the C++11 ABI's marks removed, so both ABIs' names compare equal. */
static bool abi_neutral(demangle_fn dm, const char *mangled, char *out, size_t size)
{
    int status = 0;
    char *d = dm(mangled, NULL, NULL, &status);
    if (!d)
        return false;
    bool ok = sc_fmt(out, size, "%s", d);
    free(d);
    cut_all(out, "__cxx11::", "");
    cut_all(out, "[abi:cxx11]", "");
    cut_all(out, "std::basic_string<char, std::char_traits<char>, std::allocator<char> >",
            "std::string");
    return ok;
}

/* True when some defined symbol of the tree differs from mangled only by the C++11 ABI. Only runs
 * for the few symbols reported, so it may walk every definition. */
static bool differs_by_cxx11(const analysis *a, const char *mangled, demangle_fn dm)
{
    char want[4096], have[4096];
    if (!dm || strncmp(mangled, "_Z", 2) != 0 || !abi_neutral(dm, mangled, want, sizeof want))
        return false;
    size_t prefix = strlen(mangled);
    const char *marks[] = {"NSt7__cxx11", "B5cxx11", "Ss", "NKSs"};
    for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++) {
        const char *m = strstr(mangled, marks[i]);
        if (m && (size_t)(m - mangled) < prefix)
            prefix = (size_t)(m - mangled);
    }
    int tried = 0;
    for (int i = 0; i < a->count && tried < 200; i++) {
        if (!a->nodes[i]->opened)
            continue;
        const sc_elf_info *info = &a->nodes[i]->file->info;
        for (size_t j = 0; j < info->defined_count && tried < 200; j++) {
            const char *c = info->defined[j];
            if (strncmp(c, mangled, prefix) != 0 || strcmp(c, mangled) == 0)
                continue;
            tried++;
            if (abi_neutral(dm, c, have, sizeof have) && strcmp(have, want) == 0)
                return true;
        }
    }
    return false;
}

static void report_undefined(analysis *a, const node *n, const char *name)
{
    demangle_fn dm = demangler();
    int status = 0;
    char *pretty = (dm && strncmp(name, "_Z", 2) == 0) ? dm(name, NULL, NULL, &status) : NULL;
    bool cxx11 = differs_by_cxx11(a, name, dm);
    sc_finding(
        &a->res, "libs.undefined-symbol", SC_SEV_ERROR,
        cxx11 ? "the names differ only by the C++11 ABI (__cxx11): build both sides with the "
                "same _GLIBCXX_USE_CXX11_ABI setting (PyTorch wheels before 2.7 used 0)"
              : "the library was built against another version of its dependencies: use the "
                "matching versions, or rebuild it against these",
        "undefined symbol %s%s%s%s needed by %s: no library in the tree defines it%s",
        pretty ? pretty : name, pretty ? " (" : "", pretty ? name : "", pretty ? ")" : "", n->path,
        (!dm && strncmp(name, "_Z", 2) == 0) ? " (not demangled: no demangler)" : "");
    free(pretty);
}

/* True when an undefined symbol is someone else's concern: its provider is missing or unreadable
 * (already a finding; an unversioned symbol may come from any such library), or it is the Python
 * C API, which the interpreter provides to extension modules. */
static bool excused(const bool *provided, const sc_elf_undef *u, bool has_python, bool complete)
{
    if (u->verneed >= 0 && !provided[u->verneed])
        return true;
    if (u->verneed < 0 && !complete)
        return true;
    return !has_python && (strncmp(u->name, "Py", 2) == 0 || strncmp(u->name, "_Py", 3) == 0);
}

/* True when an object of this analysis's tree defines name. */
static bool tree_defines(const analysis *a, const char *name, uint64_t h)
{
    for (const def_link *l = sc_symset_get_hashed(&a->parsed->defs, name, h); l; l = l->next)
        if (l->obj->mark == a->gen)
            return true;
    return false;
}

/* The hash of n's j-th undefined name: computed once per run when the object is indexed. */
static uint64_t undef_hash(const node *n, size_t j)
{
    return n->obj->indexed ? n->obj->undef_hash[j]
                           : sc_symset_hash(n->file->info.undefined[j].name);
}

/* Collects the undefined symbols that need a definition: one small set to look every definition
 * of the tree up in, rather than a set of all definitions. */
static void wanted_symbols(analysis *a, sc_symset *wanted)
{
    bool has_python = false, complete = true;
    for (int i = 0; i < a->count; i++) {
        const node *n = a->nodes[i];
        has_python |=
            n->opened && n->file->info.soname && sc_starts_with(n->file->info.soname, "libpython");
        complete &= n->opened;
    }
    for (int i = 0; i < a->count; i++) {
        const node *n = a->nodes[i];
        /* whether each verneed entry's provider is in the tree: asked once per entry, not once
         * per symbol */
        bool *provided = n->opened ? calloc((size_t)n->file->info.verneed_count + 1, 1) : NULL;
        for (int v = 0; provided && v < n->file->info.verneed_count; v++)
            provided[v] = sc_symset_has(&a->provided, n->file->info.verneed[v].file);
        for (size_t j = 0; provided && j < n->file->info.undefined_count; j++)
            if (!excused(provided, &n->file->info.undefined[j], has_python, complete))
                sc_symset_put_hashed(wanted, n->file->info.undefined[j].name, undef_hash(n, j),
                                     NULL);
        free(provided);
    }
}

/* Fills defined with the wanted names some object of the tree defines. A cache shared by several
 * analyses indexes every definition once and looks each wanted name up; a single analysis
 * probes its small wanted set with every definition instead, which costs less than indexing. */
static void defined_wanted(analysis *a, const sc_symset *wanted, sc_symset *defined)
{
    if (!a->own_parsed && !a->parsed->index_failed) {
        for (size_t s = 0; s < wanted->cap; s++)
            if (wanted->slots[s] && tree_defines(a, wanted->slots[s], wanted->hashes[s]))
                sc_symset_put_hashed(defined, wanted->slots[s], wanted->hashes[s], NULL);
        return;
    }
    for (int i = 0; wanted->count && i < a->count; i++) {
        const node *n = a->nodes[i];
        for (size_t j = 0; n->opened && j < n->file->info.defined_count; j++)
            if (sc_symset_has(wanted, n->file->info.defined[j]))
                sc_symset_add(defined, n->file->info.defined[j]);
    }
}

void sc_libs_check_undefined(analysis *a)
{
    sc_symset wanted = {0}, defined = {0}, reported = {0};
    if (!a->own_parsed) /* index once per run; out of memory: probe as a single analysis does */
        for (int i = 0; i < a->count && !a->parsed->index_failed; i++)
            if (a->nodes[i]->opened && sc_libs_cache_index(a->parsed, a->nodes[i]->obj) < 0)
                a->parsed->index_failed = true;
    wanted_symbols(a, &wanted);
    defined_wanted(a, &wanted, &defined);
    int total = 0;
    for (int i = 0; defined.count < wanted.count && i < a->count; i++) {
        const node *n = a->nodes[i];
        for (size_t j = 0; n->opened && j < n->file->info.undefined_count; j++) {
            const char *name = n->file->info.undefined[j].name;
            uint64_t h = undef_hash(n, j);
            if (!sc_symset_has_hashed(&wanted, name, h) ||
                sc_symset_has_hashed(&defined, name, h) || sc_symset_has_hashed(&reported, name, h))
                continue;
            sc_symset_put_hashed(&reported, name, h, NULL);
            if (++total <= MAX_UNDEF_FINDINGS)
                report_undefined(a, n, name);
        }
    }
    if (total > MAX_UNDEF_FINDINGS)
        sc_finding(&a->res, "libs.undefined-symbol", SC_SEV_ERROR, NULL,
                   "%d more undefined symbols not listed", total - MAX_UNDEF_FINDINGS);
    sc_symset_free(&wanted);
    sc_symset_free(&defined);
    sc_symset_free(&reported);
}
