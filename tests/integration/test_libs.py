"""The libraries analysis (`stackcheck libs` and the libraries layer): resolution like glibc's loader
on tiny shared objects built here (RPATH vs RUNPATH, $ORIGIN, LD_LIBRARY_PATH, a missing library, a
symbol version the provider lacks, the C++11 ABI hint, mixed install roots in a temporary sysroot),
real fat binaries built with hipcc and nvcc (cached in the build directory), a compressed CCOB v3
bundle made from one of them, Debian's librocsparse, agreement with ldd on real libraries, and bad
input (non-ELF, truncated, directories, symlink loops)."""
import collections
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pathological  # noqa: E402
import sclib  # noqa: E402

CACHE = os.path.join(sclib.BUILD_DIR, "tests", "libs-cache")
CC = shutil.which("cc") or "gcc"
HIPCC = shutil.which("hipcc")
NVCC = "/usr/local/cuda/bin/nvcc" if os.access("/usr/local/cuda/bin/nvcc", os.X_OK) else None
ROCSPARSE = "/usr/lib/x86_64-linux-gnu/librocsparse.so.0.1"
TORCH = "/usr/lib/python3/dist-packages/torch"


def libs(args, env=None):
    """Runs `stackcheck libs --json - ARGS`; returns (rc, parsed JSON or None, stderr)."""
    r = sclib.run(["libs", "--json", "-"] + list(args), env=env, json_file=False)
    doc = json.loads(r.stdout) if r.stdout.strip() else None
    return r.rc, doc, r.stderr


def ids(file_obj):
    return [f["id"] for f in file_obj["findings"]]


def by_name(file_obj, name):
    return next(lib for lib in file_obj["libraries"] if lib["name"] == name)


def so(out, src_text, soname=None, needed=(), flags=(), script=None):
    """Builds a tiny shared object without libc (libtree's way)."""
    os.makedirs(os.path.dirname(out), exist_ok=True)
    src = out + ".c"
    with open(src, "w") as f:
        f.write(src_text)
    cmd = [CC, "-shared", "-fPIC", "-nostdlib", "-o", out, src]
    if soname:
        cmd.append("-Wl,-soname," + soname)
    if script:
        with open(out + ".map", "w") as f:
            f.write(script)
        cmd.append("-Wl,--version-script=" + out + ".map")
    cmd += ["-Wl,--no-as-needed"] + list(needed) + list(flags)
    subprocess.run(cmd, check=True, capture_output=True)
    return out


