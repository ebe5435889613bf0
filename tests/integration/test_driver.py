"""driver.amd on fixture roots modelled on real machines (8-GCD MI250X, Hygon DCU, a container
without /dev/kfd, a GPU without driver, a CPU-only KFD, a plain server, 64 generated GPUs), on
this machine, through symlinks that try to leave the root, and with real permission denial for an
unprivileged user."""
import os
import shutil
import subprocess
import sys
import tempfile

import sclib
from sclib import unittest

sys.path.insert(0, sclib.FIXTURES)
import make_many_gpus  # noqa: E402

MI250X_BUSES = ["c1", "c6", "c9", "ce", "d1", "d6", "d9", "de"]


def probe_ids():
    """The probes of the table, from `stackcheck list`."""
    r = sclib.run(["list"], json_file=False)
    lines = r.stdout.split("\n\n")[0].splitlines()[1:]
    return [line.split()[0] for line in lines if line.strip()]


class DriverCase(sclib.SysrootCase):
    PROBE = "driver.amd"
    ENV = None


class Fixtures(DriverCase):
    def test_mi250x_healthy(self):
        r = self.sysroot(sclib.fixture("mi250x-8gcd"))
        p = self.drv(r)
        self.assertEqual(r.rc, 0, r.stderr)
        self.assertEqual(p["status"], "pass")
        self.assertEqual(p["findings"], [])
        self.assertEqual(r.layer("driver")["status"], "pass")
        f = p["facts"]
        devs = f["devices"]
        self.assertEqual(len(devs), 8)
        self.assertEqual([d["pci_address"] for d in devs],
                         ["0000:%s:00.0" % b for b in MI250X_BUSES])
        self.assertEqual([d["render_node"] for d in devs],
                         ["/dev/dri/renderD%d" % m for m in range(128, 136)])
        self.assertEqual([d["node"] for d in devs], list(range(1, 9)))
        for d in devs:
            self.assertEqual(d["gfx_target"], "gfx90a")
            self.assertEqual(d["gfx_target_version"], 90010)
            self.assertEqual((d["vendor"], d["vendor_id"], d["device_id"]), ("amd", "0x1002", "0x740c"))
            self.assertEqual(d["name"], "aldebaran")
            self.assertEqual(d["compute_units"], 110)
            self.assertEqual(d["wavefront_size"], 64)
            self.assertEqual(d["vram_bytes"], 68702699520)
            self.assertEqual(d["fw_version"], 78)
            self.assertEqual(d["num_xcc"], 1)
            self.assertIsInstance(d["gpu_id"], int)
        self.assertEqual(len({d["gpu_id"] for d in devs}), 8)
        # the BMC's ASPEED VGA (0x1a03, class 0x0300) is not an accelerator
        self.assertEqual([x["address"] for x in f["pci"]], ["0000:%s:00.0" % b for b in MI250X_BUSES])
        self.assertEqual({x["driver"] for x in f["pci"]}, {"amdgpu"})
        self.assertEqual(f["module"], {"name": "amdgpu", "initstate": "live", "version": "6.3.6"})
        self.assertEqual(f["kfd"], {"present": True, "nodes": 9, "gpu_nodes": 8, "cpu_nodes": 1})
        self.assertEqual(len(f["device_nodes"]), 9)
        self.assertEqual(f["device_nodes"][0]["path"], "/dev/kfd")
        self.assertTrue(all(n["exists"] for n in f["device_nodes"]))
        self.assertEqual(len(f["drm"]), 8)
        self.assertEqual(f["drm"][0]["pci_address"], "0000:c1:00.0")
        self.assertEqual(f["drm"][0]["render_node"], "/dev/dri/renderD128")
        self.assertEqual((f["drm"][0]["driver"], f["drm"][0]["source"]), ("amdgpu", "sysfs"))
        self.assertIsNone(f["drm"][0]["version"])
        self.assertIn("drmGetVersion", f["drm"][0]["unavailable"]["version"])
        # the nvme "timeout" line is not the driver's
        self.assertEqual(f["kernel_log"]["source"], "/var/log/kern.log")
        self.assertTrue(f["kernel_log"]["readable"])
        self.assertEqual(f["kernel_log"]["error_lines"], 0)
        self.assertIsNone(r.snapshot["summary"]["first_failure"])

    def test_active_probes_skip_offline(self):
        r = self.sysroot(sclib.fixture("mi250x-8gcd"))
        self.assertEqual(self.drv(r)["status"], "pass")
        self.assertFalse(self.drv(r).get("offline", False))
        # app probes run the user's code: active by definition, so skipped offline
        ids = probe_ids()
        self.assertIn("driver.amd", ids)
        for pid in [i for i in ids if i.startswith("app.")]:
            p = r.probe(pid)
            self.assertEqual((p["status"], p["reason"]), ("skip", "offline (--sysroot)"), pid)
        offline = [p for layer in r.snapshot["layers"] for p in layer["probes"] if p.get("offline")]
        for p in offline:
            self.assertEqual((p["status"], p["reason"]), ("skip", "offline (--sysroot)"), p["id"])
        self.assertNotIn("driver", [layer["name"] for layer in r.snapshot["layers"]
                                    if any(p.get("offline") for p in layer["probes"])])

    def test_hygon_dcu(self):
        r = self.sysroot(sclib.fixture("hygon-dcu"))
        p = self.drv(r)
        # the layers above judge this root's DTK installs; the driver layer itself only warns
        self.assertEqual(p["status"], "warn")
        self.assertEqual(r.layer("driver")["status"], "warn")
        ff = r.snapshot["summary"]["first_failure"]
        self.assertTrue(ff is None or ff["layer"] != "driver", ff)
        f = p["facts"]
        self.assertEqual(len(f["devices"]), 4)
        for d in f["devices"]:
            self.assertEqual((d["vendor"], d["vendor_id"]), ("hygon", "0x1d94"))
            self.assertEqual((d["gfx_target"], d["gfx_target_version"]), ("gfx928", 90208))
            self.assertEqual((d["name"], d["compute_units"]), ("K100_AI", 120))
            self.assertEqual(d["vram_bytes"], 64 << 30)
        self.assertEqual({x["class"] for x in f["pci"]}, {"0x0b4000"})
        self.assertEqual(len(f["pci"]), 4)  # the Hygon host bridge (class 0x0600) is not listed
        self.assertEqual(f["module"]["name"], "hydcu")
        self.assertEqual(f["module"]["version"], "6.3.8-V1.13.3")
        self.assertEqual(r.finding_ids("driver.amd"), ["amd.kernel-log-errors"])
        fnd = r.finding("amd.kernel-log-errors")
        self.assertEqual(fnd["severity"], "warn")
        self.assertIn("ring gfx_0.0.0 timeout", fnd["message"])
        self.assertIn("3 driver error line(s)", fnd["message"])
        kinds = [e["kind"] for e in f["kernel_log"]["errors"]]
        self.assertEqual(kinds, ["ring-timeout", "gpu-reset", "gpu-reset"])

    def test_container_without_devices(self):
        r = self.sysroot(sclib.fixture("container-no-kfd"))
        p = self.drv(r)
        self.assertEqual(r.rc, 1)
        self.assertEqual(p["status"], "fail")
        self.assertEqual(p["facts"]["container"], "docker")
        self.assertEqual(len(p["facts"]["devices"]), 2)
        self.assertEqual(self.problems(r), ["amd.container-devices-not-mapped"])
        # a container image has no kern.log: said, not hidden
        self.assertIn("amd.kernel-log-unreadable", r.finding_ids("driver.amd"))
        self.assertFalse(p["facts"]["kernel_log"]["readable"])
        self.assertIn("not readable", p["facts"]["kernel_log"]["unavailable"]["errors"])
        fnd = r.finding("amd.container-devices-not-mapped")
        self.assertIn("--device=/dev/kfd --device=/dev/dri", fnd["hint"])
        self.assertIn("2 GPU(s)", fnd["message"])
        ff = r.snapshot["summary"]["first_failure"]
        self.assertEqual((ff["layer"], ff["probe"], ff["finding"]),
                         ("driver", "driver.amd", "amd.container-devices-not-mapped"))

    def test_container_gpu_subset(self):
        # sysfs is not namespaced: a container given one of the GPUs still sees all of them
        root = self.temp_copy("container-no-kfd")
        make_many_gpus.write(root, "dev/kfd")
        make_many_gpus.write(root, "dev/dri/renderD128")
        r = self.sysroot(root)
        p = self.drv(r)
        self.assertEqual(r.rc, 0, p["findings"])
        self.assertEqual(p["status"], "pass")
        self.assertEqual(self.problems(r), [])
        fnd = r.finding("amd.container-gpu-subset")
        self.assertEqual(fnd["severity"], "info")
        self.assertIn("render nodes of 1 of the 2 GPU(s)", fnd["message"])
        self.assertIn("/dev/dri/renderD129", fnd["message"])

    def test_render_node_missing_on_host(self):
        root = self.temp_copy("mi250x-8gcd")
        os.unlink(os.path.join(root, "dev/dri/renderD131"))
        r = self.sysroot(root)
        self.assertEqual(r.rc, 1)
        self.assertEqual(self.problems(r), ["amd.render-node-missing"])
        fnd = r.finding("amd.render-node-missing")
        self.assertIn("/dev/dri/renderD131 does not exist (1 of 8", fnd["message"])
        self.assertIn("udev", fnd["hint"])

    def test_kfd_missing_on_host(self):
        root = self.temp_copy("mi250x-8gcd")
        os.unlink(os.path.join(root, "dev/kfd"))
        r = self.sysroot(root)
        self.assertEqual(self.problems(r), ["amd.kfd-missing"])
        self.assertIn("8 GPU node(s)", r.finding("amd.kfd-missing")["message"])

    def test_device_left_out(self):
        root = self.temp_copy("mi250x-8gcd")
        # one GCD bound to vfio-pci for a VM, one more device the KFD does not list
        make_many_gpus.link(root, "sys/bus/pci/devices/0000:de:00.0/driver",
                            "../../../../bus/pci/drivers/vfio-pci")
        make_many_gpus.pci_device(root, "0000:e1:00.0", 0x1002, 0x740c, 0x038000, "amdgpu")
        make_many_gpus.pci_device(root, "0000:e2:00.0", 0x1002, 0x740c, 0x038000, "amdgpu")
        r = self.sysroot(root)
        self.assertEqual(self.drv(r)["status"], "warn")
        self.assertEqual(self.problems(r), ["amd.device-no-driver", "amd.kfd-fewer-gpus"])
        self.assertIn("0000:de:00.0 (0x1002:0x740c, Aldebaran gfx90a, driver vfio-pci)",
                      r.finding("amd.device-no-driver")["message"])
        self.assertIn("9 accelerator(s) bound", r.finding("amd.kfd-fewer-gpus")["message"])

    def test_gpu_without_driver(self):
        r = self.sysroot(sclib.fixture("amd-no-driver"))
        p = self.drv(r)
        self.assertEqual(r.rc, 1)
        self.assertEqual(r.finding_ids("driver.amd"), ["amd.driver-not-loaded"])
        fnd = r.finding("amd.driver-not-loaded")
        self.assertIn("0000:23:00.0 (0x1002:0x738c, driver none)", fnd["message"])
        self.assertIn("modprobe amdgpu", fnd["hint"])
        self.assertIsNone(p["facts"]["module"])
        self.assertIn("amdgpu", p["facts"]["unavailable"]["module"])
        self.assertFalse(p["facts"]["kfd"]["present"])
        self.assertIsNone(p["facts"]["pci"][0]["driver"])

    def test_driver_without_kfd(self):
        root = self.temp_copy("amd-no-driver")
        make_many_gpus.kernel_module(root, "amdgpu")
        make_many_gpus.link(root, "sys/bus/pci/devices/0000:23:00.0/driver",
                            "../../../../bus/pci/drivers/amdgpu")
        r = self.sysroot(root)
        self.assertEqual(r.finding_ids("driver.amd"), ["amd.driver-not-loaded"])
        self.assertIn("no KFD topology", r.finding("amd.driver-not-loaded")["message"])

    def test_kfd_cpu_only(self):
        r = self.sysroot(sclib.fixture("kfd-cpu-only"))
        p = self.drv(r)
        self.assertEqual(r.rc, 1)
        self.assertEqual(p["status"], "fail")
        ids = r.finding_ids("driver.amd")
        self.assertEqual(r.snapshot["summary"]["first_failure"]["finding"], "amd.kfd-no-gpu")
        self.assertIn("amd.kernel-log-errors", ids)  # "skipped device ... PCI rejects atomics"
        self.assertIn("skipped device 1002:67df", r.finding("amd.kernel-log-errors")["message"])
        self.assertIn("0000:04:00.0", r.finding("amd.kfd-no-gpu")["message"])
        # the remedy follows the kernel's reason: the KFD skipped it for PCIe atomics
        self.assertIn("does not pass atomic operations", r.finding("amd.kfd-no-gpu")["hint"])
        self.assertEqual(p["facts"]["kfd"]["cpu_nodes"], 1)
        self.assertEqual(p["facts"]["devices"], [])
        self.assertIsNone(p["facts"]["module"]["version"])  # in-kernel amdgpu has no version
        self.assertIn("in-kernel", p["facts"]["module"]["unavailable"]["version"])
        self.assertEqual(len(p["facts"]["pci"]), 1)  # the card's HDMI audio is not listed

    def test_plain_server(self):
        r = self.sysroot(sclib.fixture("plain-server"))
        p = self.drv(r)
        self.assertEqual(r.rc, 1)
        self.assertEqual(r.finding_ids("driver.devices"), ["driver.no-accelerator"])
        self.assertEqual(p["facts"]["pci"], [])
        self.assertIsNone(p["facts"]["device_nodes"])
        ff = r.snapshot["summary"]["first_failure"]
        self.assertEqual((ff["layer"], ff["finding"]), ("driver", "driver.no-accelerator"))

    def test_other_vendor_is_not_applicable(self):
        for vendor, cls, word in ((0x10de, 0x030200, "NVIDIA"), (0x19e5, 0x120000, "Huawei")):
            root = self.temp_copy("plain-server")
            make_many_gpus.pci_device(root, "0000:41:00.0", vendor, 0x2330, cls, "somedriver")
            r = self.sysroot(root)
            p = self.drv(r)
            self.assertEqual(p["status"], "skip", word)
            self.assertFalse(p["applicable"])
            self.assertEqual(p["reason"], "no AMD or Hygon accelerator (found: %s 0000:41:00.0)" % word)
            self.assertEqual(p["findings"], [])
            # another vendor's probe may judge its own device; driver.amd never fails the run here
            ff = r.snapshot["summary"]["first_failure"]
            self.assertTrue(ff is None or ff["probe"] != "driver.amd", ff)
            self.assertNotIn("driver.no-accelerator", r.finding_ids())

    def test_64_gpus(self):
        root = tempfile.mkdtemp(prefix="sc-64-")
        self.addCleanup(shutil.rmtree, root, True)
        subprocess.run([sys.executable, os.path.join(sclib.FIXTURES, "make_many_gpus.py"), root],
                       check=True)
        r = self.sysroot(root)
        p = self.drv(r)
        self.assertEqual(r.rc, 0, r.stderr)
        self.assertEqual(p["status"], "pass")
        devs = p["facts"]["devices"]
        self.assertEqual(len(devs), 64)
        self.assertEqual({d["gfx_target"] for d in devs}, {"gfx942"})
        self.assertEqual({d["compute_units"] for d in devs}, {304})
        self.assertEqual(len({d["pci_address"] for d in devs}), 64)
        self.assertEqual({d["pci_address"][:4] for d in devs}, {"%04x" % i for i in range(8)})
        self.assertEqual(sorted(d["render_node"] for d in devs),
                         sorted("/dev/dri/renderD%d" % m for m in range(128, 192)))
        self.assertEqual(p["facts"]["kfd"]["cpu_nodes"], 2)
        self.assertEqual(len(p["facts"]["drm"]), 64)


