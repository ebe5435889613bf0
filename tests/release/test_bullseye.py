"""The release binaries on an older glibc: Debian 11 roots (glibc 2.31, nothing but libc6 and
libc-bin) of amd64 (chroot) and arm64 (chroot with qemu-aarch64-static). Each tarball is unpacked
there and its binary must: say its build; pass the glibc floor's own check (constructors, the
wrapped stat, fcntl and dl* calls); inspect a fixture root with --sysroot as the native build does
on this machine; analyse a library of that root (`libs`); compare two snapshots (`diff`); load a
stub runtime built for that machine through dlopen in its isolated child; and resolve a tree of
libraries exactly as that root's own ld.so does (`ld.so --list`)."""
import json
import os
import shutil
import subprocess
import tarfile
import unittest

import release
from release import ARCHS, in_root, root_of, sclib

FIXTURES = ("mi250x-8gcd", "hygon-dcu")


def setUpModule():
    for arch in ARCHS:
        release.mount_proc(arch)
        root = root_of(arch)
        for old in ("opt", "fixtures"):
            shutil.rmtree(os.path.join(root, old), ignore_errors=True)
        os.makedirs(os.path.join(root, "opt", "stubs"))
        with tarfile.open(release.tarball(arch)) as t:
            t.extractall(os.path.join(root, "opt"))
        os.symlink("stackcheck-%s-linux-%s" % (release.VERSION, ARCHS[arch][0]),
                   os.path.join(root, "opt", "stackcheck"))
        shutil.copy(os.path.join(release.RELEASE, ARCHS[arch][0], "floor_check"),
                    os.path.join(root, "opt", "floor_check"))
        for name in FIXTURES:
            shutil.copytree(sclib.fixture(name), os.path.join(root, "fixtures", name),
                            symlinks=True, dirs_exist_ok=True)
        # the runtime whose probe a run reaches without the vendor's devices (--hip-library)
        release.build_stub(arch, "hipstub", os.path.join(root, "opt", "stubs", "libhipstub.so"))


def tearDownModule():
    for arch in ARCHS:
        release.umount_proc(arch)


def comparable(snapshot):
    """What two runs on the same fixture must agree on: each probe's status and finding ids."""
    return {p["id"]: (p["status"], sorted(f["id"] for f in p["findings"]))
            for layer in snapshot["layers"] for p in layer["probes"]}


class Smoke:
    ARCH = None

    def sc(self, *args, env=None):
        return in_root(self.ARCH, "/opt/stackcheck/stackcheck", *args, env=env)

    def snapshot(self, name):
        out = os.path.join(root_of(self.ARCH), "tmp", name + ".json")
        r = self.sc("--sysroot", "/fixtures/" + name, "--json", "/tmp/%s.json" % name)
        with open(out) as f:
            return r, json.load(f)

    def test_version(self):
        r = self.sc("--version")
        print("\n  [%s] %s" % (self.ARCH, r.stdout.strip()), end="")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "stackcheck %s (portable, %s, glibc >= 2.17)\n"
                         % (release.VERSION, ARCHS[self.ARCH][0]))
        libc = os.path.join(root_of(self.ARCH), "lib", ARCHS[self.ARCH][1], "libc-2.31.so")
        self.assertTrue(os.path.exists(libc), "the root's glibc is not 2.31")

    def test_floor_check(self):
        r = in_root(self.ARCH, "/opt/floor_check")
        self.assertEqual((r.returncode, r.stdout), (0, "glibc floor check: ok\n"), r.stderr)

    def test_sysroot_fixture_as_native(self):
        for name in FIXTURES:
            r, snap = self.snapshot(name)
            sclib.validate_snapshot(self, snap)
            native = sclib.run(["--sysroot", sclib.fixture(name)])
            self.assertEqual(r.returncode, native.rc, r.stderr)
            self.assertEqual(comparable(snap), comparable(native.snapshot), name)
            self.assertEqual(snap["tool"]["version"], release.VERSION)

    def test_libs_on_a_library_of_the_root(self):
        triplet = ARCHS[self.ARCH][1]
        r = self.sc("libs", "--json", "-", "/lib/%s/libm.so.6" % triplet)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        f = json.loads(r.stdout)["files"][0]
        libc = {x["name"]: x for x in f["libraries"]}["libc.so.6"]
        self.assertEqual((libc["path"], libc["found_via"]),
                         ("/lib/%s/libc.so.6" % triplet, "cache"))
        self.assertEqual((f["loader"]["layout"], f["loader"]["glibc"]), ("multiarch", "2.31"))
        self.assertEqual(f["findings"], [])
        self.assertIn("libc.so.6 => /lib/%s/libc.so.6 [cache]" % triplet,
                      self.sc("libs", "/lib/%s/libm.so.6" % triplet).stdout)

    def test_diff(self):
        self.snapshot(FIXTURES[0])
        self.snapshot(FIXTURES[1])
        r = self.sc("diff", "/tmp/%s.json" % FIXTURES[0], "/tmp/%s.json" % FIXTURES[1])
        self.assertEqual(r.returncode, 1, r.stderr)  # two different nodes: something matters
        self.assertIn("Verdict:", r.stdout)
        r = self.sc("diff", "/tmp/%s.json" % FIXTURES[0], "/tmp/%s.json" % FIXTURES[0])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_stub_runtime_through_dlopen(self):
        r = self.sc("--keep-going", "--hip-library", "/opt/stubs/libhipstub.so", "--json",
                    "/tmp/hip.json", env={"SC_HIPSTUB_MODE": "ok"})
        with open(os.path.join(root_of(self.ARCH), "tmp", "hip.json")) as f:
            snap = json.load(f)
        p = {p["id"]: p for layer in snap["layers"] for p in layer["probes"]}["runtime.hip"]
        # loaded, two devices, a kernel round trip on each; the root has no HIP install for the
        # loader to find (a warning), nothing else
        self.assertEqual(p["facts"]["runtime"]["realpath"], "/opt/stubs/libhipstub.so")
        self.assertEqual(p["facts"]["device_count"], 2)
        self.assertTrue(all(d["kernel_verified"] for d in p["facts"]["devices"]))
        self.assertEqual([f["id"] for f in p["findings"]], ["hip.runtime-not-found"])
        self.assertEqual(p["status"], "warn")
        r = self.sc("--keep-going", "--hip-library", "/opt/stubs/libhipstub.so", "--json",
                    "/tmp/hip.json", env={"SC_HIPSTUB_MODE": "crash"})
        with open(os.path.join(root_of(self.ARCH), "tmp", "hip.json")) as f:
            snap = json.load(f)
        p = {p["id"]: p for layer in snap["layers"] for p in layer["probes"]}["runtime.hip"]
        self.assertEqual(p["status"], "crash")
        self.assertIn("SIGSEGV", p["reason"])


