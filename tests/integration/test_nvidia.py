"""driver.nvidia and runtime.cuda end to end with the real binary: an H200 node modelled on real
formats under --sysroot (devices, driver version, nodes, the CUDA toolkit inventory), the same node
with its driver, nodes or log broken one way at a time, a container without the NVIDIA nodes, real
permission denial for an unprivileged user, and the live run on this machine. Live, this machine
has no NVIDIA GPU, so the binary gates runtime.cuda as not applicable; its active part runs against
the stub libcuda in a private mount namespace over the H200 fixture's driver view (runtime_stubs.py):
the conformance table (test_conformance.py) runs every stub behaviour that way, and the real nvrtc
test here."""
import os
import shutil
import subprocess

import runtime_stubs
import sclib
import test_conformance
from sclib import unittest

BUSES = ["0000:18:00.0", "0000:2a:00.0"]
# Variables that would change what the probes see; each test sets what it needs.
CLEAN = {k: None for k in ("LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH", "CUDA_VISIBLE_DEVICES",
                           "SC_CUDASTUB_MODE")}


def has_nvidia_gpu():
    return runtime_stubs.machine_has("0x10de")


class NvidiaCase(sclib.SysrootCase):
    PROBE = "driver.nvidia"
    ENV = CLEAN


class H200(NvidiaCase):
    def test_healthy_node(self):
        r = self.sysroot(sclib.fixture("nvidia-h200"))
        p = self.drv(r)
        self.assertEqual(r.rc, 0, r.stdout)
        self.assertEqual((p["status"], p["applicable"]), ("pass", True))
        self.assertEqual(p["findings"], [])
        f = p["facts"]
        self.assertEqual(f["driver_version"], "550.127.05")
        self.assertEqual(f["proc_version"], "550.127.05")
        self.assertFalse(f["open_kernel_module"])
        self.assertEqual(f["module"], {"name": "nvidia", "initstate": "live",
                                       "version": "550.127.05", "uvm_loaded": True})
        # the NVSwitch (a bridge) and the BMC's VGA are not NVIDIA accelerators
        self.assertEqual([x["address"] for x in f["pci"]], BUSES)
        devs = f["devices"]
        self.assertEqual([d["pci_address"] for d in devs], BUSES)
        self.assertEqual([d["minor"] for d in devs], [0, 1])
        self.assertEqual(devs[0]["uuid"], "GPU-8f3c2a6e-1b7d-4e2f-9a0c-5d6e7f809a1b")
        for d in devs:
            self.assertEqual((d["device_id"], d["model"], d["vbios"], d["driver"]),
                             ("0x2335", "NVIDIA H200", "96.00.99.00.01", "nvidia"))
        self.assertEqual([n["path"] for n in f["device_nodes"]],
                         ["/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia0", "/dev/nvidia1"])
        self.assertTrue(all(n["exists"] and n["readable"] and n["writable"]
                            for n in f["device_nodes"]))
        self.assertEqual((f["kernel_log"]["readable"], f["kernel_log"]["error_lines"]), (True, 0))
        self.assertIsNone(r.snapshot["summary"]["first_failure"])

    def test_amd_not_applicable_and_no_second_verdict(self):
        r = self.sysroot(sclib.fixture("nvidia-h200"))
        amd = r.probe("driver.amd")
        self.assertEqual((amd["status"], amd["applicable"]), ("skip", False))
        self.assertIn("NVIDIA 0000:18:00.0", amd["reason"])
        self.assertNotIn("driver.no-accelerator", r.finding_ids())

    def test_cuda_inventory_offline(self):
        r = self.sysroot(sclib.fixture("nvidia-h200"))
        p = r.probe("runtime.cuda")
        self.assertEqual((p["status"], p["reason"], p["offline"]), ("skip", "offline (--sysroot)", True))
        f = p["facts"]
        self.assertEqual(f["toolkits"], [{"root": "/usr/local/cuda-12.4", "version": "12.4.1",
                                          "via": ["/usr/local/cuda", "/usr/local/cuda-12.4"]}])
        self.assertEqual((f["cuda_link"], f["toolkit_version"]), ("/usr/local/cuda-12.4", "12.4.1"))
        lib = f["driver_library"]
        self.assertEqual(lib["path"], "/usr/lib/x86_64-linux-gnu/libcuda.so.1")
        self.assertEqual(lib["realpath"], "/usr/lib/x86_64-linux-gnu/libcuda.so.550.127.05")
        self.assertEqual((lib["driver_version"], lib["found_via"]), ("550.127.05", "default"))
        self.assertIsNone(f["driver_api"])
        self.assertIn("offline", f["unavailable"]["driver_api"])
        self.assertEqual(p["findings"], [])

    def test_toolkit_from_cuda_home_and_version_txt(self):
        root = self.temp_copy("nvidia-h200")
        self.write(root, "opt/cuda-11.2/version.txt", "CUDA Version 11.2.152\n")
        os.makedirs(os.path.join(root, "opt/cuda-11.2/bin"))
        env = dict(CLEAN, CUDA_HOME="/opt/cuda-11.2")
        r = sclib.run(["--sysroot", root], env=env)
        tks = r.probe("runtime.cuda")["facts"]["toolkits"]
        self.assertEqual([(t["root"], t["version"]) for t in tks],
                         [("/usr/local/cuda-12.4", "12.4.1"), ("/opt/cuda-11.2", "11.2.152")])
        self.assertEqual(tks[1]["via"], ["CUDA_HOME=/opt/cuda-11.2"])

    def test_baked_in_libcuda_differs_from_module(self):
        root = self.temp_copy("nvidia-h200")
        lib = os.path.join(root, "usr/lib/x86_64-linux-gnu")
        os.rename(os.path.join(lib, "libcuda.so.550.127.05"), os.path.join(lib, "libcuda.so.535.104.05"))
        os.unlink(os.path.join(lib, "libcuda.so.1"))
        os.symlink("libcuda.so.535.104.05", os.path.join(lib, "libcuda.so.1"))
        r = self.sysroot(root)
        f = r.finding("nvidia.module-version-mismatch")
        self.assertIn("libcuda is 535.104.05", f["message"])
        self.assertIn("kernel module is 550.127.05", f["message"])

    def test_proc_and_module_versions_differ(self):
        root = self.temp_copy("nvidia-h200")
        self.write(root, "sys/module/nvidia/version", "550.54.15\n")
        r = self.sysroot(root)
        self.assertEqual(r.rc, 1)
        self.assertEqual(self.problems(r), ["nvidia.module-version-mismatch"])
        self.assertIn("550.54.15", r.finding("nvidia.module-version-mismatch")["message"])

    def test_xid_errors_in_kernel_log(self):
        root = self.temp_copy("nvidia-h200")
        self.write(root, "var/log/kern.log",
                   "Nov 29 09:12:01 h200-node kernel: [ 3001.1] NVRM: Xid (PCI:0000:2a:00): 79, "
                   "pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n"
                   "Nov 29 09:12:01 h200-node kernel: [ 3001.2] NVRM: GPU 0000:2a:00.0: GPU has "
                   "fallen off the bus.\n", append=True)
        r = self.sysroot(root)
        p = self.drv(r)
        self.assertEqual((p["status"], r.rc), ("warn", 0))
        f = r.finding("nvidia.kernel-log-errors")
        self.assertEqual(f["severity"], "warn")
        self.assertIn("2 NVRM error line(s) in /var/log/kern.log (1 Xid: 79, GPU fallen off the bus)",
                      f["message"])
        self.assertIn("GPU has fallen off the bus", f["message"])
        kl = p["facts"]["kernel_log"]
        self.assertEqual((kl["xids"], kl["xid_lines"], kl["error_lines"]), ([79], 1, 2))
        self.assertEqual([e["kind"] for e in kl["errors"]], ["xid", "fallen-off-bus"])

    def test_driver_not_loaded(self):
        root = self.temp_copy("nvidia-h200")
        shutil.rmtree(os.path.join(root, "sys/module/nvidia"))
        shutil.rmtree(os.path.join(root, "proc/driver/nvidia"))
        for bus in BUSES:
            link = os.path.join(root, "sys/bus/pci/devices", bus, "driver")
            os.unlink(link)
            os.symlink("../../../../bus/pci/drivers/nouveau", link)
        r = self.sysroot(root)
        p = self.drv(r)
        self.assertEqual((p["status"], r.rc), ("fail", 1))
        self.assertEqual(self.problems(r), ["nvidia.driver-not-loaded"])
        msg = r.finding("nvidia.driver-not-loaded")["message"]
        self.assertIn("2 NVIDIA GPU(s) on PCI, e.g. 0000:18:00.0 (0x10de:0x2335, driver nouveau)", msg)
        self.assertIn("module is not loaded", msg)
        self.assertIsNone(p["facts"]["driver_version"])
        self.assertIsNone(p["facts"]["devices"][0]["model"])
        self.assertIsNone(p["facts"]["device_nodes"])
        ff = r.snapshot["summary"]["first_failure"]
        self.assertEqual((ff["probe"], ff["finding"]), ("driver.nvidia", "nvidia.driver-not-loaded"))

    def test_uvm_node_missing_on_host(self):
        root = self.temp_copy("nvidia-h200")
        os.unlink(os.path.join(root, "dev/nvidia-uvm"))
        r = self.sysroot(root)
        self.assertEqual(self.problems(r), ["nvidia.device-node-missing"])
        f = r.finding("nvidia.device-node-missing")
        self.assertIn("/dev/nvidia-uvm does not exist (1 of 4", f["message"])
        self.assertIn("modprobe nvidia-uvm", f["hint"])

    def test_gpu_node_missing_on_host(self):
        root = self.temp_copy("nvidia-h200")
        os.unlink(os.path.join(root, "dev/nvidia1"))
        r = self.sysroot(root)
        self.assertEqual(self.problems(r), ["nvidia.device-node-missing"])
        f = r.finding("nvidia.device-node-missing")
        self.assertIn("/dev/nvidia1 does not exist", f["message"])
        self.assertIn("nvidia-modprobe", f["hint"])


