/* The behaviour vocabulary the runtime stubs share. Each stub lib<NAME>.so reads SC_<NAME>_MODE
 * (SC_HIPSTUB_MODE, SC_CUDASTUB_MODE, SC_ACLSTUB_MODE); every stub acts out these, so the
 * conformance table (tests/integration/test_conformance.py) has a row for each on every backend:
 *   ok          working devices that compute the right answers (the default)
 *   no-device   the runtime finds no device
 *   error       initialisation fails with the runtime's generic error
 *   crash       SIGSEGV inside the runtime
 *   hang        a runtime call never returns
 *   garbage     impossible answers: unterminated names, negative versions, wrong bytes back
 *   permission  what the runtime answers when it cannot open its device nodes (each stub says
 *               what its runtime does and where that is documented)
 * A stub may add behaviours of its own runtime (insufficient-driver, in-use...). An unknown
 * behaviour aborts, so a misspelt row crashes instead of passing as ok. Other settings follow the
 * same pattern: SC_<NAME>_<SETTING>. */
#ifndef SC_STUB_MODE_H
#define SC_STUB_MODE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int stub_known(const char *const *known, const char *mode)
{
    for (size_t i = 0; known[i]; i++)
        if (strcmp(mode, known[i]) == 0)
            return 1;
    return 0;
}

/* True when the environment variable var asks for behaviour m ("ok" when var is unset or empty).
 * Aborts when var or m is not in known (NULL-terminated): a misspelt mode is a crash. */
static int stub_mode_is(const char *var, const char *const *known, const char *m)
{
    const char *mode = getenv(var);
    if (!mode || !*mode)
        mode = "ok";
    if (!stub_known(known, mode) || !stub_known(known, m)) {
        fprintf(stderr, "%s=%s: asked for %s, not a behaviour of this stub\n", var, mode, m);
        abort();
    }
    return strcmp(mode, m) == 0;
}

#endif
