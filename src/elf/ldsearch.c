/* The search state the lookups of one analysis share, so that their work is bounded by the size
 * of the search lists and not by their product with the tree: each list is parsed once and holds
 * each directory once (ld.so keeps them so); a directory is checked once and, when it does not
 * exist, never again (ld.so marks it nonexisting); one where names keep missing is listed once,
 * so the names it lacks cost no open; and budgets cap the directories of a list, the file-system
 * checks and the search steps, with a note of what was cut. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ldsearch_internal.h"
#include "sc_util.h"

#define LIST_AFTER_MISSES 4  /* a directory is listed once this many names missed there */
#define LIST_MAX_NAMES 65536 /* a larger directory is not listed: its names are opened */
#define NAMES_PER_CHECK 256  /* a listing costs one file-system check per this many names */
#define FIXED_LISTS 4        /* fixed lists kept parsed */

struct sc_ld_search {
    const sc_root *root;
    sc_symset by_path; /* expanded path -> its sc_ld_dir */
    sc_ld_dir **dirs;
    size_t dir_count, dir_cap;
    void **owned; /* lists, their arrays and the prepared objects' list pairs */
    size_t owned_count, owned_cap;
    unsigned lists;                    /* lists parsed, for each directory's mark */
    const char *env_text, *env_origin; /* what env was parsed from */
    sc_ld_list *env;                   /* LD_LIBRARY_PATH */
    struct {
        const char *const *from;
        sc_ld_list *list;
    } fixed[FIXED_LISTS]; /* the default directories, the ld.so.conf stand-in */
    sc_ld_budget budget;
    const sc_ld_target *target; /* the loader the lists are parsed for */
    sc_ld_target found;         /* the target found in the root, when none was given */
};

sc_ld_search *sc_ld_search_new(const sc_root *root)
{
    sc_ld_search *s = calloc(1, sizeof *s);
    if (s)
        s->root = root;
    return s;
}

void sc_ld_search_free(sc_ld_search *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->dir_count; i++) {
        sc_ld_dir *d = s->dirs[i];
        sc_symset_free(&d->names);
        free(d->store), free(d->path), free(d);
    }
    for (size_t i = 0; i < s->owned_count; i++)
        free(s->owned[i]);
    sc_symset_free(&s->by_path);
    free(s->dirs), free(s->owned), free(s);
}

const sc_ld_budget *sc_ld_search_budget(const sc_ld_search *s)
{
    return &s->budget;
}

/* Appends p to a growable array of pointers; false when out of memory. */
static bool push(void ***arr, size_t *count, size_t *cap, void *p)
{
    if (*count == *cap) {
        size_t n = *cap ? *cap * 2 : 32;
        void **grown = realloc(*arr, n * sizeof *grown);
        if (!grown)
            return false;
        *arr = grown;
        *cap = n;
    }
    (*arr)[(*count)++] = p;
    return true;
}

/* p, now owned by the search (freed with it); NULL (p freed) when out of memory. */
static void *own(sc_ld_search *s, void *p)
{
    if (p && push(&s->owned, &s->owned_count, &s->owned_cap, p))
        return p;
    free(p);
    return NULL;
}

/* The search's directory for an expanded path, made on first use; NULL when out of memory. */
static sc_ld_dir *dir_of(sc_ld_search *s, const char *path)
{
    sc_ld_dir *d = sc_symset_get(&s->by_path, path);
    if (d)
        return d;
    d = calloc(1, sizeof *d);
    if (d && (d->path = strdup(path)) != NULL &&
        push((void ***)&s->dirs, &s->dir_count, &s->dir_cap, d)) {
        if (sc_symset_put(&s->by_path, d->path, d) == 0)
            return d;
        s->dir_count--;
    }
    if (d)
        free(d->path);
    free(d);
    return NULL;
}

static void note_cut(sc_ld_search *s, const char *source, int entries)
{
    if (s->budget.lists_cut++ == 0)
        snprintf(s->budget.first_cut, sizeof s->budget.first_cut, "%s (%d entries)", source,
                 entries);
}

void sc_ld_search_set_target(sc_ld_search *s, const sc_ld_target *t)
{
    s->target = t;
}

const sc_ld_target *sc_ld_search_target_for(sc_ld_search *s, const sc_ldresolver *r)
{
    if (r->target) {
        if (!s->target)
            s->target = r->target;
        return r->target;
    }
    if (!s->target) {
        sc_ld_target_detect(s->root, r->elf_class, r->machine, &s->found);
        s->target = &s->found;
    }
    return s->target;
}