class Container(NvidiaCase):
    def test_nodes_not_mapped(self):
        r = self.sysroot(sclib.fixture("nvidia-no-nodes"))
        p = self.drv(r)
        self.assertEqual((p["status"], r.rc), ("fail", 1))
        self.assertEqual(p["facts"]["container"], "docker")
        self.assertEqual(self.problems(r), ["nvidia.container-devices-not-mapped"])
        f = r.finding("nvidia.container-devices-not-mapped")
        self.assertIn("--gpus all", f["hint"])
        self.assertIn("nvidia-container-toolkit", f["hint"])
        self.assertIn("2 NVIDIA GPU(s)", f["message"])
        self.assertIn("nvidia.kernel-log-unreadable", r.finding_ids("driver.nvidia"))
        ff = r.snapshot["summary"]["first_failure"]
        self.assertEqual((ff["layer"], ff["probe"], ff["finding"]),
                         ("driver", "driver.nvidia", "nvidia.container-devices-not-mapped"))
        # one owner for "nothing here": driver.amd is not applicable, not failing
        self.assertEqual(r.probe("driver.amd")["applicable"], False)
        self.assertNotIn("driver.no-accelerator", r.finding_ids())

    def test_one_gpu_mapped(self):
        # docker --gpus device=0: the container sees every GPU in sysfs but one node
        root = self.temp_copy("nvidia-no-nodes")
        for n in ("nvidiactl", "nvidia-uvm", "nvidia0"):
            self.write(root, "dev/" + n, "")
        r = self.sysroot(root)
        p = self.drv(r)
        self.assertEqual(self.problems(r), [])
        self.assertEqual(p["status"], "pass")
        self.assertEqual(p["facts"]["mapped_gpus"], 1)


