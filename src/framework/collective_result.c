/* The collective check's result judged: every rank's all-reduce and broadcast against the known
 * values, who was left waiting when a deadline ran out, and where the collective library came
 * from compared with the runtime the runtime layer loaded. No I/O but the install classifier. */
#include <string.h>

#include "sc_app.h"
#include "sc_backend.h"
#include "sc_collective.h"
#include "sc_json.h"
#include "sc_roots.h"
#include "sc_torch.h"
#include "sc_util.h"

static const char *const collective_stems[] = {"libnccl", "librccl", "libhccl",
                                               "libgloo", "libmpi",  NULL};
static const char *const torch_stems[] = {"libtorch_cpu", NULL};

/* "rank 0 in 'collectives', rank 1 in 'barrier'" for the ranks that had not finished. */
static int unfinished(sc_buf *b, const cJSON *ranks)
{
    int n = 0;
    const cJSON *r;
    cJSON_ArrayForEach (r, ranks) {
        if (cJSON_IsObject(sc_json_member(r, "result")))
            continue;
        sc_buf_printf(b, "%srank %.0f in '%s'", n++ ? ", " : "", sc_json_num(r, "rank", -1),
                      sc_json_str(r, "phase") ? sc_json_str(r, "phase") : "?");
    }
    return n;
}

static void check_hang(sc_result *res, const cJSON *result)
{
    const char *expired = sc_json_str(result, "expired");
    if (!expired)
        return;
    sc_buf b;
    sc_buf_init(&b);
    unfinished(&b, sc_json_member(result, "ranks"));
    bool startup = strcmp(expired, "startup") == 0;
    sc_finding(res, "collective.hang", SC_SEV_ERROR,
               "find the rank that never arrived (its phase is in facts.ranks[]): a device it "
               "cannot open, a firewall or interface between ranks (NCCL_SOCKET_IFNAME, "
               "GLOO_SOCKET_IFNAME, HCCL_IF_IP), a collective library from another install; run "
               "with NCCL_DEBUG=INFO (RCCL too) or ASCEND_GLOBAL_LOG_LEVEL=1",
               "%s %.0f ranks did not finish %s within %.1f s and were killed: %s",
               startup ? "the" : "of", sc_json_num(result, "world", 0),
               startup ? "the rendezvous (import, init_process_group)"
                       : "the all-reduce and broadcast after the rendezvous",
               sc_json_num(result, startup ? "startup_s" : "deadline_s", 0), b.data ? b.data : "");
    sc_buf_free(&b);
}

/* A rank whose collectives returned other values than every rank put in. */
static void check_values(sc_result *res, const cJSON *ranks)
{
    sc_buf b;
    sc_buf_init(&b);
    const cJSON *r;
    cJSON_ArrayForEach (r, ranks) {
        const cJSON *out = sc_json_member(r, "result");
        const cJSON *ar = sc_json_member(out, "all_reduce");
        double bad_ar = sc_json_num(ar, "wrong", 0);
        double bad_bc = sc_json_num(sc_json_member(out, "broadcast"), "wrong", 0);
        if (bad_ar > 0)
            sc_buf_printf(&b,
                          "%srank %.0f: all-reduce gave %g where %g was expected (%.0f of %.0f "
                          "elements wrong)",
                          b.len ? "; " : "", sc_json_num(r, "rank", -1),
                          sc_json_num(ar, "first", 0), sc_json_num(ar, "expected", 0), bad_ar,
                          sc_json_num(ar, "elements", 1024)); /* 1024: what 0.1's ranks sent */
        if (bad_bc > 0)
            sc_buf_printf(&b, "%srank %.0f: broadcast from rank 0 differs in %.0f elements",
                          b.len ? "; " : "", sc_json_num(r, "rank", -1), bad_bc);
    }
    if (b.len && !b.oom)
        sc_finding(res, "collective.wrong-result", SC_SEV_ERROR,
                   "run the check on fewer devices to find the one that differs; check the links "
                   "between devices and the collective library's version against the runtime's "
                   "(facts.library); rule out a device that fails alone (runtime layer)",
                   "%s", b.data);
    sc_buf_free(&b);
}

/* A rank that ended with a failure of its own (not killed at a deadline). */
static void check_failed(sc_result *res, const cJSON *result)
{
    if (sc_json_str(result, "expired"))
        return;
    const cJSON *r;
    cJSON_ArrayForEach (r, sc_json_member(result, "ranks")) {
        if (cJSON_IsObject(sc_json_member(r, "result")))
            continue;
        char line[400];
        const char *log = sc_json_str(r, "log_tail") ? sc_json_str(r, "log_tail") : "";
        sc_app_one_line(log, strlen(log), line, sizeof line);
        sc_finding(res, "collective.failed", SC_SEV_ERROR,
                   "read the rank's output (facts.ranks[].log_tail); check that every device is "
                   "usable alone (runtime layer) and that the backend exists in this torch build",
                   "rank %.0f ended with exit status %.0f in '%s': %s", sc_json_num(r, "rank", -1),
                   sc_json_num(r, "exit_code", -1),
                   sc_json_str(r, "phase") ? sc_json_str(r, "phase") : "?", line);
        return; /* the first: the others usually wait for it */
    }
}

static bool has_stem(const char *path, const char *const *stems)
{
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    for (; *stems; stems++)
        if (sc_starts_with(base, *stems))
            return true;
    return false;
}

/* The first library of rank 0 whose name starts with one of stems, as {path, realpath, root,
 * root_kind, built_into_torch}; NULL when none was mapped. */
