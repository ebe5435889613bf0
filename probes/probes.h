/* Declarations of every probe; the table in probes.c orders them. */
#ifndef SC_PROBES_H
#define SC_PROBES_H

#include "sc_probe.h"

extern const sc_probe sc_probe_driver_amd;

#endif
