"""The build side of the stack: the compiler against the runtime and torch, stale extension caches,
and which file Python really imports. Temporary trees hold two DTK-like installs (version files,
an env.sh, a bin/hipcc that only prints a version, the stub runtime as lib/libamdhip64.so.5); PATH
points into one and the library path into the other. Extensions are built here with gcc against
the other install's runtime; modules are shadowed by older copies earlier on sys.path. Each case
gives its finding, and the clean layout gives none."""
import os
import shutil
import subprocess
import sys
import tempfile
import time

import sclib
from sclib import unittest
from test_framework import FAKE_ROCM, FakeTorch

OLD, NEW = "24.04", "25.04"
# Variables that would change what the probes see; each test sets what it needs.
CLEAN = {k: None for k in ("LD_LIBRARY_PATH", "ROCM_PATH", "ROCM_HOME", "HIP_PATH", "CUDA_HOME",
                           "CUDA_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_HOME_PATH",
                           "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "PYTHONPATH",
                           "TORCH_EXTENSIONS_DIR", "XDG_CACHE_HOME", "HSA_OVERRIDE_GFX_VERSION")}
HIPCC = '#!/bin/sh\necho "HIP version: %s"\n'


def write(path, text="", mode=None):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    if mode:
        os.chmod(path, mode)


def make_dtk(top, version, hip_version, version_file=True, hipcc=None):
    """A DTK-like install under top: .info/version, .hyhal, env.sh, bin/hipcc printing a version
    (or running hipcc's text), bin/.hipVersion (unless not version_file), and the stub runtime as
    lib/libamdhip64.so.5 with its unversioned link."""
    root = os.path.join(top, "dtk-" + version)
    write(root + "/.info/version", version + "\n")
    os.makedirs(root + "/.hyhal", exist_ok=True)
    write(root + "/env.sh", "export ROCM_PATH=%s\n" % root)
    write(root + "/bin/hipcc", hipcc or HIPCC % (hip_version + "-ran"), 0o755)
    if version_file:
        major, minor, patch = hip_version.split(".")
        write(root + "/bin/.hipVersion", "HIP_VERSION_MAJOR=%s\nHIP_VERSION_MINOR=%s\n"
              "HIP_VERSION_PATCH=%s\n" % (major, minor, patch))
    os.makedirs(root + "/lib", exist_ok=True)
    shutil.copy(sclib.stub("hipstub"), root + "/lib/libamdhip64.so.5")
    os.symlink("libamdhip64.so.5", root + "/lib/libamdhip64.so")
    return root


def env(path_root, lib_root, **extra):
    e = dict(CLEAN)
    e.update(PATH=path_root + "/bin:/usr/bin:/bin", LD_LIBRARY_PATH=lib_root + "/lib",
             SC_HIPSTUB_MODE="ok", NO_COLOR="1")
    e.update(extra)
    return e


def report_lines(r, *ids):
    """The report's lines of the findings ids (message and hint), for the closing note."""
    lines, out = r.stdout.splitlines(), []
    for n, line in enumerate(lines):
        if any(i + ":" in line for i in ids):
            out += [line.strip()] + [h.strip() for h in lines[n + 1:n + 2] if "hint:" in h]
    return out


def findings(p, fid):
    return [f for f in p["findings"] if f["id"] == fid]


class Installs(unittest.TestCase):
    """Two DTK-like installs in a temporary directory, shared by the tests of a class."""

    @classmethod
    def setUpClass(cls):
        cls.top = tempfile.mkdtemp(prefix="sc-build-")
        cls.old = make_dtk(cls.top, OLD, "5.24.1")
        cls.new = make_dtk(cls.top, NEW, "5.25.1")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.top, ignore_errors=True)

    def runtime(self, path_root, lib_root, args=(), **extra):
        r = sclib.run(["--keep-going", "-v", "--python", sclib.quick_python()] + list(args),
                      env=env(path_root, lib_root, **extra))
        self.assertIsNotNone(r.snapshot, r.stderr)
        sclib.validate_snapshot(self, r.snapshot)
        return r, r.probe("runtime.hip")


