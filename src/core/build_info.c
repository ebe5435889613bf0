/* What this binary is, said by --version: portable (third-party libraries inside, glibc 2.17 and
 * newer) or native (linked against the build system's libraries, needing its glibc or newer), and
 * the machine it runs on. */
#include <limits.h> /* defines __GLIBC__ and __GLIBC_MINOR__ through <features.h> */

#include "sc_version.h"

#define SC_STR(x) SC_STR2(x)
#define SC_STR2(x) #x

#if defined(__x86_64__)
#define SC_ARCH "x86_64"
#elif defined(__aarch64__)
#define SC_ARCH "aarch64"
#else
#define SC_ARCH "unknown machine"
#endif

#ifdef SC_PORTABLE_BUILD
#define SC_KIND "portable"
#define SC_FLOOR SC_GLIBC_FLOOR
#elif defined(__GLIBC__)
#define SC_KIND "native"
#define SC_FLOOR SC_STR(__GLIBC__) "." SC_STR(__GLIBC_MINOR__)
#else
#define SC_KIND "native"
#define SC_FLOOR "?"
#endif

const char *sc_build_info(void)
{
    return SC_KIND ", " SC_ARCH ", glibc >= " SC_FLOOR;
}
