/* The device census: which backends see an accelerator on this machine, read once through the
 * backend descriptors: every PCI function in a backend's vendor and class lists, and the devices
 * each backend's driver reports beside PCI (its sc_driver_devices source). driver.devices reads it;
 * platform GPUs and APUs join later as more sources per backend. */
#ifndef SC_CENSUS_H
#define SC_CENSUS_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "sc_backend.h"
#include "sc_pci.h"
#include "sc_sysroot.h"

#define SC_CENSUS_MAX_BACKENDS 16

/* What one backend sees. */
typedef struct {
    const sc_backend_desc *desc;
    size_t pci;             /* its accelerator functions on PCI */
    bool has_driver_source; /* the descriptor names devices its driver reports beside PCI */
    int driver;             /* how many of those (valid when the source was read) */
    char driver_error[256]; /* why the source could not be read; "" when it was */
} sc_census_entry;

typedef struct {
    sc_pci_list pci;     /* every PCI function, sorted by address */
    char pci_error[256]; /* why PCI could not be listed; "" when it was */
    sc_census_entry backends[SC_CENSUS_MAX_BACKENDS];
    size_t count; /* entries in backends, in the descriptor table's order */
} sc_census;

/* Reads the census under root into c (what cannot be read is said in its entry). */
void sc_census_read(const sc_root *root, sc_census *c);
/* Frees what sc_census_read allocated. */
void sc_census_free(sc_census *c);
/* True when backend entry e sees a device: on PCI or through its driver. */
bool sc_census_sees(const sc_census_entry *e);
/* How many backends see a device. */
size_t sc_census_present(const sc_census *c);
/* False when a source could not be read, with the reasons "; "-joined in why. */
bool sc_census_complete(const sc_census *c, char *why, size_t size);
/* Adds facts.pci (every accelerator function with its backend), facts.backends ({name: {pci,
 * driver_devices, present}}) and facts.present (the names of the backends that see a device). */
void sc_census_facts(const sc_census *c, cJSON *facts);
/* "no accelerator on PCI (AMD, Hygon, ...) and no GPU in the KFD topology or ..." into buf. */
void sc_census_nothing_text(const sc_census *c, char *buf, size_t size);

/* How many numbered device nodes the patterns name ("/dev/davinci*": /dev/davinci0, davinci1...;
 * not davinci_manager); patterns without '*' are not counted. A missing directory counts 0; one
 * that cannot be listed is a negative errno with err filled. */
int sc_census_numbered_nodes(const sc_root *root, const char *const *patterns, sc_error *err);

#endif
