/* Host facts: the OS from os-release, kernel and arch, CPU model, container kind, and the user with
 * group names from the root's own /etc/group (never NSS, so --sysroot images answer for
 * themselves). */
#include "sc_host.h"

#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "sc_probe.h"
#include "sc_text.h"
#include "sc_util.h"

/* Field 0 of the line of a colon file (/etc/group, /etc/passwd) whose field 2 is id. */
static bool colon_file_name(const sc_root *root, const char *path, unsigned id, char *buf,
                            size_t size)
{
    char *text;
    if (sc_root_read(root, path, &text, 1 << 20) < 0)
        return false;
    bool found = false;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line && !found;
         line = strtok_r(NULL, "\n", &save)) {
        char *f1 = strchr(line, ':');
        char *f2 = f1 ? strchr(f1 + 1, ':') : NULL;
        if (!f2)
            continue;
        char *end;
        unsigned long v = strtoul(f2 + 1, &end, 10);
        if (end != f2 + 1 && *end == ':' && v == id) {
            *f1 = '\0';
            sc_text_copy(buf, size, line);
            found = true;
        }
    }
    free(text);
    return found;
}

bool sc_group_name(const sc_root *root, gid_t gid, char *buf, size_t size)
{
    return colon_file_name(root, "/etc/group", gid, buf, size);
}

bool sc_user_name(const sc_root *root, uid_t uid, char *buf, size_t size)
{
    return colon_file_name(root, "/etc/passwd", uid, buf, size);
}

bool sc_process_in_group(gid_t gid)
{
    if (getegid() == gid)
        return true;
    gid_t groups[256];
    int n = getgroups(256, groups);
    for (int i = 0; i < n; i++)
        if (groups[i] == gid)
            return true;
    return false;
}

const char *sc_container_kind(const sc_root *root)
{
    if (sc_root_exists(root, "/.dockerenv"))
        return "docker";
    if (sc_root_exists(root, "/run/.containerenv"))
        return "podman";
    char *cg;
    const char *kind = NULL;
    if (sc_root_read(root, "/proc/1/cgroup", &cg, 1 << 16) >= 0) {
        if (strstr(cg, "kubepods"))
            kind = "kubernetes";
        else if (strstr(cg, "docker"))
            kind = "docker";
        else if (strstr(cg, "libpod"))
            kind = "podman";
        else if (strstr(cg, "containerd"))
            kind = "containerd";
        else if (strstr(cg, "/lxc"))
            kind = "lxc";
        free(cg);
    }
    if (!kind && sc_root_live(root) && getenv("container")) /* a live capture's replay set it */
        kind = "other";
    return kind;
}

static cJSON *os_collect(const sc_root *root)
{
    cJSON *os = cJSON_CreateObject();
    char *text, why[128];
    long rc = sc_root_read(root, "/etc/os-release", &text, 1 << 16);
    if (rc < 0 && sc_root_read(root, "/usr/lib/os-release", &text, 1 << 16) < 0) {
        if (rc == -ENOENT)
            snprintf(why, sizeof why, "no /etc/os-release");
        else
            snprintf(why, sizeof why, "/etc/os-release: %s", sc_root_strerror((int)rc));
        sc_fact_null(os, "pretty_name", "%s", why);
        sc_fact_null(os, "id", "%s", why);
        sc_fact_null(os, "version_id", "%s", why);
        return os;
    }
    static const char *const keys[][2] = {
        {"PRETTY_NAME", "pretty_name"}, {"ID", "id"}, {"VERSION_ID", "version_id"}};
    for (size_t i = 0; i < 3; i++) {
        char v[256];
        if (sc_kv_lookup(text, keys[i][0], '=', v, sizeof v))
            cJSON_AddStringToObject(os, keys[i][1], v);
        else
            sc_fact_null(os, keys[i][1], "%s not in os-release", keys[i][0]);
    }
    free(text);
    return os;
}

static void add_cpu(cJSON *host, const sc_root *root)
{
    char *text, model[256];
    if (sc_root_read(root, "/proc/cpuinfo", &text, 4 << 20) < 0) {
        sc_fact_null(host, "cpu", "/proc/cpuinfo not readable");
        return;
    }
    cJSON *cpu = cJSON_AddObjectToObject(host, "cpu");
    int count = 0;
    for (const char *p = text; (p = strstr(p, "\nprocessor")) != NULL; p++)
        count++;
    if (sc_starts_with(text, "processor"))
        count++;
    if (sc_kv_lookup(text, "model name", '\t', model, sizeof model) ||
        sc_kv_lookup(text, "model name", ' ', model, sizeof model)) {
        char *colon = strchr(model, ':');
        cJSON_AddStringToObject(cpu, "model", colon ? colon + 1 + strspn(colon + 1, " ") : model);
    } else {
        sc_fact_null(cpu, "model", "no model name in /proc/cpuinfo");
    }
    cJSON_AddNumberToObject(cpu, "logical_cpus", count);
    free(text);
}