class Compilers(Installs):
    def test_compiler_of_another_install_than_the_runtime(self):
        r, p = self.runtime(self.new, self.old)
        (c,) = [c for c in p["facts"]["compilers"] if c["first_on_path"]]
        self.assertEqual(c["path"], self.new + "/bin/hipcc")
        self.assertEqual((c["root"], c["root_kind"]), (self.new, "dtk"))
        self.assertEqual(c["install_version"], NEW)
        # the version file is read, the compiler is not run
        self.assertEqual(c["version"], "5.25.1")
        self.assertEqual(c["version_from"], self.new + "/bin/.hipVersion")
        self.assertEqual(c["env_script"], self.new + "/env.sh")
        self.assertEqual(p["facts"]["runtime_library"]["root"], self.old)
        (f,) = findings(p, "hip.compiler-other-root")
        self.assertEqual(f["severity"], "warn")
        self.assertIn(self.new + "/bin/hipcc (5.25.1)", f["message"])
        self.assertIn("from %s (dtk %s" % (self.old, OLD), f["message"])
        self.assertIn("source %s/env.sh" % self.old, f["hint"])
        print("\n".join(report_lines(r, "hip.compiler-other-root")), file=sys.stderr)

    def test_one_install_gives_no_finding(self):
        r, p = self.runtime(self.old, self.old)
        (c,) = p["facts"]["compilers"]
        self.assertEqual(c["root"], self.old)
        self.assertEqual(findings(p, "hip.compiler-other-root"), [])

    def test_compiler_under_rocm_path_marked_for_extensions(self):
        r, p = self.runtime(self.old, self.old, ROCM_PATH=self.new)
        by_root = {c["root"]: c for c in p["facts"]["compilers"]}
        self.assertTrue(by_root[self.new]["for_extensions"])
        self.assertIn("ROCM_PATH=" + self.new, by_root[self.new]["via"])
        self.assertFalse(by_root[self.old]["for_extensions"])
        (f,) = findings(p, "hip.compiler-other-root")
        self.assertIn(self.new, f["message"])


class CompilerRun(unittest.TestCase):
    """A hipcc without a version file is the one thing run, isolated with a deadline."""

    def setUp(self):
        self.top = tempfile.mkdtemp(prefix="sc-build-run-")
        self.addCleanup(shutil.rmtree, self.top, True)

    def probe(self, root, args=()):
        r = sclib.run(["--keep-going", "--python", sclib.quick_python()] + list(args),
                      env=env(root, root))
        self.assertIsNotNone(r.snapshot, r.stderr)
        (c,) = r.probe("runtime.hip")["facts"]["compilers"]
        return r, c

    def test_version_from_running_the_users_hipcc(self):
        root = make_dtk(self.top, "26.04", "5.26.7", version_file=False)
        r, c = self.probe(root)
        self.assertEqual(c["version"], "5.26.7")
        self.assertEqual(c["version_from"], "ran %s/bin/hipcc --version" % root)

    def test_hanging_hipcc_is_killed_at_the_deadline(self):
        marker = os.path.join(self.top, "still-running")
        hang = "#!/bin/sh\nsleep 600\ntouch %s\n" % marker
        root = make_dtk(self.top, "26.10", "5.26.9", version_file=False, hipcc=hang)
        start = time.monotonic()
        r, c = self.probe(root, ["--timeout", "3"])
        self.assertLess(time.monotonic() - start, 120)  # a bound against hangs, not a timing
        self.assertIsNone(c["version"])
        self.assertIn("version", c["unavailable"])
        self.assertFalse(os.path.exists(marker))

    def test_offline_never_runs_it(self):
        marker = os.path.join(self.top, "ran")
        make_dtk(self.top, "26.04", "5.26.7", version_file=False, hipcc="#!/bin/sh\ntouch %s\n"
                 % marker)
        r = sclib.run(["--sysroot", self.top, "--keep-going"], env=env("/dtk-26.04", "/dtk-26.04"))
        (c,) = r.probe("runtime.hip")["facts"]["compilers"]
        self.assertIsNone(c["version"])
        self.assertIn("not run", c["unavailable"]["version"])
        self.assertFalse(os.path.exists(marker))


REAL_NVCC = "/usr/local/cuda/bin/nvcc"


