/* Snapshot comparison: what differs between two snapshots (two nodes, or before and after a
 * migration): versions, devices, library roots, findings, statuses, timings as ratios, and the
 * first module whose numerics differ beyond a tolerance. Reads facts defensively by known paths:
 * anything missing or of the wrong type is "absent", never a crash. */
#ifndef SC_DIFF_H
#define SC_DIFF_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>

#include "sc_types.h"

#define SC_DIFF_SCHEMA "stackcheck/diff/v1"
#define SC_DIFF_MAX_INPUT (64u << 20) /* a snapshot larger than this is refused, not parsed */
#define SC_DIFF_LIST_MAX 4096 /* items of one list compared; beyond that a snapshot is not real */

typedef struct {
    double rtol; /* numerics: a statistic differs when |a - b| > atol + rtol * max(|a|, |b|) */
    double atol;
} sc_diff_options;

/* The default tolerances (rtol 1e-3, atol 1e-5: float32 across devices and library versions). */
void sc_diff_options_init(sc_diff_options *opt);
/* Checks that json is a snapshot this version can compare; label names it in the message.
 * Returns 0, or -EINVAL (not a snapshot) / -EPROTONOSUPPORT (another schema version), err filled.
 */
int sc_diff_check_snapshot(const cJSON *json, const char *label, sc_error *err);
/* Compares snapshot a with b (both checked); returns a new diff object, NULL when out of memory:
 * {schema, a{created,host}, b{...}, changes[{area,what,a,b,matters}], findings{added[],resolved[]},
 *  timings[{probe,what,a_ms,b_ms,ratio}], numerics[{probe,name,compared,first_divergent|null}],
 *  platforms{differ, a, b, rows[{role,a,b,differs}], summarised[]}, changes_that_matter,
 *  differs}. */
cJSON *sc_diff_snapshots(const cJSON *a, const cJSON *b, const sc_diff_options *opt);
/* Prints the diff as text, control characters escaped. */
void sc_diff_print(FILE *out, const cJSON *diff, const char *a_label, const char *b_label);

/* Shared by the diff's own files. */

/* A sorted index of items by one or two string keys: each lookup that would scan the other side
 * is a binary search, so a comparison is O(n log n) in the items of each side. Among items with
 * equal keys a lookup finds the one added first (the one a scan finds), and only that one is
 * compared: a repeated probe id, object key, device or file key (which stackcheck never writes)
 * would otherwise repeat a comparison once per repetition, quadratic in the input. An allocation
 * that fails sets *oom and leaves the item out. */
typedef struct {
    struct sc_diff_entry *entries;
    size_t count, cap;
    bool sorted;
    const cJSON *scan; /* a small object whose members are found by a scan instead */
    bool *oom;
} sc_diff_index;

/* An empty index; oom (may be NULL) is set when an allocation fails. */
void sc_diff_index_init(sc_diff_index *ix, bool *oom);
/* Adds item under (key, key2) (key2 may be NULL); the keys must outlive the index. A NULL key
 * adds nothing. */
void sc_diff_index_add(sc_diff_index *ix, const char *key, const char *key2, const cJSON *item);
/* Adds item under a copy of key. */
void sc_diff_index_add_copy(sc_diff_index *ix, const char *key, const cJSON *item);
/* The first item added under (key, key2), or NULL. */
const cJSON *sc_diff_index_find(sc_diff_index *ix, const char *key, const char *key2);
/* Indexes the members of obj by name (nothing when obj is not an object); a small object is
 * searched as sc_diff_get does. */
void sc_diff_index_members(sc_diff_index *ix, const cJSON *obj);
/* Frees the index's memory; it is then empty. */
void sc_diff_index_free(sc_diff_index *ix);

/* One side of a comparison: its snapshot, its probes by id, and the finding ids of each. */
typedef struct {
    const cJSON *snapshot;
    sc_diff_index probes;   /* id -> the first probe with it */
    sc_diff_index findings; /* (probe id, finding id) -> finding, for each id's first probe */
} sc_diff_side;

typedef struct {
    cJSON *changes; /* array */
    int matters;
    sc_diff_side *a, *b;
    bool oom; /* an index could not be built: the comparison is incomplete */
} sc_diff_acc;

/* Adds {area, what, a, b, matters} (values copied; NULL becomes null). */
void sc_diff_change(sc_diff_acc *acc, const char *area, const char *what, const cJSON *a,
                    const cJSON *b, bool matters);
/* obj[key] when obj is an object, else NULL. */
const cJSON *sc_diff_get(const cJSON *obj, const char *key);
/* Follows a path through objects, its keys separated by '.' or '/' ("runtime.version",
 * "torch/version": the latter keeps paths apart from finding ids in the sources); NULL when any
 * step is missing. */