class Resolution(unittest.TestCase):
    """RPATH, RUNPATH, LD_LIBRARY_PATH, $ORIGIN and missing libraries on built files."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="sc-libs-")
        t = cls.tmp
        # two different libd.so.1, told apart by the symbol they define
        so(t + "/d1/libd.so.1", "int d_one(void){return 1;}\n", "libd.so.1")
        so(t + "/d2/libd.so.1", "int d_two(void){return 2;}\n", "libd.so.1")
        # libb needs libd and has no search path of its own
        so(t + "/b/libb.so.1", "int b(void){return 0;}\n", "libb.so.1",
           ["-L" + t + "/d1", "-l:libd.so.1"])
        for tags, name in (("--disable-new-dtags", "rpath"), ("--enable-new-dtags", "runpath")):
            so(t + "/a/liba_%s.so" % name, "int a(void){return 0;}\n", "liba_%s.so" % name,
               ["-L" + t + "/b", "-l:libb.so.1"],
               ["-Wl," + tags, "-Wl,-rpath," + t + "/d1:" + t + "/b"])
        # $ORIGIN: libo finds libe in ../sub relative to itself
        so(t + "/sub/libe.so.1", "int e(void){return 0;}\n", "libe.so.1")
        so(t + "/top/libo.so", "int o(void){return 0;}\n", "libo.so",
           ["-L" + t + "/sub", "-l:libe.so.1"],
           ["-Wl,--enable-new-dtags", "-Wl,-rpath,$ORIGIN/../sub"])
        # a missing DT_NEEDED
        so(t + "/gone/libgone.so.1", "int g(void){return 0;}\n", "libgone.so.1")
        so(t + "/m/libm_user.so", "int m(void){return 0;}\n", "libm_user.so",
           ["-L" + t + "/gone", "-l:libgone.so.1"])
        os.remove(t + "/gone/libgone.so.1")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def analyse(self, path, ld_library_path=None, args=()):
        # given as an option: the environment variable would also steer stackcheck's own loading
        opt = ["--ld-library-path", ld_library_path] if ld_library_path else []
        rc, doc, err = libs(opt + list(args) + [path], env={"LD_LIBRARY_PATH": None})
        self.assertIsNotNone(doc, err)
        return rc, doc["files"][0]

    def test_rpath_is_inherited_by_the_loaded_library(self):
        rc, f = self.analyse(self.tmp + "/a/liba_rpath.so")
        self.assertEqual(rc, 0, f["findings"])
        b, d = by_name(f, "libb.so.1"), by_name(f, "libd.so.1")
        self.assertEqual((b["found_via"], b["path"]), ("rpath", self.tmp + "/b/libb.so.1"))
        # libb has no search path: the loader uses the RPATH of liba, which loaded it
        self.assertEqual((d["found_via"], d["path"]), ("rpath", self.tmp + "/d1/libd.so.1"))
        self.assertEqual(d["needed_by"], self.tmp + "/b/libb.so.1")
        self.assertEqual(d["search_entry"], self.tmp + "/d1")

    def test_rpath_comes_before_ld_library_path(self):
        rc, f = self.analyse(self.tmp + "/a/liba_rpath.so", self.tmp + "/d2")
        self.assertEqual(by_name(f, "libd.so.1")["path"], self.tmp + "/d1/libd.so.1")

    def test_runpath_is_not_transitive(self):
        rc, f = self.analyse(self.tmp + "/a/liba_runpath.so")
        self.assertEqual(by_name(f, "libb.so.1")["found_via"], "runpath")
        d = by_name(f, "libd.so.1")
        self.assertIsNone(d["path"])
        self.assertEqual(d["found_via"], "not_found")
        self.assertEqual(rc, 1)
        self.assertIn("libs.missing-library", ids(f))

    def test_ld_library_path_comes_before_runpath(self):
        rc, f = self.analyse(self.tmp + "/a/liba_runpath.so", self.tmp + "/d2:" + self.tmp + "/b")
        self.assertEqual(rc, 0, f["findings"])
        b, d = by_name(f, "libb.so.1"), by_name(f, "libd.so.1")
        self.assertEqual(b["found_via"], "ld_library_path")
        self.assertEqual((d["found_via"], d["path"]), ("ld_library_path", self.tmp + "/d2/libd.so.1"))

    def test_origin_expands_to_the_requesters_directory(self):
        rc, f = self.analyse(self.tmp + "/top/libo.so")
        e = by_name(f, "libe.so.1")
        self.assertEqual(rc, 0, f["findings"])
        self.assertEqual(e["found_via"], "runpath")
        self.assertEqual(os.path.realpath(e["path"]), self.tmp + "/sub/libe.so.1")
        self.assertEqual(e["search_entry"], self.tmp + "/top/../sub")

    def test_missing_library_is_an_error_with_evidence(self):
        rc, f = self.analyse(self.tmp + "/m/libm_user.so")
        self.assertEqual(rc, 1)
        finding = next(x for x in f["findings"] if x["id"] == "libs.missing-library")
        self.assertIn("libgone.so.1", finding["message"])
        self.assertIn(self.tmp + "/m/libm_user.so", finding["message"])
        self.assertEqual(finding["severity"], "error")

    def test_text_output_is_a_tree_with_the_findings(self):
        r = sclib.run(["libs", self.tmp + "/a/liba_runpath.so"], json_file=False,
                      env={"LD_LIBRARY_PATH": None})
        self.assertEqual(r.rc, 1)
        self.assertRegex(r.stdout, r"(?m)^[└├]── libb\.so\.1 => .*/b/libb\.so\.1 \[runpath\]$")
        self.assertRegex(r.stdout, r"(?m)^    [└├]── libd\.so\.1 not found$")
        self.assertIn("error libs.missing-library", r.stdout)

    def test_symlink_loops_and_unreadable_entries_are_passed_over(self):
        loop = os.path.join(self.tmp, "loop")
        os.makedirs(loop, exist_ok=True)
        for a, b in (("libd.so.1", "x"), ("x", "libd.so.1")):
            if not os.path.lexists(os.path.join(loop, a)):
                os.symlink(b, os.path.join(loop, a))
        rc, f = self.analyse(self.tmp + "/a/liba_runpath.so",
                             loop + ":/nonexistent:" + self.tmp + "/d2")
        self.assertEqual(by_name(f, "libd.so.1")["path"], self.tmp + "/d2/libd.so.1")


    def test_unreadable_directory_is_passed_over(self):
        # permission denial for real: an unprivileged user and a directory it may not search
        locked = os.path.join(self.tmp, "locked")
        os.makedirs(locked, exist_ok=True)
        shutil.copy(self.tmp + "/d1/libd.so.1", locked)
        os.chmod(locked, 0o000)
        os.chmod(self.tmp, 0o755)
        try:
            r = sclib.run(["libs", "--json", "-", "--ld-library-path", locked + ":" + self.tmp + "/d2",
                           self.tmp + "/a/liba_runpath.so"], json_file=False,
                          user=sclib.unprivileged(), env={"LD_LIBRARY_PATH": None})
        finally:
            os.chmod(locked, 0o755)
        f = json.loads(r.stdout)["files"][0]
        self.assertEqual(by_name(f, "libd.so.1")["path"], self.tmp + "/d2/libd.so.1")


class Versions(unittest.TestCase):
    """A symbol version the provider lacks, and names that differ only by the C++11 ABI."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = t = tempfile.mkdtemp(prefix="sc-ver-")
        old = ("GLIBCXX_3.4 { global: f1; local: *; };\n"
               "GLIBCXX_3.4.29 { global: f2; } GLIBCXX_3.4;\n")
        new = old + "GLIBCXX_3.4.30 { global: f3; } GLIBCXX_3.4.29;\n"
        body = "void f1(void){}\nvoid f2(void){}\n"
        so(t + "/old/libstdc++.so.6", body, "libstdc++.so.6", script=old)
        so(t + "/new/libstdc++.so.6", body + "void f3(void){}\n", "libstdc++.so.6", script=new)
        so(t + "/app/libuser.so", "void f3(void);\nvoid u(void){f3();}\n", "libuser.so",
           ["-L" + t + "/new", "-l:libstdc++.so.6"],
           ["-Wl,--enable-new-dtags", "-Wl,-rpath," + t + "/old"])
        # the C++11 ABI: built against foo::bar(std::__cxx11::string const&), run against the
        # old-ABI foo::bar(std::string const&)
        cxx11 = "_ZN3foo3barERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"
        so(t + "/abinew/libfoo.so", 'void bar(void) __asm__("%s");\nvoid bar(void){}\n' % cxx11,
           "libfoo.so")
        so(t + "/abiold/libfoo.so", 'void bar(void) __asm__("_ZN3foo3barERKSs");\nvoid bar(void){}\n',
           "libfoo.so")
        so(t + "/app/libabi.so", 'void bar(void) __asm__("%s");\nvoid u(void){bar();}\n' % cxx11,
           "libabi.so", ["-L" + t + "/abinew", "-lfoo"],
           ["-Wl,--enable-new-dtags", "-Wl,-rpath," + t + "/abiold"])

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_missing_symbol_version_names_version_and_provider(self):
        rc, doc, err = libs([self.tmp + "/app/libuser.so"], env={"LD_LIBRARY_PATH": None})
        f = doc["files"][0]
        self.assertEqual(rc, 1)
        msgs = [x["message"] for x in f["findings"] if x["id"] == "libs.missing-symbol-version"]
        self.assertEqual(len(msgs), 1, f["findings"])
        self.assertIn("GLIBCXX_3.4.30", msgs[0])
        self.assertIn(self.tmp + "/old/libstdc++.so.6", msgs[0])
        self.assertIn("newest: GLIBCXX_3.4.29", msgs[0])

    def test_provider_with_the_version_is_clean(self):
        rc, doc, err = libs(["--ld-library-path", self.tmp + "/new", self.tmp + "/app/libuser.so"],
                            env={"LD_LIBRARY_PATH": None})
        self.assertEqual(rc, 0, doc["files"][0]["findings"])
        self.assertEqual(doc["files"][0]["findings"], [])

    def test_undefined_symbol_demangled_with_the_cxx11_hint(self):
        rc, doc, err = libs([self.tmp + "/app/libabi.so"], env={"LD_LIBRARY_PATH": None})
        f = doc["files"][0]
        self.assertEqual(rc, 1)
        u = next(x for x in f["findings"] if x["id"] == "libs.undefined-symbol")
        self.assertIn("foo::bar(std::__cxx11::basic_string<char", u["message"])
        self.assertIn("_GLIBCXX_USE_CXX11_ABI", u["hint"])


