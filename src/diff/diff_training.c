/* The training watch and the operator profile of app.script compared: the first step whose loss,
 * or whose gradient norm of a module, differs beyond tolerance (the step where training on the two
 * machines parts); the operators that ran on the CPU in b but not in a; and the operators whose
 * time changed most, as b/a ratios. Present in the diff only when a side recorded them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sc_diff.h"

#define RATIOS_LISTED 8
#define OPS_COMPARED 256 /* the helper lists at most 200 operators */

static const cJSON *app_fact(sc_diff_side *side, const char *key)
{
    const cJSON *v = sc_diff_get(sc_diff_get(sc_diff_side_probe(side, "app.script"), "facts"), key);
    return cJSON_IsObject(v) ? v : NULL;
}

static cJSON *step_divergence(const cJSON *step, const char *what, const char *module,
                              const cJSON *a, const cJSON *b)
{
    cJSON *d = cJSON_CreateObject();
    cJSON_AddNumberToObject(d, "step", cJSON_GetNumberValue(sc_diff_get(step, "step")));
    cJSON_AddStringToObject(d, "what", what);
    if (module)
        cJSON_AddStringToObject(d, "module", module);
    cJSON_AddItemToObject(d, "a", a ? cJSON_Duplicate(a, true) : cJSON_CreateNull());
    cJSON_AddItemToObject(d, "b", b ? cJSON_Duplicate(b, true) : cJSON_CreateNull());
    return d;
}

/* The first divergence of one step: its loss, then each module's gradient norm in a's order. */
static cJSON *step_differs(const cJSON *sa, const cJSON *sb, const sc_diff_options *opt)
{
    const cJSON *la = sc_diff_get(sa, "loss"), *lb = sc_diff_get(sb, "loss");
    if (!sc_diff_close(la, lb, opt))
        return step_divergence(sa, "loss", NULL, la, lb);
    const cJSON *ga = sc_diff_get(sa, "grad_norms"), *gb = sc_diff_get(sb, "grad_norms");
    const cJSON *g;
    if (!cJSON_IsObject(ga))
        return NULL;
    cJSON_ArrayForEach (g, ga) {
        const cJSON *other = sc_diff_get(gb, g->string);
        if (!other || !sc_diff_close(g, other, opt))
            return step_divergence(sa, "grad_norm", g->string, g, other);
    }
    return NULL;
}

static cJSON *compare_training(sc_diff_acc *acc, const cJSON *ta, const cJSON *tb,
                               const sc_diff_options *opt)
{
    cJSON *o = cJSON_CreateObject();
    const cJSON *la = sc_diff_get(ta, "steps"), *lb = sc_diff_get(tb, "steps");
    const cJSON *sa = cJSON_IsArray(la) ? la->child : NULL;
    const cJSON *sb = cJSON_IsArray(lb) ? lb->child : NULL;
    cJSON *first = NULL;
    int compared = 0;
    for (; sa && sb && !first; sa = sa->next, sb = sb->next)
        if (!(first = step_differs(sa, sb, opt)))
            compared++;
    if (!first && (sa || sb)) /* one side ran more steps (it stopped later at a NaN) */
        first = step_divergence(sa ? sa : sb, "steps", NULL, sa ? sa : NULL, sb ? sb : NULL);
    cJSON_AddNumberToObject(o, "steps_agree", compared);
    cJSON_AddItemToObject(o, "first_divergent", first ? first : cJSON_CreateNull());
    const cJSON *na = sc_diff_get(ta, "first_nonfinite"), *nb = sc_diff_get(tb, "first_nonfinite");
    cJSON_AddItemToObject(o, "first_nonfinite_a",
                          na ? cJSON_Duplicate(na, true) : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "first_nonfinite_b",
                          nb ? cJSON_Duplicate(nb, true) : cJSON_CreateNull());
    acc->matters += first != NULL;
    return o;
}

static const cJSON *op_named(const cJSON *ops, const char *name)
{
    const cJSON *op;
    cJSON_ArrayForEach (op, ops)
        if (cJSON_GetStringValue(sc_diff_get(op, "name")) &&
            strcmp(cJSON_GetStringValue(sc_diff_get(op, "name")), name) == 0)
            return op;
    return NULL;
}

/* Operators b ran on the CPU (its fallback list) that a did not. */
static cJSON *moved_to_cpu(const cJSON *pa, const cJSON *pb)
{
    cJSON *list = cJSON_CreateArray();
    const cJSON *fa = sc_diff_get(sc_diff_get(pa, "fallback"), "ops");
    const cJSON *op;
    int seen = 0; /* a snapshot's list is the top ops; a hostile one is cut, not scanned squared */
    cJSON_ArrayForEach (op, sc_diff_get(sc_diff_get(pb, "fallback"), "ops")) {
        const char *name = cJSON_GetStringValue(sc_diff_get(op, "name"));
        if (++seen > OPS_COMPARED)
            break;
        if (name && !op_named(fa, name))
            cJSON_AddItemToArray(list, cJSON_CreateString(name));
    }
    return list;
}

