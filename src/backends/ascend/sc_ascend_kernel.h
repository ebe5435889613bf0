/* The Ascend driver's kernel fit: the kernel modules its installer recorded, and whether they were
 * built for the running kernel (their vermagic), since a module built for another release does
 * not load. */
#ifndef SC_ASCEND_KERNEL_H
#define SC_ASCEND_KERNEL_H

#include "sc_probe.h"

/* Adds facts.kernel_fit and the findings ascend.kernel-unsupported and
 * ascend.kernel-modules-other-build to res; reads through root only. */
void sc_ascend_kernel_check(const sc_root *root, sc_result *res);

#endif