@unittest.skipUnless(os.path.exists(REAL_NVCC), "no nvcc at /usr/local/cuda/bin")
class CudaCompilers(unittest.TestCase):
    """The real nvcc of this machine, and a second CUDA toolkit whose libcudart the loader takes."""

    def setUp(self):
        self.top = tempfile.mkdtemp(prefix="sc-cuda-")
        self.addCleanup(shutil.rmtree, self.top, True)
        self.real_root = os.path.dirname(os.path.dirname(os.path.realpath(REAL_NVCC)))
        out = subprocess.run([REAL_NVCC, "--version"], capture_output=True, text=True).stdout
        self.real_version = out.split(", V", 1)[1].split()[0]

    def cuda(self, lib_dir):
        e = dict(CLEAN, PATH=os.path.dirname(REAL_NVCC) + ":/usr/bin:/bin",
                 LD_LIBRARY_PATH=lib_dir, NO_COLOR="1")
        r = sclib.run(["--keep-going", "-v", "--python", sclib.quick_python()], env=e)
        self.assertIsNotNone(r.snapshot, r.stderr)
        sclib.validate_snapshot(self, r.snapshot)
        p = r.probe("runtime.cuda")
        (c,) = [c for c in p["facts"]["compilers"] if c["first_on_path"]]
        return r, p, c

    def test_real_nvcc_with_its_own_runtime(self):
        r, p, c = self.cuda(os.path.dirname(REAL_NVCC) + "/../lib64")
        self.assertEqual((c["root"], c["root_kind"]), (self.real_root, "cuda"))
        self.assertEqual(c["version"], self.real_version)
        self.assertEqual(p["facts"]["cudart_library"]["root"], self.real_root)
        self.assertEqual(findings(p, "cuda.compiler-other-root"), [])

    def test_real_nvcc_against_another_toolkits_runtime(self):
        other = os.path.join(self.top, "cuda-12.4")
        write(other + "/version.json", '{"cuda": {"name": "CUDA SDK", "version": "12.4.1"}}')
        write(other + "/bin/nvcc", "#!/bin/sh\nexit 1\n", 0o755)
        write(other + "/lib64/cudart.c", "int cudaRuntimeGetVersion(int *v) { *v = 12040; "
              "return 0; }\n")
        subprocess.run(["gcc", "-shared", "-fPIC", "-nostdlib", "-o",
                        other + "/lib64/libcudart.so.12", other + "/lib64/cudart.c",
                        "-Wl,-soname,libcudart.so.12"], check=True, capture_output=True)
        os.symlink("libcudart.so.12", other + "/lib64/libcudart.so")
        r, p, c = self.cuda(other + "/lib64")
        self.assertEqual(c["root"], self.real_root)
        self.assertEqual(p["facts"]["cudart_library"]["root"], other)
        (f,) = findings(p, "cuda.compiler-other-root")
        self.assertIn(self.real_root, f["message"])
        self.assertIn(other, f["message"])
        print("\n".join(report_lines(r, "cuda.compiler-other-root")), file=sys.stderr)


