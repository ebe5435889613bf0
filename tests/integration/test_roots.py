"""Install roots by what they contain, and one loader pick. Temporary sysroots built here hold
DTK-like roots under a prefix that is not /opt (/public/software/compiler/dtk-*, as on DCU
clusters), conda-like environments, a CUDA toolkit, split Python wheels and hyhal, with tiny shared
objects linked through RUNPATH: `stackcheck libs` names mixed installs wherever they live and stays
quiet for one install. On this machine, the loader's pick of the runtime probe and of the libraries
layer agrees with ld.so --list for real libraries (libamdhip64, libz), also where LD_LIBRARY_PATH
holds another copy, or a file ld.so stops at."""
import os
import shutil
import subprocess
import tempfile
import unittest

import sclib
from test_libs import by_name, ids, libs, so

DTK = "/public/software/compiler/dtk-%s"
LDSO = "/lib64/ld-linux-x86-64.so.2"
REAL_HIP = "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5"
SYSLIB = "/usr/lib/x86_64-linux-gnu"


def write(path, text=""):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


class MixedRootsAnywhere(unittest.TestCase):
    """libs.mixed-roots from what the roots contain, inside a temporary sysroot."""

    @classmethod
    def setUpClass(cls):
        cls.root = r = tempfile.mkdtemp(prefix="sc-roots-")
        for v in ("24.04", "25.04"):
            write(r + DTK % v + "/.info/version", v + "\n")
            os.makedirs(r + DTK % v + "/.hyhal", exist_ok=True)
            write(r + DTK % v + "/bin/hipcc")
        cls.lib(DTK % "24.04" + "/lib/libamdhip64.so.5")
        cls.lib(DTK % "24.04" + "/lib/libhipblas.so.0")
        cls.lib(DTK % "25.04" + "/lib/libhipblas.so.0")
        for env in ("a", "b", "c"):
            os.makedirs(r + "/home/u/envs/%s/conda-meta" % env, exist_ok=True)
        cls.lib("/home/u/envs/a/lib/libamdhip64.so.5")
        cls.lib("/home/u/envs/b/lib/libhipblas.so.0")
        cls.lib("/home/u/envs/c/lib/libamdhip64.so.5")
        cls.lib("/home/u/envs/c/lib/libhipblas.so.0")
        write(r + "/hw/hyhal/bin/hy-smi")
        cls.lib("/hw/hyhal/lib/libhydmi.so.1")
        # CUDA: a toolkit by its markers, a conda environment's runtime, the driver's libcuda
        write(r + "/sw/cuda-12.4/version.json", "{}")
        write(r + "/sw/cuda-12.4/bin/nvcc")
        cls.lib("/sw/cuda-12.4/lib64/libcudart.so.12")
        cls.lib("/sw/cuda-12.4/lib64/libcublas.so.12")
        os.makedirs(r + "/home/u/envs/cu/conda-meta", exist_ok=True)
        cls.lib("/home/u/envs/cu/lib/libcudart.so.12")
        cls.lib(SYSLIB + "/libcuda.so.1")
        # ROCm as split wheels of one Python environment
        site = "/venv/lib/python3.12/site-packages"
        cls.lib(site + "/_rocm_sdk_core/lib/libamdhip64.so.5")
        cls.lib(site + "/_rocm_sdk_libraries/lib/libhipblas.so.0")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.root, ignore_errors=True)

    @classmethod
    def lib(cls, path):
        name = os.path.basename(path)
        so(cls.root + path, "int f_%s(void){return 0;}\n" % name.split(".")[0][3:].replace("-", "_"),
           name)

    def app(self, name, needed, runpath, more_dirs=()):
        """An ELF under /app needing the names (found at link time in runpath and more_dirs),
        with RUNPATH runpath; libs' answer for it."""
        out = "/app/%s.so" % name
        if not os.path.exists(self.root + out):
            dirs = runpath.split(":") + list(more_dirs)
            so(self.root + out, "int app(void){return 0;}\n", name + ".so",
               ["-L" + self.root + d for d in dirs] + ["-l:" + n for n in needed],
               ["-Wl,--enable-new-dtags", "-Wl,-rpath," + runpath])
        rc, doc, err = libs(["--sysroot", self.root, out], env={"LD_LIBRARY_PATH": None})
        self.assertIsNotNone(doc, err)
        return rc, doc["files"][0]

    def mixed(self, f):
        return [x["message"] for x in f["findings"] if x["id"] == "libs.mixed-roots"]

    def test_two_dtks_under_public_software(self):
        rc, f = self.app("mixed_dtk", ["libamdhip64.so.5", "libhipblas.so.0"],
                         DTK % "25.04" + "/lib:" + DTK % "24.04" + "/lib")
        hip, blas = by_name(f, "libamdhip64.so.5"), by_name(f, "libhipblas.so.0")
        self.assertEqual((hip["root"], hip["root_kind"]), (DTK % "24.04", "dtk"))
        self.assertEqual((blas["root"], blas["root_kind"]), (DTK % "25.04", "dtk"))
        (msg,) = self.mixed(f)
        self.assertIn(DTK % "24.04", msg)
        self.assertIn(DTK % "25.04", msg)
        self.assertIn("RUNPATH of /app/mixed_dtk.so entry " + DTK % "25.04" + "/lib", msg)
        self.assertEqual(rc, 1)

    def test_one_dtk_is_clean(self):
        rc, f = self.app("one_dtk", ["libamdhip64.so.5", "libhipblas.so.0"], DTK % "24.04" + "/lib")
        self.assertEqual(ids(f), [])
        self.assertEqual(by_name(f, "libhipblas.so.0")["root"], DTK % "24.04")

    def test_two_conda_environments(self):
        rc, f = self.app("mixed_conda", ["libamdhip64.so.5", "libhipblas.so.0"],
                         "/home/u/envs/b/lib:/home/u/envs/a/lib")
        self.assertEqual(by_name(f, "libhipblas.so.0")["root_kind"], "conda")
        (msg,) = self.mixed(f)
        self.assertIn("/home/u/envs/a", msg)
        self.assertIn("/home/u/envs/b", msg)

    def test_one_conda_environment_is_clean(self):
        rc, f = self.app("one_conda", ["libamdhip64.so.5", "libhipblas.so.0"], "/home/u/envs/c/lib")
        self.assertEqual(self.mixed(f), [])
        self.assertEqual(by_name(f, "libamdhip64.so.5")["root"], "/home/u/envs/c")

    def test_conda_against_a_dtk(self):
        rc, f = self.app("conda_dtk", ["libamdhip64.so.5", "libhipblas.so.0"],
                         "/home/u/envs/b/lib:" + DTK % "24.04" + "/lib")
        (msg,) = self.mixed(f)
        self.assertIn("/home/u/envs/b", msg)
        self.assertIn(DTK % "24.04", msg)

    def test_hyhal_beside_a_dtk_is_clean(self):
        rc, f = self.app("dtk_hyhal", ["libamdhip64.so.5", "libhydmi.so.1"],
                         DTK % "24.04" + "/lib:/hw/hyhal/lib")
        self.assertEqual(by_name(f, "libhydmi.so.1")["root_kind"], "hyhal")
        self.assertEqual(self.mixed(f), [])

    def test_cuda_in_conda_against_the_toolkit(self):
        rc, f = self.app("mixed_cuda", ["libcudart.so.12", "libcublas.so.12", "libcuda.so.1"],
                         "/home/u/envs/cu/lib:/sw/cuda-12.4/lib64", [SYSLIB])
        self.assertEqual(by_name(f, "libcublas.so.12")["root_kind"], "cuda")
        (msg,) = self.mixed(f)
        self.assertIn("/home/u/envs/cu", msg)
        self.assertIn("/sw/cuda-12.4", msg)

    def test_the_driver_beside_the_toolkit_is_clean(self):
        rc, f = self.app("one_cuda", ["libcudart.so.12", "libcublas.so.12", "libcuda.so.1"],
                         "/sw/cuda-12.4/lib64", [SYSLIB])
        self.assertEqual(by_name(f, "libcuda.so.1")["root_kind"], "system")
        self.assertEqual(ids(f), [])

    def test_split_wheels_of_one_environment_are_clean(self):
        site = "/venv/lib/python3.12/site-packages"
        rc, f = self.app("wheels", ["libamdhip64.so.5", "libhipblas.so.0"],
                         site + "/_rocm_sdk_core/lib:" + site + "/_rocm_sdk_libraries/lib")
        self.assertEqual(by_name(f, "libhipblas.so.0")["root"], site + "/_rocm_sdk_libraries")
        self.assertEqual(self.mixed(f), [])


