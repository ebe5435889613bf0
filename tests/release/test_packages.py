"""The packages CPack makes from `cmake --install`: each carries the binary, the man page, the bash
completion and the documentation, and depends on what it needs. The portable .deb needs only
libc6 (>= 2.17): dpkg installs it into the Debian 11 roots (whose libc6 2.31 is registered in
their dpkg database), the installed binary runs there, and dpkg removes it; with a libc6 older
than the floor dpkg refuses it. The native .deb depends on the shared libraries it links (found by
dpkg-shlibdeps) and installs against this machine's package database into a scratch root. Each
.rpm lists the same files (rpm -qlp), states its requirements, and installs into and is removed
from a scratch root (rpm -i --root; its empty database has no glibc, hence --nodeps)."""
import os
import re
import shutil
import subprocess
import tempfile
import unittest

import release
from release import ARCHS, in_root, one, root_of

FILES = ["/usr/bin/stackcheck", "/usr/share/man/man1/stackcheck.1",
         "/usr/share/bash-completion/completions/stackcheck",
         "/usr/share/doc/stackcheck/README.md", "/usr/share/doc/stackcheck/LICENSE",
         "/usr/share/doc/stackcheck/findings.md", "/usr/share/doc/stackcheck/probes.md",
         "/usr/share/doc/stackcheck/snapshot.schema.json"]


def run(*cmd, check=True):
    r = subprocess.run(list(cmd), capture_output=True, text=True)
    if check and r.returncode != 0:
        raise AssertionError("%s: exit %d\n%s%s" % (cmd, r.returncode, r.stdout, r.stderr))
    return r


def deb_files(deb):
    return sorted(line.split()[-1][1:] for line in run("dpkg-deb", "-c", deb).stdout.splitlines()
                  if not line.startswith("d"))


def rpm_of(machine, where=release.DIST):
    return one(os.path.join(where, "stackcheck-%s-1.%s.rpm" % (release.VERSION, machine)))


def deb_of(arch, where=release.DIST):
    return one(os.path.join(where, "stackcheck_%s_%s.deb" % (release.VERSION, arch)))


class PortableDeb(unittest.TestCase):
    def test_contents_and_dependency(self):
        for arch in ARCHS:
            deb = deb_of(arch)
            self.assertEqual(deb_files(deb), sorted(FILES), deb)
            self.assertEqual(run("dpkg-deb", "-f", deb, "Depends").stdout.strip(),
                             "libc6 (>= 2.17)")
            self.assertEqual(run("dpkg-deb", "-f", deb, "Architecture").stdout.strip(), arch)

    def test_install_run_remove_on_bullseye(self):
        for arch in ARCHS:
            root = root_of(arch)
            r = run("dpkg", "--root=" + root, "-i", deb_of(arch))
            self.assertIn("Setting up stackcheck", r.stdout)
            self.assertEqual(run("dpkg", "--root=" + root, "-s", "stackcheck").stdout.count(
                "Status: install ok installed"), 1)
            listed = run("dpkg", "--root=" + root, "-L", "stackcheck").stdout.split()
            for f in FILES:
                self.assertIn(f, listed)
                self.assertTrue(os.path.exists(root + f), f)
            v = in_root(arch, "/usr/bin/stackcheck", "--version")
            self.assertEqual(v.stdout, "stackcheck %s (portable, %s, glibc >= 2.17)\n"
                             % (release.VERSION, ARCHS[arch][0]), v.stderr)
            run("dpkg", "--root=" + root, "-r", "stackcheck")
            for f in FILES:
                self.assertFalse(os.path.exists(root + f), f)

    def test_refused_below_the_floor(self):
        """A database whose libc6 is 2.16: dpkg must refuse the package."""
        with tempfile.TemporaryDirectory() as scratch:
            admin = os.path.join(scratch, "var", "lib", "dpkg")
            os.makedirs(os.path.join(admin, "info"))
            os.makedirs(os.path.join(admin, "updates"))
            with open(os.path.join(admin, "status"), "w") as f:
                f.write("Package: libc6\nStatus: install ok installed\nVersion: 2.16-1\n"
                        "Architecture: amd64\nMaintainer: none\nDescription: old\n\n")
            r = run("dpkg", "--root=" + scratch, "--force-architecture", "-i", deb_of("amd64"),
                    check=False)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("libc6 (>= 2.17)", r.stderr)


