/* Facts about the host (or the --sysroot image): OS, kernel, CPU, container, the user and groups.
 */
#ifndef SC_HOST_H
#define SC_HOST_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "sc_sysroot.h"

/* The host object of the snapshot: hostname, os, kernel, arch, cpu, container, user. */
cJSON *sc_host_collect(const sc_root *root);
/* The running kernel's release (uname -r) into buf: uname's on the live system (noted for a
 * capture), the root's /proc/sys/kernel/osrelease otherwise. False when neither says. */
bool sc_host_kernel_release(const sc_root *root, char *buf, size_t size);
/* The group name of gid from the root's /etc/group into buf; returns false when unknown. */
bool sc_group_name(const sc_root *root, gid_t gid, char *buf, size_t size);
/* The user name of uid from the root's /etc/passwd into buf; returns false when unknown. */
bool sc_user_name(const sc_root *root, uid_t uid, char *buf, size_t size);
/* This machine's host name up to its first '.', into buf (cut to fit); false when it has none. */
bool sc_host_short_name(char *buf, size_t size);
/* True when this process has gid as its effective or a supplementary group. */
bool sc_process_in_group(gid_t gid);
/* Detects a container from the root's marker files and /proc/1/cgroup; kind is "docker",
 * "podman", "kubernetes", "lxc", "containerd", "other" or NULL when none is detected. */
const char *sc_container_kind(const sc_root *root);

#endif