class MixedRoots(unittest.TestCase):
    """Two DTK roots in one tree through LD_LIBRARY_PATH, inside a temporary sysroot."""

    @classmethod
    def setUpClass(cls):
        cls.root = r = tempfile.mkdtemp(prefix="sc-mixed-")
        so(r + "/opt/dtk-A/lib/libamdhip64.so.5", "int h(void){return 5;}\n", "libamdhip64.so.5")
        so(r + "/opt/dtk-B/lib/libhipblas.so.0", "int hb(void){return 0;}\n", "libhipblas.so.0")
        so(r + "/opt/dtk-B/lib/libamdhip64.so.6", "int h6(void){return 6;}\n", "libamdhip64.so.6")
        so(r + "/opt/app/libapp.so", "int app(void){return 0;}\n", "libapp.so",
           ["-L" + r + "/opt/dtk-A/lib", "-l:libamdhip64.so.5",
            "-L" + r + "/opt/dtk-B/lib", "-l:libhipblas.so.0"],
           ["-Wl,--enable-new-dtags", "-Wl,-rpath,/opt/dtk-A/lib"])
        so(r + "/opt/app/libtwo.so", "int two(void){return 0;}\n", "libtwo.so",
           ["-L" + r + "/opt/dtk-A/lib", "-l:libamdhip64.so.5",
            "-L" + r + "/opt/dtk-B/lib", "-l:libamdhip64.so.6"],
           ["-Wl,--enable-new-dtags", "-Wl,-rpath,/opt/dtk-A/lib:/opt/dtk-B/lib"])

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.root, ignore_errors=True)

    def test_two_dtk_roots_name_both_and_the_path_entry(self):
        rc, doc, err = libs(["--sysroot", self.root, "/opt/app/libapp.so"],
                            env={"LD_LIBRARY_PATH": "/opt/dtk-B/lib"})
        f = doc["files"][0]
        self.assertEqual(rc, 1, f)
        hb = by_name(f, "libhipblas.so.0")
        self.assertEqual((hb["found_via"], hb["root"], hb["root_kind"]),
                         ("ld_library_path", "/opt/dtk-B", "dtk"))
        self.assertEqual(by_name(f, "libamdhip64.so.5")["root"], "/opt/dtk-A")
        m = next(x for x in f["findings"] if x["id"] == "libs.mixed-roots")
        self.assertIn("/opt/dtk-A", m["message"])
        self.assertIn("/opt/dtk-B", m["message"])
        self.assertIn("LD_LIBRARY_PATH entry /opt/dtk-B/lib", m["message"])

    def test_one_root_is_clean(self):
        rc, doc, err = libs(["--sysroot", self.root, "/opt/app/libapp.so"],
                            env={"LD_LIBRARY_PATH": None})
        f = doc["files"][0]
        self.assertIn("libs.missing-library", ids(f))  # hipblas is only under dtk-B
        self.assertNotIn("libs.mixed-roots", ids(f))

    def test_two_sonames_of_one_library(self):
        rc, doc, err = libs(["--sysroot", self.root, "/opt/app/libtwo.so"],
                            env={"LD_LIBRARY_PATH": None})
        msgs = [x["message"] for x in doc["files"][0]["findings"] if x["id"] == "libs.mixed-roots"]
        self.assertTrue(any("libamdhip64.so.5" in m and "libamdhip64.so.6" in m for m in msgs), msgs)

    def test_paths_stay_inside_the_sysroot(self):
        # an absolute RUNPATH is read inside the root, never on the host
        rc, doc, err = libs(["--sysroot", self.root, "/opt/app/libapp.so"],
                            env={"LD_LIBRARY_PATH": "/opt/dtk-B/lib"})
        for lib in doc["files"][0]["libraries"]:
            if lib["path"]:
                self.assertTrue(lib["path"].startswith("/opt/"), lib)
                self.assertFalse(lib["path"].startswith(self.root), lib)


