/* The Ascend install's "environment lock": CANN version labels that agree, one version directory
 * behind latest, and a driver release line the toolkit declares compatible. */
#ifndef SC_ASCEND_LOCK_H
#define SC_ASCEND_LOCK_H

#include "sc_ascend_install.h"
#include "sc_probe.h"

/* What the driver's version.info says ("" where it says nothing). */
typedef struct {
    const char *version;      /* Version= */
    const char *innerversion; /* Innerversion=: its release line */
    const char *compatible;   /* compatible_version=: the CANN release lines it was built for */
} sc_ascend_driver_words;

/* Adds facts.cann_lock (one entry per toolkit) and the findings ascend.cann-mixed-install,
 * ascend.cann-version-mismatch and ascend.toolkit-driver-incompatible to res. The driver and a
 * toolkit fit when either lists the other's release line: each names the lines of the other it
 * was released with, so the newer of the two knows the older. */
void sc_ascend_lock_check(sc_result *res, const sc_ascend_toolkits *tks,
                          const sc_ascend_driver_words *drv);

#endif
