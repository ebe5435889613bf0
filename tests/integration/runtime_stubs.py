"""How the conformance table (test_conformance.py) runs the real binary so that a backend's runtime
probe works against its stub library (tests/stubs), the stub's behaviour in SC_<NAME>_MODE
(tests/stubs/stub_mode.h). AMD: --hip-library names the stub,
on the live machine, whose driver layer has no AMD device to compare with. NVIDIA and Ascend: the
runtime probes only run where the driver layer sees their devices, which this machine lacks, so the
binary runs in a private mount namespace where a fixture's PCI devices, /sys/module, /proc/driver
and device nodes are mounted over the live ones, with the stub first on LD_LIBRARY_PATH under the
runtime's sonames. That needs root and unshare(1); Backend.usable says whether it can run here."""
import os
import shutil
import subprocess
import tempfile

import sclib

# Mounts a fixture's driver view over the live one, then runs the real binary ("$0").
NAMESPACE_SCRIPT = r"""
set -e
fx="$SC_NS_FIXTURE"
mount --make-rprivate /
mount --bind "$fx/sys/bus/pci/devices" /sys/bus/pci/devices
mount -t tmpfs tmpfs /sys/module
cp -a "$fx/sys/module/." /sys/module/
if [ -d "$fx/proc/driver" ]; then mount --bind "$fx/proc/driver" /proc/driver; fi
old="$SC_NS_OLDDEV"
mkdir -p "$old"
mount --bind /dev "$old"
mount -t tmpfs tmpfs /dev
for n in null zero full random urandom kmsg; do
    touch /dev/$n && mount --bind "$old/$n" /dev/$n
done
for n in $(ls "$fx/dev"); do
    touch /dev/$n && chmod 666 /dev/$n
done
exec "$0" "$@"
"""


def can_unshare():
    """True when this process may make a private mount namespace and mount in it."""
    if os.geteuid() != 0 or not shutil.which("unshare") or not os.path.isdir("/proc/driver"):
        return False
    r = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs tmpfs /sys/module"],
                       capture_output=True)
    return r.returncode == 0


def machine_has(vendor, node=None):
    """True when this machine has a PCI device of vendor ("0x10de") or the device node node."""
    base = "/sys/bus/pci/devices"
    for d in os.listdir(base) if os.path.isdir(base) else []:
        try:
            with open(os.path.join(base, d, "vendor")) as f:
                if f.read().strip() == vendor:
                    return True
        except OSError:
            pass
    return bool(node) and os.path.exists(node)


class Backend:
    """One backend's runtime probe and stub, and how a run reaches the probe's active part."""

    def __init__(self, name, probe, stub, clean, fixture=None, libfile=None, links=(),
                 nvrtc_links=(), vendor=None, node=None):
        self.name, self.probe, self.stub = name, probe, stub
        self.mode_var = "SC_%s_MODE" % stub.upper()
        self.clean = {k: None for k in tuple(clean) + (self.mode_var,)}
        self.fixture, self.libfile, self.links = fixture, libfile, links
        self.nvrtc_links, self.vendor, self.node = nvrtc_links, vendor, node
        self.tmp = None

    def usable(self):
        """Why the probe cannot be reached here, or None."""
        if self.fixture is None:
            return None
        if machine_has(self.vendor, self.node):
            return "this machine has a real %s device" % self.name
        return None if can_unshare() else "needs root and a private mount namespace"

    def stub_path(self):
        return os.path.abspath(sclib.stub(self.stub))

    def libdir(self, with_nvrtc=True):
        """A directory holding the stub under the runtime's file name and sonames (made once)."""
        if self.tmp is None:
            self.tmp = tempfile.mkdtemp(prefix="sc-%s-" % self.stub)
            import atexit
            atexit.register(shutil.rmtree, self.tmp, True)
        d = os.path.join(self.tmp, "lib" if with_nvrtc else "lib-runtime-only")
        if not os.path.isdir(d):
            os.makedirs(d)
            shutil.copy(self.stub_path(), os.path.join(d, self.libfile))
            for name in self.links:
                os.symlink(self.libfile, os.path.join(d, name))
            for name in self.nvrtc_links if with_nvrtc else ():
                os.symlink(self.stub_path(), os.path.join(d, name))
        return d

    def wrapper(self):
        """A script that runs the binary in the namespace."""
        path = os.path.join(self.libdir(), "..", "stackcheck-in-ns")
        if not os.path.exists(path):
            with open(path, "w") as f:
                f.write("#!/bin/sh\nexec unshare -m sh -c '%s' %s \"$@\"\n"
                        % (NAMESPACE_SCRIPT.replace("'", "'\\''"),
                           os.path.abspath(sclib.STACKCHECK)))
            os.chmod(path, 0o755)
        return os.path.abspath(path)

    def run(self, mode, *args, env=None, with_nvrtc=True):
        """Runs stackcheck --keep-going with the stub acting out mode; returns the sclib.Run."""
        full = dict(self.clean)
        full[self.mode_var] = mode
        full.update(env or {})
        if self.fixture is None:
            return sclib.run(["--keep-going", "--hip-library", self.stub_path()] + list(args),
                             env=full)
        full.update(LD_LIBRARY_PATH=self.libdir(with_nvrtc),
                    SC_NS_FIXTURE=sclib.fixture(self.fixture),
                    SC_NS_OLDDEV=os.path.join(self.tmp, "olddev"))
        real = sclib.STACKCHECK
        sclib.STACKCHECK = self.wrapper()
        try:
            return sclib.run(["--keep-going"] + list(args), env=full)
        finally:
            sclib.STACKCHECK = real
