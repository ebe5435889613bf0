"""The driver layer on fixture roots transcribed from public bug reports (tests/fixtures/
make_public_dumps.py; each root's README.md cites its source): what stackcheck says about each
real failure, which device it names, and which remedy it chooses from the facts (module live or
not, device bound or not, ASIC supported or not, the kernel's error class)."""
import os
import shutil
import sys

import sclib
from sclib import unittest

sys.path.insert(0, sclib.FIXTURES)
import make_many_gpus  # noqa: E402


class AmdDumps(sclib.SysrootCase):
    PROBE = "driver.amd"

    def test_psp_firmware_missing(self):
        # kernelci/kernelci-core#2238: the APU's probe failed for want of psp_13_0_8_toc.bin
        r = self.sysroot(sclib.fixture("amd-psp-firmware-missing"))
        p = self.drv(r)
        self.assertEqual((p["status"], r.rc), ("fail", 1))
        self.assertEqual(self.problems(r), ["amd.kernel-log-errors", "amd.device-failed"])
        f = r.finding("amd.device-failed")
        self.assertIn("0000:04:00.0 (0x1002:0x1506, Mendocino gfx1037, driver none)", f["message"])
        self.assertIn("psp_13_0_8_toc.bin", f["message"])
        self.assertIn("(firmware-load-failed)", f["message"])
        self.assertIn("install the firmware", f["hint"])
        self.assertNotIn("modprobe", f["hint"])
        pci = p["facts"]["pci"][0]
        self.assertEqual(pci["kernel_reason"]["kind"], "firmware-load-failed")
        self.assertEqual([e["kind"] for e in pci["kernel_log"]],
                         ["firmware-load-failed", "firmware-load-failed",
                          "psp-firmware-load-failed"])
        kinds = [e["kind"] for e in p["facts"]["kernel_log"]["errors"]]
        self.assertIn("init-failed", kinds)

    def test_one_of_four_mi210_fails_psp_ring(self):
        # ROCm/legacy-rocm-build#2747: PSP create ring failed on c7:00.0, its siblings came up
        r = self.sysroot(sclib.fixture("mi210-psp-ring-failed"))
        p = self.drv(r)
        self.assertEqual((p["status"], r.rc), ("fail", 1))
        self.assertEqual(self.problems(r), ["amd.kernel-log-errors", "amd.device-failed"])
        f = r.finding("amd.device-failed")
        self.assertIn("0000:c7:00.0 (0x1002:0x740f, Aldebaran gfx90a, driver none)", f["message"])
        self.assertIn("PSP create ring failed", f["message"])
        self.assertIn("update the driver and its firmware together", f["hint"])
        self.assertNotIn("VM", f["hint"])  # not taken for passthrough
        self.assertEqual(len(p["facts"]["devices"]), 3)
        self.assertEqual(r.snapshot["summary"]["first_failure"]["finding"], "amd.device-failed")

    def test_kfd_did_missing_on_an_old_kernel(self):
        # ROCm/legacy-rocm-build#719: 4.20's KFD refuses the Picasso APU; no gfx_target_version
        r = self.sysroot(sclib.fixture("kfd-did-missing"))
        p = self.drv(r)
        self.assertEqual((p["status"], r.rc), ("fail", 1))
        f = r.finding("amd.asic-unsupported")
        self.assertIn("0000:05:00.0 (0x1002:0x15d8, Picasso gfx902, driver amdgpu)", f["message"])
        self.assertIn("DID 15d8 is missing in supported_devices", f["message"])
        self.assertIn("gfx9 and later", f["hint"])
        dev = p["facts"]["devices"][0]
        self.assertEqual((dev["gfx_target"], dev["gfx_target_source"]), ("gfx803", "pci_id"))
        self.assertEqual((dev["chip"], dev["family"]), ("Polaris 11", "GCN4 (Polaris)"))
        self.assertIsNone(dev["gfx_target_version"])

    def test_si_gpu_on_radeon_is_unsupported(self):
        r = self.sysroot(sclib.fixture("amd-si-radeon"))
        self.assertEqual(r.rc, 1)
        self.assertEqual(self.problems(r), ["amd.asic-unsupported"])
        f = r.finding("amd.asic-unsupported")
        self.assertIn("Tahiti gfx600, driver radeon", f["message"])
        self.assertIn("never supported SI", f["message"])
        self.assertNotIn("modprobe", f["hint"])
        self.assertIn("CDNA", f["hint"])
        self.assertEqual(r.probe("driver.devices")["facts"]["present"], ["amd"])


