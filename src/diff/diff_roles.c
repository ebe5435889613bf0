/* What one snapshot runs on, by role, whatever its backend: devices (product, architecture,
 * memory), kernel driver, firmware, runtime, toolkit (ROCm/DTK, CUDA, CANN), read through each
 * backend's descriptor (sc_backend.h); the collective library and the torch build are in
 * diff_roles_torch.c. The backends a snapshot is about are those with devices, else those whose
 * driver probe passed, else those with a runtime or toolkit installed. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "sc_backend.h"
#include "sc_diff.h"
#include "sc_diff_roles.h"

typedef enum { EVIDENCE_NONE, EVIDENCE_INSTALLED, EVIDENCE_DRIVER, EVIDENCE_DEVICES } evidence;

static const char *const evidence_names[] = {"none", "installed", "driver", "devices"};

const sc_diff_stack_role sc_diff_stack_roles[] = {
    {"driver", offsetof(sc_backend_desc, driver_facts)},
    {"firmware", offsetof(sc_backend_desc, firmware_facts)},
    {"runtime", offsetof(sc_backend_desc, runtime_facts)},
    {"toolkit", offsetof(sc_backend_desc, toolkit_facts)},
    {NULL, 0},
};

const sc_stack_part *sc_diff_role_parts(const sc_backend_desc *b, const sc_diff_stack_role *role)
{
    return *(const sc_stack_part *const *)((const char *)b + role->field);
}

/* ---- stack parts: driver, firmware, runtime, toolkit ---- */

typedef struct {
    const sc_backend_desc *backend;
    const sc_stack_part *part;
    const cJSON *facts;
    char list[128]; /* the list the part's paths read item by item ("installs[]"), or "" */
    sc_diff_role *out;
    int found;
} part_job;

/* The list a part reads item by item: its first path through "[]", up to its last "[]". */
static void part_list(const sc_stack_part *p, char *buf, size_t size)
{
    const char *const paths[] = {p->version, p->where, p->name};
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        const char *q = paths[i], *last = NULL;
        while (q && (q = strstr(q, "[]")) != NULL)
            last = q++;
        if (last) {
            snprintf(buf, size, "%.*s", (int)(last + 2 - paths[i]), paths[i]);
            return;
        }
    }
}

/* A path of the part read in the item of its list when it goes through that list, else in the
 * probe's facts. */
static const char *part_text(const part_job *job, const cJSON *item, const char *path, char *buf,
                             size_t size)
{
    size_t n = strlen(job->list);
    if (path && n && strncmp(path, job->list, n) == 0 && (path[n] == '.' || path[n] == '/'))
        return sc_diff_first_text(item, path + n + 1, buf, size);
    return sc_diff_first_text(job->facts, path, buf, size);
}

static void part_item(const cJSON *item, void *arg)
{
    part_job *job = arg;
    char nb[64], vb[64], wb[64];
    const char *version = part_text(job, item, job->part->version, vb, sizeof vb);
    const char *where = part_text(job, item, job->part->where, wb, sizeof wb);
    const char *name = part_text(job, item, job->part->name, nb, sizeof nb);
    if (!version && !where)
        return;
    /* a part is found by its version (its place alone when it names no version): an install
     * root without the version this part reads leaves the role to the next part */
    job->found += version || !job->part->version;
    if (job->out)
        sc_diff_role_add(job->out, job->backend->name, name ? name : job->part->label, version,
                         where);
}

static void part_walk(part_job *job)
{
    if (job->list[0])
        sc_diff_path_each(job->facts, job->list, part_item, job);
    else if (job->facts)
        part_item(job->facts, job);
}

/* Adds the entries of the first part of parts that is found; returns how many values it found
 * (out NULL: only counts). */
int sc_diff_parts_of(sc_diff_side *side, const sc_backend_desc *b, const sc_stack_part *parts,
                     sc_diff_role *out)
{
    for (const sc_stack_part *p = parts; p && p->probe; p++) {
        part_job job = {b, p, sc_diff_probe_facts(side, p->probe), "", NULL, 0};
        part_list(p, job.list, sizeof job.list);
        part_walk(&job); /* counts */
        if (!job.found)
            continue;
        job.out = out;
        if (out)
            part_walk(&job);
        return job.found;
    }
    return 0;
}

