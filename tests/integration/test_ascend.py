"""driver.ascend and runtime.acl end to end with the real binary: a 910B node modelled on real
formats under --sysroot (PCI, driver/firmware/toolkit version files, modules, nodes), the seed's
node whose firmware is two major versions behind its driver, the same node broken one way at a
time, a container without the Ascend nodes, real permission denial for an unprivileged user, and
the live run on this machine (no Ascend NPU: both probes not applicable). runtime.acl's active part
against the stub libascendcl runs in unit.test_ascend, through the runner."""
import os
import shutil

import sclib
from sclib import unittest

BUSES = ["0000:81:00.0", "0000:c1:00.0"]
CLEAN = {k: None for k in ("LD_LIBRARY_PATH", "ASCEND_RT_VISIBLE_DEVICES",
                           "ASCEND_VISIBLE_DEVICES", "SC_ACLSTUB_MODE")}


class AscendCase(sclib.SysrootCase):
    PROBE = "driver.ascend"
    ENV = CLEAN

    def problems(self, r):
        return sorted(super().problems(r))


class Healthy910B(AscendCase):
    def test_healthy_node(self):
        r = self.sysroot(sclib.fixture("ascend-910b"))
        p = self.drv(r)
        self.assertEqual(r.rc, 0, r.stdout)
        self.assertEqual((p["status"], p["applicable"]), ("pass", True))
        self.assertEqual(p["findings"], [])
        f = p["facts"]
        self.assertEqual(f["driver"]["version"], "24.1.rc3")
        self.assertEqual(f["driver"]["ascendhal_version"], "7.35.23")
        self.assertEqual(f["driver"]["innerversion"], "V100R001C19SPC002B225")
        self.assertEqual(f["driver"]["compatible_version_fw"], "[7.0.0,7.5.99]")
        self.assertEqual(f["firmware"]["version"], "7.5.0.1.129")
        self.assertTrue(f["firmware_compatible"])
        self.assertEqual(f["install_path"], "/usr/local/Ascend")
        self.assertEqual((f["toolkit"]["version"], f["toolkit"]["path"]),
                         ("8.0.RC3", "/usr/local/Ascend/ascend-toolkit/8.0.RC3"))
        self.assertEqual(f["toolkit"]["package_name"], "Ascend-cann-toolkit")
        # the BMC's Huawei VGA (0x1711, class 0x0300) is not an NPU
        self.assertEqual([x["address"] for x in f["pci"]], BUSES)
        self.assertEqual([(d["pci_address"], d["device_id"], d["model"]) for d in f["devices"]],
                         [(b, "0xd802", "Ascend 910B") for b in BUSES])
        self.assertEqual([m["name"] for m in f["modules"]][:2],
                         ["drv_davinci_intf_host", "drv_devdrv_host"])
        self.assertEqual([n["path"] for n in f["device_nodes"]],
                         ["/dev/davinci0", "/dev/davinci1", "/dev/davinci_manager",
                          "/dev/devmm_svm", "/dev/hisi_hdc"])
        self.assertTrue(all(n["exists"] and n["readable"] and n["writable"]
                            for n in f["device_nodes"]))
        self.assertEqual(f["mapped_npus"], 2)
        self.assertEqual((f["kernel_log"]["readable"], f["kernel_log"]["error_lines"]), (True, 0))
        self.assertIsNone(r.snapshot["summary"]["first_failure"])

    def test_other_vendors_not_applicable(self):
        r = self.sysroot(sclib.fixture("ascend-910b"))
        for pid in ("driver.amd", "driver.nvidia"):
            p = r.probe(pid)
            self.assertEqual((p["status"], p["applicable"]), ("skip", False), pid)
        self.assertNotIn("driver.no-accelerator", r.finding_ids())

    def test_acl_inventory_offline(self):
        r = self.sysroot(sclib.fixture("ascend-910b"))
        p = r.probe("runtime.acl")
        self.assertEqual((p["status"], p["reason"], p["applicable"]),
                         ("skip", "offline (--sysroot)", True))
        f = p["facts"]
        self.assertEqual([t["version"] for t in f["toolkits"]], ["8.0.RC3"])
        self.assertIsNone(f["acl"])
        self.assertIn("offline", f["unavailable"]["acl"])
        self.assertIsNone(f["library"])

    def test_acl_library_pick_follows_ld_library_path(self):
        root = self.temp_copy("ascend-910b")
        lib = "usr/local/Ascend/ascend-toolkit/8.0.RC3/lib64"
        os.makedirs(os.path.join(root, lib), exist_ok=True)
        shutil.copy(sclib.stub("aclstub"), os.path.join(root, lib, "libascendcl.so"))
        r = self.sysroot(root)
        self.assertIn("a toolkit has one in /usr/local/Ascend/ascend-toolkit/8.0.RC3/lib64",
                      r.probe("runtime.acl")["facts"]["unavailable"]["library"])
        env = dict(CLEAN, LD_LIBRARY_PATH="/usr/local/Ascend/ascend-toolkit/latest/lib64")
        r = self.sysroot(root, env=env)
        got = r.probe("runtime.acl")["facts"]["library"]
        self.assertEqual(got["found_via"], "ld_library_path")
        self.assertEqual(got["realpath"], "/" + lib + "/libascendcl.so")

    def test_cann_85_layout(self):
        root = self.temp_copy("ascend-910b")
        shutil.rmtree(os.path.join(root, "usr/local/Ascend/ascend-toolkit"))
        self.write(root, "usr/local/Ascend/cann-8.5.0/aarch64-linux/ascend_toolkit_install.info",
                   "package_name=Ascend-cann-toolkit\nversion=8.5.0\narch=aarch64\n")
        p = self.drv(self.sysroot(root))
        self.assertEqual(p["findings"], [])
        self.assertEqual((p["facts"]["toolkit"]["version"], p["facts"]["toolkit"]["arch"]),
                         ("8.5.0", "aarch64"))


