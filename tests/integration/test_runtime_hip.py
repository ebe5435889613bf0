"""runtime.hip end to end: Debian's real libamdhip64 on this machine (no device), an old stub runtime
that lacks symbols, an architecture override, a missing library, and the passive inventory of
fixture roots with several DTK and ROCm installs under --sysroot. What runtime.hip reports for each
behaviour of the stub runtime (a working pair of devices, a crash, a hang, garbage answers, each
runtime error) is in the conformance table, test_conformance.py."""
import os

import sclib
from sclib import unittest

REAL_HIP = "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5"
# Variables that would change what the probe sees; each test sets what it needs.
CLEAN = {k: None for k in ("LD_LIBRARY_PATH", "ROCM_PATH", "HIP_PATH", "HIP_VISIBLE_DEVICES",
                           "ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL",
                           "HSA_OVERRIDE_GFX_VERSION", "SC_HIPSTUB_MODE")}


def env(**extra):
    e = dict(CLEAN)
    e.update(extra)
    return e


def run_stub(mode, *args, library="hipstub", **extra):
    return sclib.run(["--keep-going", "--hip-library", sclib.stub(library)] + list(args),
                     env=env(SC_HIPSTUB_MODE=mode, **extra))


class RealRuntime(unittest.TestCase):
    @unittest.skipUnless(os.path.exists(REAL_HIP), "Debian's libamdhip64 5.2 is not installed")
    def test_real_runtime_sees_no_device(self):
        r = sclib.run(["--keep-going"], env=env())
        sclib.validate_snapshot(self, r.snapshot)
        p = r.probe("runtime.hip")
        self.assertEqual(p["status"], "fail")
        self.assertIn("hip.no-device", r.finding_ids("runtime.hip"))
        msg = r.finding("hip.no-device")["message"]
        self.assertIn("hipErrorNoDevice", msg)   # the runtime's own error name
        self.assertIn("driver.amd", msg)         # the driver layer's evidence
        rt = p["facts"]["runtime"]
        self.assertEqual(rt["version"], "5.2.21153")
        self.assertEqual(rt["version_raw"], 50221153)
        self.assertEqual(rt["realpath"], os.path.realpath(REAL_HIP))
        self.assertEqual(rt["root_kind"], "system")
        self.assertEqual(p["facts"]["device_count"], 0)
        # the passive pick agrees with what dlopen loaded
        self.assertEqual(p["facts"]["runtime_library"]["realpath"], os.path.realpath(REAL_HIP))
        self.assertTrue(rt["matches_loader_pick"])
        self.assertEqual(r.rc, 1)

    @unittest.skipUnless(os.path.exists(REAL_HIP), "Debian's libamdhip64 5.2 is not installed")
    def test_real_runtime_by_path(self):
        r = sclib.run(["--keep-going", "--hip-library", REAL_HIP], env=env())
        p = r.probe("runtime.hip")
        self.assertEqual(p["facts"]["runtime"]["realpath"], os.path.realpath(REAL_HIP))
        self.assertIn("hip.no-device", r.finding_ids("runtime.hip"))


class StubRuntimes(unittest.TestCase):
    """What each stub behaviour gives is the conformance table's (test_conformance.py); these need
    another library or environment."""

    def test_missing_symbol_is_too_old(self):
        r = run_stub("ok", library="hipstub_old")
        p = r.probe("runtime.hip")
        self.assertEqual(p["status"], "fail")
        msg = r.finding("hip.runtime-too-old")["message"]
        self.assertIn("hipDeviceGetAttribute", msg)
        self.assertIn("3.5.20214", msg)
        self.assertEqual(p["facts"]["runtime"]["version"], "3.5.20214")

    def test_arch_override_warns(self):
        r = run_stub("ok", HSA_OVERRIDE_GFX_VERSION="9.0.8")
        p = r.probe("runtime.hip")
        self.assertEqual(p["status"], "warn")
        msg = r.finding("hip.arch-overridden")["message"]
        self.assertIn("9.0.8", msg)
        self.assertIn("gfx90a", msg)

    def test_missing_library(self):
        r = sclib.run(["--keep-going", "--hip-library", "/nonexistent/libamdhip64.so.6"],
                      env=env())
        p = r.probe("runtime.hip")
        self.assertEqual(p["status"], "fail")
        self.assertIn("/nonexistent/libamdhip64.so.6",
                      r.finding("hip.runtime-load-failed")["message"])