class Escapes(DriverCase):
    def test_symlinks_stay_in_root(self):
        root = self.temp_copy("mi250x-8gcd")
        with open(os.path.join(root, "etc/passwd")) as f:
            first = f.readline().strip()
        nodes = "sys/class/kfd/kfd/topology/nodes/"
        make_many_gpus.link(root, nodes + "1/name", "/etc/passwd")
        make_many_gpus.link(root, nodes + "2/name", "../../../../../../../../../../../../etc/passwd")
        os.unlink(os.path.join(root, "dev/kfd"))
        make_many_gpus.link(root, "dev/kfd", "/dev/null")  # exists on the host, not in the root
        r = self.sysroot(root)
        devs = self.drv(r)["facts"]["devices"]
        self.assertEqual(devs[0]["name"], first)
        self.assertEqual(devs[1]["name"], first)
        self.assertIn("amd.kfd-missing", r.finding_ids("driver.amd"))
        kfd = self.drv(r)["facts"]["device_nodes"][0]
        self.assertEqual((kfd["path"], kfd["exists"]), ("/dev/kfd", False))


class LiveSystem(DriverCase):
    def has_accelerator(self):
        base = "/sys/bus/pci/devices"
        for dev in os.listdir(base) if os.path.isdir(base) else []:
            try:
                with open(os.path.join(base, dev, "vendor")) as f:
                    vendor = int(f.read(), 16)
                with open(os.path.join(base, dev, "class")) as f:
                    cls = int(f.read(), 16)
            except OSError:
                continue
            if vendor in (0x1002, 0x1d94, 0x10de, 0x19e5) and (
                    cls >> 16 in (0x03, 0x12) or cls >> 8 == 0x0b40):
                return True
        return os.path.isdir("/sys/class/kfd/kfd/topology/nodes")

    def test_live_no_accelerator(self):
        if self.has_accelerator():
            self.skipTest("this machine has an accelerator")
        r = sclib.run([])
        sclib.validate_snapshot(self, r.snapshot)
        self.assertEqual(r.rc, 1)
        ff = r.snapshot["summary"]["first_failure"]
        self.assertEqual((ff["layer"], ff["probe"], ff["finding"]),
                         ("driver", "driver.devices", "driver.no-accelerator"))
        self.assertEqual(r.snapshot["layers"][0]["name"], "driver")
        self.assertIn("driver.no-accelerator", r.stdout + r.stderr)
        # every probe above the driver layer is skip, with the reason
        for layer in r.snapshot["layers"][1:]:
            self.assertEqual(layer["status"], "skip", layer["name"])
            for p in layer["probes"]:
                self.assertEqual(p["status"], "skip", p["id"])
                self.assertTrue(p["reason"], p["id"])
                if p["applicable"]:
                    self.assertIn("driver.devices", p["reason"], p["id"])