class AmdRemedies(sclib.SysrootCase):
    """Each remedy of the AMD driver verdicts, pinned to the facts that choose it."""
    PROBE = "driver.amd"

    def test_module_live_but_unbound_is_not_told_to_modprobe(self):
        root = self.temp_copy("amd-no-driver")
        make_many_gpus.kernel_module(root, "amdgpu")
        r = self.sysroot(root)
        f = r.finding("amd.driver-not-loaded")
        self.assertIn("none is bound", f["message"])
        self.assertNotIn("modprobe", f["hint"])
        self.assertIn("probe in the kernel log", f["hint"])

    def test_module_absent_is_told_to_load_it(self):
        r = self.sysroot(sclib.fixture("amd-no-driver"))
        self.assertIn("sudo modprobe amdgpu", r.finding("amd.driver-not-loaded")["hint"])

    def test_unbound_sibling_with_live_driver_fails(self):
        root = self.temp_copy("mi250x-8gcd")
        make_many_gpus.pci_device(root, "0000:e1:00.0", 0x1002, 0x740c, 0x038000)
        r = self.sysroot(root)
        self.assertEqual((self.drv(r)["status"], r.rc), ("fail", 1))
        f = r.finding("amd.device-failed")
        self.assertIn("0000:e1:00.0 (0x1002:0x740c, Aldebaran gfx90a, driver none) is bound to no "
                      "driver while amdgpu is loaded and 8 sibling(s) are bound", f["message"])

    def test_vfio_passthrough_stays_a_warning(self):
        root = self.temp_copy("mi250x-8gcd")
        make_many_gpus.pci_device(root, "0000:e1:00.0", 0x1002, 0x740c, 0x038000, "vfio-pci")
        r = self.sysroot(root)
        self.assertEqual((self.drv(r)["status"], r.rc), ("warn", 0))
        self.assertIn("driver vfio-pci", r.finding("amd.device-no-driver")["message"])
        self.assertNotIn("amd.device-failed", r.finding_ids())

    def test_failed_gpu_reset_is_hardware(self):
        root = self.temp_copy("mi250x-8gcd")
        make_many_gpus.pci_device(root, "0000:e1:00.0", 0x1002, 0x740c, 0x038000)
        # ROCm/legacy-rocm-build#2804, with the device's address
        self.write(root, "var/log/kern.log",
                   "[  649.968330] [drm] VRAM is lost due to GPU reset!\n"
                   "[  650.160935] amdgpu 0000:e1:00.0: amdgpu: GPU reset(1) failed\n", append=True)
        r = self.sysroot(root)
        f = r.finding("amd.device-failed")
        self.assertIn("(gpu-reset-failed)", f["message"])
        self.assertIn("a hardware fault", f["hint"])


class NvidiaDumps(sclib.SysrootCase):
    PROBE = "driver.nvidia"

    def test_fallen_off_the_bus_without_xid(self):
        # NVIDIA/NVSentinel#155: the multi-line message of 570, no Xid; the GPU is unbound
        r = self.sysroot(sclib.fixture("nvidia-fallen-off-bus"))
        p = self.drv(r)
        self.assertEqual((p["status"], r.rc), ("fail", 1))
        self.assertEqual(self.problems(r), ["nvidia.kernel-log-errors", "nvidia.device-failed"])
        f = r.finding("nvidia.device-failed")
        self.assertIn("GPU 0000:b3:00.0: the GPU stopped answering on PCIe", f["message"])
        self.assertIn("drain the node", f["hint"])
        self.assertNotIn("install", f["hint"])  # not "install the NVIDIA driver"
        devs = {d["pci_address"]: d for d in p["facts"]["devices"]}
        self.assertEqual(devs["0000:b3:00.0"]["kernel_reason"]["kind"], "fallen-off-bus")
        # no information file for the lost GPU: its PCI id still names it
        lost = devs["0000:b3:00.0"]
        self.assertIsNone(lost["model"])
        self.assertEqual((lost["pci_name"], lost["compute_capability"], lost["architecture"]),
                         ("NVIDIA L40", "8.9", "Ada Lovelace"))
        self.assertNotIn("kernel_log", devs["0000:3b:00.0"])

    def test_rminitadapter_failed(self):
        # NVIDIA/nvtrust#77
        r = self.sysroot(sclib.fixture("nvidia-rminit-failed"))
        self.assertEqual(r.rc, 1)
        f = r.finding("nvidia.device-failed")
        self.assertIn("GPU 0000:01:00.0: the driver could not initialise the GPU", f["message"])
        self.assertIn("RmInitAdapter failed! (0x62:0x1a:1792)", f["message"])
        self.assertIn("driver release that supports this GPU", f["hint"])

    def test_gpu_held_by_nouveau_is_told_to_unbind(self):
        root = self.temp_copy("nvidia-h200")
        for bus in ("0000:18:00.0", "0000:2a:00.0"):
            make_many_gpus.link(root, "sys/bus/pci/devices/%s/driver" % bus,
                                "../../../../bus/pci/drivers/nouveau")
        r = self.sysroot(root)
        f = r.finding("nvidia.driver-not-loaded")
        self.assertIn("another driver holds the GPU", f["hint"])
        self.assertNotIn("install", f["hint"])

    def test_gsp_timeouts_and_nvlink_xids_are_named(self):
        # NVIDIA/open-gpu-kernel-modules#1045 (Xid 119) and ublue-os/bazzite#4449 (heartbeat)
        root = self.temp_copy("nvidia-h200")
        self.write(root, "var/log/kern.log",
                   "kernel: NVRM: Xid (PCI:0000:18:00): 119, pid=1, name=x, Timeout after 45s of "
                   "waiting for RPC response from GPU0 GSP! Expected function 76 (GSP_RM_CONTROL)\n"
                   "kernel: NVRM: GPU0 _kgspIsHeartbeatTimedOut: Heartbeat timed out, "
                   "currentTimeMs 322227881 heartbeat 0\n"
                   "kernel: NVRM: GPU0 _kgspRpcRecvPoll: GSP RM heartbeat timed out\n"
                   "kernel: NVRM: Xid (PCI:0000:2a:00): 145, pid=2, name=y, NVLINK: RLW error\n",
                   append=True)
        r = self.sysroot(root)
        kl = self.drv(r)["facts"]["kernel_log"]
        self.assertEqual([e["kind"] for e in kl["errors"]],
                         ["xid", "gsp-heartbeat-timeout", "gsp-heartbeat-timeout", "xid"])
        self.assertEqual(kl["xids"], [119, 145])
        f = r.finding("nvidia.device-failed")  # the NVLink Xid fails 2a:00.0, the GSP timeout warns
        self.assertIn("GPU 0000:2a:00.0: NVLink error", f["message"])
        self.assertEqual([x["id"] for x in self.drv(r)["findings"]].count("nvidia.device-failed"), 1)


