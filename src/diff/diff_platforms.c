/* Two platforms side by side: each side's roles (diff_roles.c) as one line of text a role, so an
 * NVIDIA node against a DCU node reads as one table (2 x H100 (sm_90) | 8 x MI250X (gfx90a),
 * driver, firmware, runtime, toolkit, collective library, torch build). When the sides run on
 * different backends, the per-probe changes of a backend only one side has are what the table
 * sums up: their probe ids are listed for the text output to fold. */
#include <stdio.h>
#include <string.h>

#include "sc_backend.h"
#include "sc_diff_roles.h"
#include "sc_text.h"

#define CELL_MAX 480
#define CELL_ITEMS 3 /* entries of a role written out; the rest as "+N more" */

typedef struct {
    char text[CELL_MAX];
    size_t len;
    int items, more;
} cell;

static void cell_put(cell *c, const char *s)
{
    size_t room = sizeof c->text - c->len, n = s ? strlen(s) : 0;
    if (room <= 1 || n == 0)
        return;
    n = sc_utf8_prefix(s, n, n < room - 1 ? n : room - 1);
    memcpy(c->text + c->len, s, n);
    c->len += n;
    c->text[c->len] = '\0';
}

/* Words joined by spaces, the last one in parentheses when it follows others: "HIP 6.2 (/opt)". */
static void cell_words(cell *c, const char *first, const char *second, const char *where)
{
    bool any = false;
    const char *const words[] = {first, second};
    for (size_t i = 0; i < 2; i++)
        if (words[i]) {
            cell_put(c, any ? " " : "");
            cell_put(c, words[i]);
            any = true;
        }
    if (where) {
        cell_put(c, any ? " (" : "");
        cell_put(c, where);
        cell_put(c, any ? ")" : "");
    }
}

/* Starts one more entry; false when CELL_ITEMS are written (it is then counted). */
static bool cell_next(cell *c)
{
    if (c->items == CELL_ITEMS) {
        c->more++;
        return false;
    }
    if (c->items++)
        cell_put(c, ", ");
    return true;
}

static cJSON *cell_json(cell *c, int more)
{
    char tail[32];
    if (c->items == 0)
        return cJSON_CreateNull();
    if (c->more + more > 0) {
        snprintf(tail, sizeof tail, " +%d more", c->more + more);
        cell_put(c, tail);
    }
    return cJSON_CreateString(c->text);
}

static const char *text_of(const cJSON *o, const char *key)
{
    return cJSON_GetStringValue(sc_diff_get(o, key));
}

static int more_of(const cJSON *platform, const char *role)
{
    char key[64];
    snprintf(key, sizeof key, "%s_more", role);
    return (int)cJSON_GetNumberValue(sc_diff_get(platform, key)) > 0
               ? (int)cJSON_GetNumberValue(sc_diff_get(platform, key))
               : 0;
}

static cJSON *backend_cell(const cJSON *platform)
{
    cell c = {0};
    const cJSON *b;
    cJSON_ArrayForEach (b, sc_diff_get(platform, "backends")) {
        const char *ev = text_of(b, "evidence");
        if (!cell_next(&c))
            continue;
        cell_put(&c, text_of(b, "label"));
        if (ev && strcmp(ev, "devices") != 0) {
            cell_put(&c, " (");
            cell_put(&c, ev);
            cell_put(&c, ", no device)");
        }
    }
    return cell_json(&c, 0);
}

/* "64 GiB": memory in whole GiB (one decimal below 10). */
static void memory_text(double bytes, char *buf, size_t size)
{
    double gib = bytes / (double)(1ull << 30);
    snprintf(buf, size, gib < 10 ? "%.1f GiB" : "%.0f GiB", gib);
}

static cJSON *devices_cell(const cJSON *platform)
{
    cell c = {0};
    const cJSON *d;
    cJSON_ArrayForEach (d, sc_diff_get(platform, "devices")) {
        char count[32], mem[32];
        const char *arch = text_of(d, "arch");
        const cJSON *bytes = sc_diff_get(d, "memory_bytes");
        if (!cell_next(&c))
            continue;
        snprintf(count, sizeof count, "%.0f x ", cJSON_GetNumberValue(sc_diff_get(d, "count")));
        cell_put(&c, count);
        cell_put(&c, text_of(d, "name") ? text_of(d, "name") : "device");
        mem[0] = '\0';
        if (cJSON_IsNumber(bytes))
            memory_text(bytes->valuedouble, mem, sizeof mem);
        if (arch || mem[0]) {
            cell_put(&c, " (");
            cell_put(&c, arch);
            cell_put(&c, arch && mem[0] ? ", " : "");
            cell_put(&c, mem);
            cell_put(&c, ")");
        }
    }
    return cell_json(&c, more_of(platform, "devices"));
}

/* "name version (where)", each part when known. */
static cJSON *entries_cell(const cJSON *platform, const char *role)
{
    cell c = {0};
    const cJSON *e;
    cJSON_ArrayForEach (e, sc_diff_get(platform, role)) {
        const char *name = text_of(e, "name"), *version = text_of(e, "version");
        const char *where = text_of(e, "where");
        if (cell_next(&c))
            cell_words(&c, name, version, where);
    }
    return cell_json(&c, more_of(platform, role));
}