class AscendCompilers(unittest.TestCase):
    """CANN's compilers (never run) against the libascendcl the loader takes, in a sysroot with two
    CANN installs recognised by their markers (version.cfg beside runtime/, compiler/, lib64/)."""

    @classmethod
    def setUpClass(cls):
        cls.root = tempfile.mkdtemp(prefix="sc-cann-")
        for v in ("a", "b"):
            top = cls.root + "/opt/cann-" + v
            write(top + "/version.cfg", "runtime_running_version=[8.0.%s:8.0.RC3]\n" % v)
            os.makedirs(top + "/runtime", exist_ok=True)
            write(top + "/set_env.sh", "export ASCEND_TOOLKIT_HOME=/opt/cann-%s\n" % v)
            write(top + "/compiler/ccec_compiler/bin/ccec", "#!/bin/sh\nexit 1\n", 0o755)
            write(top + "/lib64/acl.c", "int aclInit(const char *c) { return c != 0; }\n")
            subprocess.run(["gcc", "-shared", "-fPIC", "-nostdlib", "-o",
                            top + "/lib64/libascendcl.so", top + "/lib64/acl.c",
                            "-Wl,-soname,libascendcl.so"], check=True, capture_output=True)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.root, ignore_errors=True)

    def acl(self, compiler_install, lib_install):
        e = dict(CLEAN, PATH="/opt/cann-%s/compiler/ccec_compiler/bin:/usr/bin" % compiler_install,
                 LD_LIBRARY_PATH="/opt/cann-%s/lib64" % lib_install, NO_COLOR="1")
        r = sclib.run(["--sysroot", self.root, "--keep-going", "-v"], env=e)
        self.assertIsNotNone(r.snapshot, r.stderr)
        sclib.validate_snapshot(self, r.snapshot)
        return r, r.probe("runtime.acl")

    def test_ccec_of_another_install_than_libascendcl(self):
        r, p = self.acl("a", "b")
        (c,) = p["facts"]["compilers"]
        self.assertEqual((c["name"], c["root"], c["root_kind"]), ("ccec", "/opt/cann-a", "cann"))
        (f,) = findings(p, "acl.compiler-other-root")
        self.assertIn("/opt/cann-a/compiler/ccec_compiler/bin/ccec", f["message"])
        self.assertIn("from /opt/cann-b", f["message"])
        self.assertIn("source /opt/cann-b/set_env.sh", f["hint"])
        print("\n".join(report_lines(r, "acl.compiler-other-root")), file=sys.stderr)

    def test_one_install_gives_no_finding(self):
        r, p = self.acl("b", "b")
        self.assertEqual(p["facts"]["compilers"][0]["root"], "/opt/cann-b")
        self.assertEqual(findings(p, "acl.compiler-other-root"), [])


class TorchCompiler(Installs):
    """torch.compiler-mismatch: torch built for HIP 6.0, extensions would build with HIP 5.25."""

    def test_compiler_of_another_release_than_torch(self):
        fake = FakeTorch(FAKE_ROCM)
        self.addCleanup(fake.cleanup)
        r, _ = self.runtime(self.new, self.old, PYTHONPATH=fake.dir)
        p = r.probe("framework.torch")
        (f,) = findings(p, "torch.compiler-mismatch")
        self.assertIn("built for hip 6.0.32830", f["message"])
        self.assertIn(self.new + "/bin/hipcc", f["message"])
        self.assertIn("another release", f["message"])
        print("\n".join(report_lines(r, "torch.compiler-mismatch")), file=sys.stderr)


def build_extension(out, runpath_root, link_stub):
    """An extension built with gcc against a stub libamdhip64 (soname libamdhip64.so.5), whose
    RUNPATH leads to runpath_root's lib."""
    os.makedirs(os.path.dirname(out), exist_ok=True)
    src = out + ".c"
    write(src, "extern int hipInit(unsigned);\nint my_op(void) { return hipInit(0); }\n")
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", out, src, "-L" + os.path.dirname(link_stub),
                    "-l:libamdhip64.so.5", "-Wl,--enable-new-dtags,-rpath," + runpath_root + "/lib"],
                   check=True, capture_output=True)
    os.unlink(src)
    return out


