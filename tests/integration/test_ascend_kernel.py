#!/usr/bin/env python3
"""The Ascend driver's kernel fit with the real binary under --sysroot. The driver's installer
(run_driver_install.sh of the driver package, see tests/data/ascend-kernel/SOURCE.md) copies its
kernel modules to /lib/modules/<uname -r>/updates and records each as "[driver_ko] PATH" in
/etc/ascend_filelist.info; a module's .modinfo vermagic names the kernel it was built for. Each
root here is the ascend-910b fixture (running kernel 5.10.0-216.0.0.115.oe2203sp4.x86_64) with a
file list and modules built at test time with cc -c (relocatable objects whose .modinfo holds the
vermagic), one case at a time: modules that fit, modules for another base version, for another
release of the same base with and without symbol versions, a DKMS rebuild the list does not name,
a loaded module, no list, and a malformed module. A capture of a root replays to the same facts."""
import json
import os
import shutil
import subprocess
import tarfile
import tempfile

import sclib
from sclib import unittest

CLEAN = {k: None for k in ("LD_LIBRARY_PATH", "ASCEND_RT_VISIBLE_DEVICES",
                           "ASCEND_VISIBLE_DEVICES", "SC_ACLSTUB_MODE")}
RUNNING = "5.10.0-216.0.0.115.oe2203sp4.x86_64"  # the fixture's /proc/sys/kernel/osrelease
OLDER = "5.10.0-182.0.0.95.oe2203sp3.x86_64"     # the same base version, an earlier build
OTHER_BASE = "4.19.90-2107.6.0.0100.oe1.bclinux.x86_64"
FILELIST = "etc/ascend_filelist.info"


def vermagic(release, modversions=True):
    return release + " SMP mod_unload " + ("modversions " if modversions else "")