static cJSON *mapped_library(const sc_ctx *ctx, const cJSON *rank0, const char *const *stems)
{
    const cJSON *l;
    cJSON_ArrayForEach (l, sc_json_member(sc_json_member(rank0, "result"), "libraries")) {
        const char *real = sc_json_str(l, "realpath");
        if (!real || !has_stem(real, stems))
            continue;
        sc_install_root ir;
        sc_install_root_in(ctx->root, real, &ir);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "path", sc_json_str(l, "path") ? sc_json_str(l, "path") : real);
        cJSON_AddStringToObject(o, "realpath", real);
        cJSON_AddStringToObject(o, "root", ir.path);
        cJSON_AddStringToObject(o, "root_kind", sc_root_kind_name(ir.kind));
        cJSON_AddBoolToObject(o, "built_into_torch", stems == torch_stems);
        return o;
    }
    return NULL;
}

/* facts.library: the collective library rank 0 mapped, or torch's own library when gloo is built
 * into it; NULL when none was mapped. */
static cJSON *collective_library(const sc_ctx *ctx, const cJSON *rank0, const char *backend)
{
    cJSON *lib = mapped_library(ctx, rank0, collective_stems);
    if (!lib && backend && strcmp(backend, "gloo") == 0)
        lib = mapped_library(ctx, rank0, torch_stems);
    return lib;
}

/* The library's install against the runtime library's the runtime layer loaded for this build. */
static void check_root(const sc_ctx *ctx, sc_result *res, cJSON *lib, const char *build)
{
    for (const sc_backend_desc *const *b = sc_backends; build && *b; b++) {
        if (!(*b)->torch_build || strcmp((*b)->torch_build, build) != 0)
            continue;
        const char *version = NULL;
        const char *runtime = sc_torch_runtime_library(ctx, *b, &version);
        if (!runtime)
            return;
        sc_install_root ir;
        sc_install_root_in(ctx->root, runtime, &ir);
        cJSON_AddStringToObject(lib, "runtime_root", ir.path);
        const char *root = sc_json_str(lib, "root");
        if (!root || strcmp(root, ir.path) == 0 ||
            cJSON_IsTrue(sc_json_member(lib, "built_into_torch")))
            return;
        sc_finding(res, "collective.library-other-root", SC_SEV_WARN,
                   "make the collective library and the runtime come from one install: fix "
                   "LD_LIBRARY_PATH (or LD_PRELOAD, NCCL_HOME), or install the torch build made "
                   "for this runtime",
                   "the ranks loaded %s from %s, but the runtime layer (%s) loaded %s from %s",
                   sc_json_str(lib, "realpath"), root, (*b)->runtime_probe, runtime, ir.path);
        return;
    }
}

/* verified (every rank returned the known values) and rank 0's timings. */
static void add_summary(cJSON *facts, const cJSON *ranks)
{
    bool verified = cJSON_GetArraySize(ranks) > 0;
    const cJSON *r;
    cJSON_ArrayForEach (r, ranks) {
        const cJSON *out = sc_json_member(r, "result");
        verified = verified && cJSON_IsObject(out) &&
                   sc_json_num(sc_json_member(out, "all_reduce"), "wrong", 1) == 0 &&
                   sc_json_num(sc_json_member(out, "broadcast"), "wrong", 1) == 0;
    }
    cJSON_AddBoolToObject(facts, "verified", verified);
    const cJSON *r0 = sc_json_member(cJSON_GetArrayItem(ranks, 0), "result");
    const cJSON *timed = sc_json_member(r0, "timed");
    if (cJSON_IsObject(timed)) {
        cJSON_AddNumberToObject(facts, "all_reduce_bytes", sc_json_num(timed, "bytes", 0));
        cJSON_AddNumberToObject(facts, "all_reduce_ms", sc_json_num(timed, "median_ms", 0));
    } else {
        sc_fact_null(facts, "all_reduce_ms", "rank 0 did not finish the timed all-reduce");
    }
}

/* facts: backend, build, world, per rank its device and timings, the library. */
static void add_facts(const sc_ctx *ctx, sc_result *res, cJSON *result)
{
    cJSON *ranks = cJSON_DetachItemFromObjectCaseSensitive(result, "ranks");
    const cJSON *rank0 = cJSON_GetArrayItem(ranks, 0);
    const cJSON *r0 = sc_json_member(rank0, "result");
    const char *backend = sc_json_str(r0, "backend");
    sc_fact_str(res->facts, "backend", backend, "rank 0 reported no result");
    sc_fact_str(res->facts, "build", sc_json_str(r0, "build"), "a CPU-only build or no result");
    cJSON_AddNumberToObject(res->facts, "world", sc_json_num(result, "world", 0));
    cJSON_AddNumberToObject(res->facts, "deadline_s", sc_json_num(result, "deadline_s", 0));
    add_summary(res->facts, ranks);
    cJSON *lib = r0 ? collective_library(ctx, rank0, backend) : NULL;
    if (lib) {
        cJSON_AddItemToObject(res->facts, "library", lib);
        check_root(ctx, res, lib, sc_json_str(r0, "build"));
    } else {
        sc_fact_null(res->facts, "library", "no collective library was mapped by rank 0");
    }
    cJSON_AddItemToObject(res->facts, "ranks", ranks ? ranks : cJSON_CreateArray());
}

void sc_collective_check(const sc_ctx *ctx, sc_result *res, cJSON *result)
{
    const cJSON *ranks = sc_json_member(result, "ranks");
    check_hang(res, result);
    check_failed(res, result);
    check_values(res, ranks);
    add_facts(ctx, res, result);
}