@unittest.skipUnless(os.geteuid() == 0, "needs root to chown and to drop to nobody")
class PermissionDenied(NvidiaCase):
    def test_nobody_is_denied(self):
        root = self.temp_copy("nvidia-h200")
        for dirpath, dirnames, _ in os.walk(root):
            for d in dirnames:
                os.chmod(os.path.join(dirpath, d), 0o755)
        for n in ("nvidiactl", "nvidia-uvm", "nvidia0", "nvidia1"):
            path = os.path.join(root, "dev", n)
            os.chown(path, 0, 44)  # video in the fixture's /etc/group
            os.chmod(path, 0o660)
        r = self.sysroot(root, user=sclib.unprivileged())
        p = self.drv(r)
        self.assertEqual((p["status"], r.rc), ("fail", 1))
        self.assertEqual(self.problems(r), ["nvidia.device-permission"])
        f = r.finding("nvidia.device-permission")
        self.assertIn("/dev/nvidiactl (and more) is not readable and writable by uid", f["message"])
        self.assertIn("mode 0660", f["message"])
        self.assertIn("group video (gid 44)", f["message"])
        self.assertIn("is not in group video", f["message"])
        self.assertIn("usermod -aG video", f["hint"])
        nodes = p["facts"]["device_nodes"]
        self.assertFalse(any(n["readable"] or n["writable"] for n in nodes))
        self.assertEqual({n["group"] for n in nodes}, {"video"})