class KernelFit(sclib.SysrootCase):
    PROBE = "driver.ascend"
    ENV = CLEAN

    def setUp(self):
        self.root = self.temp_copy("ascend-910b")

    def module(self, release, name, magic, root=None):
        """Builds /lib/modules/<release>/updates/<name>.ko with vermagic magic; its path."""
        rel = "lib/modules/%s/updates/%s.ko" % (release, name)
        path = os.path.join(root or self.root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        src = ('static const char m[] __attribute__((section(".modinfo"), used)) = '
               '"name=%s\\0vermagic=%s";\n' % (name, magic))
        subprocess.run(["cc", "-c", "-x", "c", "-o", path, "-"], input=src.encode(), check=True)
        return "/" + rel

    def declare(self, *paths):
        self.write(self.root, FILELIST, "".join("[driver_ko] %s\n" % p for p in paths),
                   append=True)

    def fit(self, r):
        return self.drv(r)["facts"]["kernel_fit"]


class Fits(KernelFit):
    def test_modules_built_for_the_running_kernel_fit(self):
        self.declare(*(self.module(RUNNING, n, vermagic(RUNNING))
                       for n in ("drv_pcie_hdc_host", "ascend_uda")))
        self.write(self.root, FILELIST, "[driver_lib] /usr/lib64/libascend_hal.so\n", append=True)
        r = self.sysroot(self.root)
        self.assertEqual(r.rc, 0, r.stdout)
        self.assertEqual(self.problems(r), [])
        fit = self.fit(r)
        self.assertEqual((fit["running"], fit["fits"], fit["declared_by"], fit["unread_modules"]),
                         (RUNNING, True, "/etc/ascend_filelist.info", 0))
        self.assertEqual([m["name"] for m in fit["modules"]], ["drv_pcie_hdc_host", "ascend_uda"])
        m = fit["modules"][0]
        self.assertEqual((m["vermagic_release"], m["fits"], m["declared"]), (RUNNING, True, True))
        self.assertEqual(m["vermagic"], vermagic(RUNNING).strip())
        self.assertIsNone(fit["declared_range"])
        self.assertIn("declare no supported kernel range", fit["unavailable"]["declared_range"])

    def test_a_dkms_rebuild_for_the_running_kernel_fits(self):
        # the list names the build for the kernel of the install; DKMS rebuilt it for this one
        self.declare(self.module(OLDER, "drv_pcie_hdc_host", vermagic(OLDER)))
        self.module(RUNNING, "drv_pcie_hdc_host", vermagic(RUNNING))
        r = self.sysroot(self.root)
        self.assertEqual(self.problems(r), [])
        fit = self.fit(r)
        self.assertTrue(fit["fits"])
        self.assertEqual([(m["vermagic_release"], m["declared"], m["fits"])
                          for m in fit["modules"]],
                         [(OLDER, True, False), (RUNNING, False, True)])

    def test_a_reinstall_that_appended_to_the_list_fits(self):
        # the installer appends; a reinstall for this kernel leaves the old lines in place, and a
        # reinstall over the same kernel repeats them: each path is read once
        old = self.module(OLDER, "ascend_uda", vermagic(OLDER, False))
        new = self.module(RUNNING, "ascend_uda", vermagic(RUNNING, False))
        self.declare(old, new, old, new, new)
        r = self.sysroot(self.root)
        self.assertEqual(self.problems(r), [])
        self.assertTrue(self.fit(r)["fits"])
        self.assertEqual(len(self.fit(r)["modules"]), 2)

    def test_a_loaded_module_fits_whatever_its_file_says(self):
        # drv_pcie_host is live in the fixture's /sys/module: this kernel took it
        self.declare(self.module(OTHER_BASE, "drv_pcie_host", vermagic(OTHER_BASE)))
        r = self.sysroot(self.root)
        self.assertEqual(self.problems(r), [])
        self.assertTrue(self.fit(r)["fits"])


class Mismatched(KernelFit):
    def test_another_base_version_is_an_error_with_dkms_or_boot_as_remedy(self):
        self.declare(self.module(OTHER_BASE, "drv_pcie_hdc_host", vermagic(OTHER_BASE)),
                     self.module(OTHER_BASE, "ascend_uda", vermagic(OTHER_BASE)),
                     self.module(RUNNING, "drv_vpcie", vermagic(RUNNING)))
        r = self.sysroot(self.root)
        self.assertEqual(r.rc, 1, r.stdout)
        self.assertEqual(self.drv(r)["status"], "fail")
        self.assertEqual(self.problems(r), ["ascend.kernel-unsupported"])
        f = self.only_finding(r, "ascend.kernel-unsupported")
        self.assertEqual(f["severity"], "error")
        self.assertIn("the running kernel is " + RUNNING, f["message"])
        self.assertIn("2 of the Ascend driver's 3 kernel module(s) (drv_pcie_hdc_host, ascend_uda)",
                      f["message"])
        self.assertIn("built for kernel " + OTHER_BASE, f["message"])
        self.assertIn("another base version", f["message"])
        self.assertIn("boot kernel " + OTHER_BASE, f["hint"])
        self.assertIn("dkms", f["hint"])
        self.assertIn("linux-headers-" + RUNNING, f["hint"])
        fit = self.fit(r)
        self.assertFalse(fit["fits"])
        self.assertEqual([m["fits"] for m in fit["modules"]], [False, False, True])

    def test_same_base_without_symbol_versions_is_an_error_with_reinstall_as_remedy(self):
        self.declare(self.module(OLDER, "drv_pcie_hdc_host", vermagic(OLDER, False)))
        r = self.sysroot(self.root)
        self.assertEqual(r.rc, 1, r.stdout)
        f = self.only_finding(r, "ascend.kernel-unsupported")
        self.assertIn("without symbol versions", f["message"])
        self.assertTrue(f["hint"].startswith("reinstall the Ascend driver package"), f["hint"])
        self.assertIn("/lib/modules/%s/updates" % RUNNING, f["hint"])
        self.assertNotIn("dkms and", f["hint"])

    def test_same_base_with_symbol_versions_is_a_warning(self):
        self.declare(self.module(OLDER, "drv_pcie_hdc_host", vermagic(OLDER)))
        r = self.sysroot(self.root)
        self.assertEqual(r.rc, 0, r.stdout)
        self.assertEqual(self.problems(r), ["ascend.kernel-modules-other-build"])
        f = self.only_finding(r, "ascend.kernel-modules-other-build")
        self.assertEqual(f["severity"], "warn")
        self.assertIn("symbol versions (modversions)", f["message"])
        self.assertIn("boot kernel " + OLDER, f["hint"])

    def test_a_list_past_the_budget_is_read_to_the_cut_and_said(self):
        # 70 distinct modules recorded (a driver has about 30); the same lines appended again by
        # a reinstall count once
        paths = [self.module(RUNNING, "drv_m%02d" % i, vermagic(RUNNING)) for i in range(64)]
        paths += [self.module(OTHER_BASE, "drv_m%02d" % i, vermagic(OTHER_BASE))
                  for i in range(64, 70)]
        self.declare(*(paths + paths[:10]))
        r = self.sysroot(self.root)
        fit = self.fit(r)
        self.assertEqual((len(fit["modules"]), fit["unread_modules"], fit["fits"]), (64, 6, True))
        self.assertEqual(self.problems(r), ["ascend.kernel-modules-budget"])
        msg = r.finding("ascend.kernel-modules-budget")["message"]
        self.assertIn("records 70 kernel modules; only the first 64 were read", msg)

    def test_a_capture_replays_to_the_same_verdict(self):
        self.declare(self.module(OTHER_BASE, "drv_pcie_hdc_host", vermagic(OTHER_BASE)))
        live = self.sysroot(self.root)
        tmp = tempfile.mkdtemp(prefix="sc-kfit-")
        self.addCleanup(shutil.rmtree, tmp, True)
        out = os.path.join(tmp, "cap.tar.gz")
        r = sclib.run(["capture", "--sysroot", self.root, out], env=CLEAN, json_file=False)
        self.assertEqual(r.rc, 0, r.stderr)
        with tarfile.open(out) as tf:
            names = tf.getnames()
        self.assertIn(FILELIST, names)
        self.assertIn("lib/modules/%s/updates/drv_pcie_hdc_host.ko" % OTHER_BASE, names)
        replay = self.sysroot(out)
        self.assertEqual(json.dumps(self.fit(replay), sort_keys=True),
                         json.dumps(self.fit(live), sort_keys=True))
        self.assertEqual(self.problems(replay), ["ascend.kernel-unsupported"])


class NothingDeclared(KernelFit):
    def test_no_file_list_is_a_null_fact_without_finding(self):
        r = self.sysroot(self.root)
        self.assertEqual(self.problems(r), [])
        facts = self.drv(r)["facts"]
        self.assertIsNone(facts["kernel_fit"])
        self.assertIn("/etc/ascend_filelist.info", facts["unavailable"]["kernel_fit"])

    def test_a_list_without_modules_is_a_null_fact(self):
        self.write(self.root, FILELIST, "[driver_lib] /usr/lib64/libascend_hal.so\n")
        r = self.sysroot(self.root)
        facts = self.drv(r)["facts"]
        self.assertIsNone(facts["kernel_fit"])
        self.assertIn("no [driver_ko] line", facts["unavailable"]["kernel_fit"])

    def test_malformed_and_missing_modules_say_why_and_judge_nothing(self):
        path = self.module(OTHER_BASE, "drv_pcie_hdc_host", vermagic(OTHER_BASE))
        with open(os.path.join(self.root, path[1:]), "r+b") as f:
            f.truncate(300)  # cut inside the section headers
        garbage = "/lib/modules/%s/updates/ascend_uda.ko" % OTHER_BASE
        self.write(self.root, garbage[1:], "not an ELF file\n")
        self.declare(path, garbage, "/lib/modules/%s/updates/gone.ko" % OTHER_BASE)
        r = self.sysroot(self.root)
        self.assertEqual(self.problems(r), [])
        fit = self.fit(r)
        self.assertIsNone(fit["fits"])
        self.assertIn("no declared module's vermagic", fit["unavailable"]["fits"])
        self.assertEqual([m["vermagic"] for m in fit["modules"]], [None, None, None])
        reasons = [m["unavailable"]["vermagic"] for m in fit["modules"]]
        self.assertIn("not a valid ELF file", reasons[0])
        self.assertIn("not a valid ELF file", reasons[1])
        self.assertIn("gone.ko", reasons[2])


if __name__ == "__main__":
    sclib.main()