def build_cached(name, cmd_tail, compiler):
    """Builds a fat binary once per build directory; returns its path (None without compiler)."""
    if not compiler:
        return None
    os.makedirs(CACHE, exist_ok=True)
    out = os.path.join(CACHE, name)
    if os.path.exists(out):
        return out
    src = os.path.join(CACHE, name + (".hip" if "hip" in name else ".cu"))
    with open(src, "w") as f:
        if src.endswith(".hip"):
            f.write("#include <hip/hip_runtime.h>\n")
        f.write("__global__ void twice(float *x) { x[threadIdx.x] *= 2.0f; }\n")
    subprocess.run([compiler] + cmd_tail + [src, "-o", out + ".tmp"], check=True,
                   capture_output=True, timeout=300)
    os.rename(out + ".tmp", out)
    return out


def section(path, wanted):
    """(offset, size) of an ELF64 section by name, read with struct."""
    with open(path, "rb") as f:
        data = f.read()
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
    def sh(i):
        return struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
    stroff = sh(shstrndx)[4]
    for i in range(shnum):
        s = sh(i)
        name = data[stroff + s[0]:data.index(b"\0", stroff + s[0])].decode()
        if name == wanted:
            return s[4], s[5]
    return None


class FatBinaries(unittest.TestCase):
    """Offload targets of real fat binaries and the device matching rules."""

    @classmethod
    def setUpClass(cls):
        cls.hip = build_cached("libfat_hip.so", ["--offload-arch=gfx906", "--offload-arch=gfx90a:xnack-",
                                                 "-shared", "-fPIC"], HIPCC)
        cls.cuda = build_cached("libfat_cuda.so", [
            "-gencode", "arch=compute_80,code=sm_80",
            "-gencode", "arch=compute_90,code=[sm_90,compute_90]",
            "-shared", "-Xcompiler", "-fPIC"], NVCC)

    def targets(self, path, archs=()):
        args = []
        for a in archs:
            args += ["--arch", a]
        rc, doc, err = libs(args + ["--no-symbols", path])
        self.assertIsNotNone(doc, err)
        f = doc["files"][0]
        return rc, f["offload"], f

    @unittest.skipUnless(HIPCC, "hipcc not installed")
    def test_hip_targets_without_host(self):
        rc, off, f = self.targets(self.hip)
        self.assertEqual(off["format"], "clang-offload-bundle")
        self.assertEqual(sorted(off["targets"]), ["gfx906", "gfx90a:xnack-"])

    @unittest.skipUnless(HIPCC, "hipcc not installed")
    def test_hip_feature_rules(self):
        for arch, ok in (("gfx90a:sramecc+:xnack-", True), ("gfx90a", True),
                         ("gfx906:sramecc-:xnack+", True),  # gfx906 left both unspecified
                         ("gfx90a:xnack+", False), ("gfx1030", False)):
            rc, off, f = self.targets(self.hip, [arch])
            self.assertEqual(rc, 0 if ok else 1, (arch, f["findings"]))
            self.assertEqual("libs.no-code-for-device" in ids(f), not ok, arch)

    @unittest.skipUnless(NVCC, "nvcc not installed")
    def test_cuda_targets_and_rules(self):
        rc, off, f = self.targets(self.cuda)
        self.assertEqual(off["format"], "nv-fatbin")
        self.assertEqual(sorted(off["targets"]), ["compute_90", "sm_80", "sm_90"])
        for arch, expect in (("sm_86", None), ("sm_90", None),
                             ("sm_100", "libs.ptx-jit-only"), ("sm_75", "libs.no-code-for-device")):
            rc, off, f = self.targets(self.cuda, [arch])
            self.assertEqual([i for i in ids(f) if i.startswith("libs.")],
                             [expect] if expect else [], arch)
            self.assertEqual(rc, 1 if expect == "libs.no-code-for-device" else 0, arch)

    def compressed_copy(self, version, method):
        """A copy of the HIP fat binary whose first bundle is replaced by a CCOB bundle."""
        off, size = section(self.hip, ".hip_fatbin")
        with open(self.hip, "rb") as f:
            data = bytearray(f.read())
        bundle = bytes(data[off:off + size])
        count, = struct.unpack_from("<Q", bundle, 24)
        end, pos = 0, 32
        for _ in range(count):
            o, s, n = struct.unpack_from("<QQQ", bundle, pos)
            pos += 24 + n
            end = max(end, o + s)
        raw = bundle[:end]
        if method == 1:
            comp = subprocess.run(["zstd", "-q", "-c"], input=raw, capture_output=True,
                                  check=True).stdout
        else:
            comp = zlib.compress(raw)
        if version == 3:
            header = b"CCOB" + struct.pack("<HHQQQ", 3, method, 32 + len(comp), len(raw), 0)
        else:
            header = b"CCOB" + struct.pack("<HHIIQ", 2, method, 24 + len(comp), len(raw), 0)
        blob = header + comp
        self.assertLess(len(blob), size)
        data[off:off + size] = blob + bytes(size - len(blob))
        out = os.path.join(CACHE, "libfat_ccob_v%d_m%d.so" % (version, method))
        with open(out, "wb") as f:
            f.write(data)
        return out

    @unittest.skipUnless(HIPCC and shutil.which("zstd"), "hipcc or zstd not installed")
    def test_compressed_bundle_v3_zstd(self):
        rc, off, f = self.targets(self.compressed_copy(3, 1))
        self.assertEqual(off["format"], "clang-offload-bundle-compressed")
        self.assertEqual(sorted(off["targets"]), ["gfx906", "gfx90a:xnack-"])
        self.assertEqual(f["findings"], [])

    @unittest.skipUnless(HIPCC, "hipcc not installed")
    def test_compressed_bundle_v2_zlib(self):
        rc, off, f = self.targets(self.compressed_copy(2, 0))
        self.assertEqual(sorted(off["targets"]), ["gfx906", "gfx90a:xnack-"])

    @unittest.skipUnless(os.path.exists(ROCSPARSE), "librocsparse0 not installed")
    def test_rocsparse_lists_exactly_its_seven_targets(self):
        rc, off, f = self.targets(ROCSPARSE)
        self.assertEqual(sorted(off["targets"]), sorted([
            "gfx803", "gfx900:xnack-", "gfx906:xnack-", "gfx908:xnack-", "gfx90a:xnack+",
            "gfx90a:xnack-", "gfx1030"]))
        self.assertEqual(off["bundles"], 111)
        self.assertEqual(rc, 0)