class LoaderAsLdSo:
    """A tree built in the root: libraries in its system directory (one also in a legacy tls
    subdirectory and in the platform's one), one placed after ldconfig ran (the default
    directories find it), one in /usr/lib, and an application whose DT_RPATH uses $LIB and
    $PLATFORM; each name must resolve to the file the root's ld.so --list names, by the release
    binary in the root and by the native one through --sysroot."""
    ARCH = None

    def build(self):
        root, (machine, triplet, cc, _) = root_of(self.ARCH), ARCHS[self.ARCH]
        sysdir = "/usr/lib/" + triplet
        obj = os.path.join(root, "opt", "fx.o")
        subprocess.run([cc, "-c", "-fPIC", "-o", obj, "-x", "c", "-"], check=True,
                       input="int sc_fx(void) { return 0; }\n", text=True)

        def so(rel, soname, *args):
            out = os.path.join(root, rel.lstrip("/"))
            os.makedirs(os.path.dirname(out), exist_ok=True)
            subprocess.run([cc, "-shared", "-nostdlib", "-o", out, obj, "-Wl,-soname," + soname]
                           + list(args), check=True, capture_output=True)
            return out

        for rel in (sysdir, sysdir + "/tls", sysdir + "/" + machine):
            so(rel + "/libfx_sub.so.1", "libfx_sub.so.1")
        so(sysdir + "/libfx_sys.so.1", "libfx_sys.so.1")
        so("/usr/lib/libfx_usr.so.1", "libfx_usr.so.1")
        so("/opt/fx/lib/%s/libfx_lib.so.1" % triplet, "libfx_lib.so.1")
        so("/opt/fx/lib64/libfx_lib.so.1", "libfx_lib.so.1")
        for plat in {machine, "haswell"}:
            so("/opt/fx/%s/libfx_plat.so.1" % plat, "libfx_plat.so.1")
        names = ["libfx_sys.so.1", "libfx_sub.so.1", "libfx_usr.so.1", "libfx_lib.so.1",
                 "libfx_plat.so.1", "libfx_late.so.1", "libm.so.6"]
        links = [so("/opt/fx/link/" + n, n) for n in names]
        so("/opt/fx/app.so", "app.so", "-Wl,--disable-new-dtags",
           "-Wl,-rpath,/opt/fx/$LIB:/opt/fx/$PLATFORM", "-Wl,--no-as-needed", *links)
        shutil.rmtree(os.path.join(root, "opt", "fx", "link"))
        in_root(self.ARCH, "/sbin/ldconfig", check=True)
        so(sysdir + "/libfx_late.so.1", "libfx_late.so.1")

    def ld_so(self):
        """name -> real path (inside the root) or None, as the root's ld.so --list says."""
        r = in_root(self.ARCH, ARCHS[self.ARCH][3], "--list", "/opt/fx/app.so")
        got = {}
        for line in r.stdout.splitlines():
            parts = line.split()
            if len(parts) >= 3 and parts[1] == "=>":
                got[parts[0]] = self.real(parts[2])
        return got

    def real(self, path):
        root = root_of(self.ARCH)
        return os.path.realpath(os.path.join(root, path.lstrip("/")))[len(root):]

    def stackcheck(self, result, names):
        """name -> real path of the tree's libraries named by ld.so (which names the loader
        itself apart, without "=>")."""
        f = json.loads(result.stdout)["files"][0]
        found = {x["name"]: self.real(x["path"]) if x["path"] else None
                 for x in f["libraries"]}
        return {name: found.get(name) for name in names}

    def test_resolves_as_ld_so(self):
        self.build()
        want = self.ld_so()
        print("\n  [%s] ld.so --list: %s" % (self.ARCH, ", ".join(
            "%s => %s" % (k, v) for k, v in sorted(want.items()))), end="")
        self.assertEqual(len(want), 8, want)  # 7 and libc.so.6 (a missing one stops ld.so)
        inside = in_root(self.ARCH, "/opt/stackcheck/stackcheck", "libs", "--json", "-",
                         "/opt/fx/app.so")
        self.assertEqual(self.stackcheck(inside, want), want)
        native = sclib.run(["libs", "--sysroot", root_of(self.ARCH), "--json", "-",
                            "/opt/fx/app.so"], json_file=False, env={"LD_LIBRARY_PATH": None})
        self.assertEqual(self.stackcheck(native, want), want)


class Amd64(Smoke, LoaderAsLdSo, unittest.TestCase):
    ARCH = "amd64"


class Arm64(Smoke, LoaderAsLdSo, unittest.TestCase):
    ARCH = "arm64"


if __name__ == "__main__":
    unittest.main()
