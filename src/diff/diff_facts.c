/* The facts that say which stack a snapshot describes, compared: host (OS, kernel), driver module
 * and firmware, runtime and its library, installed roots, torch and Python versions. Known paths
 * first, then every "*version*" fact of any probe, so probes added later are compared too; the
 * lists of each probe (devices, libraries, roots) are compared in diff_lists.c. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "sc_diff.h"
#include "sc_text.h"

#define WALK_DEPTH 3

typedef struct {
    const char *probe; /* NULL: the snapshot's host object */
    const char *path;
    const char *area;
} known_fact;

/* Each path names a fact a probe writes (unit.test_diff_facts checks them against fresh snapshots
 * of every fixture and stub). */
static const known_fact known[] = {
    {NULL, "os.pretty_name", "host"},
    {NULL, "kernel", "host"},
    {NULL, "arch", "host"},
    {NULL, "cpu.model", "host"},
    {NULL, "container.kind", "host"},
    {"driver.amd", "module.name", "driver"},
    {"driver.amd", "kfd.gpu_nodes", "driver"},
    {"runtime.hip", "runtime.version", "runtime"},
    {"runtime.hip", "runtime.driver_version", "runtime"},
    {"runtime.hip", "runtime.realpath", "runtime"},
    {"runtime.hip", "runtime.root", "runtime"},
    {"runtime.hip", "runtime_library.realpath", "runtime"},
    {"runtime.hip", "device_count", "runtime"},
    {"runtime.hip", "links", "runtime"},
    {"libraries.hip", "library", "libraries"},
    {"framework.torch", "python.version", "framework"},
    {"framework.torch", "python.executable", "framework"},
    {"framework.torch", "torch/version", "framework"},
    {"framework.torch", "torch/hip", "framework"},
    {"framework.torch", "torch/cuda", "framework"},
    {"framework.torch", "torch/git_version", "framework"},
    {"framework.torch", "torch/cudnn", "framework"},
    {"framework.torch", "torch/miopen", "framework"},
    {"framework.torch", "torch/is_available", "framework"},
    {"framework.torch", "torch/device_count", "framework"},
    {"framework.torch", "torch/arch_list", "framework"},
};

/* Paths are shown with dots, whatever separator the table uses. */
void sc_diff_dotted(char *s)
{
    for (; *s; s++)
        if (*s == '/')
            *s = '.';
}

/* A table path and a walked path name the same fact ('/' and '.' both separate keys). */
static bool same_path(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (*a != *b && !((*a == '/' || *a == '.') && (*b == '/' || *b == '.')))
            return false;
    return *a == *b;
}

/* Two facts are the same when equal as JSON; absent and null are the same (both unknown). */
static bool same(const cJSON *a, const cJSON *b)
{
    bool a_none = !a || cJSON_IsNull(a), b_none = !b || cJSON_IsNull(b);
    if (a_none || b_none)
        return a_none && b_none;
    return cJSON_Compare(a, b, true);
}

static const cJSON *facts_of(sc_diff_side *side, const char *probe)
{
    return probe ? sc_diff_get(sc_diff_side_probe(side, probe), "facts")
                 : sc_diff_get(side->snapshot, "host");
}

void sc_diff_compare(sc_diff_acc *acc, const char *area, const char *what, const cJSON *a,
                     const cJSON *b)
{
    if (!same(a, b))
        sc_diff_change(acc, area, what, a, b, true);
}

static bool is_known(const char *probe, const char *path)
{
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (known[i].probe && strcmp(known[i].probe, probe) == 0 && same_path(known[i].path, path))
            return true;
    return false;
}

static void diff_known(sc_diff_acc *acc)
{
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        const known_fact *k = &known[i];
        char what[160];
        snprintf(what, sizeof what, "%s %s", k->probe ? k->probe : "host", k->path);
        sc_diff_dotted(what);
        sc_diff_compare(acc, k->area, what, sc_diff_path(facts_of(acc->a, k->probe), k->path),
                        sc_diff_path(facts_of(acc->b, k->probe), k->path));
    }
}

static bool names_version(const char *key)
{
    char lower[64];
    size_t i = 0;
    for (; key[i] && i + 1 < sizeof lower; i++)
        lower[i] = (char)tolower((unsigned char)key[i]);
    lower[i] = '\0';
    return strstr(lower, "version") != NULL;
}

