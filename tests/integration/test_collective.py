"""framework.collective through the real binary with Debian's CPU torch: two gloo ranks whose
all-reduce and broadcast give the known values, the collective library and its root; a rank made
to return a wrong sum, and a rank made to hang in the all-reduce (both through a sitecustomize
module on PYTHONPATH that only the ranks with RANK=1 act on), which the deadline kills."""
import os
import subprocess
import tempfile
import textwrap
import unittest

import sclib

DEBIAN_PYTHON = sclib.DEBIAN_PYTHON

# Loaded by every interpreter started with this PYTHONPATH; only rank 1 of the check changes.
FAULT = """
import os
if os.environ.get("RANK") == "1" and os.environ.get("SC_TEST_FAULT"):
    import time
    import torch.distributed as dist
    _all_reduce = dist.all_reduce

    def all_reduce(tensor, *args, **kwargs):
        if os.environ["SC_TEST_FAULT"] == "hang":
            time.sleep(3600)
        tensor.add_(1)  # rank 1 puts in one more than it should
        return _all_reduce(tensor, *args, **kwargs)

    dist.all_reduce = all_reduce
"""


def has_torch():
    return subprocess.run([DEBIAN_PYTHON, "-c", "import torch.distributed"],
                          capture_output=True).returncode == 0


@unittest.skipUnless(has_torch(), "Debian's python3-torch is not installed")
class Collective(unittest.TestCase):
    def check(self, fault=None, *extra):
        with tempfile.TemporaryDirectory() as site:
            with open(os.path.join(site, "sitecustomize.py"), "w") as f:
                f.write(textwrap.dedent(FAULT))
            env = {"PYTHONPATH": site, "SC_TEST_FAULT": fault}
            run = sclib.run(["--keep-going", "--python", DEBIAN_PYTHON, "--collective-ranks", "2"]
                            + list(extra), env=env)
        return run, run.probe("framework.collective")

    def test_two_gloo_ranks_verified(self):
        run, p = self.check()
        sclib.validate_snapshot(self, run.snapshot)
        self.assertEqual(p["status"], "pass", p)
        f = p["facts"]
        self.assertEqual((f["backend"], f["world"], f["verified"]), ("gloo", 2, True))
        for rank in f["ranks"]:
            r = rank["result"]
            self.assertEqual(r["all_reduce"], {"expected": 3.0, "first": 3.0, "wrong": 0})
            self.assertEqual(r["broadcast"], {"wrong": 0})
            self.assertGreater(r["timed"]["median_ms"], 0)
        self.assertEqual(f["all_reduce_bytes"], 4 << 20)
        lib = f["library"]
        self.assertRegex(os.path.basename(lib["realpath"]), r"^lib(gloo|torch_cpu)")
        self.assertEqual((lib["root"], lib["root_kind"]), ("/usr", "system"))
        self.assertEqual(p["findings"], [])

    def test_wrong_result_of_a_perturbed_rank(self):
        run, p = self.check("wrong")
        self.assertEqual(p["status"], "fail", p)
        self.assertFalse(p["facts"]["verified"])
        msg = run.finding("collective.wrong-result")["message"]
        # 1 + (2 + 1): every rank sees the sum that rank 1 spoiled
        self.assertIn("rank 0: all-reduce gave 4 where 3 was expected (1024 of 1024", msg)
        self.assertIn("rank 1: all-reduce gave 4", msg)

    def test_hang_is_killed_at_the_deadline(self):
        run, p = self.check("hang", "--timeout", "60")
        self.assertEqual(p["status"], "fail", p)
        self.assertEqual(p["facts"]["deadline_s"], 15)
        msg = run.finding("collective.hang")["message"]
        self.assertIn("did not finish the all-reduce and broadcast after the rendezvous within "
                      "15.0 s", msg)
        self.assertIn("rank 1 in 'collectives'", msg)
        self.assertLess(p["duration_ms"], 60000)
        self.assertFalse(subprocess.run(["pgrep", "-f", "ranks.py rank [1]"],
                                        capture_output=True).returncode == 0)


if __name__ == "__main__":
    sclib.main()