/* ---- which backends ---- */

static const cJSON *device_list(sc_diff_side *side, const sc_backend_desc *b, const char *probe)
{
    const cJSON *l = sc_diff_get(sc_diff_probe_facts(side, probe), b->device_list);
    return cJSON_IsArray(l) && l->child ? l : NULL;
}

static evidence evidence_of(sc_diff_side *side, const sc_backend_desc *b)
{
    if (device_list(side, b, b->driver_probe) || device_list(side, b, b->runtime_probe))
        return EVIDENCE_DEVICES;
    const cJSON *drv = sc_diff_side_probe(side, b->driver_probe);
    const char *status = cJSON_GetStringValue(sc_diff_get(drv, "status"));
    if (status && (strcmp(status, "pass") == 0 || strcmp(status, "warn") == 0) &&
        !cJSON_IsFalse(sc_diff_get(drv, "applicable")))
        return EVIDENCE_DRIVER;
    if (sc_diff_parts_of(side, b, b->runtime_facts, NULL) ||
        sc_diff_parts_of(side, b, b->toolkit_facts, NULL))
        return EVIDENCE_INSTALLED;
    return EVIDENCE_NONE;
}

/* ---- devices ---- */

/* The first of keys (skipping those in skip) with a value in dev, else in twin. */
static const cJSON *device_fact(const cJSON *dev, const cJSON *twin, const char *const *keys,
                                const char *const *skip)
{
    const cJSON *const devs[] = {dev, twin};
    for (size_t d = 0; d < 2; d++)
        for (const char *const *k = keys; devs[d] && k && *k; k++) {
            const cJSON *v = sc_backend_list_has(skip, *k) ? NULL : sc_diff_path(devs[d], *k);
            if (v && !cJSON_IsNull(v))
                return v;
        }
    return NULL;
}

static void add_device(sc_diff_role *out, const sc_backend_desc *b, const cJSON *dev,
                       const cJSON *twin)
{
    char nb[64], ab[64], key[600];
    const char *name =
        sc_diff_scalar_text(device_fact(dev, twin, b->device_name_facts, NULL), nb, sizeof nb);
    const char *arch = sc_diff_scalar_text(
        device_fact(dev, twin, b->arch_facts, b->device_name_facts), ab, sizeof ab);
    const cJSON *mem = device_fact(dev, twin, b->device_memory_facts, NULL);
    double bytes = cJSON_IsNumber(mem) ? mem->valuedouble : -1;
    bool is_new;
    snprintf(key, sizeof key, "%s\x1f%.250s\x1f%.250s\x1f%.0f", b->name, name ? name : "",
             arch ? arch : "", bytes);
    cJSON *e = sc_diff_role_entry(out, key, &is_new);
    if (!e)
        return;
    if (!is_new) {
        cJSON *count = cJSON_GetObjectItemCaseSensitive(e, "count");
        if (count)
            cJSON_SetNumberValue(count, count->valuedouble + 1);
        return;
    }
    cJSON_AddStringToObject(e, "backend", b->name);
    cJSON_AddNumberToObject(e, "count", 1);
    sc_diff_add_text(e, "name", name);
    sc_diff_add_text(e, "arch", arch);
    cJSON_AddItemToObject(e, "memory_bytes",
                          bytes >= 0 ? cJSON_CreateNumber(bytes) : cJSON_CreateNull());
}

static void index_by_pci(sc_diff_index *ix, const cJSON *list)
{
    const cJSON *dev;
    int n = 0;
    cJSON_ArrayForEach (dev, list) {
        if (n++ >= SC_DIFF_LIST_MAX)
            break;
        sc_diff_index_add(ix, cJSON_GetStringValue(sc_diff_get(dev, "pci_address")), NULL, dev);
    }
}