class Broken(AscendCase):
    def test_old_firmware(self):
        r = self.sysroot(sclib.fixture("ascend-old-firmware"))
        p = self.drv(r)
        self.assertEqual((p["status"], r.rc), ("fail", 1))
        self.assertEqual(self.problems(r),
                         ["ascend.firmware-incompatible", "ascend.kernel-log-errors"])
        f = r.finding("ascend.firmware-incompatible")
        self.assertEqual(f["severity"], "error")
        self.assertIn("firmware 5.1.0.2.220", f["message"])
        self.assertIn("driver 24.1.rc3", f["message"])
        self.assertIn("[7.0.0,7.5.99]", f["message"])
        self.assertIn("reboot", f["hint"])
        self.assertFalse(p["facts"]["firmware_compatible"])
        self.assertIn("heartbeat lost", r.finding("ascend.kernel-log-errors")["message"])
        first = r.snapshot["summary"]["first_failure"]
        self.assertEqual((first["probe"], first["finding"]),
                         ("driver.ascend", "ascend.firmware-incompatible"))
        self.assertEqual(r.probe("runtime.acl")["status"], "skip")

    def test_firmware_unknown(self):
        root = self.temp_copy("ascend-910b")
        os.unlink(os.path.join(root, "usr/local/Ascend/firmware/version.info"))
        r = self.sysroot(root)
        self.assertEqual(self.problems(r), ["ascend.firmware-unknown"])
        self.assertIn("[7.0.0,7.5.99]", r.finding("ascend.firmware-unknown")["message"])
        self.assertEqual(self.drv(r)["status"], "warn")

    def test_driver_not_installed(self):
        root = self.temp_copy("ascend-910b")
        shutil.rmtree(os.path.join(root, "usr/local/Ascend/driver"))
        r = self.sysroot(root)
        self.assertEqual(self.problems(r), ["ascend.driver-not-installed"])
        msg = r.finding("ascend.driver-not-installed")["message"]
        self.assertIn("2 Ascend NPU(s) on PCI, e.g. 0000:81:00.0 (0x19e5:0xd802)", msg)
        self.assertIn("no driver version.info under /usr/local/Ascend", msg)
        self.assertIsNone(self.drv(r)["facts"]["device_nodes"])

    def test_toolkit_missing(self):
        root = self.temp_copy("ascend-910b")
        shutil.rmtree(os.path.join(root, "usr/local/Ascend/ascend-toolkit"))
        r = self.sysroot(root)
        self.assertEqual(self.problems(r), ["ascend.toolkit-missing"])
        self.assertIsNone(self.drv(r)["facts"]["toolkit"])

    def test_nodes_missing(self):
        root = self.temp_copy("ascend-910b")
        for n in ("davinci1", "hisi_hdc"):
            os.unlink(os.path.join(root, "dev", n))
        r = self.sysroot(root)
        self.assertEqual(self.problems(r), ["ascend.device-node-missing"])
        self.assertIn("/dev/davinci1 does not exist (2 of 5",
                      r.finding("ascend.device-node-missing")["message"])

    def test_container_without_nodes(self):
        root = self.temp_copy("ascend-910b")
        for n in ("davinci0", "davinci1", "davinci_manager", "devmm_svm", "hisi_hdc"):
            os.unlink(os.path.join(root, "dev", n))
        self.write(root, ".dockerenv", "")
        r = self.sysroot(root)
        self.assertEqual(self.drv(r)["facts"]["container"], "docker")
        self.assertEqual(self.problems(r), ["ascend.container-devices-not-mapped"])
        hint = r.finding("ascend.container-devices-not-mapped")["hint"]
        for flag in ("--device=/dev/davinci0", "--device=/dev/davinci_manager",
                     "--device=/dev/devmm_svm", "--device=/dev/hisi_hdc",
                     "-v /usr/local/Ascend/driver:/usr/local/Ascend/driver"):
            self.assertIn(flag, hint)

    def test_nodes_without_pci_still_applicable(self):
        root = self.temp_copy("ascend-910b")
        shutil.rmtree(os.path.join(root, "sys/bus/pci/devices/0000:81:00.0"))
        shutil.rmtree(os.path.join(root, "sys/bus/pci/devices/0000:c1:00.0"))
        p = self.drv(self.sysroot(root))
        self.assertTrue(p["applicable"])
        self.assertEqual(p["facts"]["mapped_npus"], 2)

    def test_no_npu_not_applicable(self):
        r = self.sysroot(sclib.fixture("nvidia-h200"))
        p = self.drv(r)
        self.assertEqual((p["status"], p["applicable"]), ("skip", False))
        self.assertEqual(p["findings"], [])