class NativeDeb(unittest.TestCase):
    """The build of this machine's libraries (cpack in build/)."""

    @unittest.skipUnless(release.NATIVE_PACKAGES, "no native packages (SC_NATIVE_PACKAGES)")
    def test_depends_on_its_libraries_and_installs(self):
        deb = deb_of("amd64", release.NATIVE_PACKAGES)
        self.assertEqual(deb_files(deb), sorted(FILES))
        depends = run("dpkg-deb", "-f", deb, "Depends").stdout
        for lib in ("libc6", "libcjson1", "libdrm2", "libelf1", "libzstd1", "zlib1g"):
            self.assertRegex(depends, r"(^|, )%s( \(|,|$)" % lib, depends)
        with tempfile.TemporaryDirectory() as scratch:
            admin = os.path.join(scratch, "var", "lib", "dpkg")
            os.makedirs(os.path.join(admin, "info"))
            os.makedirs(os.path.join(admin, "updates"))
            shutil.copy("/var/lib/dpkg/status", os.path.join(admin, "status"))
            run("dpkg", "--root=" + scratch, "-i", deb)
            self.assertTrue(os.path.exists(scratch + "/usr/bin/stackcheck"))
            v = run(scratch + "/usr/bin/stackcheck", "--version").stdout
            self.assertRegex(v, r"\(native, x86_64, glibc >= 2\.\d+\)")
            run("dpkg", "--root=" + scratch, "-r", "stackcheck")
            self.assertFalse(os.path.exists(scratch + "/usr/bin/stackcheck"))

    @unittest.skipUnless(release.NATIVE_PACKAGES, "no native packages (SC_NATIVE_PACKAGES)")
    def test_rpm_requires_its_libraries(self):
        requires = run("rpm", "-qpR", rpm_of("x86_64", release.NATIVE_PACKAGES)).stdout
        for lib in ("libcjson.so.1", "libdrm.so.2", "libelf.so.1", "libzstd.so.1", "libz.so.1",
                    "libc.so.6"):
            self.assertIn(lib + "()(64bit)", requires)


class PortableRpm(unittest.TestCase):
    def test_listing_and_requirement(self):
        for arch in ARCHS:
            rpm = rpm_of(ARCHS[arch][0])
            self.assertEqual(sorted(run("rpm", "-qlp", rpm).stdout.split()),
                             sorted(FILES + ["/usr/share/doc/stackcheck"]))
            requires = [r for r in run("rpm", "-qpR", rpm).stdout.splitlines()
                        if not r.startswith("rpmlib(")]
            self.assertEqual(requires, ["glibc >= 2.17"])
            arch_field = run("rpm", "-qp", "--qf", "%{ARCH}", rpm).stdout
            self.assertEqual(arch_field, ARCHS[arch][0])

    def test_install_and_remove_in_a_scratch_root(self):
        for arch in ARCHS:
            with tempfile.TemporaryDirectory() as scratch:
                run("rpm", "--root", scratch, "--initdb")
                run("rpm", "--root", scratch, "-i", "--nodeps", "--ignorearch",
                    rpm_of(ARCHS[arch][0]))
                listed = run("rpm", "--root", scratch, "-ql", "stackcheck").stdout.split()
                for f in FILES:
                    self.assertIn(f, listed)
                    self.assertTrue(os.path.exists(scratch + f), f)
                if arch == "amd64":  # the portable binary runs on this machine from there
                    v = run(scratch + "/usr/bin/stackcheck", "--version").stdout
                    self.assertIn("(portable, x86_64, glibc >= 2.17)", v)
                run("rpm", "--root", scratch, "-e", "stackcheck")
                self.assertFalse(os.path.exists(scratch + "/usr/bin/stackcheck"))
                self.assertFalse(re.search(r"stackcheck", run(
                    "rpm", "--root", scratch, "-qa").stdout))


if __name__ == "__main__":
    unittest.main()