def ldd_set(path):
    out = subprocess.run(["ldd", path], capture_output=True, text=True).stdout
    found = set()
    for line in out.splitlines():
        m = re.search(r"=>\s+(/\S+)\s+\(", line) or re.match(r"\s+(/\S+)\s+\(", line)
        if m:
            found.add(os.path.realpath(m.group(1)))
    return found


class AgreesWithLdd(unittest.TestCase):
    """The set of resolved files equals what the real loader reports (ldd runs only here)."""

    def check(self, path):
        if not os.path.exists(path):
            self.skipTest(path + " not installed")
        rc, doc, err = libs([path], env={"LD_LIBRARY_PATH": None})
        f = doc["files"][0]
        ours = {os.path.realpath(lib["path"]) for lib in f["libraries"] if lib["path"]}
        theirs = ldd_set(path)
        self.assertTrue(theirs)
        self.assertEqual(ours, theirs)
        self.assertEqual(rc, 0, f["findings"])

    def test_libtorch_cpu(self):
        self.check(TORCH + "/lib/libtorch_cpu.so")

    def test_libamdhip64(self):
        self.check("/usr/lib/x86_64-linux-gnu/libamdhip64.so.5")

    def test_torch_C_module(self):
        mods = [m for m in os.listdir(TORCH)] if os.path.isdir(TORCH) else []
        mod = next((m for m in mods if m.startswith("_C.") and m.endswith(".so")), "_C.so")
        self.check(os.path.join(TORCH, mod))

    def test_libpython(self):
        self.check("/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0")