/* Adds the directory of one entry to l (its array of cap) unless it holds it already or is full;
 * false when out of memory. */
static bool add_entry(sc_ld_search *s, sc_ld_list *l, size_t *cap, const char *entry, size_t len,
                      const char *origin)
{
    char dir[PATH_MAX];
    if (len == 0)
        snprintf(dir, sizeof dir, ".");
    else if (!sc_ld_expand_for(s->target ? s->target : sc_ld_target_default(), entry, len, origin,
                               dir, sizeof dir))
        return true; /* too long to open: the loader cannot search it either */
    sc_ld_dir *d = dir_of(s, dir);
    if (!d)
        return false;
    if (d->mark == s->lists)
        return true;
    if (l->count == SC_LD_MAX_ENTRIES) {
        l->cut = true;
        return true;
    }
    size_t count = (size_t)l->count;
    if (!push((void ***)&l->dirs, &count, cap, d))
        return false;
    d->mark = s->lists;
    l->count = (int)count;
    return true;
}

int sc_ld_search_subdirs(sc_ld_search *s, sc_ld_dir *d, sc_ld_dir ***subs)
{
    const sc_ld_target *t = s->target ? s->target : sc_ld_target_default();
    if (!d->subs_made && t->subdir_count > 0) {
        sc_ld_dir **made = own(s, calloc((size_t)t->subdir_count, sizeof *made));
        char path[PATH_MAX];
        for (int i = 0; made && i < t->subdir_count; i++)
            if (sc_fmt(path, sizeof path, "%s/%s", d->path, t->subdirs[i]) &&
                (made[d->sub_count] = dir_of(s, path)) != NULL)
                d->sub_count++;
        d->subs = made;
    }
    d->subs_made = true;
    *subs = d->subs;
    return d->sub_count;
}

/* A new empty list, owned by the search; NULL when out of memory. */
static sc_ld_list *list_begin(sc_ld_search *s)
{
    s->lists++; /* a new mark: each directory once in this list */
    return own(s, calloc(1, sizeof(sc_ld_list)));
}

/* Hands the filled list l over to the search, noting a cut; NULL when anything failed. */
static sc_ld_list *list_end(sc_ld_search *s, sc_ld_list *l, bool ok, const char *source)
{
    if (l && l->dirs && !own(s, l->dirs))
        ok = false;
    if (!ok)
        return NULL;
    if (l->cut)
        note_cut(s, source, l->entries);
    return l;
}

sc_ld_list *sc_ld_search_parse(sc_ld_search *s, const char *list, const char *seps,
                               const char *origin, const char *source)
{
    sc_ld_list *l = list_begin(s);
    size_t cap = 0;
    bool ok = l != NULL;
    for (const char *p = list; ok && p;) {
        size_t len = strcspn(p, seps);
        l->entries++;
        ok = l->cut || add_entry(s, l, &cap, p, len, origin);
        p = p[len] ? p + len + 1 : NULL;
    }
    return list_end(s, l, ok, source);
}

sc_ld_list *sc_ld_search_env(sc_ld_search *s, const char *list, const char *origin)
{
    if (!s->env || s->env_text != list || s->env_origin != origin) {
        s->env = sc_ld_search_parse(s, list, ":;", origin, "LD_LIBRARY_PATH");
        s->env_text = list;
        s->env_origin = origin;
    }
    return s->env;
}

sc_ld_list *sc_ld_search_fixed(sc_ld_search *s, const char *const *dirs, const char *source)
{
    int slot = -1;
    for (int i = 0; i < FIXED_LISTS; i++) {
        if (s->fixed[i].from == dirs && s->fixed[i].list)
            return s->fixed[i].list;
        if (!s->fixed[i].from && slot < 0)
            slot = i;
    }
    if (slot < 0)
        slot = FIXED_LISTS - 1; /* all taken: that one is parsed again when asked */
    sc_ld_list *l = list_begin(s);
    size_t cap = 0;
    bool ok = l != NULL;
    for (int i = 0; ok && dirs[i]; i++) {
        l->entries++;
        ok = l->cut || add_entry(s, l, &cap, dirs[i], strlen(dirs[i]), NULL);
    }
    l = list_end(s, l, ok, source);
    s->fixed[slot].from = dirs;
    s->fixed[slot].list = l;
    return l;
}

