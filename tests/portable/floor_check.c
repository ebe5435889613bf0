/* Built like the release binary (cmake/portable.cmake) and run by tools/release-check.sh on an
 * older glibc: the start-up wrapper runs the constructors, and the wrapped calls answer as the
 * system's own. Prints "glibc floor check: ok", or each failure and exits 1. */
#include <stdio.h>

#include "floor_check.h"

static int constructed;

__attribute__((constructor)) static void construct(void)
{
    constructed = 42;
}

int main(int argc, char **argv)
{
    (void)argc;
    int failed = floor_calls(argv[0]) + floor_calls_64(argv[0]);
    if (constructed != 42) {
        puts("the constructor did not run");
        failed++;
    }
    puts(failed ? "glibc floor check: FAILED" : "glibc floor check: ok");
    return failed ? 1 : 0;
}
