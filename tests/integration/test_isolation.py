"""The parent process never loads a vendor library or libpython: everything that does runs in an
isolated child. Checked with the dynamic loader's own record (LD_DEBUG=files), which tags every
object it maps, at start-up or by dlopen, with the pid of the process that mapped it."""
import os
import re
import subprocess
import tempfile

import sclib
from sclib import unittest

FORBIDDEN = ("libamdhip64", "libgalaxyhip", "libhiprtc", "libcuda.so", "libnvrtc", "libascendcl",
             "libpython", "libtorch", "libhipstub")


class ParentLoadsNothing(unittest.TestCase):
    def mapped_by_pid(self, args):
        with tempfile.TemporaryDirectory() as d:
            env = dict(os.environ, LD_DEBUG="files", LD_DEBUG_OUTPUT=os.path.join(d, "ld"))
            proc = subprocess.Popen([sclib.STACKCHECK, "--json", os.path.join(d, "s.json")] + args,
                                    env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            proc.wait(timeout=600)
            by_pid = {}
            for name in os.listdir(d):
                if not name.startswith("ld."):
                    continue
                with open(os.path.join(d, name), errors="replace") as f:
                    for line in f:
                        m = re.match(r"\s*(\d+):\s+file=(\S+)", line)
                        if m:
                            by_pid.setdefault(int(m.group(1)), set()).add(m.group(2))
            return proc.pid, by_pid

    def test_full_run_loads_vendor_code_only_in_children(self):
        hip = sclib.stub("hipstub")
        parent, by_pid = self.mapped_by_pid(["--keep-going", "--python", "/usr/bin/python3",
                                             "--hip-library", hip])
        self.assertIn(parent, by_pid)
        # the parent's own loads were seen (libc: the portable build has cJSON inside)
        self.assertTrue(any("libc.so.6" in f for f in by_pid[parent]), by_pid[parent])
        for name in FORBIDDEN:
            self.assertEqual([f for f in by_pid[parent] if name in f], [], name)
        # and the children really did load them: the check is not vacuous
        children = set().union(*(files for pid, files in by_pid.items() if pid != parent))
        self.assertTrue(any("libhipstub" in f for f in children), "the HIP stub was never loaded")
        self.assertTrue(any("libpython" in f for f in children), "libpython was never loaded")


if __name__ == "__main__":
    sclib.main()