class LinkStub(Installs):
    """Installs plus a stub libamdhip64 to link against, and a private temporary directory."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.stub = os.path.join(cls.top, "link", "libamdhip64.so.5")
        os.makedirs(os.path.dirname(cls.stub))
        write(cls.stub + ".c", "int hipInit(unsigned f) { return (int)f; }\n")
        subprocess.run(["gcc", "-shared", "-fPIC", "-nostdlib", "-o", cls.stub, cls.stub + ".c",
                        "-Wl,-soname,libamdhip64.so.5"], check=True, capture_output=True)

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="sc-extcache-", dir=self.top)
        self.xdg = os.path.join(self.tmp, "xdg")
        os.makedirs(self.xdg)

    def cache_run(self, args=(), **extra):
        extra.setdefault("XDG_CACHE_HOME", self.xdg)
        r, _ = self.runtime(self.old, self.old, args, **extra)
        return r, r.probe("libraries.ext_cache")


class ExtensionCaches(LinkStub):
    """libraries.ext_cache: each cached build against the current Python, torch and runtime."""

    def test_jit_extension_linked_against_the_other_install(self):
        exts = os.path.join(self.tmp, "exts")
        build_extension(exts + "/my_op/my_op.so", self.new, self.stub)
        r, p = self.cache_run(TORCH_EXTENSIONS_DIR=exts)
        (cache,) = p["facts"]["caches"]
        self.assertEqual((cache["path"], cache["kind"], cache["used"]),
                         (exts, "TORCH_EXTENSIONS_DIR", True))
        (entry,) = p["facts"]["entries"]
        self.assertTrue(entry["stale"])
        (rt,) = entry["files"][0]["runtimes"]
        self.assertEqual((rt["root"], rt["found_via"]), (self.new, "runpath"))
        (f,) = findings(p, "libs.stale-extension")
        self.assertIn(exts + "/my_op ", f["message"])
        self.assertIn("runtime libamdhip64.so.5 of %s (its RUNPATH)" % self.new, f["message"])
        self.assertIn("runtime layer's is from " + self.old, f["message"])
        self.assertTrue(f["hint"].startswith("delete %s/my_op:" % exts), f["hint"])
        self.assertEqual(p["status"], "warn")
        print("\n".join(report_lines(r, "libs.stale-extension")), file=sys.stderr)

    def test_extension_of_the_current_install_gives_no_finding(self):
        exts = os.path.join(self.tmp, "exts")
        build_extension(exts + "/my_op/my_op.so", self.old, self.stub)
        r, p = self.cache_run(TORCH_EXTENSIONS_DIR=exts)
        (entry,) = p["facts"]["entries"]
        self.assertEqual(entry["files"][0]["runtimes"][0]["root"], self.old)
        self.assertFalse(entry["stale"])
        self.assertEqual(p["findings"], [])
        self.assertEqual(p["status"], "pass")

    def test_build_file_of_another_torch(self):
        if not os.path.exists("/usr/lib/python3/dist-packages/torch/__init__.py"):
            self.skipTest("Debian's python3-torch is not installed")
        exts = os.path.join(self.tmp, "exts")
        write(exts + "/my_op/build.ninja", "cflags = -isystem /old/site-packages/torch/include\n")
        r, _ = self.runtime(self.old, self.old, ["--python", sclib.DEBIAN_PYTHON],
                            TORCH_EXTENSIONS_DIR=exts, XDG_CACHE_HOME=self.xdg)
        p = r.probe("libraries.ext_cache")
        self.assertEqual(p["facts"]["environment"]["torch_dir"],
                         "/usr/lib/python3/dist-packages/torch")
        (f,) = findings(p, "libs.stale-extension")
        self.assertIn("built against the torch in /old/site-packages/torch, the current torch is "
                      "/usr/lib/python3/dist-packages/torch", f["message"])

    def test_large_cache_examines_the_newest(self):
        exts = os.path.join(self.tmp, "exts")
        for i in range(40):
            os.makedirs(os.path.join(exts, "op%02d" % i))
            os.utime(os.path.join(exts, "op%02d" % i), (1_600_000_000 + i, 1_600_000_000 + i))
        r, p = self.cache_run(TORCH_EXTENSIONS_DIR=exts)
        entries = p["facts"]["entries"]
        self.assertEqual(len(entries), 32)
        self.assertEqual(entries[0]["dir"], exts + "/op39")  # newest first
        self.assertEqual(p["facts"]["caches"][0]["entries"], 40)
        (f,) = findings(p, "libs.extension-cache-budget")
        self.assertIn("examined the 32 newest of 40", f["message"])

    def test_no_cache_is_not_applicable(self):
        r, p = self.cache_run()
        self.assertEqual(p["status"], "skip")
        self.assertFalse(p["applicable"])

    def python_tag(self):
        v = subprocess.run([sclib.quick_python(), "-c", "import sys; print('%d%d' % "
                            "sys.version_info[:2] + sys.abiflags)"],
                           capture_output=True, text=True, check=True).stdout.strip()
        return v

    def test_default_cache_build_file_of_another_python_and_install(self):
        base = os.path.join(self.xdg, "torch_extensions")
        here = os.path.join(base, "py%s_cpu" % self.python_tag(), "my_op")
        write(here + "/build.ninja",
              "nvcc = %s/bin/hipcc\ncflags = -isystem /usr/include/python3.9 -fPIC\n"
              "ldflags = -shared -L%s/lib -lamdhip64\n" % (self.new, self.new))
        write(os.path.join(base, "py39_cpu", "other_op", "build.ninja"), "nvcc = /x/hipcc\n")
        r, p = self.cache_run()
        by_path = {c["path"]: c for c in p["facts"]["caches"]}
        self.assertTrue(by_path[os.path.dirname(here)]["used"])
        self.assertFalse(by_path[os.path.join(base, "py39_cpu")]["used"])
        (entry,) = p["facts"]["entries"]  # the other Python's folder is listed, not examined
        self.assertEqual(entry["dir"], here)
        self.assertEqual(entry["build"]["compiler"], self.new + "/bin/hipcc")
        (f,) = findings(p, "libs.stale-extension")
        self.assertIn("Python 3.9", f["message"])
        self.assertIn("-L%s/lib (install %s)" % (self.new, self.new), f["message"])
        self.assertIn("built with %s/bin/hipcc (install %s), extensions now build with %s/bin/hipcc"
                      % (self.new, self.new, self.old), f["message"])
        print("\n".join(report_lines(r, "libs.stale-extension")), file=sys.stderr)

    def test_build_dir_and_egg_link_of_ext(self):
        proj = os.path.join(self.tmp, "proj")
        tag = self.python_tag()
        build_extension(proj + "/build/lib.linux-x86_64-cpython-39/pkg/_C.cpython-39-x86_64-"
                        "linux-gnu.so", self.old, self.stub)
        inplace = os.path.join(self.tmp, "src", "pkg")
        build_extension(inplace + "/_C.cpython-%s-x86_64-linux-gnu.so" % tag, self.new, self.stub)
        write(proj + "/pkg.egg-link", os.path.dirname(inplace) + "\n.\n")
        r, p = self.cache_run(["--ext", proj])
        kinds = {c["kind"]: c for c in p["facts"]["caches"]}
        self.assertEqual(kinds["build"]["path"], proj + "/build")
        self.assertEqual(kinds["egg-link"]["via"], proj + "/pkg.egg-link")
        msgs = [f["message"] for f in findings(p, "libs.stale-extension")]
        self.assertEqual(len(msgs), 2, msgs)
        build_msg = next(m for m in msgs if "build cache" in m)
        self.assertIn("is built for CPython 39, the interpreter is " + tag, build_msg)
        egg_msg = next(m for m in msgs if "egg-link cache" in m)
        self.assertIn("of %s (its RUNPATH)" % self.new, egg_msg)
        egg_hint = next(f["hint"] for f in findings(p, "libs.stale-extension")
                        if "egg-link cache" in f["message"])
        self.assertNotIn("delete " + os.path.dirname(inplace), egg_hint)  # a source tree
        self.assertIn("shared objects", egg_hint)


class ImportedExtension(LinkStub):
    """--import of an extension whose RPATH leads to the other install's runtime."""

    def python_extension(self, runpath_root):
        """sc_hipext, a Python extension needing libamdhip64.so.5, with a DT_RPATH (searched
        before LD_LIBRARY_PATH) into runpath_root's lib; its path."""
        python = sclib.quick_python()
        paths = subprocess.run([python, "-c", "import sysconfig as s; print(s.get_paths()"
                                "['include']); print(s.get_config_var('EXT_SUFFIX'))"],
                               capture_output=True, text=True, check=True).stdout.split()
        if not os.path.exists(os.path.join(paths[0], "Python.h")):
            self.skipTest("no Python.h for " + python)
        out = os.path.join(self.tmp, "mods", "sc_hipext" + paths[1])
        src = os.path.join(self.tmp, "sc_hipext.c")
        write(src, "#include <Python.h>\nextern int hipInit(unsigned);\n"
              "static struct PyModuleDef m = {PyModuleDef_HEAD_INIT, \"sc_hipext\", 0, -1, 0};\n"
              "int sc_hipext_init(void) { return hipInit(0); }\n"
              "PyMODINIT_FUNC PyInit_sc_hipext(void) { return PyModule_Create(&m); }\n")
        os.makedirs(os.path.dirname(out))
        subprocess.run(["gcc", "-shared", "-fPIC", "-I" + paths[0], "-o", out, src,
                        "-L" + os.path.dirname(self.stub), "-Wl,--no-as-needed",
                        "-l:libamdhip64.so.5", "-Wl,--disable-new-dtags,-rpath," + runpath_root
                        + "/lib"], check=True, capture_output=True)
        return out

    def run_import(self, out):
        fake = FakeTorch(FAKE_ROCM)
        self.addCleanup(fake.cleanup)
        r, _ = self.runtime(self.old, self.old, ["--import", "sc_hipext"],
                            PYTHONPATH=fake.dir + ":" + os.path.dirname(out))
        p = r.probe("framework.torch")
        (m,) = p["facts"]["imports"]
        self.assertTrue(m["ok"], m)
        self.assertEqual(m["file"], out)
        return r, p, m

    def test_imported_extension_maps_the_other_runtime(self):
        out = self.python_extension(self.new)
        r, p, m = self.run_import(out)
        self.assertIn(self.new + "/lib/libamdhip64.so.5",
                      [lib["realpath"] for lib in m["native_libraries"]])
        (f,) = findings(p, "torch.module-runtime-mismatch")
        self.assertIn(self.new + "/lib/libamdhip64.so.5", f["message"])
        self.assertIn("root " + self.old, f["message"])
        print("\n".join(report_lines(r, "torch.module-runtime-mismatch")), file=sys.stderr)

    def test_extension_of_the_current_install_gives_no_finding(self):
        out = self.python_extension(self.old)
        r, p, m = self.run_import(out)
        self.assertIn(self.old + "/lib/libamdhip64.so.5",
                      [lib["realpath"] for lib in m["native_libraries"]])
        self.assertEqual(findings(p, "torch.module-runtime-mismatch"), [])
        self.assertEqual(findings(p, "torch.import-shadowed"), [])

