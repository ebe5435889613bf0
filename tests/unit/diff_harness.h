/* Test helpers shared by the unit tests of `stackcheck diff`: compare two hand-made snapshots
 * with the default tolerances. Header-only (static functions), for cmocka tests. */
#ifndef SC_TEST_DIFF_HARNESS_H
#define SC_TEST_DIFF_HARNESS_H

#include "sc_diff.h"

/* The diff of a against b with the default options; a and b are deleted. */
static cJSON *diff_of(cJSON *a, cJSON *b)
{
    sc_diff_options opt;
    sc_diff_options_init(&opt);
    cJSON *d = sc_diff_snapshots(a, b, &opt);
    assert_non_null(d);
    cJSON_Delete(a);
    cJSON_Delete(b);
    return d;
}

#endif