@unittest.skipUnless(os.geteuid() == 0, "needs root to chown and to drop to nobody")
class PermissionDenied(AscendCase):
    def test_nobody_is_denied(self):
        root = self.temp_copy("ascend-910b")
        for dirpath, dirnames, _ in os.walk(root):
            for d in dirnames:
                os.chmod(os.path.join(dirpath, d), 0o755)
        for n in ("davinci0", "davinci1", "davinci_manager", "devmm_svm", "hisi_hdc"):
            path = os.path.join(root, "dev", n)
            os.chown(path, 0, 1000)  # HwHiAiUser in the fixture's /etc/group
            os.chmod(path, 0o660)
        r = self.sysroot(root, user=sclib.unprivileged())
        p = self.drv(r)
        self.assertEqual((p["status"], r.rc), ("fail", 1))
        self.assertEqual(self.problems(r), ["ascend.device-permission"])
        f = r.finding("ascend.device-permission")
        self.assertIn("/dev/davinci0 (and more) is not readable and writable by uid", f["message"])
        self.assertIn("mode 0660", f["message"])
        self.assertIn("group HwHiAiUser (gid 1000)", f["message"])
        self.assertIn("usermod -aG HwHiAiUser", f["hint"])
        self.assertEqual({n["group"] for n in p["facts"]["device_nodes"]}, {"HwHiAiUser"})


def has_huawei_npu():
    base = "/sys/bus/pci/devices"
    for d in os.listdir(base) if os.path.isdir(base) else []:
        try:
            with open(os.path.join(base, d, "vendor")) as f:
                if f.read().strip() == "0x19e5":
                    return True
        except OSError:
            pass
    return os.path.exists("/dev/davinci0")


@unittest.skipIf(has_huawei_npu(), "this machine has an Ascend NPU")
class Live(AscendCase):
    def test_live_not_applicable(self):
        r = sclib.run([], env=CLEAN)
        self.assertIsNotNone(r.snapshot, r.stderr)
        for pid in ("driver.ascend", "runtime.acl"):
            p = r.probe(pid)
            self.assertEqual((p["status"], p["applicable"]), ("skip", False), pid)
            self.assertEqual(p["findings"], [], pid)
        self.assertEqual(r.probe("driver.ascend")["reason"],
                         "no Huawei Ascend NPU on PCI and no /dev/davinci*")
        first = r.snapshot["summary"]["first_failure"]
        self.assertEqual((first["probe"], first["finding"]),
                         ("driver.devices", "driver.no-accelerator"))

    def test_explain_and_list(self):
        r = sclib.run(["explain", "ascend.firmware-incompatible"], json_file=False)
        self.assertEqual(r.rc, 0, r.stderr)
        self.assertIn("compatible_version_fw", r.stdout)
        r = sclib.run(["list"], json_file=False)
        self.assertIn("driver.ascend", r.stdout)
        self.assertIn("runtime.acl", r.stdout)


if __name__ == "__main__":
    sclib.main()
