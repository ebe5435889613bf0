/* Nothing secret leaves the machine: environment capture is an allowlist, and values are scrubbed
 * of credentials before they reach the snapshot or the report. */
#ifndef SC_REDACT_H
#define SC_REDACT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

/* True when the variable name matters to an accelerator stack (device visibility, runtime, loader,
 * Python, framework variables). */
bool sc_env_allowed(const char *name);
/* True when the name looks like it holds a secret (TOKEN, SECRET, PASSWORD, KEY...). */
bool sc_env_name_secret(const char *name);
/* Returns a malloc'd copy of value with credentials replaced by "[redacted]": user:pass@ in URLs,
 * secret query parameters, bearer tokens, well-known token shapes. NULL on allocation failure. */
char *sc_redact_value(const char *value);
/* The env object of the snapshot from envp: allowed names only, values scrubbed, secret names
 * kept with the value "[redacted]". */
cJSON *sc_env_capture(char *const *envp);
/* Scrubs every string in a JSON tree in place (argv, output tails...). */
void sc_redact_json(cJSON *node);

#endif