static const char *layer_area(const char *probe)
{
    static const char *const areas[] = {"driver", "runtime", "libraries", "framework", "app"};
    for (size_t i = 0; i < sizeof areas / sizeof areas[0]; i++)
        if (strncmp(probe, areas[i], strlen(areas[i])) == 0 && probe[strlen(areas[i])] == '.')
            return areas[i];
    return "versions";
}

static void walk_versions(sc_diff_acc *acc, const char *probe, const cJSON *a, const cJSON *b,
                          const char *prefix, int depth);

static void visit(sc_diff_acc *acc, const char *probe, const char *key, const cJSON *va,
                  const cJSON *vb, const char *prefix, int depth)
{
    char path[256], what[400];
    if (strcmp(key, "unavailable") == 0)
        return;
    snprintf(path, sizeof path, "%s%s%.*s", prefix, prefix[0] ? "." : "", sc_utf8_prec(key, 100),
             key);
    if (cJSON_IsObject(va) || cJSON_IsObject(vb)) {
        if (depth < WALK_DEPTH)
            walk_versions(acc, probe, cJSON_IsObject(va) ? va : NULL,
                          cJSON_IsObject(vb) ? vb : NULL, path, depth + 1);
        return;
    }
    if (cJSON_IsArray(va) || cJSON_IsArray(vb) || !names_version(key) || is_known(probe, path))
        return;
    snprintf(what, sizeof what, "%s %s", probe, path);
    sc_diff_compare(acc, layer_area(probe), what, va, vb);
}

/* Every scalar "*version*" fact under objects (not lists), on either side. */
static void walk_versions(sc_diff_acc *acc, const char *probe, const cJSON *a, const cJSON *b,
                          const char *prefix, int depth)
{
    const cJSON *item;
    sc_diff_index in_a, in_b;
    sc_diff_index_init(&in_a, &acc->oom);
    sc_diff_index_init(&in_b, &acc->oom);
    sc_diff_index_members(&in_a, a);
    sc_diff_index_members(&in_b, b);
    cJSON_ArrayForEach (item, a) {
        if (item->string && sc_diff_index_find(&in_a, item->string, NULL) == item)
            visit(acc, probe, item->string, item, sc_diff_index_find(&in_b, item->string, NULL),
                  prefix, depth);
    }
    cJSON_ArrayForEach (item, b) {
        if (item->string && !sc_diff_index_find(&in_a, item->string, NULL) &&
            sc_diff_index_find(&in_b, item->string, NULL) == item)
            visit(acc, probe, item->string, NULL, item, prefix, depth);
    }
    sc_diff_index_free(&in_a);
    sc_diff_index_free(&in_b);
}

typedef struct {
    sc_diff_acc *acc;
    bool b_only; /* the b side's pass: only its probes the a side lacks */
} probe_pair;

static void facts_of_pair(const cJSON *probe, void *arg)
{
    const probe_pair *pp = arg;
    const char *id = cJSON_GetStringValue(sc_diff_get(probe, "id"));
    const cJSON *fa = facts_of(pp->acc->a, id), *fb = facts_of(pp->acc->b, id);
    if (pp->b_only && cJSON_IsObject(fa))
        return; /* compared from the a side */
    if (!sc_diff_side_first(pp->b_only ? pp->acc->b : pp->acc->a, probe))
        return;
    if (!cJSON_IsObject(fa) && !cJSON_IsObject(fb))
        return;
    walk_versions(pp->acc, id, cJSON_IsObject(fa) ? fa : NULL, cJSON_IsObject(fb) ? fb : NULL, "",
                  0);
    sc_diff_probe_lists(pp->acc, id, fa, fb);
}

void sc_diff_each_fact(void (*fn)(const sc_diff_fact *fact, void *arg), void *arg)
{
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        sc_diff_fact f = {known[i].probe ? known[i].probe : "host", NULL, known[i].path};
        fn(&f, arg);
    }
    sc_diff_each_role_fact(fn, arg);
}

void sc_diff_facts(sc_diff_acc *acc)
{
    probe_pair pp = {acc, false};
    diff_known(acc);
    sc_diff_each_probe(acc->a->snapshot, facts_of_pair, &pp);
    pp.b_only = true;
    sc_diff_each_probe(acc->b->snapshot, facts_of_pair, &pp);
}
