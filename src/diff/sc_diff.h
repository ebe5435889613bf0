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
 *  changes_that_matter, differs}. */
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

#endif