@unittest.skipIf(has_nvidia_gpu(), "this machine has an NVIDIA GPU")
class LiveWithoutNvidia(NvidiaCase):
    def test_not_applicable(self):
        r = sclib.run([], env=CLEAN)
        sclib.validate_snapshot(self, r.snapshot)
        p = self.drv(r)
        self.assertEqual((p["status"], p["applicable"], p["findings"]), ("skip", False, []))
        self.assertEqual(p["reason"], "no NVIDIA GPU on PCI")
        cuda = r.probe("runtime.cuda")
        self.assertEqual((cuda["status"], cuda["applicable"]), ("skip", False))
        self.assertIn("no nvidia device", cuda["reason"])
        ff = r.snapshot["summary"]["first_failure"]
        if r.probe("driver.devices")["status"] == "fail":
            self.assertEqual((ff["probe"], ff["finding"]),
                             ("driver.devices", "driver.no-accelerator"))
        self.assertEqual(r.finding_ids().count("driver.no-accelerator"),
                         1 if r.probe("driver.devices")["status"] == "fail" else 0)


@unittest.skipIf(test_conformance.NVIDIA.usable(), test_conformance.NVIDIA.usable())
class StubInNamespace(NvidiaCase):
    """runtime.cuda live against the stub libcuda on the H200 fixture's driver view (see
    runtime_stubs.py); what each stub behaviour gives is the conformance table's."""

    @unittest.skipUnless(b"libnvrtc.so" in subprocess.run(["/sbin/ldconfig", "-p"],
                                                          capture_output=True).stdout,
                         "no nvrtc in the ld.so.cache")
    def test_real_nvrtc(self):
        # libcuda alone on LD_LIBRARY_PATH: the system's nvrtc compiles the kernel for sm_90 for
        # real; the stub "runs" the cubin
        r = test_conformance.NVIDIA.run("ok", with_nvrtc=False)
        self.assertIsNotNone(r.snapshot, r.stderr)
        self.assertEqual(self.drv(r)["status"], "pass", self.drv(r)["findings"])
        p = r.probe("runtime.cuda")
        self.assertEqual(p["status"], "pass", p["findings"])
        rtc = p["facts"]["driver_api"]["nvrtc"]
        self.assertFalse(rtc["realpath"].startswith(test_conformance.NVIDIA.tmp), rtc)
        self.assertRegex(rtc["version"], r"^1[1-9]\.\d+$")
        for d in p["facts"]["devices"]:
            self.assertTrue(d["kernel_verified"])
            self.assertGreater(d["compile_ms"], 0)


if __name__ == "__main__":
    sclib.main()