@unittest.skipUnless(os.geteuid() == 0, "needs root to chown and to drop to nobody")
class PermissionDenied(DriverCase):
    def locked_root(self, mode=0o660):
        root = self.temp_copy("mi250x-8gcd")
        for dirpath, dirnames, _ in os.walk(root):
            for d in dirnames:
                os.chmod(os.path.join(dirpath, d), 0o755)
        nodes = ["dev/kfd"] + ["dev/dri/renderD%d" % m for m in range(128, 136)]
        for n in nodes:
            path = os.path.join(root, n)
            os.chown(path, 0, 109)  # render in the fixture's /etc/group
            os.chmod(path, mode)
        return root

    def test_nobody_is_denied(self):
        r = self.sysroot(self.locked_root(), user=sclib.unprivileged())
        p = self.drv(r)
        self.assertEqual(r.rc, 1, r.stderr)
        self.assertEqual(p["status"], "fail")
        self.assertEqual(r.finding_ids("driver.amd"), ["amd.kfd-permission", "amd.render-permission"])
        kfd = r.finding("amd.kfd-permission")
        self.assertIn("/dev/kfd is not readable and writable by uid 65534", kfd["message"])
        self.assertIn("group render (gid 109)", kfd["message"])
        self.assertIn("uid 65534 is not in group render", kfd["message"])
        self.assertIn("sudo usermod -aG render $USER", kfd["hint"])
        self.assertIn("log in again", kfd["hint"])
        render = r.finding("amd.render-permission")
        self.assertIn("/dev/dri/renderD128 (and 7 more)", render["message"])
        node = p["facts"]["device_nodes"][0]
        self.assertEqual((node["exists"], node["readable"], node["writable"]), (True, False, False))
        self.assertEqual((node["owner"], node["group"], node["mode"]), ("root", "render", "0660"))
        ff = r.snapshot["summary"]["first_failure"]
        self.assertEqual((ff["layer"], ff["finding"]), ("driver", "amd.kfd-permission"))

    def test_unreadable_topology_is_an_error(self):
        root = self.locked_root()
        os.chmod(os.path.join(root, "sys/class/kfd/kfd/topology/nodes"), 0o700)
        r = self.sysroot(root, user=sclib.unprivileged())
        p = self.drv(r)
        self.assertEqual(r.rc, 1)
        self.assertEqual(p["status"], "error")
        self.assertIn("cannot read the KFD topology", p["reason"])
        self.assertNotIn("amd.driver-not-loaded", r.finding_ids("driver.amd"))

    def test_member_of_group_is_allowed(self):
        uid, gid, _ = sclib.unprivileged()
        r = self.sysroot(self.locked_root(), user=(uid, gid, [109]))
        p = self.drv(r)
        self.assertEqual(p["status"], "pass", p["findings"])
        self.assertTrue(all(n["readable"] and n["writable"] for n in p["facts"]["device_nodes"]))

    def test_group_without_write(self):
        uid, gid, _ = sclib.unprivileged()
        r = self.sysroot(self.locked_root(0o640), user=(uid, gid, [109]))
        kfd = r.finding("amd.kfd-permission")
        self.assertIn("uid 65534 is in group render", kfd["message"])
        self.assertIn('MODE=\\"0660\\"'.replace("\\", ""), kfd["hint"])
        self.assertNotIn("usermod", kfd["hint"])


if __name__ == "__main__":
    sclib.main()
