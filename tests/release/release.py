"""Shared by the release checks (tools/release-check.sh runs them): where the release build, the
tarballs and packages and the Debian 11 roots are, and how to run a command inside a root (chroot,
and qemu-aarch64-static for arm64: binfmt_misc may not be registered)."""
import glob
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(SOURCE_DIR, "tests", "integration"))

import sclib  # noqa: E402  (the integration tests' helpers: the native binary, schema checks)

BULLSEYE = os.environ.get("SC_BULLSEYE", os.path.join(SOURCE_DIR, "build-release-check"))
RELEASE = os.environ.get("SC_RELEASE_BUILD", os.path.join(SOURCE_DIR, "build-release"))
DIST = os.environ.get("SC_DIST", os.path.join(SOURCE_DIR, "dist"))
NATIVE_PACKAGES = os.environ.get("SC_NATIVE_PACKAGES", "")
with open(os.path.join(SOURCE_DIR, "include", "sc_version.h")) as f:
    VERSION = re.search(r'#define SC_VERSION "([^"]+)"', f.read()).group(1)

ARCHS = {  # Debian's name: (machine, triplet, cross compiler, loader)
    "amd64": ("x86_64", "x86_64-linux-gnu", "cc", "/lib64/ld-linux-x86-64.so.2"),
    "arm64": ("aarch64", "aarch64-linux-gnu", "aarch64-linux-gnu-gcc",
              "/lib/ld-linux-aarch64.so.1"),
}


def root_of(arch):
    return os.path.join(BULLSEYE, "bullseye-" + arch)


def in_root(arch, *cmd, env=None, check=False, timeout=300):
    """Runs cmd inside the bullseye root of arch; the environment is env alone (plus PATH)."""
    prefix = ["chroot", root_of(arch)]
    if arch == "arm64":
        prefix.append("/usr/bin/qemu-aarch64-static")
    full_env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "NO_COLOR": "1"}
    full_env.update(env or {})
    r = subprocess.run(prefix + list(cmd), capture_output=True, text=True, env=full_env,
                       timeout=timeout)
    if check and r.returncode != 0:
        raise AssertionError("%s in %s: exit %d\n%s%s" % (cmd, arch, r.returncode, r.stdout,
                                                          r.stderr))
    return r


def mount_proc(arch):
    """/proc in the root, as a real system has it: an old glibc's faccessat reads /proc/self/fd
    for AT_EACCESS on a descriptor (the kernel call that needs no /proc came in Linux 5.8)."""
    proc = os.path.join(root_of(arch), "proc")
    os.makedirs(proc, exist_ok=True)
    if not os.path.ismount(proc):
        subprocess.run(["mount", "-t", "proc", "proc", proc], check=True)


def umount_proc(arch):
    proc = os.path.join(root_of(arch), "proc")
    if os.path.ismount(proc):
        subprocess.run(["umount", proc], check=True)


def tarball(arch):
    return os.path.join(DIST, "stackcheck-%s-linux-%s.tar.gz" % (VERSION, ARCHS[arch][0]))


def one(pattern):
    found = glob.glob(pattern)
    if len(found) != 1:
        raise AssertionError("expected one file for %s, found %s" % (pattern, found))
    return found[0]


def build_stub(arch, name, out):
    """tests/stubs/NAME.c built for arch as a shared object at out."""
    src = os.path.join(SOURCE_DIR, "tests", "stubs", name + ".c")
    subprocess.run([ARCHS[arch][2], "-shared", "-fPIC", "-O1", "-o", out, src],
                   check=True, capture_output=True)