int sc_ld_search_prepare(sc_ld_search *s, sc_ld_object *obj)
{
    struct sc_ld_lists *pair = own(s, calloc(1, sizeof *pair));
    char source[PATH_MAX + 32];
    const char *name = obj->name ? obj->name : "?";
    if (!pair)
        return -ENOMEM;
    snprintf(source, sizeof source, "RPATH of %s", name);
    if (obj->rpath && !(pair->rpath = sc_ld_search_parse(s, obj->rpath, ":", obj->origin, source)))
        return -ENOMEM;
    snprintf(source, sizeof source, "RUNPATH of %s", name);
    if (obj->runpath &&
        !(pair->runpath = sc_ld_search_parse(s, obj->runpath, ":", obj->origin, source)))
        return -ENOMEM;
    obj->lists = pair;
    return 0;
}

static int spend(sc_ld_search *s, const char *what)
{
    if (!s->budget.spent)
        s->budget.spent = what;
    return -EDQUOT;
}

bool sc_ld_search_charge(sc_ld_search *s)
{
    if (s->budget.spent)
        return false;
    if (s->budget.checks >= SC_LD_MAX_CHECKS) {
        spend(s, "file-system checks");
        return false;
    }
    s->budget.checks++;
    return true;
}

/* ld.so's test: a directory it cannot stat as a directory holds nothing. Any other answer
 * (permission denied among them) leaves each name to be opened. */
static void check_dir(sc_ld_search *s, sc_ld_dir *d)
{
    struct stat st;
    int rc = sc_root_stat(s->root, d->path, &st, true);
    bool absent = rc == -ENOENT || rc == -ENOTDIR || (rc == 0 && !S_ISDIR(st.st_mode));
    d->state = absent ? SC_DIR_ABSENT : SC_DIR_PRESENT;
}

int sc_ld_search_present(sc_ld_search *s, sc_ld_dir *d)
{
    if (d->state == SC_DIR_UNKNOWN) {
        if (!sc_ld_search_charge(s))
            return -EDQUOT;
        check_dir(s, d);
    }
    return d->state != SC_DIR_ABSENT;
}

int sc_ld_search_may_hold(sc_ld_search *s, sc_ld_dir *d, const char *name)
{
    if (s->budget.spent)
        return -EDQUOT;
    if (++s->budget.steps > SC_LD_MAX_STEPS)
        return spend(s, "search steps");
    int present = sc_ld_search_present(s, d);
    if (present <= 0)
        return present;
    if (d->state == SC_DIR_LISTED)
        return sc_symset_has(&d->names, name);
    return 1;
}

/* Reads the names of d into a NUL-separated buffer; false when it cannot be read, is too large
 * or the budget runs out. */
static bool read_names(sc_ld_search *s, DIR *dir, sc_buf *names, size_t *count)
{
    struct dirent *e;
    *count = 0;
    for (;;) {
        errno = 0;
        if ((e = readdir(dir)) == NULL)
            return errno == 0 && !names->oom;
        if (++*count > LIST_MAX_NAMES || (*count % NAMES_PER_CHECK == 0 && !sc_ld_search_charge(s)))
            return false;
        sc_buf_append(names, e->d_name, strlen(e->d_name) + 1);
    }
}

/* Lists d once, so the names it lacks cost no open from now on. */
static void list_dir(sc_ld_search *s, sc_ld_dir *d)
{
    sc_buf names;
    size_t count;
    DIR *dir = sc_ld_search_charge(s) ? sc_root_opendir(s->root, d->path) : NULL;
    d->unlistable = true; /* unless all goes well */
    if (!dir)
        return;
    sc_buf_init(&names);
    bool ok = read_names(s, dir, &names, &count);
    closedir(dir);
    for (size_t i = 0, at = 0; ok && i < count; i++) {
        ok = sc_symset_add(&d->names, names.data + at) == 0;
        at += strlen(names.data + at) + 1;
    }
    if (!ok) {
        sc_symset_free(&d->names);
        sc_buf_free(&names);
        return;
    }
    d->store = names.data;
    d->state = SC_DIR_LISTED;
    d->unlistable = false;
}

void sc_ld_search_missed(sc_ld_search *s, sc_ld_dir *d)
{
    if (d->state == SC_DIR_PRESENT && !d->unlistable && ++d->misses == LIST_AFTER_MISSES)
        list_dir(s, d);
}

void sc_ld_search_gave_up(sc_ld_search *s, const char *name)
{
    sc_ld_budget *b = &s->budget;
    size_t used = strlen(b->given_up);
    if (b->gave_up++ < 8)
        snprintf(b->given_up + used, sizeof b->given_up - used, "%s%s", used ? ", " : "", name);
}
