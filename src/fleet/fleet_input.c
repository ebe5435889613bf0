/* What `stackcheck fleet` reads: the files and directories it is given, each snapshot opened
 * without waiting (a regular file only), size-capped, parsed and checked; anything unreadable,
 * truncated or foreign is named with the reason and skipped, never fatal. A directory is read in
 * its own order and never listed into memory: its files are folded in as they come. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sc_diff.h"
#include "sc_fleet.h"
#include "sc_snapshot.h"
#include "sc_util.h"

void sc_fleet_skip(sc_fleet *fleet, const char *path, const char *reason)
{
    fleet->skipped++;
    if (cJSON_GetArraySize(fleet->skipped_files) >= SC_FLEET_NAMES_KEPT)
        return;
    cJSON *s = cJSON_CreateObject();
    if (!s || !cJSON_AddStringToObject(s, "file", path) ||
        !cJSON_AddStringToObject(s, "reason", reason) ||
        !cJSON_AddItemToArray(fleet->skipped_files, s)) {
        cJSON_Delete(s);
        fleet->oom = true;
    }
}

/* The node's name: the host name it recorded (snapshots since 0.2), else the file's name
 * without its directory and ".json" (0.1 snapshots, written as snaps/NODE.json). */
static void node_name(const cJSON *snapshot, const char *path, char *buf, size_t size)
{
    const char *host = cJSON_GetStringValue(sc_diff_get(sc_diff_get(snapshot, "host"), "hostname"));
    if (host && host[0]) {
        snprintf(buf, size, "%s", host);
        return;
    }
    const char *base = strrchr(path, '/');
    snprintf(buf, size, "%s", base ? base + 1 : path);
    size_t n = strlen(buf);
    if (n > 5 && strcmp(buf + n - 5, ".json") == 0)
        buf[n - 5] = '\0';
}

void sc_fleet_add_file(sc_fleet *fleet, const char *path)
{
    sc_error err = {0};
    char name[256];
    fleet->files++;
    cJSON *json = sc_json_read_regular(path, SC_FLEET_MAX_INPUT, &err);
    if (json && sc_diff_check_snapshot(json, path, &err) == 0) {
        node_name(json, path, name, sizeof name);
        sc_fleet_add_snapshot(fleet, json, name);
    } else {
        sc_fleet_skip(fleet, path, err.message[0] ? err.message : "unreadable");
    }
    cJSON_Delete(json);
}

/* A name a directory's listing offers: *.json, not hidden (the output writer's temporaries are
 * ".NAME.stackcheck-XXXX"). */
static bool wanted(const char *name)
{
    size_t n = strlen(name);
    return name[0] != '.' && n > 5 && strcmp(name + n - 5, ".json") == 0;
}

static int add_dir(sc_fleet *fleet, const char *path, int fd)
{
    DIR *dir = fdopendir(fd);
    if (!dir) {
        int e = errno;
        close(fd);
        return -e;
    }
    char full[PATH_MAX];
    const struct dirent *de;
    while ((de = readdir(dir)) != NULL) {
        if (!wanted(de->d_name))
            continue;
        if (sc_fmt(full, sizeof full, "%s/%s", path, de->d_name))
            sc_fleet_add_file(fleet, full);
        else
            sc_fleet_skip(fleet, de->d_name, "path too long");
    }
    closedir(dir);
    return 0;
}

int sc_fleet_add_path(sc_fleet *fleet, const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0 && errno == ENOTDIR) {
        sc_fleet_add_file(fleet, path);
        return 0;
    }
    int rc = fd < 0 ? -errno : add_dir(fleet, path, fd);
    if (rc < 0) {
        char why[PATH_MAX + 64];
        snprintf(why, sizeof why, "cannot open %s: %s", path, strerror(-rc));
        fleet->files++;
        sc_fleet_skip(fleet, path, why);
    }
    return rc;
}