bool sc_host_kernel_release(const sc_root *root, char *buf, size_t size)
{
    struct utsname u;
    /* live: uname, and a capture keeps its answer where a replay reads it */
    if (root->is_host && uname(&u) == 0) {
        char line[sizeof u.release + 1];
        snprintf(line, sizeof line, "%s\n", u.release);
        sc_root_note_live(root, "/proc/sys/kernel/osrelease", line, strlen(line), 0);
        sc_text_copy(buf, size, u.release);
        return buf[0] != '\0';
    }
    return sc_root_read_line(root, "/proc/sys/kernel/osrelease", buf, size) == 0 && buf[0];
}

static void add_kernel_arch(cJSON *host, const sc_root *root)
{
    struct utsname u;
    char buf[256];
    if (sc_host_kernel_release(root, buf, sizeof buf))
        cJSON_AddStringToObject(host, "kernel", buf);
    else
        sc_fact_null(host, "kernel", "offline (--sysroot) and no /proc/sys/kernel/osrelease");
    bool live = root->is_host && uname(&u) == 0;
    if (live) {
        char line[sizeof u.machine + 1];
        snprintf(line, sizeof line, "%s\n", u.machine);
        sc_root_note_live(root, "/proc/sys/kernel/arch", line, strlen(line), 0);
        cJSON_AddStringToObject(host, "arch", u.machine);
    } else if (sc_root_read_line(root, "/proc/sys/kernel/arch", buf, sizeof buf) == 0)
        cJSON_AddStringToObject(host, "arch", buf);
    else
        sc_fact_null(host, "arch", "offline (--sysroot) and no /proc/sys/kernel/arch");
}

bool sc_host_short_name(char *buf, size_t size)
{
    char name[HOST_NAME_MAX + 1] = "";
    if (gethostname(name, sizeof name) < 0 || !name[0])
        return false;
    name[strcspn(name, ".")] = '\0';
    sc_text_copy(buf, size, name);
    return buf[0] != '\0';
}

/* The node's name as its kernel has it; offline, the image's own record of it. Not a secret: it
 * names the node in `stackcheck fleet` and is what Slurm and Kubernetes call it too. */
static void add_hostname(cJSON *host, const sc_root *root)
{
    struct utsname u;
    char buf[256];
    if (root->is_host && uname(&u) == 0 && u.nodename[0]) {
        snprintf(buf, sizeof buf, "%s\n", u.nodename); /* where a capture's replay reads it */
        sc_root_note_live(root, "/proc/sys/kernel/hostname", buf, strlen(buf), 0);
        sc_fact_str(host, "hostname", u.nodename, NULL);
    } else if (sc_root_read_line(root, "/proc/sys/kernel/hostname", buf, sizeof buf) == 0 && buf[0])
        sc_fact_str(host, "hostname", buf, NULL);
    else if (sc_root_read_line(root, "/etc/hostname", buf, sizeof buf) == 0 && buf[0])
        sc_fact_str(host, "hostname", buf, NULL);
    else
        sc_fact_null(host, "hostname",
                     "offline (--sysroot) and no /proc/sys/kernel/hostname or /etc/hostname");
}

static cJSON *user_collect(const sc_root *root)
{
    cJSON *user = cJSON_CreateObject();
    char name[256];
    cJSON_AddNumberToObject(user, "uid", geteuid());
    sc_fact_str(user, "name", sc_user_name(root, geteuid(), name, sizeof name) ? name : NULL,
                "uid not in /etc/passwd");
    cJSON *groups = cJSON_AddArrayToObject(user, "groups");
    gid_t gids[256];
    int n = getgroups(256, gids);
    bool has_egid = false;
    for (int i = 0; i < n; i++)
        has_egid |= gids[i] == getegid();
    if (!has_egid && n >= 0 && n < 256)
        gids[n++] = getegid();
    for (int i = 0; i < n; i++) {
        cJSON *g = cJSON_CreateObject();
        cJSON_AddNumberToObject(g, "gid", gids[i]);
        if (sc_group_name(root, gids[i], name, sizeof name))
            cJSON_AddStringToObject(g, "name", name);
        else
            cJSON_AddNullToObject(g, "name");
        cJSON_AddItemToArray(groups, g);
    }
    return user;
}

cJSON *sc_host_collect(const sc_root *root)
{
    cJSON *host = cJSON_CreateObject();
    if (!host)
        return NULL;
    add_hostname(host, root);
    cJSON_AddItemToObject(host, "os", os_collect(root));
    add_kernel_arch(host, root);
    add_cpu(host, root);
    cJSON *container = cJSON_AddObjectToObject(host, "container");
    const char *kind = sc_container_kind(root);
    cJSON_AddBoolToObject(container, "detected", kind != NULL);
    if (kind)
        cJSON_AddStringToObject(container, "kind", kind);
    else
        cJSON_AddNullToObject(container, "kind");
    cJSON_AddItemToObject(host, "user", user_collect(root));
    return host;
}
