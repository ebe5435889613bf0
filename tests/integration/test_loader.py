"""The loader of the target, not of this machine. Fixture roots laid out like CentOS 7 (glibc 2.17,
lib64), Rocky 8 (2.28, lib64), a glibc 2.34 lib64 system (glibc-hwcaps), openEuler on aarch64
(2.28, lib64) and Ubuntu on aarch64 (2.35, multiarch), built here: tiny shared objects of each
machine (cc, aarch64-linux-gnu-gcc -shared -nostdlib), a libc.so.6 defining that glibc's symbol
versions, and an ld.so.cache made by `ldconfig -r ROOT` (this machine's ldconfig indexes only its
own machines' objects: an aarch64 root's cache is empty here). `stackcheck libs --sysroot ROOT`
must resolve each library where that system's loader would ($LIB, $PLATFORM, default
directories, legacy and glibc-hwcaps subdirectories, the cache), and a decoy where this machine's
loader would look must stay unfound. The runtime inventory follows the root too: runtime.acl
finds an aarch64 libascendcl.so in openEuler's /usr/lib64. tools/release-check.sh compares the
multiarch layouts with the real loaders of Debian bullseye roots (ld.so --list)."""
import json
import os
import platform
import re
import shutil
import subprocess
import unittest

import sclib

CC = {"x86_64": "cc", "aarch64": "aarch64-linux-gnu-gcc"}
GLIBC_BASE = {"x86_64": "2.2.5", "aarch64": "2.17"}
HOST = platform.machine()


def cpu_flags():
    """The flags of this CPU (/proc/cpuinfo), and whether it is Intel."""
    with open("/proc/cpuinfo") as f:
        text = f.read()
    m = re.search(r"^(flags|Features)\s*:\s*(.*)$", text, re.M)
    return set(m.group(2).split()) if m else set(), "GenuineIntel" in text


def glibc_hwcaps_here():
    """The glibc-hwcaps subdirectories this machine's own loader searches, best first (its
    --help), the oracle for a glibc 2.33+ target on this CPU."""
    loader = {"x86_64": "/lib64/ld-linux-x86-64.so.2"}.get(HOST)
    if not loader or not os.path.exists(loader):
        return []
    out = subprocess.run([loader, "--help"], capture_output=True, text=True).stdout
    return ["glibc-hwcaps/" + m for m in re.findall(r"^\s+(\S+) \(supported, searched\)", out,
                                                        re.M) if m.startswith("x86-64-v")]


def platform_of(arch, minor):
    """$PLATFORM for a target of arch with glibc 2.minor on this CPU: glibc 2.26-2.36 say
    "haswell" on an Intel CPU with AVX2 and its companions."""
    if arch != "x86_64":
        return arch
    flags, intel = cpu_flags()
    haswell = {"avx2", "fma", "bmi1", "bmi2", "abm", "movbe", "popcnt"} <= flags
    return "haswell" if HOST == "x86_64" and intel and haswell and 26 <= minor <= 36 else "x86_64"


def legacy_subdirs(arch, minor):
    """The legacy subdirectories glibc 2.minor searches (before 2.37): tls, the platform and the
    machine's important capability (x86_64 from 2.26; aarch64's atomics on a CPU with them)."""
    if minor >= 37:
        return []
    plat = platform_of(arch, minor)
    cap = None
    if arch == "x86_64" and minor >= 26:
        cap = "x86_64"
    elif arch == "aarch64" and minor >= 26 and HOST == "aarch64" and "atomics" in cpu_flags()[0]:
        cap = "atomics"
    out = []
    for tls in ("tls", ""):
        for parts in ((tls, plat, cap), (tls, plat), (tls, cap), (tls,)):
            sub = "/".join(p for p in parts if p)
            if sub and sub not in out:
                out.append(sub)
    return out