class BadInput(sclib.TempDirCase):
    """Non-ELF, truncated and odd inputs: exit 2 or a clear finding, never a crash."""

    def write(self, name, data):
        p = os.path.join(self.tmp, name)
        with open(p, "wb") as f:
            f.write(data)
        return p

    def test_not_elf_and_missing_exit_2(self):
        for p in (self.write("text.so", b"hello\n"), self.write("empty.so", b""),
                  self.tmp, os.path.join(self.tmp, "nope.so")):
            r = sclib.run(["libs", p], json_file=False)
            self.assertEqual(r.rc, 2, p)
            self.assertIn("stackcheck libs:", r.stderr)

    def test_truncated_and_corrupted_files_do_not_crash(self):
        with open("/usr/lib/x86_64-linux-gnu/libamdhip64.so.5", "rb") as f:
            real = f.read(1 << 20)
        cases = [real[:64], real[:4096], real[:200000]]
        huge = bytearray(real[:4096])
        struct.pack_into("<Q", huge, 0x28, (1 << 63))  # e_shoff far past the end
        struct.pack_into("<H", huge, 0x3c, 0xffff)       # e_shnum
        cases.append(bytes(huge))
        bundle = b"__CLANG_OFFLOAD_BUNDLE__" + struct.pack("<Q", 1 << 63)
        cases.append(bundle)
        for i, data in enumerate(cases):
            p = self.write("bad%d.so" % i, data)
            r = sclib.run(["libs", "--json", "-", p], json_file=False)
            self.assertIn(r.rc, (0, 1, 2), (i, r.stderr))
            self.assertNotIn("Sanitizer", r.stderr)
            if r.rc != 2:
                json.loads(r.stdout)


    def test_truncated_dependency_is_unreadable_not_silent(self):
        png = "/usr/lib/x86_64-linux-gnu/libpng16.so.16"
        if not os.path.exists(png):
            self.skipTest("libpng16 not installed")
        with open("/usr/lib/x86_64-linux-gnu/libz.so.1", "rb") as f:
            self.write("libz.so.1", f.read(100))
        rc, doc, err = libs(["--ld-library-path", self.tmp, png], env={"LD_LIBRARY_PATH": None})
        f = doc["files"][0]
        self.assertEqual(rc, 1)
        self.assertEqual(ids(f), ["libs.unreadable"])
        self.assertEqual(by_name(f, "libz.so.1")["path"], os.path.join(self.tmp, "libz.so.1"))


