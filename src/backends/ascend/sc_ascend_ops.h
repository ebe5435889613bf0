/* The Ascend parts of the framework and operator locks: torch, torch_npu and CANN checked as a
 * triple (torch_npu's own version rules and its release table), and the operator binary cache and
 * kernel_meta directories (owner, mode, writable by this user, shared with others). */
#ifndef SC_ASCEND_OPS_H
#define SC_ASCEND_OPS_H

#include <stdbool.h>
#include <stddef.h>

#include "sc_probe.h"

/* The torch release a torch_npu package version is built for: "2.1.0.post3" and "2.10.0rc2" give
 * "2.1.0" and "2.10.0" (torch_npu's versions are the torch version, then .postN or rcN). */
bool sc_torch_npu_torch_version(const char *npu, char *out, size_t size);
/* The CANN version torch_npu's release table pairs with package version npu, or NULL. */
const char *sc_torch_npu_cann(const char *npu);
/* facts.triple and the findings ascend.torch-npu-mismatch, ascend.torch-npu-cann-mismatch; any of
 * the three may be NULL (not installed or not read), which the facts say. */
void sc_ascend_check_triple(sc_result *res, const char *torch, const char *npu, const char *cann);

/* Where the operator cache and kernel_meta of this process would be, as CANN picks them. */
typedef struct {
    const char *cache_env; /* $ASCEND_CACHE_PATH or NULL */
    const char *work_env;  /* $ASCEND_WORK_PATH or NULL */
    const char *home;      /* $HOME */
    const char *cwd;       /* the working directory: kernel_meta's default parent */
    unsigned uid, gid;     /* this user and its group: writability is judged by the modes */
} sc_ascend_dirs_in;

/* facts.operator_dirs[] and the findings ascend.cache-dir-unwritable, ascend.cache-dir-shared. */
void sc_ascend_check_cache_dirs(const sc_root *root, sc_result *res, const sc_ascend_dirs_in *in);

#endif
