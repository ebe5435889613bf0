/* `stackcheck libs`: placeholder until the libraries layer lands. */
#include <stdio.h>

#include "sc_cli.h"

int sc_cmd_libs(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fputs("stackcheck: libs is not available in this build\n", stderr);
    return SC_EXIT_USAGE;
}
