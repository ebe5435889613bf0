/* `stackcheck diff`: placeholder until snapshot diff lands. */
#include <stdio.h>

#include "sc_cli.h"

int sc_cmd_diff(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fputs("stackcheck: diff is not available in this build\n", stderr);
    return SC_EXIT_USAGE;
}