/* The driver's devices (else the runtime's), each completed by its twin in the other list: the
 * one with its PCI address, or, when the other list has no addresses (runtime.acl), the one at
 * its place if both lists are as long. */
static void devices_of(sc_diff_side *side, const sc_backend_desc *b, sc_diff_role *out)
{
    const cJSON *drv = device_list(side, b, b->driver_probe);
    const cJSON *rt = device_list(side, b, b->runtime_probe);
    const cJSON *primary = drv ? drv : rt, *secondary = drv ? rt : NULL, *dev;
    sc_diff_index pci;
    sc_diff_index_init(&pci, out->seen.oom);
    index_by_pci(&pci, secondary);
    bool by_place =
        pci.count == 0 && secondary && cJSON_GetArraySize(secondary) == cJSON_GetArraySize(primary);
    const cJSON *twin = by_place ? secondary->child : NULL;
    int n = 0;
    cJSON_ArrayForEach (dev, primary) {
        if (n++ >= SC_DIFF_LIST_MAX)
            break;
        const char *addr = cJSON_GetStringValue(sc_diff_get(dev, "pci_address"));
        if (cJSON_IsObject(dev)) /* anything else in the list is no device */
            add_device(out, b, dev, by_place ? twin : sc_diff_index_find(&pci, addr, NULL));
        twin = twin ? twin->next : NULL;
    }
    sc_diff_index_free(&pci);
}

/* ---- the platform ---- */

static evidence best_evidence(sc_diff_side *side, evidence *each)
{
    evidence best = EVIDENCE_NONE;
    for (size_t i = 0; sc_backends[i] && i < SC_DIFF_BACKENDS_MAX; i++) {
        each[i] = evidence_of(side, sc_backends[i]);
        best = each[i] > best ? each[i] : best;
    }
    return best;
}

static void add_backend(cJSON *list, const sc_backend_desc *b, evidence ev)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", b->name);
    cJSON_AddStringToObject(o, "label", b->label);
    cJSON_AddStringToObject(o, "evidence", evidence_names[ev]);
    cJSON_AddItemToArray(list, o);
}

/* Every role of backend b in platform p. */
static void roles_of(sc_diff_side *side, const sc_backend_desc *b, sc_diff_role *roles)
{
    devices_of(side, b, &roles[0]);
    for (size_t r = 0; sc_diff_stack_roles[r].role; r++)
        sc_diff_parts_of(side, b, sc_diff_role_parts(b, &sc_diff_stack_roles[r]), &roles[r + 1]);
}

cJSON *sc_diff_platform(sc_diff_side *side, bool *oom)
{
    enum { ROLES = sizeof sc_diff_stack_roles / sizeof sc_diff_stack_roles[0] };
    evidence each[SC_DIFF_BACKENDS_MAX] = {EVIDENCE_NONE};
    sc_diff_role roles[ROLES]; /* devices, then the stack roles */
    cJSON *p = cJSON_CreateObject(), *backends = cJSON_AddArrayToObject(p, "backends");
    if (!backends) {
        cJSON_Delete(p);
        return NULL;
    }
    evidence best = best_evidence(side, each);
    sc_diff_role_init(&roles[0], cJSON_AddArrayToObject(p, "devices"), oom);
    for (size_t r = 0; sc_diff_stack_roles[r].role; r++)
        sc_diff_role_init(&roles[r + 1], cJSON_AddArrayToObject(p, sc_diff_stack_roles[r].role),
                          oom);
    for (size_t i = 0; sc_backends[i] && i < SC_DIFF_BACKENDS_MAX && best != EVIDENCE_NONE; i++) {
        if (each[i] != best)
            continue;
        add_backend(backends, sc_backends[i], best);
        roles_of(side, sc_backends[i], roles);
    }
    sc_diff_role_done(&roles[0], p, "devices");
    for (size_t r = 0; sc_diff_stack_roles[r].role; r++)
        sc_diff_role_done(&roles[r + 1], p, sc_diff_stack_roles[r].role);
    sc_diff_torch_roles(side, p, oom);
    return p;
}
