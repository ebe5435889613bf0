/* stackcheck: checks an accelerator software stack layer by layer. Only main() exits. */
#include "sc_cli.h"

int main(int argc, char **argv)
{
    return sc_main(argc, argv);
}
