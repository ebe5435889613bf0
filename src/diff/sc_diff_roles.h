/* Shared by the files that read a snapshot's platform by role (diff_roles.c, diff_roles_torch.c,
 * diff_role_list.c, diff_role_facts.c, diff_cells.c): the roles read through the backend
 * descriptors, and a role's list of distinct entries. */
#ifndef SC_DIFF_ROLES_H
#define SC_DIFF_ROLES_H

#include <stddef.h>

#include "sc_backend.h"
#include "sc_diff.h"

#define SC_DIFF_ROLE_MAX 64 /* distinct entries of a role listed; the rest are counted */
#define SC_DIFF_BACKENDS_MAX 16

/* A role whose facts each descriptor lists as stack parts, and where in the descriptor. */
typedef struct {
    const char *role; /* "driver"; NULL ends the table */
    size_t field;     /* offset of its sc_stack_part list in sc_backend_desc */
} sc_diff_stack_role;

/* driver, firmware, runtime, toolkit. */
extern const sc_diff_stack_role sc_diff_stack_roles[];
/* The parts of backend b for role. */
const sc_stack_part *sc_diff_role_parts(const sc_backend_desc *b, const sc_diff_stack_role *role);
/* The lists torch's libraries are read from for the collective role: {probe, list path}. */
typedef struct {
    const char *probe, *list;
} sc_diff_library_list;
extern const sc_diff_library_list sc_diff_library_lists[];
/* framework.torch paths of torch's version: imported first, else from its metadata. */
extern const char *const sc_diff_torch_versions[];

/* The distinct entries of one role, in the order found. */
typedef struct {
    cJSON *list;        /* the role's array in the platform (NULL: out of memory) */
    sc_diff_index seen; /* entry key -> entry */
    int count, more;    /* entries listed; values beyond SC_DIFF_ROLE_MAX */
} sc_diff_role;

void sc_diff_role_init(sc_diff_role *r, cJSON *list, bool *oom);
/* The entry with key, added empty (*is_new) when there is none; NULL when the role is full. */
cJSON *sc_diff_role_entry(sc_diff_role *r, const char *key, bool *is_new);
/* Adds {backend, name, version, where} unless the role has it. */
void sc_diff_role_add(sc_diff_role *r, const char *backend, const char *name, const char *version,
                      const char *where);
/* Records "<role>_more" in platform when values were left out, and frees the index. */
void sc_diff_role_done(sc_diff_role *r, cJSON *platform, const char *role);
/* o[key] = text, or null when text is NULL. */
void sc_diff_add_text(cJSON *o, const char *key, const char *text);

/* The facts of the first probe with this id on side, or NULL. */
const cJSON *sc_diff_probe_facts(sc_diff_side *side, const char *probe);
/* The first scalar at path in obj as text (buf holds numbers), or NULL. */
const char *sc_diff_first_text(const cJSON *obj, const char *path, char *buf, size_t size);
/* Adds to out the entries of the first of parts found on side; returns the values found (out
 * NULL: only counts them). */
int sc_diff_parts_of(sc_diff_side *side, const sc_backend_desc *b, const sc_stack_part *parts,
                     sc_diff_role *out);
/* The text of role ("backend", "devices", "driver", ..., "torch") of platform, for a row of the
 * table; null when the role has nothing. */
cJSON *sc_diff_cell(const cJSON *platform, const char *role);
/* Adds collective[] and torch to platform p. */
void sc_diff_torch_roles(sc_diff_side *side, cJSON *p, bool *oom);

#endif
