/* The loader search's state, shared by the lookups of one analysis: directories (what each holds,
 * learnt once), the parsed and deduplicated search lists, and the budgets. Private to
 * src/elf/ldresolve.c and src/elf/ldsearch.c; the API is sc_ldresolve.h. */
#ifndef SC_LDSEARCH_INTERNAL_H
#define SC_LDSEARCH_INTERNAL_H

#include "sc_elf.h"
#include "sc_ldresolve.h"

/* One directory of the search, as the loader would find it. */
typedef enum {
    SC_DIR_UNKNOWN, /* not looked at yet */
    SC_DIR_ABSENT,  /* not a directory (missing, a file): nothing is found there */
    SC_DIR_PRESENT, /* each name is opened to find out */
    SC_DIR_LISTED   /* its names are known: only a listed name is opened */
} sc_dir_state;

typedef struct sc_ld_dir {
    char *path; /* the entry, expanded */
    sc_dir_state state;
    int misses;      /* names opened and not found there */
    bool unlistable; /* a listing failed or was too large: names are opened */
    unsigned mark;   /* the last list that took it: each list holds a directory once */
    sc_symset names; /* when listed; the names point into store */
    char *store;
    struct sc_ld_dir **subs; /* its hardware-capability subdirectories for the target, best first */
    int sub_count;
    bool subs_made;
} sc_ld_dir;

/* A search list (RPATH, RUNPATH, LD_LIBRARY_PATH, the default directories), its entries
 * expanded, in order, each directory once (as ld.so keeps them) and at most SC_LD_MAX_ENTRIES. */
struct sc_ld_list {
    sc_ld_dir **dirs;
    int count;
    int entries; /* entries of the list as written */
    bool cut;    /* more than SC_LD_MAX_ENTRIES distinct directories: the rest is not searched */
};

struct sc_ld_lists {
    sc_ld_list *rpath, *runpath; /* NULL when the object has none */
};

/* The parsed list of entries (separated by seps; $ORIGIN is origin); NULL when out of memory.
 * The search owns it. A list longer than the budget is noted in the budget. */
sc_ld_list *sc_ld_search_parse(sc_ld_search *s, const char *list, const char *seps,
                               const char *origin, const char *source);
/* LD_LIBRARY_PATH parsed ($ORIGIN is origin), once while list and origin stay the same. */
sc_ld_list *sc_ld_search_env(sc_ld_search *s, const char *list, const char *origin);
/* A fixed list of directories (NULL-terminated, taken as they are: the default directories, the
 * ld.so.conf stand-in for a missing cache), parsed once per array; source names it in a cut. */
sc_ld_list *sc_ld_search_fixed(sc_ld_search *s, const char *const *dirs, const char *source);
/* Whether name may be in d: 1 (open it to see), 0 (it is not), or -EDQUOT when a budget ran out.
 * Counts a search step, and the check of a directory seen for the first time. */
int sc_ld_search_may_hold(sc_ld_search *s, sc_ld_dir *d, const char *name);
/* Whether d exists as a directory: 1, 0, or -EDQUOT; checked once (a file-system check). */
int sc_ld_search_present(sc_ld_search *s, sc_ld_dir *d);
/* Charges one file-system check (an open); false when the budget ran out. */
bool sc_ld_search_charge(sc_ld_search *s);
/* Notes that name was not found in d; a directory that misses often is listed once. */
void sc_ld_search_missed(sc_ld_search *s, sc_ld_dir *d);
/* Notes a lookup given up because a budget ran out. */
void sc_ld_search_gave_up(sc_ld_search *s, const char *name);
/* The hardware-capability subdirectories of d the target's loader searches before d, best first
 * (made on first use, owned by the search): their count, and the array in *subs. */
int sc_ld_search_subdirs(sc_ld_search *s, sc_ld_dir *d, sc_ld_dir ***subs);
/* The loader r's lookups follow: r's target, else the search's, else the one found in the root
 * for r's class and machine; the search keeps it for the lists it parses from then on. */
const sc_ld_target *sc_ld_search_target_for(sc_ld_search *s, const sc_ldresolver *r);

#endif
