/* The link checks of a dependency tree: libraries that are missing or unreadable, and symbol
 * versions a library requires that its provider does not define. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "libs_internal.h"

static const node *provider_of(const analysis *a, const char *soname)
{
    return sc_symset_get(&a->provided, soname);
}

/* A library found but not readable as ELF (truncated, damaged; or a FIFO, socket or device, never
 * read): the loader fails (or waits forever) on it too. */
static void report_unreadable(analysis *a, const node *n)
{
    struct stat st;
    bool special = sc_root_stat(a->root, n->path, &st, true) == 0 && !S_ISREG(st.st_mode);
    sc_finding(&a->res, "libs.unreadable", SC_SEV_ERROR,
               special ? "replace it with the library: the loader blocks or fails on it"
                       : "reinstall the package that provides it: the file is damaged or truncated",
               "%s (needed by %s) at %s is %s; its own dependencies are not known", n->name,
               a->nodes[n->parent]->path, n->path,
               special ? "not a regular file (a FIFO, socket or device; not read)"
                       : "not a valid ELF file");
}

void sc_libs_check_missing(analysis *a)
{
    for (int i = 1; i < a->count; i++) {
        const node *n = a->nodes[i];
        if (n->found && !n->opened)
            report_unreadable(a, n);
        if (n->found || n->via == SC_VIA_NOT_SEARCHED) /* libs.search-budget names those */
            continue;
        const node *p = a->nodes[n->parent];
        sc_finding(&a->res, "libs.missing-library", SC_SEV_ERROR,
                   "install the package that provides it, or add its directory to the RUNPATH or "
                   "LD_LIBRARY_PATH (stackcheck libs shows the search order)",
                   "%s (needed by %s) not found: searched %s%sLD_LIBRARY_PATH, %s%s", n->name,
                   p->path, p->ld.runpath ? "" : "RPATH chain, ",
                   a->cfg->ld_library_path ? "" : "(unset) ", p->ld.runpath ? "RUNPATH, " : "",
                   (p->ld.flags_1 & 0x800) ? "(DF_1_NODEFLIB: no cache or default directories)"
                                           : "ld.so.cache and the default directories");
    }
}

void sc_libs_check_search(analysis *a)
{
    const sc_ld_budget *b = sc_ld_search_budget(a->search);
    char cut[PATH_MAX + 160] = "", spent[512] = "";
    if (!b->lists_cut && !b->spent)
        return;
    if (b->lists_cut)
        sc_fmt(cut, sizeof cut,
               "%d search list%s with more than %d directories, searched up to there (the "
               "first: %s)",
               b->lists_cut, b->lists_cut == 1 ? "" : "s", SC_LD_MAX_ENTRIES, b->first_cut);
    if (b->spent)
        sc_fmt(spent, sizeof spent,
               "%sthe budget of %s ran out (%lu checks, %lu search steps); %d librar%s not "
               "searched: %s%s",
               b->lists_cut ? "; " : "", b->spent, b->checks, b->steps, b->gave_up,
               b->gave_up == 1 ? "y was" : "ies were", b->given_up, b->gave_up > 8 ? ", ..." : "");
    sc_finding(&a->res, "libs.search-budget", SC_SEV_WARN,
               "the search paths are far longer or deeper than a loader ever needs: look at the "
               "RPATH/RUNPATH of the objects named and at LD_LIBRARY_PATH; a library not searched "
               "may well be present",
               "library search cut: %s%s", cut, spent);
}

/* The version names each provider defines, as a set built once per provider: a tree whose objects
 * need thousands of versions from one that defines thousands is then not compared pairwise. */
typedef struct {
    sc_symset by_provider; /* provider path -> sc_symset of its version names */
} version_index;

static const sc_symset *defined_versions(version_index *vi, const node *p)
{
    sc_symset *set = sc_symset_get(&vi->by_provider, p->path);
    if (set)
        return set;
    set = calloc(1, sizeof *set);
    if (!set)
        return NULL;
    for (int i = 0; i < p->file->info.verdef_count; i++)
        if (sc_symset_add(set, p->file->info.verdef[i]) < 0)
            break; /* out of memory: what is in the set is still right */
    if (sc_symset_put(&vi->by_provider, p->path, set) < 0) {
        sc_symset_free(set);
        free(set);
        return NULL;
    }
    return set;
}

static void version_index_free(version_index *vi)
{
    for (size_t i = 0; i < vi->by_provider.cap; i++)
        if (vi->by_provider.slots && vi->by_provider.slots[i]) {
            sc_symset_free(vi->by_provider.values[i]);
            free(vi->by_provider.values[i]);
        }
    sc_symset_free(&vi->by_provider);
}

/* The provider's newest version of the same family ("GLIBCXX_3.4.29" for GLIBCXX_3.4.30). */
static const char *newest_of_family(const sc_elf_info *info, const char *version)
{
    size_t fam = strcspn(version, "_0123456789");
    const char *best = NULL;
    for (int i = 0; i < info->verdef_count; i++)
        if (strncmp(info->verdef[i], version, fam) == 0 &&
            strcspn(info->verdef[i], "_0123456789") == fam)
            best = info->verdef[i];
    return best;
}

static void check_versions_of(analysis *a, version_index *vi, const node *n)
{
    for (int v = 0; v < n->file->info.verneed_count; v++) {
        const sc_elf_verneed *vn = &n->file->info.verneed[v];
        const node *p = provider_of(a, vn->file);
        const sc_symset *defined = p && p != n ? defined_versions(vi, p) : NULL;
        if (!defined)
            continue;
        for (int j = 0; j < vn->count; j++) {
            if (vn->weak[j] || sc_symset_has(defined, vn->names[j]))
                continue;
            const char *newest = newest_of_family(&p->file->info, vn->names[j]);
            sc_finding(&a->res, "libs.missing-symbol-version", SC_SEV_ERROR,
                       "the provider is older than the library was built against: put a newer "
                       "one first in the search path (for GLIBCXX/CXXABI, the compiler's "
                       "libstdc++), or rebuild the library against this one",
                       "%s requires version %s from %s, which %s does not define%s%s%s", n->path,
                       vn->names[j], vn->file, p->path, newest ? " (newest: " : "",
                       newest ? newest : "", newest ? ")" : "");
        }
    }
}

void sc_libs_check_versions(analysis *a)
{
    version_index vi = {0};
    for (int i = 0; i < a->count; i++)
        if (a->nodes[i]->opened)
            check_versions_of(a, &vi, a->nodes[i]);
    version_index_free(&vi);
}
