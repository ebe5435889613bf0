/* Sorted indexes for the comparison: every "find the item of the other side with this key" is a
 * binary search instead of a scan, so comparing two snapshots costs O(n log n) in their findings,
 * probes, stages, modules and list items, not O(n^2). Among items with equal keys a lookup finds
 * the one added first, which is the one the scan it replaces found. */
#include <stdlib.h>
#include <string.h>

#include "sc_diff.h"

#define SMALL_OBJECT 8 /* members looked up by a scan below this: no index to build */

struct sc_diff_entry {
    const char *key, *key2; /* key2 NULL: none */
    size_t order;           /* when it was added: the first wins among equal keys */
    const cJSON *item;
    char *owned; /* key, when the index copied it */
};

void sc_diff_index_init(sc_diff_index *ix, bool *oom)
{
    memset(ix, 0, sizeof *ix);
    ix->oom = oom;
}

static void index_failed(sc_diff_index *ix)
{
    if (ix->oom)
        *ix->oom = true;
}

static struct sc_diff_entry *next_entry(sc_diff_index *ix)
{
    if (ix->count == ix->cap) {
        size_t cap = ix->cap ? ix->cap * 2 : 16;
        struct sc_diff_entry *e = realloc(ix->entries, cap * sizeof *e);
        if (!e) {
            index_failed(ix);
            return NULL;
        }
        ix->entries = e;
        ix->cap = cap;
    }
    ix->sorted = false;
    return &ix->entries[ix->count];
}

void sc_diff_index_add(sc_diff_index *ix, const char *key, const char *key2, const cJSON *item)
{
    struct sc_diff_entry *e = key ? next_entry(ix) : NULL;
    if (!e)
        return;
    *e = (struct sc_diff_entry){key, key2, ix->count, item, NULL};
    ix->count++;
}

void sc_diff_index_add_copy(sc_diff_index *ix, const char *key, const cJSON *item)
{
    struct sc_diff_entry *e = next_entry(ix);
    char *copy = e ? strdup(key) : NULL;
    if (!copy) {
        if (e)
            index_failed(ix);
        return;
    }
    *e = (struct sc_diff_entry){copy, NULL, ix->count, item, copy};
    ix->count++;
}

static int compare_keys(const char *k, const char *k2, const struct sc_diff_entry *e)
{
    int c = strcmp(k, e->key);
    return c ? c : strcmp(k2 ? k2 : "", e->key2 ? e->key2 : "");
}

static int compare_entries(const void *x, const void *y)
{
    const struct sc_diff_entry *a = x, *b = y;
    int c = compare_keys(a->key, a->key2, b);
    return c ? c : (a->order > b->order) - (a->order < b->order);
}

const cJSON *sc_diff_index_find(sc_diff_index *ix, const char *key, const char *key2)
{
    if (ix->scan)
        return sc_diff_get(ix->scan, key);
    if (!key || ix->count == 0)
        return NULL;
    if (!ix->sorted) {
        qsort(ix->entries, ix->count, sizeof *ix->entries, compare_entries);
        ix->sorted = true;
    }
    size_t lo = 0, hi = ix->count; /* the first entry not below (key, key2) */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (compare_keys(key, key2, &ix->entries[mid]) > 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < ix->count && compare_keys(key, key2, &ix->entries[lo]) == 0 ? ix->entries[lo].item
                                                                            : NULL;
}

void sc_diff_index_members(sc_diff_index *ix, const cJSON *obj)
{
    const cJSON *item, *members = cJSON_IsObject(obj) ? obj : NULL;
    int n = 0;
    cJSON_ArrayForEach (item, members) {
        if (++n > SMALL_OBJECT)
            break;
    }
    if (n <= SMALL_OBJECT) {
        ix->scan = members;
        return;
    }
    cJSON_ArrayForEach (item, members)
        sc_diff_index_add(ix, item->string, NULL, item);
}

void sc_diff_index_free(sc_diff_index *ix)
{
    for (size_t i = 0; i < ix->count; i++)
        free(ix->entries[i].owned);
    free(ix->entries);
    sc_diff_index_init(ix, ix->oom);
}

static void add_probe(const cJSON *probe, void *arg)
{
    sc_diff_side *side = arg;
    sc_diff_index_add(&side->probes, cJSON_GetStringValue(sc_diff_get(probe, "id")), NULL, probe);
}

/* The finding ids of the first probe with each id: those a lookup by probe id reaches. */
static void add_findings(const cJSON *probe, void *arg)
{
    sc_diff_side *side = arg;
    const char *pid = cJSON_GetStringValue(sc_diff_get(probe, "id"));
    const cJSON *f;
    if (sc_diff_side_probe(side, pid) != probe)
        return;
    cJSON_ArrayForEach (f, sc_diff_get(probe, "findings")) {
        const char *id = cJSON_GetStringValue(sc_diff_get(f, "id"));
        if (id)
            sc_diff_index_add(&side->findings, pid, id, f);
    }
}

void sc_diff_side_init(sc_diff_side *side, const cJSON *snapshot, bool *oom)
{
    side->snapshot = snapshot;
    sc_diff_index_init(&side->probes, oom);
    sc_diff_index_init(&side->findings, oom);
    sc_diff_each_probe(snapshot, add_probe, side);
    sc_diff_each_probe(snapshot, add_findings, side);
}

const cJSON *sc_diff_side_probe(sc_diff_side *side, const char *id)
{
    return sc_diff_index_find(&side->probes, id, NULL);
}

bool sc_diff_side_first(sc_diff_side *side, const cJSON *probe)
{
    return sc_diff_side_probe(side, cJSON_GetStringValue(sc_diff_get(probe, "id"))) == probe;
}

void sc_diff_side_free(sc_diff_side *side)
{
    sc_diff_index_free(&side->probes);
    sc_diff_index_free(&side->findings);
}