class ImportCandidates(unittest.TestCase):
    """--import MODULE: the file imported, the other candidates in sys.path order, their mtimes."""

    def setUp(self):
        self.top = tempfile.mkdtemp(prefix="sc-import-")
        self.addCleanup(shutil.rmtree, self.top, True)
        self.fake = FakeTorch(FAKE_ROCM)
        self.addCleanup(self.fake.cleanup)

    def run_import(self, *dirs):
        path = ":".join([self.fake.dir] + [os.path.join(self.top, d) for d in dirs])
        e = dict(CLEAN, PYTHONPATH=path, NO_COLOR="1")
        r = sclib.run(["--keep-going", "-v", "--python", sclib.quick_python(), "--import",
                       "sc_shadowed"], env=e)
        self.assertIsNotNone(r.snapshot, r.stderr)
        sclib.validate_snapshot(self, r.snapshot)
        p = r.probe("framework.torch")
        (m,) = p["facts"]["imports"]
        return r, p, m

    def module(self, d, mtime):
        path = os.path.join(self.top, d, "sc_shadowed.py")
        write(path, "X = %r\n" % d)
        os.utime(path, (mtime, mtime))
        return path

    def test_older_copy_earlier_on_sys_path_shadows_the_new_build(self):
        stale = self.module("installed", 1_600_000_000)
        fresh = self.module("build", 1_700_000_000)
        r, p, m = self.run_import("installed", "build")
        self.assertEqual(m["file"], stale)
        self.assertEqual([c["path"] for c in m["candidates"]], [stale, fresh])
        self.assertEqual([c["imported"] for c in m["candidates"]], [True, False])
        self.assertEqual([c["mtime"] for c in m["candidates"]], [1_600_000_000, 1_700_000_000])
        (f,) = findings(p, "torch.import-shadowed")
        self.assertIn(stale, f["message"])
        self.assertIn(fresh, f["message"])
        print("\n".join(report_lines(r, "torch.import-shadowed")), file=sys.stderr)

    def test_newest_copy_first_gives_no_finding(self):
        fresh = self.module("build", 1_700_000_000)
        self.module("installed", 1_600_000_000)
        r, p, m = self.run_import("build", "installed")
        self.assertEqual(m["file"], fresh)
        self.assertEqual(len(m["candidates"]), 2)
        self.assertEqual(findings(p, "torch.import-shadowed"), [])


if __name__ == "__main__":
    sclib.main()