class Inventory(unittest.TestCase):
    def hip(self, name, **extra):
        r = sclib.run(["--keep-going", "--sysroot", sclib.fixture(name)], env=env(**extra))
        sclib.validate_snapshot(self, r.snapshot)
        return r, r.probe("runtime.hip")

    def test_hygon_two_dtks(self):
        r, p = self.hip("hygon-dcu")
        # offline the probe is skipped, and its passive inventory is still recorded
        self.assertEqual(p["status"], "skip")
        self.assertEqual(p["reason"], "offline (--sysroot)")
        msg = r.finding("hip.multiple-installs")["message"]
        self.assertIn("/opt/dtk-24.04.1 (dtk 24.04.1)", msg)
        self.assertIn("/opt/dtk-25.04.2 (dtk 25.04.2)", msg)
        self.assertIn("/opt/dtk -> /opt/dtk-25.04.2", msg)
        f = p["facts"]
        self.assertEqual(f["links"], {"/opt/dtk": "/opt/dtk-25.04.2"})
        roots = {i["root"]: i for i in f["installs"]}
        self.assertEqual(roots["/opt/dtk-24.04.1"]["version"], "24.04.1")
        self.assertEqual(roots["/opt/dtk-25.04.2"]["hip_version"], "6.3.25103")
        self.assertIn("/opt/dtk", roots["/opt/dtk-25.04.2"]["via"])
        self.assertIsNone(f["runtime"])
        self.assertIn("offline", f["unavailable"]["runtime"])
        # without env.sh sourced, the loader finds no libgalaxyhip
        self.assertIn("hip.runtime-not-found", r.finding_ids("runtime.hip"))

    def test_hygon_env_sh_picks_galaxyhip(self):
        r, p = self.hip("hygon-dcu", LD_LIBRARY_PATH="/opt/dtk/lib:/opt/dtk/hip/lib",
                        ROCM_PATH="/opt/dtk")
        lib = p["facts"]["runtime_library"]
        self.assertEqual(lib["name"], "libgalaxyhip.so.5")
        self.assertEqual(lib["realpath"], "/opt/dtk-25.04.2/hip/lib/libgalaxyhip.so.5")
        self.assertEqual(lib["found_via"], "ld_library_path")
        self.assertEqual(lib["root"], "/opt/dtk-25.04.2")
        self.assertEqual(lib["install_version"], "25.04.2")
        self.assertNotIn("hip.path-mixes-roots", r.finding_ids("runtime.hip"))
        self.assertNotIn("hip.runtime-not-found", r.finding_ids("runtime.hip"))

    def test_hygon_path_mixes_roots(self):
        r, p = self.hip("hygon-dcu", LD_LIBRARY_PATH="/opt/dtk-24.04.1/hip/lib:/opt/dtk/lib")
        msg = r.finding("hip.path-mixes-roots")["message"]
        self.assertIn("/opt/dtk-24.04.1 (/opt/dtk-24.04.1/hip/lib)", msg)
        self.assertIn("/opt/dtk-25.04.2 (/opt/dtk/lib)", msg)
        self.assertEqual(p["facts"]["runtime_library"]["root"], "/opt/dtk-24.04.1")

    def test_rocm_multi(self):
        r, p = self.hip("rocm-multi", ROCM_PATH="/opt/rocm-5.7.1")
        msg = r.finding("hip.multiple-installs")["message"]
        for part in ("/opt/rocm-5.7.1 (rocm 5.7.1-79)", "/opt/rocm-6.2.0 (rocm 6.2.0-66)",
                     "/opt/rocm -> /opt/rocm-6.2.0"):
            self.assertIn(part, msg)
        f = p["facts"]
        roots = {i["root"]: i for i in f["installs"]}
        self.assertIn("ROCM_PATH=/opt/rocm-5.7.1", roots["/opt/rocm-5.7.1"]["via"])
        self.assertIsNone(roots["/opt/rocm-4.5.2"]["version"])  # malformed .info/version
        self.assertIn("malformed", roots["/opt/rocm-4.5.2"]["unavailable"]["version"])
        lib = f["runtime_library"]
        self.assertEqual(lib["realpath"], "/opt/rocm-6.2.0/lib/libamdhip64.so.6.2.60200")
        self.assertEqual(lib["found_via"], "ld.so.conf")
        self.assertEqual(lib["install_version"], "6.2.0-66")

    def test_sysroot_never_escapes_to_host_runtime(self):
        r, p = self.hip("kfd-cpu-only")
        self.assertIsNone(p["facts"]["runtime_library"])
        self.assertEqual(p["facts"]["installs"], [])


if __name__ == "__main__":
    sclib.main()
