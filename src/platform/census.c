/* The device census, PCI and each backend's own driver source, counted per backend from the
 * descriptors alone: a backend added to the table is counted here without a change. */
#include "sc_census.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sc_probe.h"
#include "sc_util.h"

static void count_pci(sc_census *c)
{
    for (size_t i = 0; i < c->pci.count; i++) {
        const sc_backend_desc *desc = sc_pci_accelerator(&c->pci.items[i]);
        for (size_t b = 0; desc && b < c->count; b++)
            c->backends[b].pci += c->backends[b].desc == desc;
    }
}

static void count_driver(const sc_root *root, sc_census_entry *e)
{
    const sc_driver_devices *src = e->desc->driver_devices;
    e->has_driver_source = src && src->count;
    if (!e->has_driver_source)
        return;
    sc_error err = {0};
    int n = src->count(root, &err);
    if (n < 0)
        sc_fmt(e->driver_error, sizeof e->driver_error, "%s",
               err.message[0] ? err.message : strerror(-n));
    else
        e->driver = n;
}

void sc_census_read(const sc_root *root, sc_census *c)
{
    memset(c, 0, sizeof *c);
    for (const sc_backend_desc *const *b = sc_backends; *b && c->count < SC_CENSUS_MAX_BACKENDS;
         b++)
        c->backends[c->count++].desc = *b;
    sc_error err = {0};
    if (sc_pci_scan(root, &c->pci, &err) < 0)
        sc_fmt(c->pci_error, sizeof c->pci_error, "%s", err.message);
    else
        count_pci(c);
    for (size_t i = 0; i < c->count; i++)
        count_driver(root, &c->backends[i]);
}

void sc_census_free(sc_census *c)
{
    sc_pci_list_free(&c->pci);
}

bool sc_census_sees(const sc_census_entry *e)
{
    return e->pci > 0 || (e->has_driver_source && !e->driver_error[0] && e->driver > 0);
}

size_t sc_census_present(const sc_census *c)
{
    size_t n = 0;
    for (size_t i = 0; i < c->count; i++)
        n += sc_census_sees(&c->backends[i]);
    return n;
}

bool sc_census_complete(const sc_census *c, char *why, size_t size)
{
    sc_buf b;
    sc_buf_init(&b);
    if (c->pci_error[0])
        sc_buf_printf(&b, "%s", c->pci_error);
    for (size_t i = 0; i < c->count; i++)
        if (c->backends[i].driver_error[0])
            sc_buf_printf(&b, "%s%s", b.len ? "; " : "", c->backends[i].driver_error);
    sc_fmt(why, size, "%s", b.data ? b.data : "");
    bool complete = b.len == 0;
    sc_buf_free(&b);
    return complete;
}

static cJSON *entry_json(const sc_census_entry *e)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddNumberToObject(o, "pci", (double)e->pci);
    if (e->has_driver_source && e->driver_error[0])
        sc_fact_null(o, "driver_devices", "%s", e->driver_error);
    else if (e->has_driver_source)
        cJSON_AddNumberToObject(o, "driver_devices", e->driver);
    cJSON_AddBoolToObject(o, "present", sc_census_sees(e));
    return o;
}

static void add_pci_facts(const sc_census *c, cJSON *facts)
{
    if (c->pci_error[0]) {
        sc_fact_null(facts, "pci", "%s", c->pci_error);
        return;
    }
    cJSON *arr = cJSON_AddArrayToObject(facts, "pci");
    for (size_t i = 0; arr && i < c->pci.count; i++) {
        const sc_backend_desc *desc = sc_pci_accelerator(&c->pci.items[i]);
        cJSON *o = desc ? sc_pci_device_json(&c->pci.items[i]) : NULL;
        if (o)
            cJSON_AddStringToObject(o, "backend", desc->name);
        if (o)
            cJSON_AddItemToArray(arr, o);
    }
}

void sc_census_facts(const sc_census *c, cJSON *facts)
{
    add_pci_facts(c, facts);
    cJSON *backends = cJSON_AddObjectToObject(facts, "backends");
    cJSON *present = cJSON_AddArrayToObject(facts, "present");
    for (size_t i = 0; backends && present && i < c->count; i++) {
        const sc_census_entry *e = &c->backends[i];
        cJSON_AddItemToObject(backends, e->desc->name, entry_json(e));
        if (sc_census_sees(e))
            cJSON_AddItemToArray(present, cJSON_CreateString(e->desc->name));
    }
}

void sc_census_nothing_text(const sc_census *c, char *buf, size_t size)
{
    sc_buf vendors, sources;
    sc_buf_init(&vendors);
    sc_buf_init(&sources);
    char labels[256];
    for (size_t i = 0; i < c->count; i++) {
        const sc_census_entry *e = &c->backends[i];
        sc_buf_printf(&vendors, "%s%s", vendors.len ? ", " : "",
                      sc_backend_vendor_labels(e->desc, ", ", labels, sizeof labels));
        if (e->has_driver_source)
            sc_buf_printf(&sources, "%s%s", sources.len ? " or " : "",
                          e->desc->driver_devices->what);
    }
    sc_fmt(buf, size, "no accelerator on PCI (%s)%s%s", vendors.data ? vendors.data : "",
           sources.len ? " and no " : "", sources.data ? sources.data : "");
    sc_buf_free(&vendors);
    sc_buf_free(&sources);
}

/* Counts the entries of dir named prefix<digit>...; adds them to *n. */
static int count_numbered(const sc_root *root, const char *dir, const char *prefix, int *n,
                          sc_error *err)
{
    DIR *d = sc_root_opendir(root, dir);
    if (!d) {
        if (errno == ENOENT || errno == ENOTDIR)
            return 0;
        return sc_error_set(err, -errno, "cannot list %s: %s", dir, strerror(errno));
    }
    size_t len = strlen(prefix);
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        *n +=
            strncmp(e->d_name, prefix, len) == 0 && e->d_name[len] >= '0' && e->d_name[len] <= '9';
    closedir(d);
    return 0;
}

int sc_census_numbered_nodes(const sc_root *root, const char *const *patterns, sc_error *err)
{
    int n = 0;
    for (; patterns && *patterns; patterns++) {
        const char *star = strchr(*patterns, '*'), *slash = strrchr(*patterns, '/');
        char dir[256], prefix[128];
        if (!star || !slash || slash > star || star[1] != '\0' ||
            !sc_fmt(dir, sizeof dir, "%.*s", (int)(slash - *patterns), *patterns) ||
            !sc_fmt(prefix, sizeof prefix, "%.*s", (int)(star - slash - 1), slash + 1))
            continue;
        int rc = count_numbered(root, dir[0] ? dir : "/", prefix, &n, err);
        if (rc < 0)
            return rc;
    }
    return n;
}
