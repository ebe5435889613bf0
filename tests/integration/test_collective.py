"""framework.collective through the real binary with Debian's CPU torch: two gloo ranks whose
all-reduce and broadcast give the known values, the collective library and its root; a rank made
to return a wrong sum, and a rank made to hang in the all-reduce (both through a sitecustomize
module on PYTHONPATH that only the ranks with RANK=1 act on), which the deadline kills."""
import os
import runpy
import subprocess
import tempfile
import textwrap
import types
import unittest

import sclib

DEBIAN_PYTHON = sclib.DEBIAN_PYTHON

# Loaded by every interpreter started with this PYTHONPATH. The ranks are forks of the warm
# interpreter, or fresh interpreters without one (STACKCHECK_WARM=0), so the fault is put in when
# torch.distributed is first imported and decides by RANK at each call: only rank 1 changes. The
# hanging rank leaves its pid in SC_TEST_PIDS.
FAULT = """
import builtins, os, sys, time
if os.environ.get("SC_TEST_FAULT"):
    _import = builtins.__import__

    def _faulty(dist):
        real = dist.all_reduce

        def all_reduce(tensor, *args, **kwargs):
            if os.environ.get("RANK") == "1":
                if os.environ["SC_TEST_FAULT"] == "hang":
                    with open(os.environ["SC_TEST_PIDS"], "a") as f:
                        f.write("%d\\n" % os.getpid())
                    time.sleep(3600)
                tensor.add_(1)  # rank 1 puts in one more than it should
            return real(tensor, *args, **kwargs)

        dist.all_reduce, dist._sc_fault = all_reduce, True

    def _importing(name, *args, **kwargs):
        module = _import(name, *args, **kwargs)
        dist = sys.modules.get("torch.distributed")
        if dist is not None and hasattr(dist, "all_reduce") and not hasattr(dist, "_sc_fault"):
            _faulty(dist)
        return module

    builtins.__import__ = _importing
"""


def has_torch():
    return subprocess.run([DEBIAN_PYTHON, "-c", "import torch.distributed"],
                          capture_output=True).returncode == 0


@unittest.skipUnless(has_torch(), "Debian's python3-torch is not installed")
class Collective(unittest.TestCase):
    # (--jobs, STACKCHECK_WARM): ranks forked from the warm interpreter, started with a parallel
    # run or at framework.torch's turn in a serial one, and ranks that are fresh interpreters
    WAYS = (("2", "1"), ("1", "1"), ("1", "0"))

    def check(self, fault=None, *extra, jobs="2", warm="1"):
        with tempfile.TemporaryDirectory() as site:
            with open(os.path.join(site, "sitecustomize.py"), "w") as f:
                f.write(textwrap.dedent(FAULT))
            self.pids = os.path.join(site, "pids")
            env = {"PYTHONPATH": site, "SC_TEST_FAULT": fault, "SC_TEST_PIDS": self.pids,
                   "STACKCHECK_WARM": warm}
            run = sclib.run(["--keep-going", "--python", DEBIAN_PYTHON, "--collective-ranks", "2",
                             "--jobs", jobs] + list(extra), env=env)
            self.hung = []
            if os.path.exists(self.pids):
                with open(self.pids) as f:
                    self.hung = f.read().split()
        return run, run.probe("framework.collective")

    def test_two_gloo_ranks_verified(self):
        run, p = self.check()
        sclib.validate_snapshot(self, run.snapshot)
        self.assertEqual(p["status"], "pass", p)
        f = p["facts"]
        self.assertEqual((f["backend"], f["world"], f["verified"]), ("gloo", 2, True))
        for rank in f["ranks"]:
            r = rank["result"]
            self.assertEqual(r["all_reduce"],
                             {"expected": 3.0, "first": 3.0, "wrong": 0, "elements": 1024})
            self.assertEqual(r["broadcast"], {"wrong": 0})
            self.assertGreater(r["timed"]["median_ms"], 0)
        self.assertEqual(f["all_reduce_bytes"], 4 << 20)
        lib = f["library"]
        self.assertRegex(os.path.basename(lib["realpath"]), r"^lib(gloo|torch_cpu)")
        self.assertEqual((lib["root"], lib["root_kind"]), ("/usr", "system"))
        self.assertEqual(p["findings"], [])

    def test_wrong_result_of_a_perturbed_rank(self):
        for jobs, warm in self.WAYS:
            with self.subTest(jobs=jobs, warm=warm):
                self.wrong_result(jobs, warm)

    def wrong_result(self, jobs, warm):
        run, p = self.check("wrong", jobs=jobs, warm=warm)
        self.assertEqual(p["status"], "fail", p)
        self.assertFalse(p["facts"]["verified"])
        msg = run.finding("collective.wrong-result")["message"]
        # 1 + (2 + 1): every rank sees the sum that rank 1 spoiled
        self.assertIn("rank 0: all-reduce gave 4 where 3 was expected (1024 of 1024", msg)
        self.assertIn("rank 1: all-reduce gave 4", msg)

    def test_hang_is_killed_at_the_deadline(self):
        for jobs, warm in self.WAYS:
            with self.subTest(jobs=jobs, warm=warm):
                self.hang_killed(jobs, warm)

    def hang_killed(self, jobs, warm):
        run, p = self.check("hang", "--timeout", "60", jobs=jobs, warm=warm)
        self.assertEqual(p["status"], "fail", p)
        self.assertEqual(p["facts"]["deadline_s"], 15)
        msg = run.finding("collective.hang")["message"]
        self.assertIn("did not finish the all-reduce and broadcast after the rendezvous within "
                      "15.0 s", msg)
        self.assertIn("rank 1 in 'collectives'", msg)
        self.assertLess(p["duration_ms"], 60000)
        self.assertEqual(len(self.hung), 1, self.hung)
        self.assertFalse(os.path.exists("/proc/%s" % self.hung[0]), "the hung rank outlived the run")


class WorldOfRank0(unittest.TestCase):
    """When the check starts beside framework.torch, rank 0 counts the world by framework.torch's
    rule (probes/framework_collective.c: world_size): torch's CUDA/HIP devices when available,
    else runtime.acl's devices, at least one."""

    @classmethod
    def setUpClass(cls):
        cls.probe = runpy.run_path(os.path.join(os.environ["SC_SOURCE_DIR"], "probes",
                                                "framework_collective.py"))

    @staticmethod
    def torch(available, count):
        def device_count():
            if isinstance(count, Exception):
                raise count
            return count
        cuda = types.SimpleNamespace(is_available=lambda: available, device_count=device_count)
        return types.SimpleNamespace(cuda=cuda)

    def test_rule(self):
        decided = self.probe["decided_world"]
        cases = [((True, 3), {"acl_devices": 8}, 3),
                 ((False, 3), {"acl_devices": 2}, 2),   # not available: its count is not used
                 ((True, 0), {"acl_devices": 4}, 4),
                 ((True, RuntimeError("no driver")), {"acl_devices": 0}, 1),
                 ((False, 0), {}, 1)]
        for (available, count), cfg, world in cases:
            with self.subTest(available=available, count=count, cfg=cfg):
                self.assertEqual(decided(self.torch(available, count), cfg), world)


if __name__ == "__main__":
    sclib.main()
