/* Reading members of a cJSON tree that may be absent or of another type: NULL then, so callers
 * chain lookups on what a child process or a snapshot reported without checking each step. */
#ifndef SC_JSON_H
#define SC_JSON_H

#include <cjson/cJSON.h>

/* o[key] (case-sensitive) when o is an object that has it, else NULL. */
static inline const cJSON *sc_json_member(const cJSON *o, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(o, key);
}

/* o[key] when it is a string, else NULL. */
static inline const char *sc_json_str(const cJSON *o, const char *key)
{
    return cJSON_GetStringValue(sc_json_member(o, key));
}

/* o[key] when it is a number, else fallback. */
static inline double sc_json_num(const cJSON *o, const char *key, double fallback)
{
    const cJSON *v = sc_json_member(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : fallback;
}

#endif