def ldso_list(elf, env):
    """{name: real path} of what ld.so --list loads for elf, or the error it stops with."""
    r = subprocess.run([LDSO, "--list", elf], env=env, capture_output=True, text=True)
    found = {}
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] == "=>":
            found[parts[0]] = os.path.realpath(parts[2])
    return found, r.stderr


@unittest.skipUnless(os.path.exists(REAL_HIP) and os.access(LDSO, os.X_OK),
                     "Debian's libamdhip64 5.2 or the x86-64 loader is missing")
class LoaderAgreesWithLdSo(sclib.TempDirCase):
    """The loader model against the real loader on this machine."""

    def setUp(self):
        super().setUp()
        self.elf = os.path.join(self.tmp, "app")
        src = os.path.join(self.tmp, "app.c")
        write(src, "int main(void){return 0;}\n")
        subprocess.run(["cc", "-o", self.elf, src, "-Wl,--no-as-needed", "-l:libamdhip64.so.5",
                        "-lz"], check=True, capture_output=True)

    def compare(self, ld_library_path):
        env = dict(os.environ)
        env.pop("LD_LIBRARY_PATH", None)
        if ld_library_path:
            env["LD_LIBRARY_PATH"] = ld_library_path
        want, err = ldso_list(self.elf, env)
        path = ["--ld-library-path", ld_library_path] if ld_library_path else []
        rc, doc, err2 = libs(path + [self.elf], env={"LD_LIBRARY_PATH": None})
        f = doc["files"][0]
        for name in ("libamdhip64.so.5", "libz.so.1"):
            self.assertEqual(by_name(f, name)["realpath"], want[name], name)
        return f

    def test_libraries_layer_agrees(self):
        self.compare(None)
        copy = os.path.join(self.tmp, "copy")
        os.makedirs(copy)
        shutil.copy("/lib/x86_64-linux-gnu/libz.so.1", copy)
        f = self.compare(copy)
        self.assertEqual(by_name(f, "libz.so.1")["found_via"], "ld_library_path")

    def test_a_file_ld_so_stops_at(self):
        bad = os.path.join(self.tmp, "bad")
        write(os.path.join(bad, "libz.so.1"), "not ELF\n")
        env = dict(os.environ, LD_LIBRARY_PATH=bad)
        want, err = ldso_list(self.elf, env)
        self.assertIn(bad + "/libz.so.1", err)  # ld.so fails there, not on the next copy
        # stackcheck itself needs libz: the path is given to the analysis, not to its process
        rc, doc, err2 = libs(["--ld-library-path", bad, self.elf], env={"LD_LIBRARY_PATH": None})
        f = doc["files"][0]
        self.assertEqual(by_name(f, "libz.so.1")["path"], bad + "/libz.so.1")
        self.assertIn("libs.unreadable", ids(f))

    def test_runtime_probe_agrees(self):
        r = sclib.run(["--keep-going", "--python", sclib.quick_python()],
                      env={"LD_LIBRARY_PATH": None, "HIP_VISIBLE_DEVICES": None})
        want, err = ldso_list(self.elf, {k: v for k, v in os.environ.items()
                                         if k != "LD_LIBRARY_PATH"})
        pick = r.probe("runtime.hip")["facts"]["runtime_library"]
        self.assertEqual(pick["realpath"], want["libamdhip64.so.5"])
        self.assertEqual((pick["found_via"], pick["root_kind"]), ("cache", "system"))
        hip_files = r.probe("libraries.hip")["facts"]["files"]
        self.assertEqual(hip_files[0]["realpath"], want["libamdhip64.so.5"])


if __name__ == "__main__":
    sclib.main()
