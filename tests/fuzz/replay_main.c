/* Replays a fuzz corpus through LLVMFuzzerTestOneInput where libFuzzer is not available (gcc):
 * every file of every directory argument, plus a few synthetic edge cases. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    uint8_t *buf = malloc(1 << 24);
    size_t n = buf ? fread(buf, 1, 1 << 24, f) : 0;
    fclose(f);
    if (buf)
        LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 1;
}

int main(int argc, char **argv)
{
    int count = 0;
    uint8_t edge[64];
    memset(edge, 0xff, sizeof edge);
    LLVMFuzzerTestOneInput(edge, 0);
    LLVMFuzzerTestOneInput(edge, sizeof edge);
    for (int i = 1; i < argc; i++) {
        DIR *d = opendir(argv[i]);
        if (!d) {
            count += replay_file(argv[i]);
            continue;
        }
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
            count += replay_file(path);
        }
        closedir(d);
    }
    printf("replayed %d inputs\n", count);
    return 0;
}