/* The time an operator took per step: device time when both profiles rank by it, else host. */
static double per_step_ms(const cJSON *op, const cJSON *profile, const char *key)
{
    double steps = cJSON_GetNumberValue(sc_diff_get(profile, "steps"));
    double ms = cJSON_GetNumberValue(sc_diff_get(op, key));
    return isnan(ms) ? NAN : ms / (isnan(steps) || steps < 1 ? 1 : steps);
}

/* How far a ratio is from 1 either way (2 and 0.5 alike), without libm's log. */
static double spread(const cJSON *r)
{
    double x = cJSON_GetNumberValue(sc_diff_get(r, "ratio"));
    return x >= 1 ? x : 1 / x;
}

static int by_spread(const void *x, const void *y)
{
    double a = spread(*(cJSON *const *)x), b = spread(*(cJSON *const *)y);
    return a < b ? 1 : a > b ? -1 : 0;
}

static cJSON *ratio_of(const char *name, double a, double b)
{
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "op", name);
    cJSON_AddNumberToObject(r, "a_ms_per_step", a);
    cJSON_AddNumberToObject(r, "b_ms_per_step", b);
    cJSON_AddNumberToObject(r, "ratio", b / a);
    return r;
}

/* Operators both profiles have, by how far b/a of their time per step is from 1, the largest first.
 */
static cJSON *ratios(const cJSON *pa, const cJSON *pb)
{
    const char *ra = cJSON_GetStringValue(sc_diff_get(pa, "ranked_by"));
    const char *rb = cJSON_GetStringValue(sc_diff_get(pb, "ranked_by"));
    const char *key = ra && rb && strcmp(ra, "device") == 0 && strcmp(rb, "device") == 0
                          ? "device_self_ms"
                          : "host_self_ms";
    cJSON *found[OPS_COMPARED];
    int n = 0, seen = 0;
    const cJSON *oa;
    cJSON_ArrayForEach (oa, sc_diff_get(pa, "ops")) {
        if (++seen > OPS_COMPARED) /* as moved_to_cpu: a bounded scan of each side */
            break;
        const char *name = cJSON_GetStringValue(sc_diff_get(oa, "name"));
        const cJSON *ob = name ? op_named(sc_diff_get(pb, "ops"), name) : NULL;
        double a = ob ? per_step_ms(oa, pa, key) : NAN, b = ob ? per_step_ms(ob, pb, key) : NAN;
        /* finite only: a ratio of infinities (1e400 parses as one) would break the sort */
        if (a > 0 && b > 0 && isfinite(a) && isfinite(b) && n < OPS_COMPARED)
            found[n++] = ratio_of(name, a, b);
    }
    qsort(found, (size_t)n, sizeof found[0], by_spread);
    cJSON *list = cJSON_CreateArray();
    for (int i = 0; i < n; i++) {
        if (i < RATIOS_LISTED)
            cJSON_AddItemToArray(list, found[i]);
        else
            cJSON_Delete(found[i]);
    }
    return list;
}

static cJSON *compare_profile(sc_diff_acc *acc, const cJSON *pa, const cJSON *pb)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *moved = moved_to_cpu(pa, pb);
    cJSON_AddItemToObject(o, "moved_to_cpu", moved);
    cJSON_AddItemToObject(o, "biggest_ratios", ratios(pa, pb));
    acc->matters += cJSON_GetArraySize(moved) > 0;
    return o;
}

/* Only one side recorded it: a change that matters, named like the numerics'. */
static void one_side(sc_diff_acc *acc, const char *what, bool in_a)
{
    cJSON *yes = cJSON_CreateString("recorded"), *no = cJSON_CreateNull();
    sc_diff_change(acc, "app", what, in_a ? yes : no, in_a ? no : yes, true);
    cJSON_Delete(yes);
    cJSON_Delete(no);
}

void sc_diff_training_and_profile(cJSON *diff, sc_diff_acc *acc, const sc_diff_options *opt)
{
    const cJSON *ta = app_fact(acc->a, "train_watch"), *tb = app_fact(acc->b, "train_watch");
    if (ta && tb)
        cJSON_AddItemToObject(diff, "training", compare_training(acc, ta, tb, opt));
    else if (ta || tb)
        one_side(acc, "app.script training watch", ta != NULL);
    const cJSON *pa = app_fact(acc->a, "profile"), *pb = app_fact(acc->b, "profile");
    if (pa && pb)
        cJSON_AddItemToObject(diff, "profile", compare_profile(acc, pa, pb));
    else if (pa || pb)
        one_side(acc, "app.script operator profile", pa != NULL);
}
