"""driver.devices, the backend-neutral device census, with the real binary: every fixture root
(which backends it finds, by PCI and by each driver's own source: the KFD topology, Ascend's
/dev/davinci<N>), a plain server and this machine (driver.no-accelerator from driver.devices alone,
every probe above skipped with its reason), a KFD that cannot be read (no verdict of "nothing"),
and the vendor probes of absent backends, which contribute nothing, offline and live."""
import os
import shutil

import sclib
from sclib import unittest

VENDOR_PROBES = {"amd": "driver.amd", "nvidia": "driver.nvidia", "ascend": "driver.ascend"}
# fixture -> the backends its census finds
FIXTURES = {"plain-server": [], "mi250x-8gcd": ["amd"], "hygon-dcu": ["amd"],
            "kfd-cpu-only": ["amd"], "amd-no-driver": ["amd"], "container-no-kfd": ["amd"],
            "nvidia-h200": ["nvidia"], "nvidia-no-nodes": ["nvidia"], "ascend-910b": ["ascend"],
            "ascend-old-firmware": ["ascend"], "rocm-multi": []}


class CensusCase(sclib.SysrootCase):
    PROBE = "driver.devices"

    def census(self, r):
        p = self.drv(r)
        self.assertEqual((p["backend"], p["applicable"]), ("none", True))
        return p

    def assert_nothing(self, r):
        """No accelerator: driver.devices alone fails, with the finding first; every vendor probe
        is not applicable without a finding; every probe above is skipped with its reason."""
        p = self.census(r)
        self.assertEqual(r.rc, 1)
        self.assertEqual(p["status"], "fail")
        self.assertEqual(r.finding_ids("driver.devices"), ["driver.no-accelerator"])
        self.assertEqual(r.finding_ids().count("driver.no-accelerator"), 1)
        ff = r.snapshot["summary"]["first_failure"]
        self.assertEqual((ff["layer"], ff["probe"], ff["finding"]),
                         ("driver", "driver.devices", "driver.no-accelerator"))
        for pid in VENDOR_PROBES.values():
            v = r.probe(pid)
            self.assertEqual((v["status"], v["applicable"], v["findings"]), ("skip", False, []),
                             pid)
        for layer in r.snapshot["layers"][1:]:
            for q in layer["probes"]:
                self.assertEqual(q["status"], "skip", q["id"])
                self.assertTrue(q["reason"], q["id"])
                if q.get("offline"):  # an active probe under --sysroot says so first
                    self.assertEqual(q["reason"], "offline (--sysroot)", q["id"])
                elif q["applicable"]:
                    self.assertIn("driver.devices", q["reason"], q["id"])
                elif q["backend"] != "none":
                    self.assertIn("no %s device" % q["backend"], q["reason"], q["id"])


