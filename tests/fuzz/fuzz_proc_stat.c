/* Fuzz target for /proc/PID/stat lines, whose command name a process chooses freely (spaces,
 * parentheses, newlines): the descendant sweep reads its state, parent and group from them. */
#include <ctype.h>
#include <stdint.h>

#include "sc_reap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char state;
    pid_t ppid, pgrp;
    if (sc_proc_stat_parse((const char *)data, size, &state, &ppid, &pgrp) &&
        (!isalpha((unsigned char)state) || ppid < 0 || pgrp < 0))
        __builtin_trap();
    return 0;
}