/* "2.3.0 hip 6.0.32830, 8 devices". */
static cJSON *torch_cell(const cJSON *platform)
{
    cell c = {0};
    const cJSON *t = sc_diff_get(platform, "torch"), *count = sc_diff_get(t, "device_count");
    if (!text_of(t, "version"))
        return cJSON_CreateNull();
    cell_next(&c);
    cell_words(&c, text_of(t, "version"), text_of(t, "build"), NULL);
    cell_put(&c, text_of(t, "build_version") ? " " : "");
    cell_put(&c, text_of(t, "build_version"));
    if (cJSON_IsNumber(count)) {
        char n[48];
        snprintf(n, sizeof n, ", %.0f device%s", count->valuedouble,
                 count->valuedouble == 1 ? "" : "s");
        cell_put(&c, n);
    }
    return cell_json(&c, 0);
}

static cJSON *cell_of(const cJSON *platform, const char *role)
{
    if (strcmp(role, "backend") == 0)
        return backend_cell(platform);
    if (strcmp(role, "devices") == 0)
        return devices_cell(platform);
    if (strcmp(role, "torch") == 0)
        return torch_cell(platform);
    return entries_cell(platform, role);
}

static void add_row(cJSON *rows, const char *role, const cJSON *pa, const cJSON *pb)
{
    cJSON *row = cJSON_CreateObject(), *a = cell_of(pa, role), *b = cell_of(pb, role);
    bool same = cJSON_Compare(a, b, true);
    cJSON_AddStringToObject(row, "role", role);
    cJSON_AddItemToObject(row, "a", a);
    cJSON_AddItemToObject(row, "b", b);
    cJSON_AddBoolToObject(row, "differs", !same);
    cJSON_AddItemToArray(rows, row);
}

static cJSON *rows_of(const cJSON *pa, const cJSON *pb)
{
    cJSON *rows = cJSON_CreateArray();
    add_row(rows, "backend", pa, pb);
    add_row(rows, "devices", pa, pb);
    for (size_t r = 0; sc_diff_stack_roles[r].role; r++)
        add_row(rows, sc_diff_stack_roles[r].role, pa, pb);
    add_row(rows, "collective", pa, pb);
    add_row(rows, "torch", pa, pb);
    return rows;
}

/* ---- which backends, and the probes the table sums up ---- */

static bool runs_on(const cJSON *platform, const char *backend)
{
    const cJSON *b;
    cJSON_ArrayForEach (b, sc_diff_get(platform, "backends")) {
        if (backend && strcmp(text_of(b, "name") ? text_of(b, "name") : "", backend) == 0)
            return true;
    }
    return false;
}

/* The backend a probe belongs to: its "backend" field, else the descriptor naming it. */
static const sc_backend_desc *backend_of_probe(const cJSON *probe)
{
    const char *id = text_of(probe, "id");
    const sc_backend_desc *b = sc_backend_by_name(text_of(probe, "backend"));
    for (size_t i = 0; !b && id && sc_backends[i]; i++)
        if (strcmp(sc_backends[i]->driver_probe, id) == 0 ||
            strcmp(sc_backends[i]->runtime_probe, id) == 0)
            b = sc_backends[i];
    return b;
}

/* Both run on the same backends (however each was recognised). */
static bool same_backends(const cJSON *pa, const cJSON *pb)
{
    const cJSON *la = sc_diff_get(pa, "backends"), *lb = sc_diff_get(pb, "backends");
    const cJSON *x = la ? la->child : NULL, *y = lb ? lb->child : NULL;
    for (; x && y; x = x->next, y = y->next)
        if (strcmp(text_of(x, "name"), text_of(y, "name")) != 0)
            return false;
    return !x && !y;
}

typedef struct {
    cJSON *list;
    sc_diff_acc *acc;
    const cJSON *pa, *pb;
    bool b_side;
} summary_job;

static void summarise_probe(const cJSON *probe, void *arg)
{
    summary_job *job = arg;
    const char *id = text_of(probe, "id");
    const sc_backend_desc *b = backend_of_probe(probe);
    if (!sc_diff_side_first(job->b_side ? job->acc->b : job->acc->a, probe) || !b)
        return;
    if (job->b_side && sc_diff_side_probe(job->acc->a, id))
        return; /* decided on the a side */
    if (!(runs_on(job->pa, b->name) && runs_on(job->pb, b->name)))
        cJSON_AddItemToArray(job->list, cJSON_CreateString(id));
}

static cJSON *summarised(sc_diff_acc *acc, const cJSON *pa, const cJSON *pb)
{
    summary_job job = {cJSON_CreateArray(), acc, pa, pb, false};
    sc_diff_each_probe(acc->a->snapshot, summarise_probe, &job);
    job.b_side = true;
    sc_diff_each_probe(acc->b->snapshot, summarise_probe, &job);
    return job.list;
}

cJSON *sc_diff_platforms(sc_diff_acc *acc)
{
    cJSON *out = cJSON_CreateObject();
    cJSON *pa = sc_diff_platform(acc->a, &acc->oom), *pb = sc_diff_platform(acc->b, &acc->oom);
    if (!out || !pa || !pb) {
        acc->oom = true;
        cJSON_Delete(pa);
        cJSON_Delete(pb);
        return out;
    }
    bool differ = !same_backends(pa, pb);
    cJSON_AddBoolToObject(out, "differ", differ);
    cJSON_AddItemToObject(out, "a", pa);
    cJSON_AddItemToObject(out, "b", pb);
    cJSON_AddItemToObject(out, "rows", rows_of(pa, pb));
    cJSON_AddItemToObject(out, "summarised",
                          differ ? summarised(acc, pa, pb) : cJSON_CreateArray());
    return out;
}
