/* The JSON of a libraries analysis: the inspected file, each library of its tree and how the
 * loader found it. */

#include "libs_internal.h"
#include "sc_json.h"

static cJSON *library_json(const analysis *a, const node *n)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", n->name);
    if (n->found) {
        cJSON_AddStringToObject(o, "path", n->path);
        cJSON_AddStringToObject(o, "realpath", n->realpath);
        cJSON_AddStringToObject(o, "root", n->root_path);
        cJSON_AddStringToObject(o, "root_kind", sc_root_kind_name(n->root_kind));
    } else {
        cJSON_AddNullToObject(o, "path");
        cJSON_AddNullToObject(o, "realpath");
        cJSON_AddNullToObject(o, "root");
        cJSON_AddNullToObject(o, "root_kind");
    }
    cJSON_AddStringToObject(o, "found_via", sc_found_via_name(n->via));
    if (n->entry && n->entry[0])
        cJSON_AddStringToObject(o, "search_entry", n->entry);
    else
        cJSON_AddNullToObject(o, "search_entry");
    cJSON_AddStringToObject(o, "needed_by", a->nodes[n->parent]->path);
    cJSON_AddNumberToObject(o, "depth", n->depth);
    return o;
}

cJSON *sc_libs_file_json(analysis *a)
{
    const node *f = a->nodes[0];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "path", f->path);
    cJSON_AddStringToObject(o, "realpath", f->realpath);
    sc_fact_str(o, "soname", f->file->info.soname, "the file has no DT_SONAME");
    cJSON_AddStringToObject(o, "root", f->root_path);
    cJSON_AddStringToObject(o, "root_kind", sc_root_kind_name(f->root_kind));
    cJSON *libs = cJSON_AddArrayToObject(o, "libraries");
    for (int i = 1; i < a->count; i++)
        cJSON_AddItemToArray(libs, library_json(a, a->nodes[i]));
    return o;
}

int sc_libs_worst(const cJSON *file)
{
    int worst = -1;
    const cJSON *f;
    sc_finding_view v;
    cJSON_ArrayForEach (f, sc_json_member(file, "findings"))
        if (sc_finding_read(f, &v) && (int)v.severity > worst)
            worst = (int)v.severity;
    return worst;
}
