#!/usr/bin/env python3
"""The Ascend install's "environment lock" with the real binary under --sysroot: CANN's version
labels (version directory, latest/version.cfg, install info), latest's links into one version
directory, and the driver/toolkit release lines. Two roots are transcribed from public dumps (see
each fixture's SOURCE.md): an image whose latest/ links point into 8.2.RC2 while its version.cfg
says 8.0.T63, and a CANN 8.5 layout (cann -> cann-8.5.0) beside a 24.1.rc1 driver. The broken
variants are made here, one fault at a time, from those roots."""
import os

import sclib
from sclib import unittest

CLEAN = {k: None for k in ("LD_LIBRARY_PATH", "ASCEND_RT_VISIBLE_DEVICES",
                           "ASCEND_VISIBLE_DEVICES", "SC_ACLSTUB_MODE")}
LATEST = "usr/local/Ascend/ascend-toolkit/latest"
CANN85_INFO = "usr/local/Ascend/cann-8.5.0/aarch64-linux/ascend_toolkit_install.info"


class LockCase(sclib.SysrootCase):
    PROBE = "driver.ascend"
    ENV = CLEAN


class LabelsDisagree(LockCase):
    def test_links_say_8_2_rc2_version_cfg_says_8_0_t63(self):
        r = self.sysroot(sclib.fixture("ascend-cann-links-disagree"))
        p = self.drv(r)
        self.assertEqual(r.rc, 0, r.stdout)  # a warning: which label is right is unknown
        self.assertEqual(p["status"], "warn")
        self.assertEqual(self.problems(r),
                         ["ascend.cann-version-mismatch", "ascend.firmware-unknown"])
        msg = self.only_finding(r, "ascend.cann-version-mismatch")["message"]
        self.assertIn("directory 8.2.RC2", msg)
        self.assertIn("version.cfg 8.0.T63", msg)
        tk = p["facts"]["toolkits"][0]
        self.assertEqual(tk["version_cfg"], {"cann": "8.0.T63", "component": "7.6.T13.0.B094"})
        self.assertEqual(tk["directory_version"], "8.2.RC2")
        self.assertEqual(tk["version"], "8.0.T63")  # no install info: version.cfg names it
        self.assertNotIn("mixed_directories", tk)
        lock = p["facts"]["cann_lock"][0]
        self.assertEqual((lock["versions_agree"], lock["driver_compatible"]), (False, None))
        self.assertIn("install info", lock["unavailable"]["driver_compatible"])
        self.assertEqual(p["facts"]["driver"]["compatible_version"],
                         "[V100R001C30],[V100R001C13],[V100R001C15],[V100R001C17],[V100R001C18]")
        # runtime.acl's inventory reads the same labels, offline too
        acl = r.probe("runtime.acl")["facts"]["toolkits"][0]
        self.assertEqual(acl["version_cfg"]["cann"], "8.0.T63")

    def test_links_into_two_versions_are_a_mixed_install(self):
        root = self.temp_copy("ascend-cann-links-disagree")
        os.remove(os.path.join(root, LATEST, "opp"))
        os.symlink("../8.0.RC1/opp", os.path.join(root, LATEST, "opp"))
        r = self.sysroot(root)
        self.assertEqual(r.rc, 1)
        self.assertEqual(self.drv(r)["status"], "fail")
        msg = self.only_finding(r, "ascend.cann-mixed-install")["message"]
        self.assertIn("8.2.RC2 and 8.0.RC1", msg)
        self.assertIn("opp -> ../8.0.RC1/", msg)
        self.assertEqual(self.drv(r)["facts"]["toolkits"][0]["mixed_directories"],
                         ["8.2.RC2", "8.0.RC1"])

    def test_agreeing_labels_are_quiet(self):
        # the 910B fixture (latest -> 8.0.RC3) with a version.cfg that says the same, then not
        root = self.temp_copy("ascend-910b")
        self.write(root, LATEST + "/version.cfg",
                   "# version: 1.0\nruntime_running_version=[7.5.0.1.129:8.0.RC3]\n")
        r = self.sysroot(root)
        self.assertEqual(self.problems(r), [])
        self.assertTrue(self.drv(r)["facts"]["cann_lock"][0]["versions_agree"])
        self.write(root, LATEST + "/version.cfg",
                   "runtime_running_version=[7.3.0.1.231:8.0.RC2]\n")
        r = self.sysroot(root)
        msg = self.only_finding(r, "ascend.cann-version-mismatch")["message"]
        self.assertIn("directory 8.0.RC3, version.cfg 8.0.RC2, "
                      "ascend_toolkit_install.info 8.0.RC3", msg)


class DriverLines(LockCase):
    def test_cann85_layout_fits_its_driver(self):
        r = self.sysroot(sclib.fixture("ascend-cann85-layout"))
        p = self.drv(r)
        self.assertEqual(r.rc, 0, r.stdout)
        self.assertEqual((p["status"], p["findings"]), ("pass", []))
        tk = p["facts"]["toolkits"][0]
        self.assertEqual((tk["via"], tk["directory_version"], tk["version"]),
                         ("/usr/local/Ascend/cann", "8.5.0", "8.5.0"))
        self.assertEqual(tk["innerversion"], "V100R001C25SPC001B212")
        lock = p["facts"]["cann_lock"][0]
        self.assertEqual((lock["versions_agree"], lock["driver_compatible"]), (True, True))
        self.assertEqual(lock["driver_innerversion"], "V100R001C15SPC006B220")

    def test_neither_lists_the_other(self):
        # a toolkit that lists only line C25 (as CANN 9.0.0's is reported to) on this C15 driver,
        # whose own list (C30, C13, C15, C17) does not hold the toolkit's C25 either
        root = self.temp_copy("ascend-cann85-layout")
        path = os.path.join(root, CANN85_INFO)
        with open(path) as f:
            text = f.read()
        self.write(root, CANN85_INFO, "\n".join(
            "compatible_version=[V100R001C25]" if l.startswith("compatible_version=") else l
            for l in text.splitlines()) + "\n")
        r = self.sysroot(root)
        self.assertEqual(r.rc, 1)
        msg = self.only_finding(r, "ascend.toolkit-driver-incompatible")["message"]
        self.assertIn("8.5.0 (V100R001C25SPC001B212)", msg)
        self.assertIn("24.1.rc1 (V100R001C15SPC006B220)", msg)
        self.assertIn("the toolkit lists driver lines [V100R001C25]", msg)
        self.assertIn("the driver lists CANN lines [V100R001C30],[V100R001C13]", msg)
        self.assertFalse(self.drv(r)["facts"]["cann_lock"][0]["driver_compatible"])
        # the driver naming the toolkit's line is enough: the newer one knows the older
        drv = "usr/local/Ascend/driver/version.info"
        with open(os.path.join(root, drv)) as f:
            text = f.read()
        self.write(root, drv, text.replace("[V100R001C17]", "[V100R001C17],[V100R001C25]"))
        r = self.sysroot(root)
        self.assertEqual(self.problems(r), [])
        self.assertTrue(self.drv(r)["facts"]["cann_lock"][0]["driver_compatible"])


if __name__ == "__main__":
    sclib.main()