const cJSON *sc_diff_path(const cJSON *obj, const char *path);
/* Calls fn for every probe object of a snapshot (layers[].probes[] with a string id), in order. */
void sc_diff_each_probe(const cJSON *snapshot, void (*fn)(const cJSON *probe, void *arg),
                        void *arg);
/* Indexes a snapshot's probes and their findings; oom is set when an allocation fails. */
void sc_diff_side_init(sc_diff_side *side, const cJSON *snapshot, bool *oom);
/* The first probe object with this id on a side, or NULL. */
const cJSON *sc_diff_side_probe(sc_diff_side *side, const char *id);
/* True when probe is the first on its side with its id: only that one is compared (a repeated id
 * would repeat the comparison, once per repetition). */
bool sc_diff_side_first(sc_diff_side *side, const cJSON *probe);
/* Frees the side's indexes (not its snapshot). */
void sc_diff_side_free(sc_diff_side *side);
/* Adds a change that matters when a and b differ (absent and null are the same: both unknown). */
void sc_diff_compare(sc_diff_acc *acc, const char *area, const char *what, const cJSON *a,
                     const cJSON *b);
/* Turns the '/' separators of a fact path into dots, in place, for display. */
void sc_diff_dotted(char *s);
/* Compares the lists of one probe's facts: devices, loaded libraries, install roots, files. */
void sc_diff_probe_lists(sc_diff_acc *acc, const char *probe, const cJSON *fa, const cJSON *fb);
/* Compares the facts that say which stack this is: versions, devices, installs, library roots. */
void sc_diff_facts(sc_diff_acc *acc);
/* The numerics of each app probe: the first module whose statistics differ beyond tolerance. */
cJSON *sc_diff_numerics(sc_diff_acc *acc, const sc_diff_options *opt);

/* Platforms: the same roles read through each backend's descriptor, so that two snapshots of
 * different backends compare as one table (diff_path.c, diff_roles*.c, diff_role_*.c,
 * diff_cells.c, diff_platforms.c, diff_table.c). */

/* Calls fn for every value at path in obj: keys separated by '.' or '/', and "[]" after a key
 * steps into every item of the list there ("files[].libraries[].name"; a path ending in "[]"
 * reaches the items). At most SC_DIFF_LIST_MAX items of a list and SC_DIFF_VISIT_MAX steps in
 * all are taken. Returns the number of values reached, null values included. */
#define SC_DIFF_VISIT_MAX 65536
size_t sc_diff_path_each(const cJSON *obj, const char *path,
                         void (*fn)(const cJSON *value, void *arg), void *arg);
/* A scalar as text into buf ("1016", "true"); NULL for null, absent, objects and arrays. */
const char *sc_diff_scalar_text(const cJSON *v, char *buf, size_t size);
/* What the snapshot of side runs on, by role: {backends[{name,label,evidence}], devices[],
 * driver[], firmware[], runtime[], toolkit[], collective[], torch}; NULL when out of memory. */
cJSON *sc_diff_platform(sc_diff_side *side, bool *oom);
/* Both sides' platforms and the rows that set them side by side; differ is true when the sides
 * run on different backends, and summarised then names the probes whose changes the table sums
 * up (the backend-specific probes of a backend only one side runs on). */
cJSON *sc_diff_platforms(sc_diff_acc *acc);
/* One entry of a platform's role as text (the cells of the table are made of these): a devices
 * entry "8 x MI250X (gfx90a, 64 GiB)", a torch "2.3.0 hip 6.0.32830" (without the devices it
 * sees), any other role's "name version (where)"; "" when the entry names nothing. */
void sc_diff_entry_text(const char *role, const cJSON *entry, char *buf, size_t size);
/* Prints the platforms table of a diff whose platforms differ (nothing otherwise). */
void sc_diff_print_platforms(FILE *out, const cJSON *platforms);
/* Indexes the probe ids of platforms.summarised when the platforms differ (else nothing). */
void sc_diff_index_summarised(sc_diff_index *ix, const cJSON *platforms);
/* The probe id in ix that starts the change text what ("driver.amd devices count"), or NULL. */
const char *sc_diff_summed_up(sc_diff_index *ix, const char *what);
/* One fact the diff reads by name: its probe ("host" for the snapshot's host object) and path,
 * or the same path in alt_probe's facts (NULL: none), as sc_diff_path_each reads it. */
typedef struct {
    const char *probe, *alt_probe;
    const char *path;
} sc_diff_fact;
/* Calls fn for every fact the diff reads by name: the known facts and every path of the
 * platforms' roles, from the backend descriptors. */
void sc_diff_each_fact(void (*fn)(const sc_diff_fact *fact, void *arg), void *arg);
/* The role paths alone (diff_roles.c). */
void sc_diff_each_role_fact(void (*fn)(const sc_diff_fact *fact, void *arg), void *arg);

#endif