class Census(sclib.SysrootCase):
    """The backend-neutral census: platform GPUs, APUs, an SI GPU, and absent backends that
    contribute nothing, offline too."""
    PROBE = "driver.devices"

    def test_jetson_is_an_nvidia_machine(self):
        # nix-community/nixGL#139: a Jetson Orin NX, no PCI GPU, /proc/driver/nvidia present
        r = self.sysroot(sclib.fixture("jetson-orin-nx"))
        census = self.drv(r)
        self.assertEqual(census["status"], "pass")
        self.assertEqual(census["facts"]["present"], ["nvidia"])
        self.assertEqual(census["facts"]["backends"]["nvidia"]["driver_devices"], 1)
        self.assertNotIn("driver.no-accelerator", r.finding_ids())
        nv = r.probe("driver.nvidia")
        self.assertEqual((nv["status"], nv["applicable"]), ("pass", True))
        self.assertEqual(nv["facts"]["platform_gpus"], 1)
        self.assertEqual(nv["facts"]["driver_version"], "35.3.1")
        self.assertTrue(nv["facts"]["open_kernel_module"])
        amd = r.probe("driver.amd")
        self.assertEqual((amd["status"], amd["applicable"]), ("skip", False))
        self.assertEqual(r.rc, 0)

    def test_absent_backend_contributes_nothing_offline(self):
        for name in ("jetson-orin-nx", "nvidia-h200"):
            r = self.sysroot(sclib.fixture(name))
            ids = r.finding_ids()
            self.assertFalse([i for i in ids if i.startswith(("hip.", "amd.", "ascend.", "acl."))],
                             (name, ids))
            hip = r.probe("runtime.hip")
            self.assertEqual((hip["status"], hip["applicable"]), ("skip", False), name)
            self.assertNotIn("offline", hip)
            self.assertEqual(hip["facts"], {})

    def test_apu_is_a_gpu_and_a_cpu(self):
        r = self.sysroot(sclib.fixture("amd-apu-strix-halo"))
        self.assertEqual(r.probe("driver.devices")["facts"]["present"], ["amd"])
        amd = r.probe("driver.amd")
        self.assertEqual(amd["status"], "pass")
        dev = amd["facts"]["devices"][0]
        self.assertEqual((dev["gfx_target"], dev["chip"], dev["apu"]),
                         ("gfx1151", "Strix Halo", True))
        self.assertEqual((amd["facts"]["kfd"]["gpu_nodes"], amd["facts"]["kfd"]["cpu_nodes"]),
                         (1, 1))

    def test_combined_apu_node_counts_twice(self):
        # a CRAT APU node (Kaveri/Carrizo style) has CPU cores and SIMDs in one node
        root = self.temp_copy("amd-apu-strix-halo")
        shutil.rmtree(os.path.join(root, "sys/class/kfd/kfd/topology/nodes/0"))
        path = os.path.join(root, "sys/class/kfd/kfd/topology/nodes/1/properties")
        with open(path) as f:
            text = f.read().replace("cpu_cores_count 0\n", "cpu_cores_count 16\n")
        with open(path, "w") as f:
            f.write(text)
        r = self.sysroot(root)
        kfd = r.probe("driver.amd")["facts"]["kfd"]
        self.assertEqual((kfd["nodes"], kfd["gpu_nodes"], kfd["cpu_nodes"]), (1, 1, 1))

    def test_si_gpu_is_seen_and_judged(self):
        r = self.sysroot(sclib.fixture("amd-si-radeon"))
        self.assertEqual(self.drv(r)["facts"]["backends"]["amd"]["pci"], 1)
        self.assertEqual(r.probe("driver.amd")["status"], "fail")
        self.assertNotIn("driver.no-accelerator", r.finding_ids())


if __name__ == "__main__":
    sclib.main()