class Fixtures(CensusCase):
    def test_every_fixture(self):
        for name, present in sorted(FIXTURES.items()):
            with self.subTest(fixture=name):
                r = self.sysroot(sclib.fixture(name))
                p = self.census(r)
                self.assertEqual(p["facts"]["present"], present)
                self.assertEqual(p["status"], "pass" if present else "fail")
                for backend, facts in p["facts"]["backends"].items():
                    self.assertEqual(facts["present"], backend in present, backend)
                self.assertEqual({d["backend"] for d in p["facts"]["pci"]} - set(present), set())
                if not present:
                    self.assert_nothing(r)

    def test_plain_server(self):
        r = self.sysroot(sclib.fixture("plain-server"))
        self.assert_nothing(r)
        f = self.census(r)["facts"]
        self.assertEqual(f["pci"], [])
        self.assertEqual(f["backends"]["amd"], {"pci": 0, "driver_devices": 0, "present": False})
        self.assertEqual(f["backends"]["nvidia"], {"pci": 0, "driver_devices": 0, "present": False})
        msg = r.finding("driver.no-accelerator")["message"]
        for word in ("AMD", "Hygon", "NVIDIA", "Huawei", "KFD", "/dev/davinci", "Tegra"):
            self.assertIn(word, msg)

    def test_mi250x_counts(self):
        r = self.sysroot(sclib.fixture("mi250x-8gcd"))
        f = self.census(r)["facts"]
        self.assertEqual(f["backends"]["amd"], {"pci": 8, "driver_devices": 8, "present": True})
        self.assertEqual(len(f["pci"]), 8)
        self.assertEqual({(d["vendor"], d["backend"]) for d in f["pci"]}, {("amd", "amd")})

    def test_kfd_without_pci(self):
        """A container that shows the KFD but not the PCI bus: the AMD driver's own list counts."""
        root = self.temp_copy("mi250x-8gcd")
        shutil.rmtree(os.path.join(root, "sys/bus/pci"))
        r = self.sysroot(root)
        p = self.census(r)
        self.assertEqual(p["status"], "pass")
        self.assertEqual(p["facts"]["backends"]["amd"],
                         {"pci": 0, "driver_devices": 8, "present": True})
        self.assertNotIn("driver.no-accelerator", r.finding_ids())
        self.assertTrue(r.probe("driver.amd")["applicable"])

    def test_davinci_nodes_without_pci(self):
        root = self.temp_copy("plain-server")
        self.write(root, "dev/davinci0", "")
        self.write(root, "dev/davinci_manager", "")
        r = self.sysroot(root)
        p = self.census(r)
        self.assertEqual(p["facts"]["present"], ["ascend"])
        self.assertEqual(p["facts"]["backends"]["ascend"],
                         {"pci": 0, "driver_devices": 1, "present": True})
        self.assertTrue(r.probe("driver.ascend")["applicable"])
        self.assertNotIn("driver.no-accelerator", r.finding_ids())

    def test_unreadable_kfd_is_no_verdict_of_nothing(self):
        root = self.temp_copy("plain-server")
        nodes = os.path.join(root, "sys/class/kfd/kfd/topology/nodes")
        os.makedirs(os.path.dirname(nodes), exist_ok=True)
        os.symlink("nodes", nodes)  # a loop: the topology exists but cannot be listed
        r = self.sysroot(root)
        p = self.census(r)
        self.assertEqual(p["status"], "error")
        self.assertIn("census is incomplete", p["reason"])
        self.assertIsNone(p["facts"]["backends"]["amd"]["driver_devices"])
        self.assertIn("topology", p["facts"]["backends"]["amd"]["unavailable"]["driver_devices"])
        self.assertNotIn("driver.no-accelerator", r.finding_ids())
        self.assertEqual(r.rc, 1)

    def test_absent_backends_contribute_nothing(self):
        """Offline, the driver probe of every backend the census does not find is not applicable
        and says nothing."""
        for name, present in sorted(FIXTURES.items()):
            r = self.sysroot(sclib.fixture(name))
            for backend, pid in VENDOR_PROBES.items():
                if backend in present:
                    continue
                with self.subTest(fixture=name, probe=pid):
                    v = r.probe(pid)
                    self.assertEqual((v["status"], v["applicable"], v["findings"]),
                                     ("skip", False, []))
                    self.assertTrue(v["reason"])

    def test_first_in_the_table(self):
        r = sclib.run(["list"], json_file=False)
        first = r.stdout.split("\n\n")[0].splitlines()[1].split()[0]
        self.assertEqual(first, "driver.devices")


class Live(CensusCase):
    def test_this_machine(self):
        r = sclib.run([])
        sclib.validate_snapshot(self, r.snapshot)
        p = self.census(r)
        present = p["facts"]["present"]
        if not present:
            self.assert_nothing(r)
        for backend, pid in VENDOR_PROBES.items():
            v = r.probe(pid)
            if backend not in present:  # an absent backend's probe says nothing, live too
                self.assertEqual((v["status"], v["applicable"], v["findings"]),
                                 ("skip", False, []), pid)


if __name__ == "__main__":
    sclib.main()