class Layer(unittest.TestCase):
    """The libraries layer in a full run: the HIP runtime's and torch's libraries, and --ext."""

    def test_full_run_shows_hip_runtime_and_torch_libraries(self):
        if not os.path.exists(TORCH + "/lib/libtorch_cpu.so"):
            self.skipTest("python3-torch not installed")
        r = sclib.run(["--keep-going", "--python", "/usr/bin/python3"])
        hip = r.probe("libraries.hip")
        if hip["status"] != "skip":
            self.assertIn("libamdhip64.so", hip["facts"]["files"][0]["realpath"])
            self.assertTrue(hip["facts"]["files"][0]["libraries"])
        torch = r.probe("libraries.torch")
        self.assertEqual(torch["status"], "pass", torch)
        paths = [f["path"] for f in torch["facts"]["files"]]
        self.assertIn(TORCH + "/lib/libtorch_cpu.so", paths)
        self.assertTrue(any("/_C." in p for p in paths), paths)
        self.assertEqual(r.layer("libraries")["name"], "libraries")

    def test_torch_offline_from_the_package_files(self):
        root = tempfile.mkdtemp(prefix="sc-torch-")
        try:
            pkg = root + "/usr/local/lib/python3.12/site-packages/torch"
            so(pkg + "/lib/libc10.so", "int c10(void){return 0;}\n", "libc10.so")
            so(pkg + "/lib/libtorch_cpu.so", "int t(void){return 0;}\n", "libtorch_cpu.so",
               ["-L" + pkg + "/lib", "-l:libc10.so"], ["-Wl,--enable-new-dtags", "-Wl,-rpath,$ORIGIN"])
            so(pkg + "/_C.cpython-312-x86_64-linux-gnu.so", "int c(void){return 0;}\n", None,
               ["-L" + pkg + "/lib", "-l:libtorch_cpu.so"],
               ["-Wl,--enable-new-dtags", "-Wl,-rpath,$ORIGIN/lib"])
            r = sclib.run(["--keep-going", "--sysroot", root])
            t = r.probe("libraries.torch")
            self.assertEqual(t["status"], "pass", t)
            self.assertEqual(t["facts"]["torch_dir"], "/usr/local/lib/python3.12/site-packages/torch")
            files = {f["path"]: f for f in t["facts"]["files"]}
            c = files["/usr/local/lib/python3.12/site-packages/torch/_C.cpython-312-x86_64-linux-gnu.so"]
            self.assertEqual([(lib["name"], lib["found_via"], lib["root_kind"]) for lib in c["libraries"]],
                             [("libtorch_cpu.so", "runpath", "python"), ("libc10.so", "runpath", "python")])
            self.assertIn(pkg[len(root):] + "/lib/libtorch_cpu.so", files)
        finally:
            shutil.rmtree(root, ignore_errors=True)

    def test_ext_directory_and_offline(self):
        tmp = tempfile.mkdtemp(prefix="sc-ext-")
        try:
            so(tmp + "/ext/libx.so", "int x(void){return 0;}\n", "libx.so")
            so(tmp + "/gone/libgone.so", "int g(void){return 0;}\n", "libgone.so")
            so(tmp + "/ext/sub/liby.so", "int y(void){return 0;}\n", "liby.so",
               ["-L" + tmp + "/gone", "-l:libgone.so"])
            os.remove(tmp + "/gone/libgone.so")
            r = sclib.run(["--keep-going", "--sysroot", tmp, "--ext", "/ext"])
            ext = r.probe("libraries.ext")
            self.assertEqual(ext["status"], "fail", ext)
            self.assertEqual(sorted(f["path"] for f in ext["facts"]["files"]),
                             ["/ext/libx.so", "/ext/sub/liby.so"])
            self.assertIn("libs.missing-library", [f["id"] for f in ext["findings"]])
            self.assertEqual(r.probe("libraries.hip")["status"], "skip")
            r = sclib.run(["--keep-going", "--sysroot", tmp])
            self.assertEqual(r.probe("libraries.ext")["status"], "skip")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)



class SharedTreeCache(unittest.TestCase):
    """libraries.torch parses the tree its files share once (a cache kept for the probe's files):
    each file's analysis in the probe must equal the analysis of that file alone (`stackcheck
    libs`, which reads every file afresh), findings included."""

    def test_probe_files_equal_single_file_analyses(self):
        if not os.path.isdir(TORCH + "/lib"):
            self.skipTest("Debian's python3-torch is not installed")
        env = {"LD_LIBRARY_PATH": None}
        r = sclib.run(["--keep-going", "--python", "/usr/bin/python3"], env=env)
        p = r.probe("libraries.torch")
        files = p["facts"]["files"]
        self.assertGreaterEqual(len(files), 4)
        archs = [a for arch in p["facts"]["target_archs"] for a in ("--arch", arch)]
        for f in files:
            rc, doc, _ = libs(archs + [f["path"]], env=env)
            self.assertEqual(doc["files"][0], f, f["path"])
        self.assertTrue(any(len(f["libraries"]) > 100 for f in files))  # libtorch_cpu's tree


def bound(seconds):
    """A generous wall-time bound against runaway work (sanitized builds run slower)."""
    return seconds * 6 if sclib.SANITIZED else seconds


