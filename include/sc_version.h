/* The tool's version, one place. */
#ifndef SC_VERSION_H
#define SC_VERSION_H
#define SC_VERSION "0.1.0"
#endif
