/* Every fact path the platforms table reads, from the backend descriptors: what a test checks
 * against real snapshots, so that a key a probe renames fails there instead of leaving a role
 * silently empty. */
#include <stdio.h>

#include "sc_diff_roles.h"

typedef void (*fact_fn)(const sc_diff_fact *fact, void *arg);

static void emit(fact_fn fn, void *arg, const char *probe, const char *alt, const char *path)
{
    sc_diff_fact f = {probe, alt, path};
    if (path)
        fn(&f, arg);
}

/* The device lists, and each device key in the driver's or the runtime's list. */
static void device_facts(const sc_backend_desc *b, fact_fn fn, void *arg)
{
    const char *const *const keys[] = {b->device_name_facts, b->arch_facts, b->device_memory_facts};
    char path[160];
    emit(fn, arg, b->driver_probe, NULL, b->device_list);
    emit(fn, arg, b->runtime_probe, NULL, b->device_list);
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        for (const char *const *k = keys[i]; k && *k; k++) {
            if (keys[i] == b->arch_facts && sc_backend_list_has(b->device_name_facts, *k))
                continue; /* a name standing in for the arch: read as the name */
            snprintf(path, sizeof path, "%s[].%s", b->device_list, *k);
            emit(fn, arg, b->driver_probe, b->runtime_probe, path);
        }
}

static void part_facts(const sc_stack_part *parts, fact_fn fn, void *arg)
{
    for (const sc_stack_part *p = parts; p && p->probe; p++) {
        emit(fn, arg, p->probe, NULL, p->name);
        emit(fn, arg, p->probe, NULL, p->version);
        emit(fn, arg, p->probe, NULL, p->where);
    }
}

static void torch_facts(const sc_backend_desc *b, fact_fn fn, void *arg)
{
    char path[160];
    if (b->torch_build) {
        snprintf(path, sizeof path, "torch.%s", b->torch_build);
        emit(fn, arg, "framework.torch", NULL, path);
    }
    if (b->torch_plugin) {
        snprintf(path, sizeof path, "torch.plugins.%s.version", b->torch_plugin);
        emit(fn, arg, "framework.torch", NULL, path);
    }
    if (b->torch_device_count) {
        snprintf(path, sizeof path, "torch.%s", b->torch_device_count);
        emit(fn, arg, "framework.torch", NULL, path);
    }
}

void sc_diff_each_role_fact(fact_fn fn, void *arg)
{
    char path[160];
    for (size_t i = 0; sc_backends[i]; i++) {
        device_facts(sc_backends[i], fn, arg);
        for (size_t r = 0; sc_diff_stack_roles[r].role; r++)
            part_facts(sc_diff_role_parts(sc_backends[i], &sc_diff_stack_roles[r]), fn, arg);
        torch_facts(sc_backends[i], fn, arg);
    }
    for (const sc_diff_library_list *l = sc_diff_library_lists; l->probe; l++) {
        snprintf(path, sizeof path, "%s.name", l->list);
        emit(fn, arg, l->probe, NULL, path);
        snprintf(path, sizeof path, "%s.root", l->list);
        emit(fn, arg, l->probe, NULL, path);
    }
    for (const char *const *v = sc_diff_torch_versions; *v; v++)
        emit(fn, arg, "framework.torch", NULL, *v);
}