class Root:
    """A fixture root of one machine and layout, with a libc.so.6 of glibc 2.minor."""

    def __init__(self, base, name, arch, layout, minor):
        self.path = os.path.join(base, name)
        self.arch, self.layout, self.minor = arch, layout, minor
        self.scratch = os.path.join(base, name + "-link")
        triplet = arch + "-linux-gnu"
        self.libdir = "/usr/lib64" if layout == "lib64" else "/usr/lib/" + triplet
        self.lib = "lib64" if layout == "lib64" else "lib/" + triplet
        for d in ("usr/bin", "usr/lib", "etc", self.libdir[1:]):
            os.makedirs(os.path.join(self.path, d), exist_ok=True)
        os.makedirs(self.scratch, exist_ok=True)
        for link in ("bin", "lib") + (("lib64",) if layout == "lib64" else ()):
            os.symlink("usr/" + link, os.path.join(self.path, link))
        self.libc()

    def so(self, rel, soname, needed=(), rpath=None):
        """Builds a shared object at rel (inside the root, or the scratch directory when rel is
        None) with this soname and DT_NEEDED entries."""
        out = os.path.join(self.path, rel.lstrip("/")) if rel else os.path.join(self.scratch, soname)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        obj = os.path.join(self.scratch, "x.o")
        if not os.path.exists(obj):  # compiled once, linked into each object
            subprocess.run([CC[self.arch], "-c", "-fPIC", "-o", obj, "-x", "c", "-"],
                           input="int sc_fixture(void) { return 0; }\n", text=True, check=True)
        cmd = [CC[self.arch], "-shared", "-nostdlib", "-o", out, obj, "-Wl,-soname," + soname]
        if rpath:
            cmd += ["-Wl,--disable-new-dtags", "-Wl,-rpath," + rpath]
        cmd += ["-Wl,--no-as-needed"]
        cmd += [self.so(None, n) if not os.path.exists(os.path.join(self.scratch, n))
                else os.path.join(self.scratch, n) for n in needed]
        subprocess.run(cmd, check=True, capture_output=True)
        return out

    def libc(self):
        """libc.so.6 defining GLIBC_<base> .. GLIBC_2.<minor>, as the target's does."""
        versions = [GLIBC_BASE[self.arch]] + ["2.%d" % self.minor]
        script = os.path.join(self.scratch, "libc.map")
        with open(script, "w") as f:
            prev = None
            for i, v in enumerate(versions):
                f.write("GLIBC_%s { global: sc_v%d; %s} %s;\n" % (
                    v, i, "local: *; " if i == 0 else "", "GLIBC_" + prev if prev else ""))
                prev = v
        src = os.path.join(self.scratch, "libc.c")
        with open(src, "w") as f:
            f.write("".join("int sc_v%d(void) { return %d; }\n" % (i, i)
                            for i in range(len(versions))))
        out = os.path.join(self.path, self.libdir[1:], "libc.so.6")
        subprocess.run([CC[self.arch], "-shared", "-nostdlib", "-o", out, src,
                        "-Wl,-soname,libc.so.6", "-Wl,--version-script=" + script],
                       check=True, capture_output=True)

    def ldconfig(self):
        """The cache, as that system's ldconfig would make it: its library directory is built
        into its ldconfig, and named here for this machine's."""
        with open(os.path.join(self.path, "etc", "ld.so.conf"), "w") as f:
            f.write(self.libdir + "\n")
        subprocess.run(["ldconfig", "-r", self.path], check=True, capture_output=True)


