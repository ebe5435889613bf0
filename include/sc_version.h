/* The tool's version, one place (CMake and the packages read it here), and what the binary is. */
#ifndef SC_VERSION_H
#define SC_VERSION_H
#define SC_VERSION "0.1.0"

/* The build, for --version: "portable, x86_64, glibc >= 2.17" for the release binary, "native,
 * x86_64, glibc >= 2.36" for one built against this system's libraries and glibc. */
const char *sc_build_info(void);
#endif
