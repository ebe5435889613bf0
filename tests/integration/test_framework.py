"""framework.torch: the user's interpreter embedded (or run as a subprocess), torch's version from its
metadata, the import isolated (crash, hang), the cross-checks, and loader errors explained. Fake torch
packages are written by the tests into a temporary directory put first on PYTHONPATH."""
import glob
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import sclib

DEBIAN_PYTHON = "/usr/bin/python3"
PYENV = os.path.join(os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv")), "versions")
PYENV_3_11 = os.path.join(PYENV, "3.11.7", "bin", "python3")

FAKE_ROCM = """
__version__ = "2.3.0+rocm6.0"
class version:
    hip = "6.0.32830-d62f6a171"
    cuda = None
    git_version = "0123456789abcdef"
class cuda:
    @staticmethod
    def is_available():
        return False
    @staticmethod
    def device_count():
        return 0
    @staticmethod
    def get_arch_list():
        return []
class backends:
    class cudnn:
        @staticmethod
        def version():
            return None
"""

# A ROCm build that sees one MI210 but has no gfx90a code, computes a wrong element, and maps its
# own (fake) libamdhip64 instead of the system's.
FAKE_ROCM_DEVICE = """
import ctypes, os
ctypes.CDLL(os.environ["FAKE_HIP_LIB"])
__version__ = "2.3.0+rocm6.0"
float32 = "float32"
class version:
    hip = "6.0.32830-d62f6a171"
    cuda = None
    git_version = "0123456789abcdef"
class _Props:
    name = "AMD Instinct MI210"
    gcnArchName = "gfx90a:sramecc+:xnack-"
    major, minor, total_memory = 9, 0, 68702699520
class cuda:
    is_available = staticmethod(lambda: True)
    device_count = staticmethod(lambda: 1)
    get_arch_list = staticmethod(lambda: ["gfx906", "gfx908"])
    get_device_properties = staticmethod(lambda i: _Props())
class backends:
    class cudnn:
        version = staticmethod(lambda: 3000000)
class _T:
    def __init__(self, v):
        self.v = v
    def __mul__(self, k):
        return _T([x * k + (1 if i == 3 else 0) for i, x in enumerate(self.v)])
    def cpu(self):
        return self
    def tolist(self):
        return [float(x) for x in self.v]
def arange(n, device=None, dtype=None):
    return _T(list(range(n)))
"""

# Fails like a ROCm libdrm clash, but only when embedded in another program than python.
FAKE_EMBED_ONLY_FAILURE = """
import os
if not os.path.basename(os.readlink("/proc/self/exe")).startswith("python"):
    raise OSError("/usr/lib/x86_64-linux-gnu/libdrm.so.2: version `LIBDRM_9.9' not found "
                  "(required by /opt/amdgpu/lib/x86_64-linux-gnu/libdrm_amdgpu.so.1)")
""" + FAKE_ROCM

FAKE_SEGFAULT = "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n"
FAKE_HANG = "import time\ntime.sleep(600)\n"
# Puts a FIFO where the result file was and keeps it open for writing: a reader that waits for
# the end of that file would wait for ever.
FAKE_RESULT_FIFO = """
import os
path = os.environ["STACKCHECK_RESULT"]
os.unlink(path)
os.mkfifo(path, 0o600)
_keep = os.open(path, os.O_RDWR)
"""
FAKE_LOADER = "import ctypes\nctypes.CDLL(%r)\n"
FAKE_VERSION = "2.3.0+rocm6.0"


def debian_torch_version():
    """torch's version from Debian's python3-torch metadata, or None when it is not installed."""
    for pkg_info in glob.glob("/usr/lib/python3/dist-packages/torch-*.egg-info/PKG-INFO"):
        with open(pkg_info) as f:
            for line in f:
                if line.startswith("Version:"):
                    return line.split(":", 1)[1].strip()
    return None


def pyenv_python(minor):
    """A pyenv interpreter 3.<minor>.x, or None."""
    found = sorted(glob.glob(os.path.join(PYENV, "3.%d.*" % minor, "bin", "python3")))
    return found[-1] if found else None


class FakeTorch:
    """A temporary site directory with a fake torch package and its dist-info metadata."""

    def __init__(self, init_source, extra=None):
        self.dir = tempfile.mkdtemp(prefix="sc-faketorch-")
        os.makedirs(os.path.join(self.dir, "torch"))
        with open(os.path.join(self.dir, "torch", "__init__.py"), "w") as f:
            f.write(init_source)
        meta = os.path.join(self.dir, "torch-%s.dist-info" % FAKE_VERSION)
        os.makedirs(meta)
        with open(os.path.join(meta, "METADATA"), "w") as f:
            f.write("Metadata-Version: 2.1\nName: torch\nVersion: %s\n\nA fake.\n" % FAKE_VERSION)
        for name, source in (extra or {}).items():
            with open(os.path.join(self.dir, name + ".py"), "w") as f:
                f.write(source)

    def env(self, **more):
        env = {"PYTHONPATH": self.dir}
        env.update(more)
        return env

    def cleanup(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def build_lib_with_undefined_symbol(directory):
    """A real shared object that needs a symbol nobody defines (the loader error of a torch build
    made for another runtime)."""
    src = os.path.join(directory, "ops.c")
    lib = os.path.join(directory, "libfake_hip_ops.so")
    with open(src, "w") as f:
        f.write("extern int hipMissingFunctionForTest(void);\n"
                "int fake_op(void) { return hipMissingFunctionForTest(); }\n")
    subprocess.run(["cc", "-shared", "-fPIC", "-o", lib, src], check=True)
    return lib


class FrameworkTest(unittest.TestCase):
    def run_torch(self, python, env=None, extra_args=()):
        r = sclib.run(["--keep-going", "--python", python] + list(extra_args), env=env)
        self.assertIsNotNone(r.snapshot, r.stderr)
        return r, r.probe("framework.torch")

    def fake(self, source, extra=None):
        fake = FakeTorch(source, extra)
        self.addCleanup(fake.cleanup)
        return fake

    def test_debian_cpu_build_next_to_hip_runtime(self):
        version = debian_torch_version()
        if not version or not os.path.exists(DEBIAN_PYTHON):
            self.skipTest("Debian's python3-torch is not installed")
        if not glob.glob("/usr/lib/x86_64-linux-gnu/libamdhip64.so.*"):
            self.skipTest("Debian's libamdhip64 is not installed")
        r, p = self.run_torch(DEBIAN_PYTHON)
        self.assertEqual(p["status"], "fail", p)
        self.assertIn("torch.cpu-only-build", sclib_ids(p))
        f = finding(p, "torch.cpu-only-build")
        # The installed runtime (5.2.21153 from Debian), named with its real file.
        installed = os.path.realpath(glob.glob("/usr/lib/x86_64-linux-gnu/libamdhip64.so.*")[0])
        self.assertIn(installed, f["message"])
        sclib.validate_snapshot(self, r.snapshot)
        self.assertIn("ROCm", f["hint"])
        self.assertIn("DTK", f["hint"])
        facts = p["facts"]
        self.assertTrue(facts["metadata"]["torch"]["version"].startswith("1.13"), facts["metadata"])
        self.assertTrue(facts["torch"]["version"].startswith("1.13"), facts["torch"])
        self.assertIsNone(facts["torch"]["hip"])
        self.assertIsNone(facts["torch"]["cuda"])
        self.assertEqual(facts["python"]["mode"], "embedded")
        self.assertEqual(facts["python"]["executable"], DEBIAN_PYTHON)
        names = [lib["name"] for lib in facts["torch"]["mapped_libraries"]]
        self.assertTrue(any(n.startswith("libtorch_cpu") for n in names), names)
        self.assertEqual(r.rc, 1)

    def test_pyenv_without_torch_names_the_python_that_has_it(self):
        if not os.path.exists(PYENV_3_11):
            self.skipTest("pyenv's Python 3.11.7 is not installed (%s)" % PYENV_3_11)
        if not debian_torch_version():
            self.skipTest("Debian's python3-torch is not installed")
        _, p = self.run_torch(PYENV_3_11, env={"PYTHONPATH": None})
        f = finding(p, "torch.not-installed")
        self.assertIn(PYENV_3_11, f["message"])
        self.assertIn("/usr/bin/python3 has torch 1.13", f["message"])
        self.assertIn("--python /usr/bin/python3", f["hint"])
        self.assertIsNone(p["facts"]["metadata"]["torch"])
        self.assertIn(DEBIAN_PYTHON, [o["python"] for o in p["facts"]["torch_elsewhere"]])

    def check_fake_rocm(self, p):
        self.assertIn("torch.hip-build-no-device", sclib_ids(p))
        self.assertEqual(p["facts"]["torch"]["hip"], "6.0.32830-d62f6a171")
        self.assertEqual(p["facts"]["torch"]["version"], FAKE_VERSION)
        self.assertEqual(p["facts"]["metadata"]["torch"]["version"], FAKE_VERSION)
        self.assertEqual(p["status"], "fail")

    def test_other_minor_version_embedded(self):
        python = pyenv_python(12) or pyenv_python(13)
        if not python:
            self.skipTest("no pyenv Python 3.12 or 3.13 under %s" % PYENV)
        fake = self.fake(FAKE_ROCM)
        _, p = self.run_torch(python, env=fake.env())
        self.check_fake_rocm(p)
        py = p["facts"]["python"]
        self.assertEqual(py["mode"], "embedded", py)
        self.assertRegex(py["version"], r"^3\.1[23]\.")
        self.assertIn("libpython3.1", py["libpython"])

    def test_rocm_build_with_device_cross_checks(self):
        tmp = tempfile.mkdtemp(prefix="sc-lib-")
        self.addCleanup(shutil.rmtree, tmp, True)
        fake_hip = os.path.join(tmp, "libamdhip64.so.6")
        with open(os.path.join(tmp, "hip.c"), "w") as f:
            f.write("int hipInit(unsigned flags) { (void)flags; return 0; }\n")
        subprocess.run(["cc", "-shared", "-fPIC", "-o", fake_hip, os.path.join(tmp, "hip.c")],
                       check=True)
        fake = self.fake(FAKE_ROCM_DEVICE)
        r, p = self.run_torch(DEBIAN_PYTHON, env=fake.env(FAKE_HIP_LIB=fake_hip))
        t = p["facts"]["torch"]
        self.assertEqual(t["devices"][0]["arch"], "gfx90a:sramecc+:xnack-")
        self.assertEqual(t["miopen"], 3000000)
        arch = finding(p, "torch.no-arch-for-device")
        self.assertIn("gfx90a:sramecc+:xnack-", arch["message"])
        self.assertIn("gfx906", arch["message"])
        rt = finding(p, "torch.device-tensor-mismatch")
        self.assertIn("[0,2,4,7,8,10,12,14]", rt["message"].replace(".0", "").replace(" ", ""))
        self.assertFalse(p["facts"]["round_trip"]["ok"])
        mapped = {lib["name"]: lib for lib in t["mapped_libraries"]}
        self.assertEqual(mapped["libamdhip64.so.6"]["realpath"], fake_hip)
        self.assertEqual(mapped["libamdhip64.so.6"]["root_kind"], "other")
        runtime = (r.probe("runtime.hip")["facts"].get("runtime") or {}).get("realpath")
        if runtime:  # the runtime layer loaded a real HIP runtime: the two layers disagree
            mismatch = finding(p, "torch.runtime-mismatch")
            self.assertIn(fake_hip, mismatch["message"])
            self.assertIn(runtime, mismatch["message"])
        self.assertNotIn("torch.hip-build-no-device", sclib_ids(p))

    def test_every_pyenv_python3_embeds(self):
        versions = sorted(glob.glob(os.path.join(PYENV, "3.*", "bin", "python3")))
        versions = [v for v in versions if int(v.split(os.sep)[-3].split(".")[1]) >= 8]
        if not versions:
            self.skipTest("no pyenv Python 3.8+ under %s" % PYENV)
        fake = self.fake(FAKE_ROCM)
        for python in versions:
            with self.subTest(python=python):
                _, p = self.run_torch(python, env=fake.env())
                self.assertEqual(p["facts"]["python"]["mode"], "embedded")
                self.assertEqual(p["facts"]["python"]["executable"], python)
                self.check_fake_rocm(p)

    def test_import_failing_only_when_embedded_is_retried_in_a_subprocess(self):
        fake = self.fake(FAKE_EMBED_ONLY_FAILURE)
        _, p = self.run_torch(DEBIAN_PYTHON, env=fake.env())
        self.check_fake_rocm(p)  # the interpreter's own answer
        py = p["facts"]["python"]
        self.assertEqual(py["mode"], "subprocess")
        self.assertIn("failed only when embedded", py["embed_error"])
        self.assertIn("LIBDRM_9.9", py["embed_error"])
        self.assertNotIn("torch.import-failed", sclib_ids(p))

    def test_rocm_build_without_device_subprocess_mode(self):
        fake = self.fake(FAKE_ROCM)
        _, p = self.run_torch(DEBIAN_PYTHON, env=fake.env(STACKCHECK_PYTHON_SUBPROCESS="1"))
        self.check_fake_rocm(p)
        self.assertEqual(p["facts"]["python"]["mode"], "subprocess")

    def private_tmpdir(self):
        tmp = tempfile.mkdtemp(prefix="sc-tmpdir-")
        self.addCleanup(shutil.rmtree, tmp, True)
        return tmp

    def test_import_that_segfaults_is_a_crash_with_the_metadata_kept(self):
        fake = self.fake(FAKE_SEGFAULT)
        for subprocess_mode in ("0", "1"):
            with self.subTest(subprocess_mode=subprocess_mode):
                tmp = self.private_tmpdir()
                env = fake.env(TMPDIR=tmp, STACKCHECK_PYTHON_SUBPROCESS=subprocess_mode)
                r, p = self.run_torch(DEBIAN_PYTHON, env=env)
                self.assertEqual(os.listdir(tmp), [])  # the crashed child's directory is removed
                self.assertEqual(p["status"], "crash", p)
                self.assertIn("SIGSEGV", p["reason"])
                self.assertEqual(p["facts"]["metadata"]["torch"]["version"], FAKE_VERSION)
                self.assertIn("torch.import-crashed", sclib_ids(p))
                sclib.validate_snapshot(self, r.snapshot)
                self.assertEqual(r.rc, 1)

    def test_import_that_hangs_times_out(self):
        fake = self.fake(FAKE_HANG)
        tmp = self.private_tmpdir()
        r, p = self.run_torch(DEBIAN_PYTHON, env=fake.env(TMPDIR=tmp), extra_args=["--timeout", "3"])
        self.assertEqual(os.listdir(tmp), [])
        self.assertEqual(p["status"], "timeout", p)
        self.assertEqual(p["facts"]["metadata"]["torch"]["version"], FAKE_VERSION)
        self.assertIn("torch.import-hangs", sclib_ids(p))
        self.assertLess(p["duration_ms"], 60000)  # a deadline bound, with a wide margin
        self.assertEqual(r.rc, 1)

    def test_result_replaced_by_a_fifo_is_refused_not_waited_for(self):
        fake = self.fake(FAKE_RESULT_FIFO)
        tmp = self.private_tmpdir()
        r, p = self.run_torch(DEBIAN_PYTHON, env=fake.env(TMPDIR=tmp), extra_args=["--timeout", "30"])
        self.assertNotEqual(p["status"], "timeout", p)
        self.assertLess(p["duration_ms"], 25000, p)  # well before the deadline: nothing waited
        self.assertEqual(os.listdir(tmp), [])

    def check_loader_error(self, error, lib):
        self.assertEqual(error["loader"]["kind"], "undefined-symbol")
        self.assertEqual(error["loader"]["subject"], "hipMissingFunctionForTest")
        self.assertEqual(error["loader"]["file"], lib)
        analysis = error["analysis"]  # the libraries layer's analysis of the named file
        self.assertEqual(analysis["path"], lib)
        undefined = [f for f in analysis["findings"] if f["id"] == "libs.undefined-symbol"]
        self.assertTrue(undefined, analysis["findings"])
        self.assertIn("hipMissingFunctionForTest", undefined[0]["message"])

    def test_import_raising_undefined_symbol_names_the_library(self):
        tmp = tempfile.mkdtemp(prefix="sc-lib-")
        self.addCleanup(shutil.rmtree, tmp, True)
        lib = build_lib_with_undefined_symbol(tmp)
        fake = self.fake(FAKE_LOADER % lib)
        _, p = self.run_torch(DEBIAN_PYTHON, env=fake.env())
        f = finding(p, "torch.import-failed")
        self.assertIn("OSError", f["message"])
        self.assertIn(lib, f["message"])
        self.assertIn("hipMissingFunctionForTest", f["message"])
        self.assertIn("; analysis: undefined symbol hipMissingFunctionForTest", f["message"])
        self.check_loader_error(p["facts"]["import_error"], lib)
        self.assertEqual(p["facts"]["metadata"]["torch"]["version"], FAKE_VERSION)

    def test_user_modules_imported_after_torch(self):
        tmp = tempfile.mkdtemp(prefix="sc-lib-")
        self.addCleanup(shutil.rmtree, tmp, True)
        lib = build_lib_with_undefined_symbol(tmp)
        fake = self.fake(FAKE_ROCM, extra={"my_ext": FAKE_LOADER % lib, "my_ok": "X = 1\n"})
        _, p = self.run_torch(DEBIAN_PYTHON, env=fake.env(),
                              extra_args=["--import", "my_ok", "--import", "my_ext"])
        imports = {m["module"]: m for m in p["facts"]["imports"]}
        self.assertTrue(imports["my_ok"]["ok"])
        self.assertEqual(imports["my_ok"]["file"], os.path.join(fake.dir, "my_ok.py"))
        self.assertFalse(imports["my_ext"]["ok"])
        self.check_loader_error(imports["my_ext"]["error"], lib)
        self.assertIn("import my_ext failed", finding(p, "torch.module-import-failed")["message"])

    def test_venv_with_system_site_packages(self):
        if not debian_torch_version():
            self.skipTest("Debian's python3-torch is not installed")
        tmp = tempfile.mkdtemp(prefix="sc-venv-")
        self.addCleanup(shutil.rmtree, tmp, True)
        venv = os.path.join(tmp, "venv")
        subprocess.run([DEBIAN_PYTHON, "-m", "venv", "--without-pip", "--system-site-packages",
                        venv], check=True)
        fake = self.fake(FAKE_ROCM)
        python = os.path.join(venv, "bin", "python3")
        _, p = self.run_torch(python, env=fake.env())
        py = p["facts"]["python"]
        self.assertEqual(py["mode"], "embedded")
        self.assertEqual(py["prefix"], venv)
        self.assertEqual(py["base_prefix"], "/usr")
        self.assertIn(os.path.join(venv, "lib", "python3.11", "site-packages"), py["site_packages"])
        self.check_fake_rocm(p)

    def test_gated_probe_keeps_the_inventory(self):
        fake = self.fake(FAKE_ROCM)
        r = sclib.run(["--python", DEBIAN_PYTHON], env=fake.env())
        p = r.probe("framework.torch")
        if p["status"] != "skip":
            self.skipTest("the layers below passed on this machine; nothing is gated")
        self.assertIn("did not pass", p["reason"])
        self.assertEqual(p["facts"]["metadata"]["torch"]["version"], FAKE_VERSION)
        self.assertEqual(p["facts"]["python"]["executable"], DEBIAN_PYTHON)
        self.assertNotIn("torch", p["facts"])  # nothing was imported
        self.assertEqual(p["findings"], [])

    def test_gated_inventory_locates_the_interpreter_statically(self):
        # Nothing is run: the facts come from the files, and must agree with the interpreter's own.
        fake = self.fake(FAKE_ROCM)
        r = sclib.run(["--python", DEBIAN_PYTHON], env=fake.env())
        p = r.probe("framework.torch")
        if p["status"] != "skip":
            self.skipTest("the layers below passed on this machine; nothing is gated")
        py = p["facts"]["python"]
        self.assertEqual(py["located"], "static")
        with open(os.path.join(os.environ["SC_SOURCE_DIR"], "probes", "python_locate.py")) as f:
            code = f.read()
        out = subprocess.run([DEBIAN_PYTHON, "-c", code], env=dict(os.environ, **fake.env()),
                             capture_output=True, text=True, check=True).stdout
        own = json.loads(out.split("SC-PYINFO:")[-1])
        for key in ("version", "prefix", "base_prefix"):
            self.assertEqual(py[key], own[key], key)
        self.assertEqual(py["site_packages"], own["site_dirs"])
        self.assertEqual(py["libpython"], os.path.join(own["libdir"], own["instsoname"]))

    def test_gated_inventory_runs_a_script_wrapper(self):
        tmp = tempfile.mkdtemp(prefix="sc-wrap-")
        self.addCleanup(shutil.rmtree, tmp, True)
        wrapper = os.path.join(tmp, "python3")
        with open(wrapper, "w") as f:
            f.write("#!/bin/sh\nexec %s \"$@\"\n" % DEBIAN_PYTHON)
        os.chmod(wrapper, 0o755)
        r = sclib.run(["--python", wrapper])
        p = r.probe("framework.torch")
        if p["status"] != "skip":
            self.skipTest("the layers below passed on this machine; nothing is gated")
        py = p["facts"]["python"]
        self.assertEqual(py["located"], "ran")
        self.assertEqual(py["static_error"], "a script wrapper: " + wrapper)
        self.assertEqual(py["executable"], DEBIAN_PYTHON)
        self.assertRegex(py["version"], r"^3\.\d+\.\d+$")

    def test_missing_interpreter(self):
        _, p = self.run_torch("/nonexistent/python3")
        f = finding(p, "torch.python-not-found")
        self.assertIn("/nonexistent/python3", f["message"])

    def test_offline_lists_installations_from_metadata(self):
        root = tempfile.mkdtemp(prefix="sc-root-")
        self.addCleanup(shutil.rmtree, root, True)
        meta = os.path.join(root, "usr/lib/python3/dist-packages/torch-2.1.0.egg-info")
        os.makedirs(meta)
        with open(os.path.join(meta, "PKG-INFO"), "w") as f:
            f.write("Metadata-Version: 2.1\nName: torch\nVersion: 2.1.0\n")
        r = sclib.run(["--keep-going", "--sysroot", root])
        p = r.probe("framework.torch")
        self.assertEqual(p["facts"]["installations"],
                         [{"python": "/usr/bin/python3", "site": "/usr/lib/python3/dist-packages",
                           "version": "2.1.0"}])
        self.assertIsNone(p["facts"]["python"])


def sclib_ids(probe):
    return [f["id"] for f in probe["findings"]]


def finding(probe, finding_id):
    for f in probe["findings"]:
        if f["id"] == finding_id:
            return f
    raise AssertionError("no %s in %s" % (finding_id, probe["findings"]))


if __name__ == "__main__":
    sclib.main()