class SearchBudget(sclib.TempDirCase):
    """The resolver's work is bounded: an RPATH of 50,000 absent directories with 100 missing
    libraries (11 s before), a chain of 4,000 libraries each with its own RPATH (20 s before), and
    chains made to spend the budget of search steps and of file-system checks finish in seconds,
    with libs.search-budget naming what was cut and never a silent cut."""

    def analyse(self, path, user=None):
        r = sclib.run(["libs", "--json", "-", path], json_file=False, user=user,
                      env={"LD_LIBRARY_PATH": None})
        self.assertIsNotNone(r.stdout, r.stderr)
        return r, json.loads(r.stdout)["files"][0]

    def vias(self, f):
        return dict(collections.Counter(lib["found_via"] for lib in f["libraries"]))

    def test_wide_rpath_is_cut_with_a_finding(self):
        path = pathological.rpath_elf(os.path.join(self.tmp, "wide"), 50000, 100)
        r, f = self.analyse(path)
        self.assertLess(r.seconds, bound(5))
        self.assertEqual(r.rc, 1)
        self.assertEqual(ids(f).count("libs.missing-library"), 100)
        budget = [x for x in f["findings"] if x["id"] == "libs.search-budget"]
        self.assertEqual(len(budget), 1, f["findings"])
        self.assertIn("(50000 entries)", budget[0]["message"])
        self.assertEqual(budget[0]["severity"], "warn")

    def test_deep_chain_resolves_whole(self):
        first = pathological.rpath_chain(os.path.join(self.tmp, "deep"), 4000)
        r, f = self.analyse(first)
        self.assertLess(r.seconds, bound(5))
        self.assertEqual(self.vias(f), {"rpath": 3999, "not_found": 1})
        self.assertEqual(by_name(f, "libc03999.so")["search_entry"], os.path.dirname(first))
        self.assertNotIn("libs.search-budget", ids(f))

    def test_search_steps_budget(self):
        first = pathological.rpath_chain(os.path.join(self.tmp, "steps"), 600,
                                         [pathological._short_name(i) for i in range(1000)])
        r, f = self.analyse(first)
        self.assertLess(r.seconds, bound(5))
        vias = self.vias(f)
        self.assertEqual(vias.get("not_searched"), 1, vias)
        self.assertGreater(vias.get("rpath", 0), 100)
        budget = next(x for x in f["findings"] if x["id"] == "libs.search-budget")
        self.assertIn("search steps ran out", budget["message"])
        self.assertNotIn("libs.missing-library", ids(f))  # not searched is not missing

    def test_file_system_checks_budget(self):
        # directories that can be searched but not listed (as an unprivileged user): each name
        # costs an open there, so only the budget of checks stops the chain's search
        locked = os.path.join(self.tmp, "locked")
        os.makedirs(locked)
        shared = []
        for i in range(400):
            shared.append(os.path.join(locked, "u%d" % i))
            os.mkdir(shared[-1], 0o111)
        os.chmod(locked, 0o755)
        first = pathological.rpath_chain(os.path.join(self.tmp, "checks"), 300, shared)
        subprocess.run(["chmod", "-R", "a+rX", os.path.join(self.tmp, "checks")], check=True)
        r, f = self.analyse(first, user=sclib.unprivileged())
        self.assertLess(r.seconds, bound(5))
        self.assertEqual(self.vias(f).get("not_searched"), 1)
        budget = next(x for x in f["findings"] if x["id"] == "libs.search-budget")
        self.assertIn("file-system checks ran out (100000 checks", budget["message"])


class OffloadBudget(sclib.TempDirCase):
    """GPU code reading is bounded per file: 10,000 zlib bundles declaring a megabyte each (27 s
    before: each was inflated to 1 MiB) are read whole in a second, inflated only to their entry
    tables; 100,000 tiny zstd bundles and entry tables of a megabyte run out the budgets of
    bundles and of entry-table rows, which libs.offload-budget names, and no device is then said
    to lack code."""

    def analyse(self, count, kind):
        path = pathological.bundles_elf(os.path.join(self.tmp, kind + ".so"), count, kind)
        r = sclib.run(["libs", "--json", "-", "--arch", "gfx906", path], json_file=False)
        self.assertLess(r.seconds, bound(5))
        f = json.loads(r.stdout)["files"][0]
        self.assertEqual(f["offload"]["targets"], ["gfx90a"])
        return f

    def test_bundles_declaring_a_megabyte_are_inflated_to_their_tables(self):
        f = self.analyse(10000, "zlib-bomb")
        self.assertIsNone(f["offload"]["budget"])
        self.assertGreater(f["offload"]["bundles"], 9000)
        self.assertEqual(ids(f), ["libs.no-code-for-device"])

    def test_bundle_budget(self):
        f = self.analyse(100000, "tiny-zstd")
        self.assertEqual(f["offload"]["budget"], "bundles")
        self.assertEqual(f["offload"]["bundles"], 65536)
        self.assertEqual(ids(f), ["libs.offload-budget"])
        self.assertIn("budget of bundles ran out", f["findings"][0]["message"])

    def test_entry_table_budget(self):
        f = self.analyse(100, "zlib-table")
        self.assertEqual(f["offload"]["budget"], "entry-table rows")
        self.assertEqual(ids(f), ["libs.offload-budget"])


class LibrariesDeadline(unittest.TestCase):
    """The libraries probes run isolated, so --timeout bounds their analysis too (it ran in the
    parent without a deadline): thirty --ext analyses of the head of a 2,000-library RPATH chain
    (a few tenths of a second each) end at a deadline of 2 s with status timeout, and the snapshot
    is written."""

    def test_ext_analysis_ends_at_the_deadline(self):
        root = tempfile.mkdtemp(prefix="sc-deadline-")
        self.addCleanup(shutil.rmtree, root, True)
        pathological.rpath_chain(os.path.join(root, "opt", "chain"), 2000)
        ext = ["--ext", "/opt/chain/lib/libc00000.so"] * 30
        r = sclib.run(["--sysroot", root, "--keep-going", "--timeout", "2"] + ext)
        self.assertIsNotNone(r.snapshot, r.stderr)
        sclib.validate_snapshot(self, r.snapshot)
        p = r.probe("libraries.ext")
        self.assertEqual(p["status"], "timeout", p.get("reason"))
        self.assertIn("timed out", p["reason"])
        self.assertLess(p["duration_ms"], bound(2) * 1000 + 1500)
        self.assertLess(r.seconds, bound(10))
        self.assertEqual(r.rc, 1)

if __name__ == "__main__":
    sclib.main()
