/* Fuzz target for a capture's manifest (.stackcheck/capture.json, from a tarball from anywhere):
 * the tables a replay answers from (device nodes, omitted files, recorded errors, access answers,
 * environment). Parsed against an empty root, so no placeholder is found and none is needed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sc_sysroot_capture.h"

static sc_root *empty_root(void)
{
    static sc_root root;
    static int state; /* 0 not tried, 1 open, -1 failed */
    if (state == 0) {
        char dir[] = "/tmp/sc-fuzz-root-XXXXXX";
        sc_error err = {0};
        state = mkdtemp(dir) && sc_root_open(&root, dir, &err) == 0 ? 1 : -1;
        rmdir(dir); /* the open root stays usable, and nothing is left behind */
    }
    return state == 1 ? &root : NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sc_root *root = empty_root();
    if (!root)
        return 0;
    sc_error err = {0};
    if (sc_replay_parse(root, (const char *)data, size, &err) == 0) {
        int rc;
        (void)sc_replay_error(root, SC_REC_READ, "/dev/kmsg");
        (void)sc_replay_access(root, "/dev/kfd", 6, &rc);
    } else if (!err.message[0]) {
        __builtin_trap(); /* a refusal always says why */
    }
    sc_replay_free(root);
    return 0;
}