class TargetLoader(sclib.TempDirCase):
    maxDiff = None

    def make(self, name, arch, layout, minor):
        """The common tree: libraries of the system directory (one also in a legacy tls
        subdirectory, one also in glibc-hwcaps/x86-64-v2), an application whose DT_RPATH uses
        $LIB and $PLATFORM with a copy under the other layout's $LIB, a library placed after
        the cache was made (only the default directories find it), and a decoy in the other
        layout's system directory."""
        r = Root(self.tmp, name, arch, layout, minor)
        sysdir = r.libdir
        for lib in ("liba.so.1", "libtls.so.1", "libhw.so.1"):
            r.so(sysdir + "/" + lib, lib)
        r.so(sysdir + "/tls/libtls.so.1", "libtls.so.1")
        r.so(sysdir + "/glibc-hwcaps/x86-64-v2/libhw.so.1", "libhw.so.1")
        other_lib = "lib/%s-linux-gnu" % arch if layout == "lib64" else "lib64"
        for lib in (r.lib, other_lib):
            r.so("/opt/app/%s/libapp.so.1" % lib, "libapp.so.1")
        for plat in {platform_of(arch, minor), arch}:
            r.so("/opt/app/%s/libplat.so.1" % plat, "libplat.so.1")
        r.so("/opt/app/bin/app.so", "app.so",
             needed=("liba.so.1", "libtls.so.1", "libhw.so.1", "libapp.so.1", "libplat.so.1",
                     "liblate.so.1", "libdecoy.so.1"),
             rpath="/opt/app/$LIB:/opt/app/$PLATFORM")
        r.ldconfig()
        r.so(sysdir + "/liblate.so.1", "liblate.so.1")
        decoy_dir = "/usr/lib64" if layout != "lib64" else "/usr/lib/%s-linux-gnu" % arch
        r.so(decoy_dir + "/libdecoy.so.1", "libdecoy.so.1")
        return r

    def resolve(self, root):
        res = sclib.run(["libs", "--sysroot", root.path, "--json", "-", "/opt/app/bin/app.so"],
                        json_file=False, env={"LD_LIBRARY_PATH": None})
        self.assertIn(res.rc, (0, 1), res.stderr)
        f = json.loads(res.stdout)["files"][0]
        return f["loader"], {lib["name"]: (lib["path"], lib["found_via"])
                             for lib in f["libraries"]}

    def expect(self, root, cached):
        """What the target's loader finds; cached: this machine's ldconfig indexed the root's
        objects (its own machine), so the system directory's libraries come from the cache."""
        sysdir, first = root.libdir, root.libdir.replace("/usr", "", 1)
        subdirs = legacy_subdirs(root.arch, root.minor)
        hwcaps = glibc_hwcaps_here() if root.arch == HOST and root.minor >= 33 else []
        if cached:
            hw = sysdir + ("/glibc-hwcaps/x86-64-v2" if "glibc-hwcaps/x86-64-v2" in hwcaps else "")
            tls = sysdir + ("/tls" if "tls" in subdirs else "")
            system = {"liba.so.1": (sysdir + "/liba.so.1", "cache"),
                      "libtls.so.1": (tls + "/libtls.so.1", "cache"),
                      "libhw.so.1": (hw + "/libhw.so.1", "cache")}
        else:  # the default directories: the first one, through the /lib64 or /lib link
            tls = first + ("/tls" if "tls" in subdirs else "")
            system = {"liba.so.1": (first + "/liba.so.1", "default"),
                      "libtls.so.1": (tls + "/libtls.so.1", "default"),
                      "libhw.so.1": (first + "/libhw.so.1", "default")}
        return dict(system, **{
            "libapp.so.1": ("/opt/app/%s/libapp.so.1" % root.lib, "rpath"),
            "libplat.so.1": ("/opt/app/%s/libplat.so.1" % platform_of(root.arch, root.minor),
                             "rpath"),
            "liblate.so.1": (first + "/liblate.so.1", "default"),
            "libdecoy.so.1": (None, "not_found")}), hwcaps + subdirs

    def check(self, root):
        loader, got = self.resolve(root)
        want, subdirs = self.expect(root, cached=root.arch == HOST)
        self.assertEqual(got, want)
        dirs = (["/lib64", "/usr/lib64"] if root.layout == "lib64" else
                ["/lib/%s-linux-gnu" % root.arch, "/usr/lib/%s-linux-gnu" % root.arch, "/lib",
                 "/usr/lib"])
        self.assertEqual(loader, {"layout": root.layout, "default_dirs": dirs, "lib": root.lib,
                                  "platform": platform_of(root.arch, root.minor),
                                  "glibc": "2.%d" % root.minor, "subdirectories": subdirs})

    def test_centos7_x86_64(self):
        self.check(self.make("centos7", "x86_64", "lib64", 17))

    def test_rocky8_x86_64(self):
        self.check(self.make("rocky8", "x86_64", "lib64", 28))

    def test_glibc_hwcaps_lib64(self):
        """glibc 2.34 (RHEL 9, openEuler 22.03): glibc-hwcaps/x86-64-v2 before the directory on a
        CPU that meets it, from the cache as from the directories."""
        root = self.make("el9", "x86_64", "lib64", 34)
        self.check(root)
        if "glibc-hwcaps/x86-64-v2" in glibc_hwcaps_here():
            # without a cache: the ld.so.conf directories standing in for it, then the defaults
            os.unlink(os.path.join(root.path, "etc/ld.so.cache"))
            _, got = self.resolve(root)
            self.assertEqual(got["libhw.so.1"],
                             ("/usr/lib64/glibc-hwcaps/x86-64-v2/libhw.so.1", "ld.so.conf"))
            os.unlink(os.path.join(root.path, "etc/ld.so.conf"))
            _, got = self.resolve(root)
            self.assertEqual(got["libhw.so.1"],
                             ("/lib64/glibc-hwcaps/x86-64-v2/libhw.so.1", "default"))

    def test_openeuler_aarch64(self):
        self.check(self.make("openeuler-arm", "aarch64", "lib64", 28))

    def test_ubuntu_aarch64(self):
        self.check(self.make("ubuntu-arm", "aarch64", "multiarch", 35))

    def test_runtime_inventory_follows_the_root(self):
        """An openEuler aarch64 image with CANN: the runtime inventory picks its libascendcl.so
        from /usr/lib64 by the loader of that image (an aarch64 /bin/sh), not this machine's."""
        root = Root(self.tmp, "openeuler-cann", "aarch64", "lib64", 28)
        shutil.copytree(sclib.fixture("ascend-910b"), root.path, dirs_exist_ok=True,
                        symlinks=True)
        root.so("/usr/lib64/libascendcl.so", "libascendcl.so")
        subprocess.run([CC["aarch64"], "-nostdlib", "-static", "-o",
                        os.path.join(root.path, "usr/bin/sh"), "-x", "c", "-",
                        "-Wl,-e,sc_start"], input="void sc_start(void) { for (;;); }\n",
                       text=True, check=True, capture_output=True)
        r = sclib.run(["--sysroot", root.path], env={"LD_LIBRARY_PATH": None})
        self.assertIsNotNone(r.snapshot, r.stderr)
        lib = r.probe("runtime.acl")["facts"]["library"]
        self.assertEqual((lib["path"], lib["found_via"]), ("/lib64/libascendcl.so", "default"))


if __name__ == "__main__":
    unittest.main()
