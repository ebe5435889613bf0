/* A node's stack by role as short texts, read through the diff's platform roles
 * (sc_diff_platform, the backend descriptors): devices, driver, firmware, runtime, toolkit,
 * collective library, torch build, and the roots its libraries resolve to. `stackcheck fleet`
 * groups nodes by it; the metrics' info series names it. */
#ifndef SC_STACK_H
#define SC_STACK_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#define SC_STACK_ENTRIES_MAX 16 /* texts of one role kept; the rest as "+N more" */
#define SC_STACK_TEXT_MAX 200   /* bytes of one text */

/* The roles, in the order they are shown; NULL-terminated. */
extern const char *const sc_stack_roles[];

/* The stack of a snapshot: {role: [distinct texts, sorted]} for every role of sc_stack_roles (an
 * empty array when the role has nothing), devices as "8 x MI250X (gfx90a, 64 GiB)". *platform
 * (when not NULL) receives the platform it was read from (caller frees). NULL when out of memory.
 */
cJSON *sc_stack_of(const cJSON *snapshot, cJSON **platform);
/* The stack's texts as one string that is equal for equal stacks: roles and texts joined with
 * separators no text holds. Malloc'd; NULL when out of memory. */
char *sc_stack_key(const cJSON *stack);
/* The devices a stack counts: the sum of "N x" of its devices texts. */
double sc_stack_device_count(const cJSON *stack);
/* True when two stacks differ in nothing but how many devices of each kind they have. */
bool sc_stack_same_but_counts(const cJSON *a, const cJSON *b);

#endif
